// Internal: launch policies, kept apart from the kernels (CUB-style). One table per architecture family;
// the dispatch layer picks the row for (sample size, channels, bins) and fits it to the device's shared
// memory. Values come from the benchmark's shape sweep (imghist-bench --sweep): on an H200 (sm_90) the
// default 512 threads x 4 loads, 2 blocks/SM, 32 copies was within 0.5% of the best of 352 shapes for 8-bit
// gray data; of 64, 128, 256 and 512 KiB tiles, 256 KiB was the best or within 1.7% of it on every
// single-image workload of 256 MiB, 1-12% faster than 64 KiB (docs/PERFORMANCE.md, `--sweep-tiles`); smaller
// images get smaller tiles (make_plan: at least 4 per SM). sm_80 uses the same rows until it is measured.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace imghist::detail::cuda {

struct Policy {
    int threads;        ///< threads per block
    int vectors;        ///< 16-byte loads in flight per thread (1..4)
    int blocks_per_sm;  ///< resident blocks wanted per multiprocessor (upper bound; occupancy decides)
    int copies;         ///< privatized copies of each bin (power of two, <= 32); lane l uses copy l % copies
    int tile_bytes;     ///< input bytes per scheduling tile
    int block_bytes;    ///< fewest input bytes per block: small images get total / block_bytes blocks
};

/// Policy for a request. sample_bytes: 1, 2 or 4; bins: bins per channel; total_bytes: the input's size.
inline Policy select_policy(int cc_major, int sample_bytes, int channels, int bins, std::size_t total_bytes) {
    (void)cc_major;  // sm_80 and sm_90 share the table until a measurement says otherwise
    const long long per_copy = 4LL * channels * (sample_bytes == 1 ? 256 : bins + 1);  // one copy, all channels
    Policy p{512, 4, 4, 32, 256 * 1024, 32 * 1024};
    // Enough copies for a lane-private bank (copies = 32) when it fits 32 KiB, fewer for wide histograms.
    // Multi-channel 8-bit images get 64 KiB (16 copies: two lanes per bank) — measured on H200, 8 copies
    // left the uniform-data case bank-bound at half the read limit.
    const long long budget = (sample_bytes == 1 && channels > 1) ? 64 * 1024 : 32 * 1024;
    int copies = 32;
    while (copies > 1 && per_copy * copies > budget) copies /= 2;
    p.copies = copies;
    if (sample_bytes > 1 && bins > 1024) p.blocks_per_sm = 2;
    // Small 8-bit images (frames up to about 1080p): smaller blocks with fewer copies, so that the zeroing
    // and the flush of each block's counters are short, and more of them. Sweep on H100 (u8 gray, uniform,
    // --sweep-blockk): 640x480 8.4 us with 256 threads x 2..4 loads, 8 copies, 4 KiB per block (default
    // row: 9.9 us); 1920x1080 9.9 us with 16 KiB per block (10.3 us). Images of 4K and more keep the row above.
    if (sample_bytes == 1 && total_bytes <= (std::size_t(4) << 20)) {
        p.threads = 256;
        if (channels == 1) p.copies = std::min(p.copies, 8);  // swept on gray only
        p.block_bytes = total_bytes <= (std::size_t(1) << 20) ? 4 * 1024 : 16 * 1024;
    }
    return p;
}

}  // namespace imghist::detail::cuda
