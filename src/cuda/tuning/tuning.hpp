// Internal: every launch constant of the CUDA side (core histogram kernels, the filters' kernels, the
// host-staging pipeline with its transfer thresholds, and how blocking calls wait) in one per-architecture
// table, kept apart from the algorithms (CUB-style). The plan layer (cuda/plan/plan.cu) and the
// filters read their rows from here; nothing else hard-codes a block size, a grid target or a chunk size.
//
// Histogram rows: values come from the benchmark's shape sweep (imghist-bench --sweep): on an H200 (sm_90)
// the default 512 threads x 4 loads, 2 blocks/SM, 32 copies was within 0.5% of the best of 352 shapes for
// 8-bit gray data; of 64, 128, 256 and 512 KiB tiles, 256 KiB was the best or within 1.7% of it on every
// single-image workload of 256 MiB, 1-12% faster than 64 KiB (docs/DESIGN.md, `--sweep-tiles`); smaller
// images get smaller tiles (make_plan: at least tiles_per_sm per SM). sm_80 uses the same rows until it is
// measured.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace imghist::detail::cuda {

/// Launch policy of the histogram kernel for one request.
struct Policy {
    int threads;        ///< threads per block
    int vectors;        ///< 16-byte loads in flight per thread (1..4)
    int blocks_per_sm;  ///< resident blocks wanted per multiprocessor (upper bound; occupancy decides)
    int copies;         ///< privatized copies of each bin (power of two, <= 32); lane l uses copy l % copies
    int tile_bytes;     ///< input bytes per scheduling tile
    int block_bytes;    ///< fewest input bytes per block: small images get total / block_bytes blocks
    bool whole_images;  ///< a batch's tile holds its largest image: each image is one block's (the plan keeps
                        ///< the tile when the batch has an image for every resident block)
};

/// The architecture-independent limits the plan works within.
struct HistogramLimits {
    /// Largest tile: keeps every per-tile index the kernels split with fast_div below 2^24 (the head/tail
    /// loop counts up to tile bytes / sample size samples; vectors and masked pixels stay below that).
    static constexpr std::size_t max_tile_bytes = std::size_t(1) << 20;
    /// Tiles wanted per SM for an image large enough to fill the grid (load balance between blocks).
    static constexpr int tiles_per_sm = 4;
    /// Split storage (histograms too wide for one block's shared memory): at most this many sibling blocks
    /// per tile range, each with this many threads (the siblings re-read tiles from L2, so they are wide).
    static constexpr int max_splits = 16;
    static constexpr int split_threads = 1024;
    /// Shared-memory bytes a kernel gets without opting in (cudaFuncSetAttribute beyond this).
    static constexpr std::size_t default_smem = 48 * 1024;
    /// Blocks of the batch path's zeroing kernel.
    static constexpr int zero_threads = 256;
    /// Largest output (channels x bins counters) the one-pass overwrite zeroes with one warp of the first
    /// block to arrive; wider ones are merged in the workspace and copied out by the last block. With the
    /// zeroing in 16-byte stores, 4096 counters gained at every size on H100 (imghist-bench, u16 4096 bins,
    /// 2026-11-26, alternating runs against the workspace merge: 1080p uniform 8.4-8.5 us against 14.1,
    /// 4K 14.5 against 18.0, 8K 32.6 against 36.4; constant data alike). An early, scalar version of the
    /// zeroing had lost at 4096 (640x480 18.1 us against 14.7).
    static constexpr std::size_t zero_first_max_counters = 4096;
};

