// imghist filters — CUDA kernels of the batch filters: each launch covers every image of a batch. Launch code is
// in batch_filters.cu, batch_levels.cu and batch_clahe.cu.
//
// Addressing. A batch reaches a kernel as a BatchRef: image 0's descriptor and the distances between images (a
// uniform batch: no per-image data on the device), or an array of descriptors in device memory (a
// variable-shape batch). The passes over the pixels give every image its own blocks, about one per
// BatchFilterTuning::apply_block_bytes of it; a block finds its image from its index (a division for uniform
// batches, a binary search over the descriptors' first blocks otherwise), so every block has about the same work
// whatever the mix of sizes. Blocks are taken last to first, so that the first blocks to run read the last images
// the histogram launch left in L2. The table and threshold launches give each image (and channel) one block.
//
// Exactness. The tables and levels come from the single-image kernels' block functions (kernels.cuh,
// level_kernels.cuh), the per-pixel passes from their operators (LutOp, ThresholdU8Op, filter_math.hpp): the
// same arithmetic, image by image. Every kernel here is a template or static, so the header may be included by
// several translation units.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "filters/batch_blocks.hpp"
#include "filters/cuda/level_kernels.cuh"

namespace imghist::detail::kernels {

// ---- the images of a batch ---------------------------------------------------------------------------------------

/// One image of a batch.
struct BatchImage {
    const std::uint8_t* src;
    std::uint8_t* dst;
    std::size_t src_pitch, dst_pitch;
    int width, height;
    unsigned int block_begin;   ///< its first block in the passes over the pixels (variable-shape batches)
    fmath::ClaheGeometry clahe;  ///< CLAHE: the image's geometry
};

struct BatchRef {
    const BatchImage* descs;  ///< device memory, one per image; null: a uniform batch
    BatchImage first;         ///< a uniform batch's image 0
    long long src_stride, dst_stride;  ///< a uniform batch's distances between images
    unsigned int count;
    unsigned int blocks_per_image;  ///< a uniform batch's blocks per image in the passes over the pixels
    unsigned int total_blocks;      ///< blocks of a pass over the pixels

