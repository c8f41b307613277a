// The tuning row of sm_90 (H100, H200), measured with imghist-bench --sweep, filters_bench and
// gpuhist_calls_bench (docs/PERFORMANCE.md; the rejected shapes are decision records in docs/DESIGN.md).
// sm_80 has not been measured apart and takes this row (tuning_for).
#include "cuda/tuning/tuning.hpp"

namespace imghist::detail::cuda {
namespace {

constexpr std::size_t KiB = 1024, MiB = 1024 * 1024;

/// The general kernel's default: 512 threads with four 16-byte loads in flight, up to 4 resident blocks
/// per SM, 256 KiB tiles (4 per SM for large images), and as many privatized copies of each bin as fit the
/// budget — a lane-private bank (32 copies) where the histogram is small; multi-channel 8-bit images get
/// twice the room, because fewer copies left uniform data bank-bound.
Policy general(const HistogramRequest& r) {
    const long long per_copy = 4LL * r.channels * (r.sample_bytes == 1 ? 256 : r.bins + 1);  // all channels
    const long long budget = (r.sample_bytes == 1 && r.channels > 1) ? 64 * KiB : 32 * KiB;
    int copies = 32;
    while (copies > 1 && per_copy * copies > budget) copies /= 2;
    Policy p{512, 4, 4, copies, static_cast<int>(256 * KiB), static_cast<int>(32 * KiB), false};
    if (r.sample_bytes > 1 && r.bins > 1024) p.blocks_per_sm = 2;  // wide histograms: room for the copies
    return p;
}

/// 8-bit frames up to 32 MiB (8K gray, 4K colour): one range per block, which contiguous images count in
/// contiguous_kernel. Small frames want few blocks (the merge at the end stays cheap) and fewer copies
/// (zeroing and merging them costs more than bank conflicts on so few bytes).
void frame_u8(const HistogramRequest& r, Policy& p) {
    if (r.channels > 1 && r.total_bytes <= 4 * MiB) {
        p.threads = 512, p.copies = 4, p.block_bytes = static_cast<int>(16 * KiB);
    } else if (r.total_bytes <= 4 * MiB) {
        p.threads = 256, p.copies = 8, p.block_bytes = static_cast<int>(r.total_bytes <= MiB ? 4 * KiB : 16 * KiB);
    } else {
        p.threads = 512, p.copies = 32, p.block_bytes = static_cast<int>(64 * KiB);
    }
}

/// Float frames up to 32 MiB with at most 1024 bins: the same one-range-per-block grid with 4 copies.
void frame_f32(const HistogramRequest& r, Policy& p) {
    p.threads = 512, p.copies = 4, p.block_bytes = static_cast<int>(r.total_bytes <= 2 * MiB ? 32 * KiB : 64 * KiB);
}

/// 16-bit frames up to 1 MiB with more than 1024 bins: one copy, 8 KiB per block, 1024 threads (the general
/// kernel) — or 512 for a single image binned by a shift into at most the one-pass overwrite's counters,
/// which contiguous_kernel (limit 512) then takes into device memory in one pass.
void frame_u16_wide(const HistogramRequest& r, Policy& p) {
    const std::size_t counters = static_cast<std::size_t>(r.channels) * static_cast<std::size_t>(r.bins);
    const bool one_pass_contiguous =
        r.by_shift && r.batch_image_bytes == 0 && counters <= HistogramLimits::zero_first_max_counters;
    p.threads = one_pass_contiguous ? KernelBounds::contiguous : KernelBounds::histogram;
    p.copies = 1;
    p.block_bytes = static_cast<int>(8 * KiB);
}

/// Batches of small 8-bit gray images (each at most a largest tile): one tile per image, so no image is
/// shared between blocks and each block stores its images' counts instead of adding them into zeroed
/// outputs; 256 threads, 4 blocks per SM, a lane-private bank per copy.
void batch_small_u8(const HistogramRequest& r, Policy& p) {
    p.threads = 256, p.blocks_per_sm = 4, p.copies = 32;
    p.tile_bytes = static_cast<int>((r.batch_image_bytes + 15) / 16 * 16);
    p.whole_images = true;
}

Policy histogram_sm90(const HistogramRequest& r) {
    Policy p = general(r);
    if (r.sample_bytes == 1 && r.total_bytes <= 32 * MiB) frame_u8(r, p);
    if (r.floating && r.bins <= 1024 && r.total_bytes <= 32 * MiB) frame_f32(r, p);
    if (!r.floating && r.sample_bytes == 2 && r.bins > 1024 && r.total_bytes <= MiB) frame_u16_wide(r, p);
    if (r.batch_image_bytes > 0 && r.sample_bytes == 1 && r.channels == 1 &&
        r.batch_image_bytes <= HistogramLimits::max_tile_bytes)
        batch_small_u8(r, p);
    return p;
}

const Tuning kSm90 = {
    "sm_90",
    FilterTuning{
        /*blocks_per_sm=*/8,
        /*fused_copies_log2=*/3,
        /*clahe_lut16_threads=*/1024,
        /*clahe_block_x=*/32, /*clahe_block_y=*/8, /*clahe_max_grid_x=*/64, /*clahe_interp_factor=*/8,
    },
    // Not swept yet: starting points that give a 640x480 frame 5 blocks (256 frames: about ten per SM of an
    // H100) and a 1080p frame 32.
    BatchFilterTuning{
        /*apply_block_bytes=*/64 * KiB,
        /*clahe_block_pixels=*/16 * KiB,
        /*clahe_hist_blocks_per_sm=*/8,
        /*clahe_group_bytes=*/256 * MiB,
        /*host_group_bytes=*/256 * MiB,
    },
    StagingTuning{
        /*slots=*/4,
        /*chunk_bytes=*/16 * MiB,
        /*copy_piece=*/MiB,
        /*direct_upload_bytes=*/4 * MiB,
    },
    BlockingTuning{/*spin_us=*/500},
    histogram_sm90,
};

}  // namespace

const Tuning& tuning_for(int cc_major) {
    // sm_80 (and anything else) until measured apart: sm_90's row.
    (void)cc_major;
    return kSm90;
}

}  // namespace imghist::detail::cuda