/// Histogram policy for a request. sample_bytes: 1, 2 or 4; floating: float samples (else integers); bins:
/// bins per channel; by_shift: integer samples binned by a shift (bins dividing the range in powers of two);
/// total_bytes: the input's size (a batch's: all its images); batch_image_bytes: for a batch (compute_batch),
/// its largest image's bytes, else 0.
inline Policy select_policy(int cc_major, int sample_bytes, bool floating, int channels, int bins, bool by_shift,
                            std::size_t total_bytes, std::size_t batch_image_bytes = 0) {
    (void)cc_major;  // sm_80 and sm_90 share the table until a measurement says otherwise
    const long long per_copy = 4LL * channels * (sample_bytes == 1 ? 256 : bins + 1);  // one copy, all channels
    Policy p{512, 4, 4, 32, 256 * 1024, 32 * 1024, false};
    // Enough copies for a lane-private bank (copies = 32) when it fits 32 KiB, fewer for wide histograms.
    // Multi-channel 8-bit images get 64 KiB (16 copies: two lanes per bank) — measured on H200, 8 copies
    // left the uniform-data case bank-bound at half the read limit.
    const long long budget = (sample_bytes == 1 && channels > 1) ? 64 * 1024 : 32 * 1024;
    int copies = 32;
    while (copies > 1 && per_copy * copies > budget) copies /= 2;
    p.copies = copies;
    if (sample_bytes > 1 && bins > 1024) p.blocks_per_sm = 2;
    // 8-bit frames (up to 32 MiB: 8K gray, 4K colour): the image is cut into one range per block (the
    // plan's small-image grid), which contiguous images count in contiguous_kernel. Swept on H100
    // (imghist-bench --sweep, uniform and photo data, 2026-11-23, 91569df, e7bf921): up to 4 MiB, 256
    // threads with 8 copies and 4 KiB per block for gray up to 1 MiB (640x480 5.7-5.8 us), 16 KiB above
    // (1080p 6.0-6.1 us); 512 threads with 4 copies and 16 KiB for colour (640x480 3 channels 7.1-7.2 us
    // against 8.8 with 16 copies, 4 channels 7.5-7.8 against 8.3); above 4 MiB, 512 threads, a lane-private bank per
    // copy (32 copies) and 64 KiB per block (4K gray 7.1 us against 7.4-7.5 with 32 KiB; 4K 3 channels 13.1
    // against 18.4 for the general kernel's row below).
    if (sample_bytes == 1 && total_bytes <= (std::size_t(32) << 20)) {
        if (channels > 1 && total_bytes <= (std::size_t(4) << 20)) {
            p.threads = 512;
            p.copies = 4;
            p.block_bytes = 16 * 1024;
        } else if (total_bytes <= (std::size_t(4) << 20)) {
            p.threads = 256;
            p.copies = 8;
            p.block_bytes = total_bytes <= (std::size_t(1) << 20) ? 4 * 1024 : 16 * 1024;
        } else {
            p.threads = 512;
            p.copies = 32;
            p.block_bytes = 64 * 1024;
        }
    }
    // Float frames up to 32 MiB (4K gray): the same one-range-per-block grid, 4 copies, 32 KiB per block up
    // to 2 MiB and 64 KiB above. Swept on H100 (256 bins): 640x480 5.7-5.8 us against 6.0 with the row
    // above (16 copies, 32 KiB), 1080p 6.5-6.6 against 6.9-7.0, 4K 10.3 against 15.2 (the general kernel).
    if (floating && bins <= 1024 && total_bytes <= (std::size_t(32) << 20)) {
        p.threads = 512;
        p.copies = 4;
        p.block_bytes = total_bytes <= (std::size_t(2) << 20) ? 32 * 1024 : 64 * 1024;
    }
    // 16-bit frames with wide histograms (more than 1024 bins) up to 1 MiB: one copy and 8 KiB per block, with
    // 1024 threads (the general kernel) or, for a single image binned by a shift into at most the one-pass
    // overwrite's counters, 512 (contiguous_kernel's limit, which takes such a frame into device memory in one
    // pass). Measured on H100 (2026-11-26, imghist-bench, 640x480): u16 4096 bins uniform 7.1-7.5 us and
    // constant 6.6-6.8 at 512 threads, against 8.4-8.8 and 7.6 for the general kernel at 1024 (CUB 17-19 and
    // 11); 1024 stays best where the general kernel runs either way: 3000 bins (the arithmetic rule) 8.7-8.8
    // against 9.0-9.2 us, and 3 channels of 4096 bins at 320x240 (merged: too many counters for the one-pass
    // zeroing) 17.8 against 25.1 through contiguous_kernel's merge at 512; blocking calls of one channel (merged
    // into page-locked memory) took 17-22 us either way. When these histograms were all merged (outputs of more
    // than 1024 counters), 1024 threads had won for one channel as well (11.4 against 12.0 us).
    if (!floating && sample_bytes == 2 && bins > 1024 && total_bytes <= (std::size_t(1) << 20)) {
        const std::size_t counters = static_cast<std::size_t>(channels) * bins;
        const bool one_pass_contiguous =
            by_shift && batch_image_bytes == 0 && counters <= HistogramLimits::zero_first_max_counters;
        p.threads = one_pass_contiguous ? 512 : 1024;
        p.copies = 1;
        p.block_bytes = 8 * 1024;
    }
    // Batches of small 8-bit gray images (each at most a largest tile): 256 threads, 4 blocks per SM, 32
    // copies and one tile per image, so that no image is shared between blocks and each block stores its
    // images' counts instead of adding them into zeroed outputs. Measured on H100 (1000 x 640x480 in one
    // buffer, bench/experiments/batch_parts.cu, with the tile per image): 124.0 us on uniform random bytes
    // (82.8% of the read limit), 124.3 on smooth data; 512 threads x 2 blocks 134.8 / 135.0 us; 8 copies
    // 143.4 us on uniform bytes. With 256 KiB tiles (images shared, outputs zeroed, descriptors copied)
    // the best shape took 141.9 us, the single-image row 145.4.
    if (batch_image_bytes > 0 && sample_bytes == 1 && channels == 1 &&
        batch_image_bytes <= HistogramLimits::max_tile_bytes) {
        p.threads = 256;
        p.blocks_per_sm = 4;
        p.copies = 32;
        p.tile_bytes = static_cast<int>((batch_image_bytes + 15) / 16 * 16);
        p.whole_images = true;
    }
    return p;
}

