// imghist filters — the one-launch filter kernel for 8-bit device images: histogram -> table (or threshold)
// -> apply in a single cooperative launch. Launch code is in fused.cu.
//
// Why one launch: at frame sizes (640x480 to 4K) the two-kernel path (the core's histogram, then an apply
// kernel that derives the table) pays two launches, the gap between them and a second read of the image;
// each of those costs about as much as the memory traffic itself. Here every block
//   1. reads its segments of the image (the first FusedArgs::kept per thread stay in registers), counts them in
//      shared memory and adds its counts to one global histogram;
//   2. waits at a grid-wide barrier (the launch is cooperative, so every block is resident);
//   3. reads the finished histogram, derives the C tables (or the threshold) itself — the same block
//      functions the two-kernel path uses, so the result is the same byte for byte;
//   4. applies them to the segments it kept, then to any further segments (read again, last read first,
//      so that large images hit what is still in L2), and writes the output.
// The global counts and the ticket are zero on entry and the last block to read them zeroes them again,
// so no separate clearing launch is needed. Images are cut into the segments of kernels.cuh's
// for_each_segment (16-byte aligned source vectors per row plus a head and a tail), so every pitch, ROI
// offset and alignment is exact; in-place calls are safe (every read of a kept segment precedes its write).
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "filters/cuda/level_kernels.cuh"

