// Internal: launch policies, kept apart from the kernels (CUB-style). One table per architecture family;
// the dispatch layer picks the row for (sample size, channels, bins) and fits it to the device's shared
// memory. Values come from the benchmark's shape sweep (imghist-bench --sweep): on an H200 (sm_90) the
// default 512 threads x 4 loads, 2 blocks/SM, 32 copies was within 0.5% of the best of 352 shapes for 8-bit
// gray data; of 64, 128, 256 and 512 KiB tiles, 256 KiB was the best or within 1.7% of it on every
// single-image workload of 256 MiB, 1-12% faster than 64 KiB (docs/PERFORMANCE.md, `--sweep-tiles`); smaller
// images get smaller tiles (make_plan: at least 4 per SM). sm_80 uses the same rows until it is measured.
#pragma once

#include <cstdint>

namespace imghist::detail::cuda {

struct Policy {
    int threads;        ///< threads per block
    int vectors;        ///< 16-byte loads in flight per thread (1..4)
    int blocks_per_sm;  ///< resident blocks wanted per multiprocessor (upper bound; occupancy decides)
    int copies;         ///< privatized copies of each bin (power of two, <= 32); lane l uses copy l % copies
    int tile_bytes;     ///< input bytes per scheduling tile
    int block_bytes;    ///< fewest input bytes per block: small images get total / block_bytes blocks
    int cluster_bytes;  ///< sm_90+: images up to this size run as one cluster that merges in shared memory
    int cluster_blocks; ///< blocks of that cluster at most (16 needs the non-portable cluster size)
    int cluster_threads;///< threads per block on the cluster path
};

/// Policy for a request. sample_bytes: 1, 2 or 4; bins: bins per channel.
inline Policy select_policy(int cc_major, int sample_bytes, int channels, int bins) {
    (void)cc_major;  // sm_80 and sm_90 share the table until a measurement says otherwise
    const long long per_copy = 4LL * channels * (sample_bytes == 1 ? 256 : bins + 1);  // one copy, all channels
    Policy p{512, 4, 4, 32, 256 * 1024, 32 * 1024, 2 << 20, 16, 1024};
    // Enough copies for a lane-private bank (copies = 32) when it fits 32 KiB, fewer for wide histograms.
    // Multi-channel 8-bit images get 64 KiB (16 copies: two lanes per bank) — measured on H200, 8 copies
    // left the uniform-data case bank-bound at half the read limit.
    const long long budget = (sample_bytes == 1 && channels > 1) ? 64 * 1024 : 32 * 1024;
    int copies = 32;
    while (copies > 1 && per_copy * copies > budget) copies /= 2;
    p.copies = copies;
    if (sample_bytes > 1 && bins > 1024) p.blocks_per_sm = 2;
    return p;
}

}  // namespace imghist::detail::cuda