/// The filters' kernels (equalize, LUT, threshold, CLAHE, 16-bit tables, luma) and the host staging pipeline.
struct FilterTuning {
    /// Element-wise passes (LUT, equalize apply, threshold, luma, 16-bit tables, CLAHE's histograms): threads
    /// per block. Fixed, not per architecture: the equalize-apply kernel derives its 256-entry tables with one
    /// thread per entry.
    static constexpr int threads = 256;
    /// Grid target of those passes' rows x items loops, in blocks per SM (enough 256-thread blocks to hide
    /// DRAM latency; the passes are bandwidth-bound, more blocks only add scheduling).
    int blocks_per_sm = 8;
    /// The single-block table and threshold kernels (equalize table, Otsu, Triangle, CLAHE's 8-bit table)
    /// are written for one thread per 8-bit level: 256, not a tuning choice.
    static constexpr int level_threads = 256;
    /// The one-launch filters (fused_kernels.cuh: histogram -> table -> apply in one cooperative launch)
    /// take 8-bit device images up to this many bytes; larger ones take the two-kernel path, whose tuned
    /// histogram kernel reads large images faster than the fused kernel's simple counting. Measured on H100
    /// (filters_bench, ratio to a device copy, one launch vs two kernels): 1080p gray equalize 0.62-0.66 vs
    /// 0.43-0.48, stretch 0.61-0.66 vs 0.41-0.47, matching 0.51 vs 0.33-0.38; 4K gray (8.3 MB) about even
    /// (equalize 0.62-0.69 vs 0.61-0.64, stretch 0.54-0.69 vs 0.57-0.60), and equalizeHist(GpuMat) + wait at
    /// 4K 33.6-35.2 us vs 30.6 us; 64 MiB equalize 0.49 vs 0.57-0.60. Hence 4 MiB: 640x480 in every
    /// channel count and 1080p gray take one launch. The environment variable IMGHIST_FUSED_MAX_BYTES
    /// overrides it (benchmarks compare both paths with it; 0 turns the one-launch path off).
    std::size_t fused_max_bytes = std::size_t(4) << 20;
    /// Privatized copies of the fused kernel's shared counters, log2: 8 copies of C x 256 counters fill the
    /// C x 8 KiB of shared memory its tables need afterwards, so the counters cost no extra room.
    int fused_copies_log2 = 3;
    /// CLAHE's 16-bit table kernel: one block per tile, 1024 threads over its 65536 levels.
    int clahe_lut16_threads = 1024;
    /// CLAHE's interpolation pass: 32 x 8 blocks (a warp along a row), at most clahe_max_grid_x blocks across
    /// and clahe_interp_factor times the element-wise grid target in all (its blocks are short-lived).
    int clahe_block_x = 32, clahe_block_y = 8, clahe_max_grid_x = 64, clahe_interp_factor = 8;
};