namespace imghist::detail::kernels {

enum class FusedKind : int { Equalize, Stretch, Match, Otsu, Triangle };

constexpr int kFusedThreads = cuda::KernelBounds::one_launch;  // one thread per 8-bit level: the table builders are written for it
constexpr int kFusedKeptMax = 2;    // segments per thread held in registers across the barrier, at most

struct FusedArgs {
    Span2D s;
    unsigned int segments;   ///< s.rows * s.segs_per_row
    /// Segments per thread held in registers across the barrier, 1 or kFusedKeptMax (fused.cu's
    /// kept_per_thread: one for images small enough to make at most one block per SM that way).
    int kept;
    unsigned int* counts;    ///< C x 256 counters, zero on entry and again on exit
    unsigned int* ticket;    ///< zero on entry and again on exit
    int copies_log2;         ///< privatized copies of the shared counters, log2
    double q_lo, q_hi;       ///< Stretch
    const unsigned int* target;  ///< Match to an image: its counts, channel c at target + c * target_stride
    int target_stride;
    int maxval, op;          ///< Otsu, Triangle: the threshold operation
    int* level;              ///< Otsu, Triangle: receives the threshold (device memory), or null
    int* level_host;         ///< Otsu, Triangle: the same, in page-locked host memory, or null
};

/// The workspace's cache of a host target's points (DeviceSlot::MatchPoints), up to four channels.
struct SavedMatchPoints {
    double xp[4][256];
    std::uint8_t fp[4][256];
};

/// Matching to a histogram given on the host: its points (match_points, computed once on the host) travel in
/// the launch's parameters (2.3 KiB per channel; a launch's cost grows with its parameters, hence one size
/// per channel count), so the call enqueues no copy and no block derives them again. Block 0 also saves them
/// (all 256 entries of each channel) to `save` (null: not saved), the workspace's cache: a
/// later call with the same target on the same stream takes FusedArgsCachedTarget instead.
template <int C>
struct FusedArgsHostTarget : FusedArgs {
    double xp[C][256];
    std::uint8_t fp[C][256];
    int points[C];
    SavedMatchPoints* save;
};

/// Matching to a host histogram whose points an earlier launch on this stream saved (see above): they are
/// read from device memory, coalesced, while the image is counted; only their counts travel as parameters.
struct FusedArgsCachedTarget : FusedArgs {
    const SavedMatchPoints* saved;
    int points[4];
};

template <class Args>
struct is_host_target : std::false_type {};
template <int C>
struct is_host_target<FusedArgsHostTarget<C>> : std::true_type {};

/// Segment `idx` of a Span2D, in for_each_segment's cut: segment 0 of a row is its unaligned head, segment
/// k >= 1 the (at most) 16 bytes from head + 16 (k - 1), aligned in the source.
struct SegmentRef {
    const std::uint8_t* src;
    std::uint8_t* dst;
    std::size_t offset;  ///< first byte within the row
    unsigned n;          ///< bytes, 0..16
};

__device__ __forceinline__ SegmentRef segment_at(const Span2D& s, unsigned int idx) {
    unsigned int y = 0, k = idx;
    if (s.rows != 1) {
        const auto per_row = static_cast<unsigned int>(s.segs_per_row);
        y = idx / per_row;
        k = idx - y * per_row;
    }
    SegmentRef r;
    r.src = s.src + static_cast<std::size_t>(y) * s.src_pitch;
    r.dst = s.dst + static_cast<std::size_t>(y) * s.dst_pitch;
    std::size_t head = (16u - (reinterpret_cast<std::uintptr_t>(r.src) & 15u)) & 15u;
    if (head > s.row_bytes) head = s.row_bytes;
    if (k == 0) {
        r.offset = 0;
        r.n = static_cast<unsigned>(head);
    } else {
        r.offset = head + static_cast<std::size_t>(k - 1) * 16;
        r.n = r.offset < s.row_bytes ? static_cast<unsigned>(min(static_cast<std::size_t>(16), s.row_bytes - r.offset)) : 0u;
    }
    return r;
}

__device__ __forceinline__ std::uint32_t byte_of(const uint4& q, int b) {
    const std::uint32_t w = b < 4 ? q.x : (b < 8 ? q.y : (b < 12 ? q.z : q.w));
    return (w >> ((b & 3) * 8)) & 0xFFu;
}

__device__ __forceinline__ uint4 load_segment(const SegmentRef& r) {
    if (r.n == 16) return __ldcs(reinterpret_cast<const uint4*>(r.src + r.offset));  // aligned: see segment_at
    std::uint32_t w[4] = {0u, 0u, 0u, 0u};
#pragma unroll
    for (int b = 0; b < 16; ++b)
        if (b < static_cast<int>(r.n)) w[b >> 2] |= static_cast<std::uint32_t>(r.src[r.offset + b]) << ((b & 3) * 8);
    return make_uint4(w[0], w[1], w[2], w[3]);
}

/// One increment per byte of the segment into this lane's copy of the channel's 256 counters. A whole
/// 16-byte segment (all but the heads and tails of rows) takes a path without a test per byte: with one,
/// every increment is a branch of its own that rebuilds the shared address, and at frame sizes, where a
/// block has few warps to hide latency with, the instructions rather than the memory set the one-launch
/// filter's time (docs/DESIGN.md section 5).
template <int C>
__device__ __forceinline__ void count_segment(const uint4& q, const SegmentRef& r, std::uint32_t* mine, int copies_log2) {
    unsigned c = C == 1 ? 0u : static_cast<unsigned>(r.offset % C);
    if (r.n == 16) {
#pragma unroll
        for (int b = 0; b < 16; ++b) {
            atomicAdd(mine + ((c * 256u + byte_of(q, b)) << copies_log2), 1u);
            if (C > 1) c = c + 1 == C ? 0u : c + 1;
        }
        return;
    }
#pragma unroll
    for (int b = 0; b < 16; ++b) {
        if (b < static_cast<int>(r.n)) atomicAdd(mine + ((c * 256u + byte_of(q, b)) << copies_log2), 1u);
        if (C > 1) c = c + 1 == C ? 0u : c + 1;
    }
}

template <class Op>
__device__ __forceinline__ void store_segment(const SegmentRef& r, const uint4& q, const Op& op) {
    if (r.n == 16) {
        const uint4 out = op.vec(q, r.offset);
        std::uint8_t* d = r.dst + r.offset;
        if ((reinterpret_cast<std::uintptr_t>(d) & 15u) == 0) {
            __stcs(reinterpret_cast<uint4*>(d), out);
        } else {
#pragma unroll
            for (int b = 0; b < 16; ++b) d[b] = static_cast<std::uint8_t>(byte_of(out, b));
        }
        return;
    }
#pragma unroll
    for (int b = 0; b < 16; ++b)
        if (b < static_cast<int>(r.n))
            r.dst[r.offset + b] = op.byte(static_cast<std::uint8_t>(byte_of(q, b)), r.offset + b);
}

/// LutOp's tables (C x 64 x 32 words: each word of four entries in 32 copies, one per lane) from the entries
/// the block's 256 threads hold, entry tid of channel c in e[c]: each word is gathered by shuffles from the
/// four lanes that hold its entries, and each of those lanes stores 8 of its 32 copies, rotated by the word's
/// index so that a warp's 32 stores fall in 32 different banks. (kernels.cuh's spread_tables, which reads
/// the entries back from memory byte by byte, takes more instructions per thread and channel: docs/DESIGN.md
/// section 5.)
/// Images of 3 and 4 channels; a gray image's table is read as it is (ByteLutOp).
template <int C>
__device__ __forceinline__ void spread_entries(const unsigned (&e)[C], std::uint32_t* tab) {
    const unsigned tid = threadIdx.x, first = tid & 31u & ~3u, g = tid >> 2, sub = tid & 3u;
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const unsigned word = __shfl_sync(0xFFFFFFFFu, e[c], first) | (__shfl_sync(0xFFFFFFFFu, e[c], first + 1) << 8) |
                              (__shfl_sync(0xFFFFFFFFu, e[c], first + 2) << 16) |
                              (__shfl_sync(0xFFFFFFFFu, e[c], first + 3) << 24);
        std::uint32_t* copies = tab + (c * 64u + g) * 32u + sub * 8u;
#pragma unroll
        for (unsigned k = 0; k < 8; ++k) copies[(k + g) & 7u] = word;
    }
    __syncthreads();
}