    __device__ __forceinline__ BatchImage image(unsigned int i) const {
        if (descs) return descs[i];
        BatchImage b = first;
        b.src += static_cast<long long>(i) * src_stride;
        b.dst += static_cast<long long>(i) * dst_stride;
        return b;
    }
    /// The image whose pixels block `b` of a pass works on (batch_blocks.hpp).
    __device__ __forceinline__ unsigned int image_of_block(unsigned int b) const {
        return descs ? ::imghist::detail::image_of_block(descs, count, b) : b / blocks_per_image;
    }
    __device__ __forceinline__ unsigned int first_block(unsigned int i) const {
        return descs ? descs[i].block_begin : i * blocks_per_image;
    }
    __device__ __forceinline__ unsigned int blocks_of(unsigned int i) const {
        if (!descs) return blocks_per_image;
        return (i + 1 < count ? descs[i + 1].block_begin : total_blocks) - descs[i].block_begin;
    }
};

/// This block's part of a pass over the pixels: its image, and its place among that image's blocks.
struct BlockPart {
    unsigned int image, block, blocks;
};

__device__ __forceinline__ BlockPart block_part(const BatchRef& b) {
    const unsigned int g = b.total_blocks - 1 - blockIdx.x;  // last to first: see the header
    BlockPart p;
    p.image = b.image_of_block(g);
    p.block = g - b.first_block(p.image);
    p.blocks = b.blocks_of(p.image);
    return p;
}

/// An image's source and destination as the table passes walk them (kernels.cuh's Span2D): one run when both are
/// packed, else rows.
__device__ __forceinline__ Span2D span_of_image(const BatchImage& im, std::size_t pixel_bytes) {
    Span2D s;
    s.src = im.src;
    s.dst = im.dst;
    s.reverse = false;
    const std::size_t row = pixel_bytes * static_cast<std::size_t>(im.width);
    const bool packed = im.height <= 1 || (im.src_pitch == row && im.dst_pitch == row);
    s.rows = packed ? 1 : im.height;
    s.row_bytes = packed ? row * static_cast<std::size_t>(im.height) : row;
    s.src_pitch = packed ? s.row_bytes : im.src_pitch;
    s.dst_pitch = packed ? s.row_bytes : im.dst_pitch;
    s.segs_per_row = 1 + (s.row_bytes + 15) / 16;
    return s;
}

/// The pass of one image by `part.blocks` blocks: the vector path for one run whose source and destination share
/// their alignment, else every (row, segment) pair of for_each_segment's cut spread over the blocks' threads.
template <int V, class Op>
__device__ __forceinline__ void pass_image(const Span2D& s, const BlockPart& part, Op& op) {
    const std::size_t tid = static_cast<std::size_t>(part.block) * blockDim.x + threadIdx.x;
    const std::size_t nthreads = static_cast<std::size_t>(part.blocks) * blockDim.x;
    if (vector_path(s)) {
        for_each_vector_by<V>(s.src, s.dst, s.row_bytes, false, op, tid, nthreads);
        return;
    }
    const unsigned long long per_row = s.segs_per_row;
    const unsigned long long total = per_row * static_cast<unsigned long long>(s.rows);
    for (unsigned long long k = tid; k < total; k += nthreads) {
        // 32-bit division where it suffices: one per 16 bytes.
        const unsigned long long y = total <= 0xFFFFFFFFull ? static_cast<unsigned>(k) / static_cast<unsigned>(per_row)
                                                            : k / per_row;
        const std::uint8_t* sr = s.src + y * s.src_pitch;
        std::uint8_t* dr = s.dst + y * s.dst_pitch;
        segment_pass(sr, dr, row_head(sr, s.row_bytes), k - y * per_row, s.row_bytes, op);
    }
}

/// Calls f(y, x) for the pixels of a width x height image that thread `tid` of `nthreads` takes (flat order).
template <class F>
__device__ __forceinline__ void for_each_pixel(int width, int height, std::size_t tid, std::size_t nthreads, F&& f) {
    const unsigned long long n = static_cast<unsigned long long>(width) * static_cast<unsigned long long>(height);
    for (unsigned long long k = tid; k < n; k += nthreads) {
        const unsigned long long y = n <= 0xFFFFFFFFull ? static_cast<unsigned>(k) / static_cast<unsigned>(width)
                                                        : k / static_cast<unsigned long long>(width);
        f(static_cast<int>(y), static_cast<int>(k - y * static_cast<unsigned long long>(width)));
    }
}

// ---- tables and levels: one block of 256 threads per image (and channel) -----------------------------------------

enum class BatchTable : int { Equalize, Stretch, Match, Labels };

/// What the table launch derives image i's tables from. Counts of image i, channel c: counts + (i * hist_channels +
/// c) * 256 (hist_channels 1: the luma's, for every colour channel; a 4th channel then gets the identity).
template <class TgtCount>
struct BatchTableArgs {
    const unsigned int* counts;
    int hist_channels;
    std::uint8_t* tables;     ///< image i, channel c at tables + (i * channels + c) * 256; channels = gridDim.y
    double q_lo, q_hi;        ///< Stretch
    const TgtCount* target;   ///< Match: channel c's target counts at target + c * target_stride
    int target_stride;
    const MultiOtsuResult* results;  ///< Labels: each image's search
    int classes;                     ///< Labels
    int* computed;                   ///< Labels: the thresholds, classes - 1 per image (or null)
};

/// Grid (images, channels) of 256 threads: table c of image i.
template <BatchTable K, class TgtCount>
__global__ void batch_table_kernel(const __grid_constant__ BatchTableArgs<TgtCount> a) {
    const unsigned int i = blockIdx.x;
    const int c = static_cast<int>(blockIdx.y), channels = static_cast<int>(gridDim.y);
    const int hc = a.hist_channels == 1 ? 0 : c;
    const unsigned int* counts = a.counts + (static_cast<std::size_t>(i) * a.hist_channels + hc) * 256;
    std::uint8_t e = static_cast<std::uint8_t>(threadIdx.x);
    if constexpr (K == BatchTable::Equalize) {
        e = equalize_entry_block(counts);
    } else if constexpr (K == BatchTable::Stretch) {
        if (!(a.hist_channels == 1 && c == 3)) e = stretch_entry_block(counts, a.q_lo, a.q_hi);  // 4th: alpha, kept
    } else if constexpr (K == BatchTable::Match) {
        const TgtCount* t = a.target + static_cast<std::size_t>(c) * a.target_stride;
        e = match_entry_block(counts, static_cast<unsigned long long>(t[threadIdx.x]));
    } else {
        const MultiOtsuResult& r = a.results[i];
        if (r.status == kMultiOtsuDone) {
            e = label_entry(r, a.classes);
            if (a.computed && threadIdx.x < static_cast<unsigned>(a.classes - 1))
                a.computed[static_cast<std::size_t>(i) * (a.classes - 1) + threadIdx.x] = r.thresholds[threadIdx.x];
        }
    }
    a.tables[(static_cast<std::size_t>(i) * channels + c) * 256 + threadIdx.x] = e;
}

enum class BatchLevel : int { Otsu256, Triangle, OtsuSeq };

/// One block of 256 threads per image: its automatic threshold from counts + i * bins, to levels[i] and, when
/// given, computed[i].
template <BatchLevel K>
__global__ void batch_level_kernel(const unsigned int* __restrict__ counts, int bins, int* __restrict__ levels,
                                   int* __restrict__ computed) {
    const unsigned int i = blockIdx.x;
    const unsigned int* h = counts + static_cast<std::size_t>(i) * bins;
    int r;
    if constexpr (K == BatchLevel::Otsu256) r = otsu256_block(h);
    else if constexpr (K == BatchLevel::Triangle) r = triangle_block(h);
    else r = otsu_seq_block(h, bins);
    if (threadIdx.x != 0) return;
    levels[i] = r;
    if (computed) computed[i] = r;
}

// ---- passes over the pixels ---------------------------------------------------------------------------------------

/// 8-bit images of C channels through their tables (tables + image * C * 256); `skip`, when given, leaves the
/// images whose multi-Otsu search did not finish on the device to the host. C x 8 KiB of dynamic shared memory.
template <int C>
__global__ void batch_lut_kernel(BatchRef b, const std::uint8_t* __restrict__ tables,
                                 const MultiOtsuResult* __restrict__ skip) {
    extern __shared__ std::uint32_t tab[];
    const BlockPart part = block_part(b);
    if (skip && skip[part.image].status != kMultiOtsuDone) return;
    const BatchImage im = b.image(part.image);
    spread_tables<C>(tables + static_cast<std::size_t>(part.image) * C * 256, tab);
    LutOp<C> op{tab, threadIdx.x & 31u};
    pass_image<kLutVectors>(span_of_image(im, C), part, op);
}

/// 8-bit threshold of any channel count: the level from levels[image] when given, else t_host.
static __global__ void batch_threshold_u8_kernel(BatchRef b, int channels, const int* __restrict__ levels, int t_host,
                                                 int maxval, int op) {
    const BlockPart part = block_part(b);
    const BatchImage im = b.image(part.image);
    const ThresholdU8Op o = threshold_u8_op(levels ? levels[part.image] : t_host, maxval, op);
    pass_image<kThresholdVectors>(span_of_image(im, static_cast<std::size_t>(channels)), part, o);
}

/// u16 and f32 thresholds, one sample per thread and iteration.
template <class T>
__global__ void batch_threshold_elem_kernel(BatchRef b, int channels, const int* __restrict__ levels, int t_host,
                                            int imaxval, float fthresh, float fmaxval, int op) {
    const BlockPart part = block_part(b);
    const BatchImage im = b.image(part.image);
    const int t = levels ? levels[part.image] : t_host;
    const std::size_t tid = static_cast<std::size_t>(part.block) * blockDim.x + threadIdx.x;
    const std::size_t nthreads = static_cast<std::size_t>(part.blocks) * blockDim.x;
    for_each_pixel(im.width * channels, im.height, tid, nthreads, [&](int y, int x) {
        const T v = reinterpret_cast<const T*>(im.src + static_cast<std::size_t>(y) * im.src_pitch)[x];
        T* d = reinterpret_cast<T*>(im.dst + static_cast<std::size_t>(y) * im.dst_pitch) + x;
        if constexpr (sizeof(T) == 4) *d = fmath::threshold_value_f32(v, fthresh, fmaxval, op);
        else *d = fmath::threshold_value<T>(v, t, static_cast<T>(imaxval), op, 65535);
    });
}

/// 16-bit images of C channels through 65536-entry tables (tables + (image * C + c) * 65536).
template <int C>
__global__ void batch_table16_kernel(BatchRef b, const std::uint16_t* __restrict__ tables) {
    const BlockPart part = block_part(b);
    const BatchImage im = b.image(part.image);
    const std::uint16_t* t = tables + static_cast<std::size_t>(part.image) * C * 65536;
    const std::size_t tid = static_cast<std::size_t>(part.block) * blockDim.x + threadIdx.x;
    const std::size_t nthreads = static_cast<std::size_t>(part.blocks) * blockDim.x;
    for_each_pixel(im.width * C, im.height, tid, nthreads, [&](int y, int x) {
        const std::uint16_t v = reinterpret_cast<const std::uint16_t*>(im.src + static_cast<std::size_t>(y) * im.src_pitch)[x];
        reinterpret_cast<std::uint16_t*>(im.dst + static_cast<std::size_t>(y) * im.dst_pitch)[x] =
            __ldg(t + (static_cast<std::size_t>(x % C) << 16) + v);
    });
}

/// Luma histograms of BGR(A) images (the luma of stretch_contrast: fmath::ycrcb_luma), image i's into counts + i *
/// Levels (zeroed beforehand): 8-bit through a block-private histogram in shared memory, 16-bit straight into
/// global memory.
template <class T, int Levels>
__global__ void batch_luma_hist_kernel(BatchRef b, int channels, unsigned int* __restrict__ counts) {
    __shared__ unsigned int local[LumaBlockCounts<Levels>::kShared ? Levels : 1];
    const BlockPart part = block_part(b);
    const BatchImage im = b.image(part.image);
    const LumaBlockCounts<Levels> luma{local, counts + static_cast<std::size_t>(part.image) * Levels};
    luma.zero();
    const std::size_t tid = static_cast<std::size_t>(part.block) * blockDim.x + threadIdx.x;
    const std::size_t nthreads = static_cast<std::size_t>(part.blocks) * blockDim.x;
    for_each_pixel(im.width, im.height, tid, nthreads, [&](int y, int x) {
        luma.add(reinterpret_cast<const T*>(im.src + static_cast<std::size_t>(y) * im.src_pitch) +
                 static_cast<std::size_t>(x) * channels);
    });
    luma.flush();
}

/// Luma equalization of 8-bit BGR(A) images: the Y of YCrCb replaced by its table's entry (tables + image * 256),
/// converted back; alpha copied (luma_apply_kernel's arithmetic).
static __global__ void batch_luma_apply_kernel(BatchRef b, int channels, const std::uint8_t* __restrict__ tables) {
    __shared__ std::uint8_t tab[256];
    const BlockPart part = block_part(b);
    const BatchImage im = b.image(part.image);
    for (int i = threadIdx.x; i < 256; i += blockDim.x) tab[i] = tables[static_cast<std::size_t>(part.image) * 256 + i];
    __syncthreads();
    const std::size_t tid = static_cast<std::size_t>(part.block) * blockDim.x + threadIdx.x;
    const std::size_t nthreads = static_cast<std::size_t>(part.blocks) * blockDim.x;
    for_each_pixel(im.width, im.height, tid, nthreads, [&](int y, int x) {
        const std::uint8_t* p = im.src + static_cast<std::size_t>(y) * im.src_pitch + static_cast<std::size_t>(x) * channels;
        std::uint8_t* q = im.dst + static_cast<std::size_t>(y) * im.dst_pitch + static_cast<std::size_t>(x) * channels;
        fmath::equalize_luma_pixel(p, q, channels, tab);
    });
}

/// Multi-Otsu: one block of kMultiOtsuThreads per image (multiotsu_block), results[i] for the label tables, and
/// host_results[i] / host_counts + i * 256 in page-locked memory for the host.
template <class Count>
__global__ void __launch_bounds__(kMultiOtsuThreads)
    batch_multiotsu_kernel(const Count* __restrict__ counts, int classes, MultiOtsuResult* __restrict__ results,
                           MultiOtsuResult* __restrict__ host_results, unsigned int* __restrict__ host_counts) {
    const std::size_t i = blockIdx.x;
    multiotsu_block(counts + i * 256, classes, results + i, host_results + i, host_counts + i * 256);
}

}  // namespace imghist::detail::kernels