/// The batch filters' kernels (filters/cuda/batch_*.cu): passes over every image of a batch in one launch, whose
/// blocks each take part of one image (a block finds its image from its index: a batch of small and large images
/// spreads evenly over the blocks). Threads per block: FilterTuning::threads. Not yet swept: starting points chosen
/// to give a 640x480 frame 5 blocks (256 frames: 1280 blocks, about ten per SM of an H100) and a 1080p frame 32.
struct BatchFilterTuning {
    /// Table, threshold and luma passes: one block per this many bytes of an image (at least one per image).
    std::size_t apply_block_bytes = std::size_t(64) << 10;
    /// CLAHE's interpolation: one block per this many pixels of an image.
    std::size_t clahe_block_pixels = std::size_t(16) << 10;
    /// CLAHE's tile histograms: a tile's rows are cut into bands so that the launch has about this many blocks
    /// per SM (at most one band per row).
    int clahe_hist_blocks_per_sm = 8;
    /// CLAHE's tile histograms of the images in one launch take at most this many bytes of the workspace (16-bit
    /// images take 256 KiB per tile): larger batches run in groups of images, a few launches per group.
    std::size_t clahe_group_bytes = std::size_t(256) << 20;
    /// Host batches on the CUDA backend: the images are copied to the device in groups of at most this many bytes
    /// (at least one image each), each run as a device batch and copied back.
    std::size_t host_group_bytes = std::size_t(256) << 20;
};

/// Host staging of pageable images (core host paths and filters' cv::Mat calls).
struct StagingTuning {
    /// Pinned chunks in flight: the host fills one while the copy engine drains the others.
    int slots = 4;
    /// Bytes per staging chunk: large enough that a chunk's copy (about 0.3-1 ms at PCIe rates) hides the
    /// per-copy overhead, small enough that the first kernel does not wait long for the last chunk.
    std::size_t chunk_bytes = std::size_t(16) << 20;
    /// Pieces of a contiguous chunk copied in parallel on the host (parallel_for).
    std::size_t copy_piece = std::size_t(1) << 20;
    /// Pageable uploads below this size go to the device in one cudaMemcpy2DAsync (the driver stages them)
    /// instead of through the pinned chunks. Measured on an H100 host (gpuhist_calls_bench, calcHist of a
    /// host cv::Mat; docs/DESIGN.md): with every upload chunked, 56.4 / 240.6 / 579 / 1117 us at
    /// 640x480 / 1080p / 4K / 8K; with this threshold (another job) 51.2 / 197.4 / 468 / 1125 us; the
    /// previous sources, which always made the one driver copy, 44.7-48.7 / 174-215 / 621-688 / 2509-2756
    /// us. The chunks, packed in parallel, win from 4K up; below, the single copy is the better of the two.
    std::size_t direct_upload_bytes = std::size_t(4) << 20;
    /// Pageable images of at least this many bytes may be counted on the device and on CPU threads at once
    /// (the counting route of Auto, backend_choice.hpp; split_histogram_to_host). Auto measures that route
    /// beside the others, so this only bounds where it is tried: below it (1080p frames and smaller) the
    /// whole count takes a few hundred microseconds, no more than waking the CPU threads and the copy engine
    /// for both halves. At 8K (33 MB) on an H100 host the split counted in 0.8-1.1 ms against 1.1-1.4 ms for
    /// the device alone and 1.7-1.9 ms for the CPU (commit 59f4308). Images larger than the pinned
    /// chunks (slots x chunk_bytes) are not split (split_count_eligible says why).
    std::size_t split_min_bytes = std::size_t(4) << 20;
};

/// What a workspace keeps between calls (workspace.hpp): the bound, per (device, stream) and per device.
struct WorkspaceTuning {
    /// Staging buffers (device copies of host images, pinned chunks) above this many bytes are released at
    /// the end of the blocking call that needed them; smaller ones are kept for the next call.
    static constexpr std::size_t keep_staging_bytes = std::size_t(64) << 20;
    /// Workspaces kept per device; one more stream makes the least recently used one go.
    static constexpr int max_per_device = 16;
};

/// How a blocking call waits for a result that its launch tags (the last-block merge's words in page-locked
/// host memory, detail::cuda_histogram's `tag`).
struct BlockingTuning {
    /// Microseconds the host spins on the words before it synchronises the stream instead. The spin replaces
    /// the runtime's own spin inside cudaStreamSynchronize for the short kernels of frame-sized images (on an
    /// H100 host the synchronisation's wake-up took 1.5 us more than a word the kernel wrote, bench/experiments/
    /// completion_wait.cu); past it, a long kernel, work queued before it or a failed launch is left to
    /// cudaStreamSynchronize, which honours the device's scheduling flags and reports a kernel's error.
    int spin_us = 500;
};

struct Tuning {
    FilterTuning filters;
    BatchFilterTuning batch_filters;
    StagingTuning staging;
    BlockingTuning blocking;
};

/// The row for a compute-capability major version (one row today: sm_80 and sm_90 were not measured apart).
inline const Tuning& tuning_for(int cc_major) {
    (void)cc_major;
    static const Tuning sm80_90{};
    return sm80_90;
}

}  // namespace imghist::detail::cuda