/// A gray image's table, 256 bytes of shared memory read a byte at a time (the pass of the one-launch filter
/// over 1-channel images). Its 64 words lie two to a bank, so a warp's 32 reads conflict at most two ways;
/// LutOp's copies per lane avoid even that, but take about twice the instructions per byte, and at frame
/// sizes the instructions, not shared memory, set this kernel's time.
struct ByteLutOp {
    const std::uint8_t* lut;
    __device__ __forceinline__ std::uint32_t word(std::uint32_t x) const {
        return static_cast<std::uint32_t>(lut[x & 0xFFu]) | (static_cast<std::uint32_t>(lut[(x >> 8) & 0xFFu]) << 8) |
               (static_cast<std::uint32_t>(lut[(x >> 16) & 0xFFu]) << 16) |
               (static_cast<std::uint32_t>(lut[x >> 24]) << 24);
    }
    __device__ __forceinline__ std::uint8_t byte(std::uint8_t in, std::size_t) const { return lut[in]; }
    __device__ __forceinline__ uint4 vec(uint4 in, std::size_t) const {
        return make_uint4(word(in.x), word(in.y), word(in.z), word(in.w));
    }
};

/// Dynamic shared memory of the kernel: the privatized counters, later reused for the spread tables (3 or 4
/// channels; sized for them at every channel count, which with 8 copies is the counters' size anyway).
__host__ __device__ constexpr std::size_t fused_smem_bytes(int channels, int copies_log2) {
    const std::size_t counters = (static_cast<std::size_t>(channels) * 256u * 4u) << copies_log2;
    const std::size_t tables = static_cast<std::size_t>(channels) * 64u * 32u * 4u;
    return counters > tables ? counters : tables;
}

/// A thread's segments of the image: g + j * nthreads for j = 0, 1, ... The first n (FusedArgs::kept) are loaded
/// before any is counted and stay in registers, with their places, from the count to the pass (a segment
/// beyond the image is one of no bytes).
struct KeptSegments {
    uint4 q[kFusedKeptMax];
    SegmentRef at[kFusedKeptMax];
    unsigned n, g, nthreads;
};

/// Matching's target, loaded at the kernel's start: it does not depend on the image, so its latency hides
/// behind the count. Points given in the parameters (FusedArgsHostTarget) go to shared memory at once: each
/// lane reads a different parameter word, which the constant cache serves one word at a time, so these reads
/// must not wait until after the barrier. Cached points (FusedArgsCachedTarget) are loaded into registers and
/// stored to shared memory after the count (store_points); a device target's counts stay in registers.
template <int C, FusedKind K, class Args>
struct FusedTarget {
    static constexpr bool kHostTarget = is_host_target<Args>::value;
    static constexpr bool kCachedTarget = std::is_same_v<Args, FusedArgsCachedTarget>;
    static constexpr bool kPoints = K == FusedKind::Match && (kHostTarget || kCachedTarget);
    unsigned long long count[K == FusedKind::Match && !kPoints ? C : 1];
    double cached_x[kCachedTarget ? C : 1];
    int cached_level[kCachedTarget ? C : 1];

