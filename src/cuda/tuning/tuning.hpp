// Internal: every launch constant of the CUDA side — the histogram kernels' launch policies, the filters'
// kernels, the host-staging pipeline, the workspace bounds, how blocking calls wait, and the kernels'
// launch bounds — as data, kept apart from the algorithms (CUB's style). One table per architecture
// (sm90.cpp; an architecture that was not measured apart takes the nearest measured row: tuning_for says
// which); the plan (cuda/plan/plan.cu), the filters' launchers and the runtime read their values from here
// and nothing else writes a block size, a grid target or a chunk size. The measurements behind the values
// are decision records in docs/DESIGN.md; what each value trades is said where it is defined.
#pragma once

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

/// What the histogram policy is chosen from.
struct HistogramRequest {
    int sample_bytes = 1;       ///< 1, 2 or 4
    bool floating = false;      ///< float samples (else integers)
    int channels = 1;
    int bins = 256;             ///< per channel
    bool by_shift = false;      ///< integer samples binned by a shift (bins dividing the range in powers of two)
    std::size_t total_bytes = 0;        ///< the input's size (a batch's: all its images)
    std::size_t batch_image_bytes = 0;  ///< a batch's largest image, 0 for a single image
};

/// Launch bounds of the kernels (compile-time: __launch_bounds__ needs constants). Each is the most threads
/// any policy gives that kernel.
struct KernelBounds {
    static constexpr int histogram = 1024;   ///< histogram_kernel: up to the wide 16-bit row's 1024 threads
    static constexpr int contiguous = 512;   ///< contiguous_kernel: its one-pass tail is written for <= 512
    static constexpr int one_launch = 256;   ///< the one-launch filters: one thread per 8-bit level
    static constexpr int multiotsu = 1024;   ///< the multi-Otsu search: one block walks the frontier
    static constexpr int ycbcr = 256;        ///< the YCbCr value counts: one block per (image, stripe)
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
    static constexpr int split_threads = KernelBounds::histogram;
    /// Shared-memory bytes a kernel gets without opting in (cudaFuncSetAttribute beyond this).
    static constexpr std::size_t default_smem = 48 * 1024;
    /// Blocks of the batch path's zeroing kernel.
    static constexpr int zero_threads = 256;
    /// Largest output (channels x bins counters) the one-pass overwrite zeroes with one warp of the first
    /// block to arrive (16-byte stores); wider ones are merged in the workspace and copied out by the last
    /// block, which costs every block a fenced addition and a ticket.
    static constexpr std::size_t zero_first_max_counters = 4096;
};

/// The filters' kernels (equalize, LUT, threshold, CLAHE, 16-bit tables, luma, the one-launch kernel).
struct FilterTuning {
    /// Element-wise passes (LUT, equalize apply, threshold, luma, 16-bit tables, CLAHE's histograms): threads
    /// per block. Not per architecture: the equalize-apply kernel derives its 256-entry tables with one
    /// thread per entry.
    static constexpr int threads = 256;
    /// The single-block table and threshold kernels (equalize table, Otsu, Triangle, CLAHE's 8-bit table)
    /// are written for one thread per 8-bit level: 256, not a tuning choice.
    static constexpr int level_threads = 256;
    /// Grid target of the element-wise passes' rows x items loops, in blocks per SM: enough 256-thread blocks
    /// to hide DRAM latency; the passes are bandwidth-bound and more blocks only add scheduling.
    int blocks_per_sm;
    /// Privatized copies of the one-launch kernel's shared counters, log2: 8 copies of C x 256 counters fill
    /// the C x 8 KiB of shared memory its tables need afterwards, so the counters cost no extra room.
    int fused_copies_log2;
    /// CLAHE's 16-bit table kernel: one block per tile over its 65536 levels.
    int clahe_lut16_threads;
    /// CLAHE's interpolation pass: block_x x block_y blocks (a warp along a row), at most max_grid_x blocks
    /// across and interp_factor times the element-wise grid target in all (its blocks are short-lived).
    int clahe_block_x, clahe_block_y, clahe_max_grid_x, clahe_interp_factor;
};

/// The batch filters' kernels (filters/cuda/batch_*.cu): passes over every image of a batch in one launch,
/// whose blocks each take part of one image (a block finds its image from its index, so a batch of small
/// and large images spreads evenly over the blocks). Threads per block: FilterTuning::threads.
struct BatchFilterTuning {
    /// Table, threshold and luma passes: one block per this many bytes of an image (at least one per image).
    std::size_t apply_block_bytes;
    /// CLAHE's interpolation: one block per this many pixels of an image.
    std::size_t clahe_block_pixels;
    /// CLAHE's tile histograms: a tile's rows are cut into bands so that the launch has about this many
    /// blocks per SM (at most one band per row).
    int clahe_hist_blocks_per_sm;
    /// CLAHE's tile histograms of the images in one launch take at most this many bytes of the workspace
    /// (16-bit images take 256 KiB per tile): larger batches run in groups of images, a few launches each.
    std::size_t clahe_group_bytes;
    /// Host batches on the CUDA backend: the images go to the device in groups of at most this many bytes
    /// (at least one image each), each run as a device batch and copied back.
    std::size_t host_group_bytes;
};

/// Host staging of pageable images (the histograms' host paths and the filters' cv::Mat calls).
struct StagingTuning {
    /// Pinned chunks in flight: the host fills one while the copy engine drains the others.
    int slots;
    /// Bytes per staging chunk: large enough that a chunk's copy (about 0.3-1 ms at PCIe rates) hides the
    /// per-copy overhead, small enough that the first kernel does not wait long for the last chunk.
    std::size_t chunk_bytes;
    /// Pieces of a contiguous chunk copied in parallel on the host (parallel_for).
    std::size_t copy_piece;
    /// Pageable uploads below this size go to the device in one cudaMemcpy2DAsync (the driver stages them)
    /// instead of through the pinned chunks, which win only once packing in parallel outweighs their
    /// per-chunk cost.
    std::size_t direct_upload_bytes;
};

/// What a workspace keeps between calls (workspace.hpp): the bound, per (device, stream) and per device.
struct WorkspaceTuning {
    /// Staging buffers (device copies of host images, pinned chunks) above this many bytes are released at
    /// the end of the blocking call that needed them; smaller ones are kept for the next call.
    static constexpr std::size_t keep_staging_bytes = std::size_t(64) << 20;
    /// Workspaces kept per device; one more stream makes the least recently used one go.
    static constexpr int max_per_device = 16;
};

/// How a blocking call waits for a result its launch tags (the last block's words in page-locked host
/// memory, detail::cuda_histogram's `tag`).
struct BlockingTuning {
    /// Microseconds the host spins on the words before it synchronises the stream instead. The spin sees a
    /// short kernel's result sooner than the synchronisation's wake-up; past it, a long kernel, work queued
    /// before it or a failed launch is left to cudaStreamSynchronize, which honours the device's scheduling
    /// flags and reports a kernel's error.
    int spin_us;
};

/// One architecture's row.
struct Tuning {
    const char* measured_on;  ///< the architecture the row was measured on ("sm_90")
    FilterTuning filters;
    BatchFilterTuning batch_filters;
    StagingTuning staging;
    BlockingTuning blocking;
    /// The histogram kernel's policy for a request.
    Policy (*histogram)(const HistogramRequest& r);
};

/// The row for a compute-capability major version.
const Tuning& tuning_for(int cc_major);

/// The histogram policy of a request on an architecture.
inline Policy select_policy(int cc_major, const HistogramRequest& r) { return tuning_for(cc_major).histogram(r); }

}  // namespace imghist::detail::cuda