    template <class PointX, class PointLevel>
    __device__ __forceinline__ void load(const Args& a, PointX& point_x, PointLevel& point_level) {
        const unsigned tid = threadIdx.x;
        if constexpr (K == FusedKind::Match) {
#pragma unroll
            for (int c = 0; c < C; ++c) {
                if constexpr (kHostTarget) {
                    const double x = a.xp[c][tid];
                    const std::uint8_t f = a.fp[c][tid];
                    point_x[c][tid] = x;
                    point_level[c][tid] = f;
                    if (blockIdx.x == 0 && a.save) {
                        a.save->xp[c][tid] = x;
                        a.save->fp[c][tid] = f;
                    }
                } else if constexpr (kCachedTarget) {
                    cached_x[c] = __ldg(&a.saved->xp[c][tid]);
                    cached_level[c] = __ldg(&a.saved->fp[c][tid]);
                } else {
                    count[c] = a.target[c * a.target_stride + tid];
                }
            }
        }
    }

    template <class PointX, class PointLevel>
    __device__ __forceinline__ void store_points(PointX& point_x, PointLevel& point_level) const {
        const unsigned tid = threadIdx.x;
        if constexpr (kCachedTarget) {
#pragma unroll
            for (int c = 0; c < C; ++c) {
                point_x[c][tid] = cached_x[c];
                point_level[c][tid] = cached_level[c];
            }
        }
    }
};

/// Step 1 of the one launch: reads the thread's segments (keeping the first k.n) and counts them into the lane's
/// copy of the counters (`mine`).
template <int C>
__device__ __forceinline__ void count_segments(const FusedArgs& a, KeptSegments& k, std::uint32_t* mine) {
#pragma unroll
    for (int j = 0; j < kFusedKeptMax; ++j) {
        const unsigned idx = k.g + static_cast<unsigned>(j) * k.nthreads;
        const bool in = j < static_cast<int>(k.n) && idx < a.segments;
        k.at[j] = in ? segment_at(a.s, idx) : SegmentRef{nullptr, nullptr, 0, 0u};
        k.q[j] = k.at[j].n != 0 ? load_segment(k.at[j]) : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int j = 0; j < kFusedKeptMax; ++j)
        if (j < static_cast<int>(k.n)) count_segment<C>(k.q[j], k.at[j], mine, a.copies_log2);
    for (unsigned idx = k.g + k.n * k.nthreads; idx < a.segments; idx += k.nthreads) {
        const SegmentRef r = segment_at(a.s, idx);
        count_segment<C>(load_segment(r), r, mine, a.copies_log2);
    }
}

/// Step 3 of the one launch, after the grid barrier: the finished histogram into `counts` (shared), then the
/// global counters cleared for the next launch by the last block to read them. `last`: a shared flag.
template <int C>
__device__ __forceinline__ void take_grid_histogram(const FusedArgs& a, unsigned int* counts, bool* last) {
    const unsigned tid = threadIdx.x;
    for (unsigned i = tid; i < C * 256u; i += blockDim.x) counts[i] = __ldcg(a.counts + i);
    __syncthreads();
    if (tid == 0) *last = atomicAdd(a.ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (*last) {
        for (unsigned i = tid; i < C * 256u; i += blockDim.x) a.counts[i] = 0u;
        if (tid == 0) *a.ticket = 0u;
    }
}

/// Step 4's pass: `op` over the kept segments, then over the thread's others (read again, last read first, so
/// that large images hit what is still in L2).
template <class Op>
__device__ __forceinline__ void apply_segments(const FusedArgs& a, const KeptSegments& k, const Op& op) {
#pragma unroll
    for (int j = 0; j < kFusedKeptMax; ++j)
        if (j < static_cast<int>(k.n)) store_segment(k.at[j], k.q[j], op);
    if (k.g + k.n * k.nthreads < a.segments) {
        for (unsigned j = (a.segments - 1 - k.g) / k.nthreads; j >= k.n; --j) {
            const SegmentRef r = segment_at(a.s, k.g + j * k.nthreads);
            store_segment(r, load_segment(r), op);
        }
    }
}

template <int C, FusedKind K, class Args>
__global__ void __launch_bounds__(kFusedThreads) fused_filter_kernel(const __grid_constant__ Args a) {
    extern __shared__ std::uint32_t work[];  // the counters, then (3 or 4 channels) the tables as LutOp reads them
    __shared__ unsigned int counts[C * 256];
    __shared__ std::uint8_t gray_lut[C == 1 ? 256 : 1];  // the table of a 1-channel image (ByteLutOp)
    __shared__ bool last;
    const unsigned tid = threadIdx.x;
    const unsigned copies = 1u << a.copies_log2;
    const unsigned words = (C * 256u) << a.copies_log2;
    for (unsigned i = tid; i < words; i += blockDim.x) work[i] = 0u;
    __syncthreads();

    using Target = FusedTarget<C, K, Args>;
    constexpr bool kPoints = Target::kPoints;
    Target target;
    __shared__ double point_x[kPoints ? C : 1][kPoints ? 256 : 1];
    __shared__ int point_level[kPoints ? C : 1][kPoints ? 256 : 1];
    target.load(a, point_x, point_level);

    // 1. Read and count. Lane l increments copy l mod copies of each counter.
    KeptSegments kept;
    kept.nthreads = gridDim.x * blockDim.x;
    kept.g = blockIdx.x * blockDim.x + tid;
    std::uint32_t* mine = work + (tid & 31u & (copies - 1u));
    kept.n = static_cast<unsigned>(a.kept);
    count_segments<C>(a, kept, mine);
    target.store_points(point_x, point_level);
    __syncthreads();
    // Thread i sums the copies of counter i, rotated by i so that the threads of a warp hit different banks.
    for (unsigned i = tid; i < C * 256u; i += blockDim.x) {
        const std::uint32_t* base = work + (i << a.copies_log2);
        unsigned sum = 0;
        for (unsigned k = 0; k < copies; ++k) sum += base[(k + i) & (copies - 1u)];
        if (sum != 0) atomicAdd(a.counts + i, sum);
    }

    // 2. Every block's counts are in.
    cooperative_groups::this_grid().sync();

    // 3. The histogram, then the counters cleared for the next launch by the last block to read them.
    take_grid_histogram<C>(a, counts, &last);

    // 4. The tables (or the threshold), then the pass over the kept segments and any others.
    auto apply = [&](const auto& op) { apply_segments(a, kept, op); };
    if constexpr (K == FusedKind::Otsu || K == FusedKind::Triangle) {
        const int t = K == FusedKind::Otsu ? otsu256_block(counts) : triangle_block(counts);
        if (blockIdx.x == 0 && tid == 0) {
            if (a.level) *a.level = t;
            if (a.level_host) *a.level_host = t;
        }
        apply(threshold_u8_op(t, a.maxval, a.op));
    } else {
        // The counters in `work` were last read before the grid barrier: the tables may overwrite them now.
        unsigned e[C];
#pragma unroll
        for (int c = 0; c < C; ++c) {
            if constexpr (K == FusedKind::Equalize) e[c] = equalize_entry_block<unsigned>(counts + c * 256);  // < 2^32 samples
            else if constexpr (K == FusedKind::Stretch) e[c] = stretch_entry_block(counts + c * 256, a.q_lo, a.q_hi);
            else if constexpr (kPoints) e[c] = match_entry_points(counts + c * 256, point_x[c], point_level[c], a.points[c]);
            else e[c] = match_entry_block(counts + c * 256, target.count[c]);
        }
        if constexpr (C == 1) {
            gray_lut[tid] = static_cast<std::uint8_t>(e[0]);
            __syncthreads();
            apply(ByteLutOp{gray_lut});
        } else {
            spread_entries<C>(e, work);
            apply(LutOp<C>{work, tid & 31u});
        }
    }
}

}  // namespace imghist::detail::kernels
