// imghist filters — CUDA kernels. Host-side launch code is in filters_cuda.cu.
//
// Every kernel takes its geometry by value and loops grid-stride, so grids are sized for occupancy, not for
// the image. Arithmetic that must match OpenCV comes from filter_math.hpp (compiled with --fmad=false).
// level_table.cu includes this header too (for the table pass and the block scans), so the kernels that
// are not templates are static.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda/tuning/tuning.hpp"  // KernelBounds
#include "filters/filter_math.hpp"
#include "imghist/image.hpp"

namespace imghist::detail::kernels {

/// Two images of the same shape seen as `rows` runs of `row_bytes` bytes. When both are contiguous the
/// whole image is a single run (rows == 1).
struct Span2D {
    const std::uint8_t* src;
    std::uint8_t* dst;
    std::size_t row_bytes;
    std::size_t src_pitch, dst_pitch;
    int rows;
    std::size_t segs_per_row;  ///< one head segment + at most ceil(row_bytes / 16) 16-byte segments
    bool reverse;              ///< walk the segments last to first (reuses what a previous pass left in L2)
};

/// The image pair as the apply kernels walk it: one run when both are packed, else rows. `reverse`: walk
/// backwards, so that the first reads of a pass right after the histogram hit what it left in L2.
inline Span2D span_of(const ImageView& src, const ImageView& dst, bool reverse) {
    Span2D s;
    s.src = static_cast<const std::uint8_t*>(src.data);
    s.dst = const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(dst.data));
    s.reverse = reverse;
    if (src.contiguous() && dst.contiguous()) {
        s.row_bytes = src.row_bytes() * static_cast<std::size_t>(src.height);
        s.rows = 1;
        s.src_pitch = s.dst_pitch = s.row_bytes;
    } else {
        s.row_bytes = src.row_bytes();
        s.rows = src.height;
        s.src_pitch = src.pitch;
        s.dst_pitch = dst.pitch;
    }
    s.segs_per_row = 1 + (s.row_bytes + 15) / 16;
    return s;
}

/// Segment k of a row (for_each_segment's cut, below): the row's source `sr` and destination `dr`, `head` its
/// unaligned head's bytes.
template <class Op>
__device__ __forceinline__ void segment_pass(const std::uint8_t* sr, std::uint8_t* dr, std::size_t head, std::size_t k,
                                             std::size_t row_bytes, Op& op) {
    if (k == 0) {
        for (std::size_t j = 0; j < head; ++j) dr[j] = op.byte(sr[j], j);
        return;
    }
    const std::size_t start = head + (k - 1) * 16;
    if (start >= row_bytes) return;
    const std::size_t n = row_bytes - start;
    if (n >= 16) {
        const uint4 in = __ldcs(reinterpret_cast<const uint4*>(sr + start));
        const uint4 out = op.vec(in, start);
        if ((reinterpret_cast<std::uintptr_t>(dr + start) & 15u) == 0) {
            __stcs(reinterpret_cast<uint4*>(dr + start), out);
        } else {
            const std::uint32_t w[4] = {out.x, out.y, out.z, out.w};
#pragma unroll
            for (int b = 0; b < 16; ++b) dr[start + b] = static_cast<std::uint8_t>(w[b >> 2] >> ((b & 3) * 8));
        }
    } else {
        for (std::size_t j = 0; j < n; ++j) dr[start + j] = op.byte(sr[start + j], start + j);
    }
}

/// The unaligned head's bytes of a row that starts at `sr` (at most `row_bytes`).
__device__ __forceinline__ std::size_t row_head(const std::uint8_t* sr, std::size_t row_bytes) {
    const std::size_t head = (16u - (reinterpret_cast<std::uintptr_t>(sr) & 15u)) & 15u;
    return head > row_bytes ? row_bytes : head;
}

// Walks every (row, segment) pair of a Span2D. A row is cut at the first 16-byte boundary of its *source*
// address: segment 0 is the unaligned head (< 16 bytes, done byte by byte), segment k >= 1 the 16 bytes
// from head + 16 (k - 1), loaded with one aligned 16-byte load. The store is one 16-byte store when the
// destination happens to be aligned at the same place (always true for images with equal alignment),
// byte stores otherwise; a short tail segment is done byte by byte. `op` provides
//   uint4 vec(uint4 in, size_t offset)            16 bytes starting at row byte `offset`
//   uint8_t byte(uint8_t in, size_t offset)       one byte
template <class Op>
__device__ __forceinline__ void for_each_segment(const Span2D& s, Op& op) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (int y = blockIdx.y; y < s.rows; y += gridDim.y) {
        const std::uint8_t* sr = s.src + static_cast<std::size_t>(y) * s.src_pitch;
        std::uint8_t* dr = s.dst + static_cast<std::size_t>(y) * s.dst_pitch;
        const std::size_t head = row_head(sr, s.row_bytes);
        for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < s.segs_per_row;
             i += stride) {
            const std::size_t k = s.reverse ? s.segs_per_row - 1 - i : i;
            segment_pass(sr, dr, head, k, s.row_bytes, op);
        }
    }
}

/// Fast path for one contiguous run whose source and destination share their alignment modulo 16 (the
/// common case: two packed images, or two images with the same pitch and offset): the aligned body is
/// walked V 16-byte vectors per thread and iteration, all V loads issued before any store, so that each
/// thread keeps V loads in flight; the unaligned head and tail bytes are done by the first threads.
/// `tid` of `nthreads` threads take part (for_each_vector: the grid's threads along x).
template <int V, class Op>
__device__ __forceinline__ void for_each_vector_by(const std::uint8_t* __restrict__ src, std::uint8_t* __restrict__ dst,
                                                   std::size_t bytes, bool reverse, Op& op, std::size_t tid,
                                                   std::size_t nthreads) {
    std::size_t head = (16u - (reinterpret_cast<std::uintptr_t>(src) & 15u)) & 15u;
    if (head > bytes) head = bytes;
    const std::size_t nvec = (bytes - head) / 16;
    const std::size_t tail_start = head + nvec * 16;
    if (tid < head) dst[tid] = op.byte(src[tid], tid);
    if (tid < bytes - tail_start) dst[tail_start + tid] = op.byte(src[tail_start + tid], tail_start + tid);
    const uint4* s = reinterpret_cast<const uint4*>(src + head);
    uint4* d = reinterpret_cast<uint4*>(dst + head);
    for (std::size_t base = 0; base < nvec; base += V * nthreads) {
        uint4 r[V];
#pragma unroll
        for (int j = 0; j < V; ++j) {
            const std::size_t i = base + tid + j * nthreads;
            if (i < nvec) r[j] = __ldcs(s + (reverse ? nvec - 1 - i : i));
        }
#pragma unroll
        for (int j = 0; j < V; ++j) {
            const std::size_t i = base + tid + j * nthreads;
            if (i < nvec) {
                const std::size_t k = reverse ? nvec - 1 - i : i;
                __stcs(d + k, op.vec(r[j], head + k * 16));
            }
        }
    }
}

template <int V, class Op>
__device__ __forceinline__ void for_each_vector(const std::uint8_t* __restrict__ src, std::uint8_t* __restrict__ dst,
                                                std::size_t bytes, bool reverse, Op& op) {
    for_each_vector_by<V>(src, dst, bytes, reverse, op, static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x,
                          static_cast<std::size_t>(gridDim.x) * blockDim.x);
}

/// True when a Span2D can take the for_each_vector path.
__host__ __device__ inline bool vector_path(const Span2D& s) {
    return s.rows == 1 && ((reinterpret_cast<std::uintptr_t>(s.src) - reinterpret_cast<std::uintptr_t>(s.dst)) & 15u) == 0;
}

// 16-byte vectors in flight per thread: the table lookup needs registers for its unpacking, the threshold
// (four SIMD byte compares per vector) almost none; measured best on H200 at 4 and 8.
constexpr int kLutVectors = 4;
constexpr int kThresholdVectors = 8;

// ---- table lookup --------------------------------------------------------------------------------------------
// The tables (C channels x 256 bytes) are replicated in shared memory so that every lane reads its own bank:
// 32-bit word (e / 4) * 32 + lane holds entries e..e+3 (e a multiple of 4) for that lane. Any data, even
// uniform random bytes, then reads shared memory without bank conflicts. C * 8 KiB per block.

struct LutParam {
    std::uint8_t v[4][256];
};

template <int C>
struct LutOp {
    const std::uint32_t* tab;
    unsigned lane;
    __device__ __forceinline__ std::uint32_t lookup(unsigned e) const {
        const std::uint32_t w = tab[(e >> 2) * 32u + lane];
        return (w >> ((e & 3u) * 8u)) & 0xFFu;
    }
    __device__ __forceinline__ std::uint8_t byte(std::uint8_t in, std::size_t offset) const {
        const unsigned c = C == 1 ? 0u : static_cast<unsigned>(offset % C);
        return static_cast<std::uint8_t>(lookup(c * 256u + in));
    }
    __device__ __forceinline__ std::uint32_t word(std::uint32_t x, unsigned& c) const {
        std::uint32_t r = 0;
#pragma unroll
        for (int b = 0; b < 4; ++b) {
            const unsigned v = (x >> (8 * b)) & 0xFFu;
            r |= lookup(c * 256u + v) << (8 * b);
            if (C > 1) c = (c + 1 == C) ? 0u : c + 1;
        }
        return r;
    }
    __device__ __forceinline__ uint4 vec(uint4 in, std::size_t offset) const {
        unsigned c = C == 1 ? 0u : static_cast<unsigned>(offset % C);
        uint4 out;
        out.x = word(in.x, c);
        out.y = word(in.y, c);
        out.z = word(in.z, c);
        out.w = word(in.w, c);
        return out;
    }
};

/// The block's C tables (C x 256 bytes, channel-major, in shared, global or parameter memory) spread into
/// `tab` (C x 64 x 32 words of shared memory) as LutOp reads them — each 4-entry word in 32 copies, one per
/// bank. Synchronises.
template <int C>
__device__ __forceinline__ void spread_tables(const std::uint8_t* lut, std::uint32_t* tab) {
    const int words = C * 64 * 32;
    for (int i = threadIdx.x; i < words; i += blockDim.x) {
        const std::uint8_t* e = lut + 4 * (i >> 5);  // entries 4*group .. 4*group+3, group = i / 32
        tab[i] = static_cast<std::uint32_t>(e[0]) | (static_cast<std::uint32_t>(e[1]) << 8) |
                 (static_cast<std::uint32_t>(e[2]) << 16) | (static_cast<std::uint32_t>(e[3]) << 24);
    }
    __syncthreads();
}

/// spread_tables, then the pass over the image. Every table kernel of the two-kernel path ends here.
template <int C>
__device__ __forceinline__ void apply_tables(const Span2D& s, const std::uint8_t* lut, std::uint32_t* tab) {
    spread_tables<C>(lut, tab);
    LutOp<C> op{tab, threadIdx.x & 31u};
    if (vector_path(s)) for_each_vector<kLutVectors>(s.src, s.dst, s.row_bytes, s.reverse, op);
    else for_each_segment(s, op);
}

/// `lut_dev` (device, C x 256 bytes, 4-byte aligned) when non-null, the by-value tables otherwise.
template <int C>
__global__ void lut_kernel(Span2D s, const std::uint8_t* __restrict__ lut_dev, const __grid_constant__ LutParam p) {
    extern __shared__ std::uint32_t tab[];
    apply_tables<C>(s, lut_dev ? lut_dev : &p.v[0][0], tab);
}

// ---- 8-bit threshold -------------------------------------------------------------------------------------------
// x > t on four bytes at once (__vcmpgtu4 gives 0xFF per byte where true); t outside [0, 254] makes the
// comparison constant, which is exactly OpenCV's special-casing of such thresholds.
struct ThresholdU8Op {
    int t;
    std::uint32_t t4, m4;
    int op;
    std::uint8_t maxval;
    __device__ __forceinline__ std::uint32_t word(std::uint32_t x) const {
        const std::uint32_t mask = t < 0 ? 0xFFFFFFFFu : (t >= 255 ? 0u : __vcmpgtu4(x, t4));
        switch (op) {
            case fmath::kBinary: return mask & m4;
            case fmath::kBinaryInv: return ~mask & m4;
            case fmath::kTrunc: return t < 0 ? 0u : __vminu4(x, t4);
            case fmath::kToZero: return x & mask;
            default: return x & ~mask;
        }
    }
    __device__ __forceinline__ std::uint8_t byte(std::uint8_t in, std::size_t) const {
        return fmath::threshold_value<std::uint8_t>(in, t, maxval, op, 255);
    }
    __device__ __forceinline__ uint4 vec(uint4 in, std::size_t) const {
        return make_uint4(word(in.x), word(in.y), word(in.z), word(in.w));
    }
};

__device__ __forceinline__ ThresholdU8Op threshold_u8_op(int t, int maxval, int op) {
    ThresholdU8Op o;
    o.t = t;
    const int tc = t < 0 ? 0 : (t > 255 ? 255 : t);
    o.t4 = static_cast<std::uint32_t>(tc) * 0x01010101u;
    o.maxval = static_cast<std::uint8_t>(maxval);
    o.m4 = static_cast<std::uint32_t>(maxval) * 0x01010101u;
    o.op = op;
    return o;
}

/// Threshold from `t_dev` when non-null (computed on the device), else `t_host`.
static __global__ void threshold_u8_kernel(Span2D s, const int* __restrict__ t_dev, int t_host, int maxval, int op) {
    const ThresholdU8Op o = threshold_u8_op(t_dev ? *t_dev : t_host, maxval, op);
    if (vector_path(s)) for_each_vector<kThresholdVectors>(s.src, s.dst, s.row_bytes, s.reverse, o);
    else for_each_segment(s, o);
}

/// u16 and f32 samples (any channel count), one sample per thread and iteration.
template <class T>
__global__ void threshold_elem_kernel(Span2D s, const int* __restrict__ t_dev, int t_host, int imaxval, float fthresh,
                                      float fmaxval, int op) {
    const int t = t_dev ? *t_dev : t_host;
    const std::size_t n = s.row_bytes / sizeof(T);
    for (int y = blockIdx.y; y < s.rows; y += gridDim.y) {
        const T* sr = reinterpret_cast<const T*>(s.src + static_cast<std::size_t>(y) * s.src_pitch);
        T* dr = reinterpret_cast<T*>(s.dst + static_cast<std::size_t>(y) * s.dst_pitch);
        for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
             i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
            if constexpr (sizeof(T) == 4) {
                dr[i] = fmath::threshold_value_f32(sr[i], fthresh, fmaxval, op);
            } else {
                dr[i] = fmath::threshold_value<T>(sr[i], t, static_cast<T>(imaxval), op, 65535);
            }
        }
    }
}

// ---- block-wide helpers -----------------------------------------------------------------------------------
template <class T>
__device__ __forceinline__ T block_sum(T v, T* scratch /* >= 32 */) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xFFFFFFFFu, v, o);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads();
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        const int nw = (blockDim.x + 31) >> 5;
        v = lane < nw ? scratch[lane] : T(0);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xFFFFFFFFu, v, o);
        if (lane == 0) scratch[0] = v;
    }
    __syncthreads();
    const T r = scratch[0];
    __syncthreads();
    return r;
}

/// Exclusive prefix sum over the block (blockDim.x <= 1024, a multiple of 32); returns the block total too.
/// T: unsigned long long, or unsigned where the caller knows that the total fits (half the shuffles).
template <class T>
__device__ __forceinline__ T block_exclusive_scan(T v, T* scratch, T& total) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    T incl = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const T u = __shfl_up_sync(0xFFFFFFFFu, incl, o);
        if (lane >= o) incl += u;
    }
    __syncthreads();
    if (lane == 31) scratch[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        const int nw = blockDim.x >> 5;
        T w = lane < nw ? scratch[lane] : T(0);
        T wi = w;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const T u = __shfl_up_sync(0xFFFFFFFFu, wi, o);
            if (lane >= o) wi += u;
        }
        if (lane < nw) scratch[lane] = wi - w;  // exclusive offset of each warp
        if (lane == nw - 1) scratch[32] = wi;
    }
    __syncthreads();
    const T r = scratch[warp] + incl - v;
    total = scratch[32];
    __syncthreads();
    return r;
}

// ---- tables from device histograms ------------------------------------------------------------------------
/// cv::equalizeHist's table entry for value threadIdx.x (< 256) of the channel whose 256 counts start at
/// `counts`. Every thread of the block must call it (it synchronises); threads >= 256 return 0. Sums are
/// taken in Sum: unsigned long long, or unsigned where the caller knows that the channel has fewer than 2^32
/// samples (the one-launch filter: the same entries, from half the shuffles).
template <class Sum = unsigned long long, class Count>
__device__ __forceinline__ std::uint8_t equalize_entry_block(const Count* __restrict__ counts) {
    __shared__ Sum scratch[33];
    __shared__ int first;
    __shared__ Sum h0s;
    const int t = threadIdx.x;
    const Sum h = t < 256 ? static_cast<Sum>(counts[t]) : Sum(0);
    if (t == 0) first = 256;
    __syncthreads();
    if (h != 0) atomicMin(&first, t);
    Sum total;
    const Sum excl = block_exclusive_scan(h, scratch, total);  // synchronises
    const int i0 = first;
    // Bins before i0 are empty, so the inclusive sum at i0 is h[i0]; broadcast it.
    if (t == i0) h0s = h;
    __syncthreads();
    const Sum h0 = h0s;
    std::uint8_t out = 0;
    if (total != 0 && t < 256) {
        if (h0 == total) {
            out = static_cast<std::uint8_t>(i0);
        } else if (t > i0) {
            const float scale = fmath::equalize_scale(total, h0);
            out = fmath::equalize_entry(excl + h - h0, scale);
        }
    }
    __syncthreads();  // the shared words above are reused by the next call
    return out;
}

/// One block of 256 threads per channel: cv::equalizeHist's table for channel blockIdx.x.
template <class Count>
__global__ void equalize_table_kernel(const Count* __restrict__ counts, std::uint8_t* __restrict__ luts) {
    luts[blockIdx.x * 256 + threadIdx.x] = equalize_entry_block(counts + blockIdx.x * 256);
}

/// Equalization in one pass after the histogram (images above policy::one_launch_max_bytes(); smaller ones
/// take fused_kernels.cuh's single launch): every block derives the C tables from the C x 256 counts itself
/// (a block scan over 1 KiB that L2 serves), so histogram -> table -> apply has one kernel boundary and no
/// table kernel in between. blockDim.x == 256.
template <int C, class Count>
__global__ void equalize_apply_kernel(Span2D s, const Count* __restrict__ counts) {
    extern __shared__ std::uint32_t tab[];
    __shared__ std::uint8_t lut[C * 256];
#pragma unroll
    for (int c = 0; c < C; ++c) lut[c * 256 + threadIdx.x] = equalize_entry_block(counts + c * 256);
    __syncthreads();
    apply_tables<C>(s, lut, tab);
}

/// a / b rounded to nearest, given r = RN(1 / b), for normal a, b with a / b far from overflow and
/// underflow (here: 0 <= a, FLT_EPSILON <= b <= 1). y1 is within one ulp of a / b (one Newton correction
/// of a * r, whose error is about 2^-52 relative, shrinks it quadratically), so by Markstein's theorem the
/// second correction y1 + r * (a - b * y1), with the remainder exact in one fused multiply-add, is the
/// correctly rounded quotient: the same value as the IEEE division OpenCV performs, in five dependent
/// operations instead of a division's longer sequence.
__device__ __forceinline__ double div_rn_with_rcp(double a, double b, double r) {
    const double y0 = __dmul_rn(a, r);
    const double e0 = __fma_rn(-b, y0, a);
    const double y1 = __fma_rn(e0, r, y0);
    const double e1 = __fma_rn(-b, y1, a);
    return __fma_rn(e1, r, y1);
}

/// Otsu's q1 recurrence over 256 bins, q1s[i] = p[0] + ... + p[i] in order, by the calling thread alone.
/// Operands are read from shared memory in chunks of kChunk ahead of the arithmetic, so a shared-memory round
/// trip never sits on the dependency chain (stores of results would otherwise order every later load after
/// them).
__device__ __forceinline__ void otsu_q1_chain(const double* p, double* q1s) {
    constexpr int kChunk = 16;
    double q1 = 0.0;
    for (int i0 = 0; i0 < 256; i0 += kChunk) {
        double pc[kChunk];
#pragma unroll
        for (int k = 0; k < kChunk; ++k) pc[k] = p[i0 + k];
#pragma unroll
        for (int k = 0; k < kChunk; ++k) {
            q1 += pc[k];
            pc[k] = q1;
        }
#pragma unroll
        for (int k = 0; k < kChunk; ++k) q1s[i0 + k] = pc[k];
    }
}

/// Otsu's mu1 recurrence over 256 bins (fmath::otsu_step's, with the skip tests `valid` and the reciprocals
/// `rq` of q1 computed beforehand), by the calling thread alone, read in chunks as otsu_q1_chain.
__device__ __forceinline__ void otsu_mu1_chain(const double* q1s, const double* ip, const double* rq,
                                               const unsigned char* valid, double* mu1s) {
    constexpr int kChunk = 16;
    double mu1 = 0.0, q1_prev = 0.0;
    for (int i0 = 0; i0 < 256; i0 += kChunk) {
        double qc[kChunk], ipc[kChunk], rc[kChunk];
        bool vc[kChunk];
#pragma unroll
        for (int k = 0; k < kChunk; ++k) {
            qc[k] = q1s[i0 + k];
            ipc[k] = ip[i0 + k];
            rc[k] = rq[i0 + k];
            vc[k] = valid[i0 + k] != 0;
        }
#pragma unroll
        for (int k = 0; k < kChunk; ++k) {
            mu1 = __dmul_rn(mu1, q1_prev);
            if (vc[k]) mu1 = div_rn_with_rcp(__dadd_rn(mu1, ipc[k]), qc[k], rc[k]);
            ipc[k] = mu1;
            q1_prev = qc[k];
        }
#pragma unroll
        for (int k = 0; k < kChunk; ++k) mu1s[i0 + k] = ipc[k];
    }
}

/// The index of the largest `sigma` over a block of 256 threads, the smallest index among equal values (the
/// sequential loop keeps the first maximum), or 0 when no sigma is positive: written by thread 0 to `result`.
/// best_sigma, best_idx: 8 words of shared memory each.
__device__ __forceinline__ void block_first_max(double sigma, int idx, double* best_sigma, int* best_idx, int* result) {
    const int t = threadIdx.x;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const double s2 = __shfl_down_sync(0xFFFFFFFFu, sigma, o);
        const int i2 = __shfl_down_sync(0xFFFFFFFFu, idx, o);
        if (s2 > sigma || (s2 == sigma && i2 < idx)) {
            sigma = s2;
            idx = i2;
        }
    }
    if ((t & 31) == 0) {
        best_sigma[t >> 5] = sigma;
        best_idx[t >> 5] = idx;
    }
    __syncthreads();
    if (t == 0) {
        double bs = best_sigma[0];
        int bi = best_idx[0];
        for (int w = 1; w < 8; ++w)
            if (best_sigma[w] > bs || (best_sigma[w] == bs && best_idx[w] < bi)) {
                bs = best_sigma[w];
                bi = best_idx[w];
            }
        *result = bs > 0.0 ? bi : 0;
    }
}

/// cv::threshold's Otsu level of a 256-bin histogram, returned to every thread of a block of 256 threads
/// (all of them call it; it synchronises). The q1 and mu1 recurrences are inherently sequential (their
/// rounding must be reproduced step by step), so one thread runs them; everything else is spread over the
/// block: the bin probabilities and moments before, the skip tests between the two recurrences (they
/// depend on q1 only), and the class variances and the first-maximum search after. The mu1 loop then
/// carries nothing but its own multiply-add-divide chain.
template <class Count>
__device__ __forceinline__ int otsu256_block(const Count* __restrict__ counts) {
    __shared__ unsigned long long scratch[33];
    __shared__ double p[256], ip[256], q1s[256], mu1s[256], rq[256];
    __shared__ unsigned char valid[256];
    __shared__ double best_sigma[8];
    __shared__ int best_idx[8];
    __shared__ int result;
    const int t = threadIdx.x;
    const unsigned long long h = counts[t];
    const unsigned long long total = block_sum<unsigned long long>(h, scratch);
    const unsigned long long moment = block_sum<unsigned long long>(h * static_cast<unsigned long long>(t), scratch);
    if (total == 0) return 0;  // uniform across the block: block_sum broadcast it
    const double scale = 1.0 / static_cast<double>(total);
    const double mu = static_cast<double>(moment) * scale;
    // The same operations as fmath::otsu_step, split into its independent and sequential parts.
    p[t] = static_cast<double>(h) * scale;
    ip[t] = static_cast<double>(t) * p[t];
    __syncthreads();
    if (t == 0) otsu_q1_chain(p, q1s);
    __syncthreads();
    {
        const double q1 = q1s[t];
        const double q2 = 1.0 - q1;
        const double lo = q1 < q2 ? q1 : q2;
        const double hi = q1 > q2 ? q1 : q2;
        valid[t] = (lo < static_cast<double>(FLT_EPSILON) || hi > 1.0 - static_cast<double>(FLT_EPSILON)) ? 0 : 1;
        // Correctly rounded reciprocal of q1, computed in parallel for the division in the chain below.
        rq[t] = valid[t] ? __drcp_rn(q1) : 0.0;
    }
    __syncthreads();
    if (t == 0) otsu_mu1_chain(q1s, ip, rq, valid, mu1s);
    __syncthreads();
    double sigma = valid[t] ? fmath::otsu_sigma(q1s[t], mu1s[t], mu) : 0.0;
    if (!(sigma > 0.0)) sigma = 0.0;  // never selected: the sequential loop needs sigma > max_sigma >= 0
    block_first_max(sigma, t, best_sigma, best_idx, &result);
    __syncthreads();
    const int r = result;
    __syncthreads();  // the shared words above are reused by the next call
    return r;
}

/// Otsu on any number of bins (65536 for u16): totals in parallel, the scan by one thread. Every thread of the
/// block calls it; thread 0 gets the level (the others 0).
template <class Count>
__device__ __forceinline__ int otsu_seq_block(const Count* __restrict__ counts, int bins) {
    __shared__ unsigned long long scratch[33];
    unsigned long long tot = 0, mom = 0;
    for (int i = threadIdx.x; i < bins; i += blockDim.x) {
        tot += counts[i];
        mom += static_cast<unsigned long long>(counts[i]) * static_cast<unsigned long long>(i);
    }
    const unsigned long long total = block_sum<unsigned long long>(tot, scratch);
    const unsigned long long moment = block_sum<unsigned long long>(mom, scratch);
    if (threadIdx.x != 0 || total == 0) return 0;
    const double scale = 1.0 / static_cast<double>(total);
    return fmath::otsu_scan(counts, bins, scale, static_cast<double>(moment) * scale);
}

/// cv::threshold's Triangle level of a 256-bin histogram, returned to every thread of a block of 256 threads
/// (all of them call it; it synchronises). The rule is a short sequential walk: one thread runs it.
template <class Count>
__device__ __forceinline__ int triangle_block(const Count* __restrict__ counts) {
    __shared__ long long h[256];
    __shared__ int result;
    h[threadIdx.x] = static_cast<long long>(counts[threadIdx.x]);
    __syncthreads();
    if (threadIdx.x == 0) {
        const long long* hp = h;
        result = fmath::triangle_from([hp](int i) { return hp[i]; });
    }
    __syncthreads();
    const int r = result;
    __syncthreads();
    return r;
}

/// cv::threshold's automatic level of a histogram of `bins` counts (Triangle: 256 bins only), by one block of
/// 256 threads; written to *out and, when given, to *out2.
template <class Count>
__global__ void auto_level_kernel(const Count* __restrict__ counts, int bins, bool triangle, int* __restrict__ out,
                                  int* __restrict__ out2) {
    const int r = triangle ? triangle_block(counts) : bins == 256 ? otsu256_block(counts) : otsu_seq_block(counts, bins);
    if (threadIdx.x != 0) return;
    *out = r;
    if (out2) *out2 = r;
}

// ---- color (luma mode) --------------------------------------------------------------------------------------
/// One block's count of luma levels (contrast stretch's luma, fmath::ycrcb_luma): 8-bit levels (Levels <= 256)
/// into a block-private histogram in shared memory that flush() adds to `out`; 16-bit levels straight into
/// `out` in global memory. Every thread of the block calls zero() and flush() (they synchronise).
template <int Levels>
struct LumaBlockCounts {
    static constexpr bool kShared = Levels <= 256;
    unsigned int* local;  // shared memory, Levels entries; unused for 16-bit levels
    unsigned int* out;

    __device__ void zero() const {
        if (kShared)
            for (int i = threadIdx.x; i < Levels; i += blockDim.x) local[i] = 0;
        __syncthreads();
    }
    template <class T>
    __device__ void add(const T* bgr) const {
        atomicAdd(&(kShared ? local : out)[fmath::ycrcb_luma(bgr[0], bgr[1], bgr[2])], 1u);
    }
    __device__ void flush() const {
        if (!kShared) return;
        __syncthreads();
        for (int i = threadIdx.x; i < Levels; i += blockDim.x)
            if (local[i]) atomicAdd(&out[i], local[i]);
    }
};

/// Y of YCrCb for every pixel of a BGR / BGRA image, into a packed plane.
static __global__ void luma_plane_kernel(const std::uint8_t* __restrict__ src, std::size_t pitch, int width, int height,
                                  int channels, std::uint8_t* __restrict__ plane) {
    for (int y = blockIdx.y; y < height; y += gridDim.y) {
        const std::uint8_t* row = src + static_cast<std::size_t>(y) * pitch;
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < width; x += gridDim.x * blockDim.x) {
            const std::uint8_t* p = row + static_cast<std::size_t>(x) * channels;
            int Y, cr, cb;
            fmath::bgr_to_ycrcb(p[0], p[1], p[2], Y, cr, cb);
            plane[static_cast<std::size_t>(y) * width + x] = static_cast<std::uint8_t>(Y);
        }
    }
}

/// Replaces Y by lut[Y] and converts back to BGR; alpha (4 channels) is copied.
static __global__ void luma_apply_kernel(const std::uint8_t* __restrict__ src, std::size_t spitch, std::uint8_t* dst,
                                  std::size_t dpitch, int width, int height, int channels,
                                  const std::uint8_t* __restrict__ lut) {
    __shared__ std::uint8_t tab[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) tab[i] = lut[i];
    __syncthreads();
    for (int y = blockIdx.y; y < height; y += gridDim.y) {
        const std::uint8_t* srow = src + static_cast<std::size_t>(y) * spitch;
        std::uint8_t* drow = dst + static_cast<std::size_t>(y) * dpitch;
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < width; x += gridDim.x * blockDim.x) {
            const std::uint8_t* p = srow + static_cast<std::size_t>(x) * channels;
            fmath::equalize_luma_pixel(p, drow + static_cast<std::size_t>(x) * channels, channels, tab);
        }
    }
}

// ---- CLAHE ------------------------------------------------------------------------------------------------------
struct ClaheArgs {
    const std::uint8_t* src;
    std::size_t pitch;
    fmath::ClaheGeometry g;
};

/// Rows [r0, r1) of band `split` of `splits` of a tile's tile_h rows.
__device__ __forceinline__ void clahe_band(const fmath::ClaheGeometry& g, int split, int splits, int& r0, int& r1) {
    r0 = static_cast<int>(static_cast<long long>(g.tile_h) * split / splits);
    r1 = static_cast<int>(static_cast<long long>(g.tile_h) * (split + 1) / splits);
}

/// 8-bit: band `split` of `splits` of tile `tile` counted in shared memory and added to the tile's 256 counters
/// `hist` (zeroed beforehand). Every thread of the block calls it.
__device__ __forceinline__ void clahe_count_u8(const ClaheArgs& a, int tile, int split, int splits,
                                               unsigned int* __restrict__ hist) {
    __shared__ unsigned int h[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) h[i] = 0;
    __syncthreads();
    const fmath::ClaheGeometry& g = a.g;
    const int tx = tile % g.tiles_x, ty = tile / g.tiles_x;
    int r0, r1;
    clahe_band(g, split, splits, r0, r1);
    const long long n = static_cast<long long>(r1 - r0) * g.tile_w;
    for (long long i = threadIdx.x; i < n; i += blockDim.x) {
        const int r = r0 + static_cast<int>(i / g.tile_w);
        const int c = static_cast<int>(i % g.tile_w);
        const int sy = fmath::reflect101(ty * g.tile_h + r, g.ext_h);
        const int sx = fmath::reflect101(tx * g.tile_w + c, g.ext_w);
        atomicAdd(&h[a.src[static_cast<std::size_t>(sy) * a.pitch + sx]], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        if (h[i]) atomicAdd(&hist[i], h[i]);
    __syncthreads();  // h is reused by the block's next call
}

/// 16-bit: the samples of tile `tile` that thread `first` of `stride` takes, straight into the tile's 65536
/// counters `hist` (65536 bins per tile do not fit in shared memory).
__device__ __forceinline__ void clahe_count_u16(const ClaheArgs& a, int tile, long long first, long long stride,
                                                unsigned int* __restrict__ hist) {
    const fmath::ClaheGeometry& g = a.g;
    const int tx = tile % g.tiles_x, ty = tile / g.tiles_x;
    const long long n = static_cast<long long>(g.tile_h) * g.tile_w;
    for (long long i = first; i < n; i += stride) {
        const int r = static_cast<int>(i / g.tile_w);
        const int c = static_cast<int>(i % g.tile_w);
        const int sy = fmath::reflect101(ty * g.tile_h + r, g.ext_h);
        const int sx = fmath::reflect101(tx * g.tile_w + c, g.ext_w);
        const std::uint16_t v =
            reinterpret_cast<const std::uint16_t*>(a.src + static_cast<std::size_t>(sy) * a.pitch)[sx];
        atomicAdd(&hist[v], 1u);
    }
}

/// 8-bit tile histograms: grid (tiles, splits); each block counts a band of rows of its tile.
static __global__ void clahe_hist_u8_kernel(ClaheArgs a, unsigned int* __restrict__ hist) {
    clahe_count_u8(a, blockIdx.x, blockIdx.y, gridDim.y, hist + static_cast<std::size_t>(blockIdx.x) * 256);
}

/// 16-bit tile histograms: grid (tiles, splits); the splits share each tile's samples.
static __global__ void clahe_hist_u16_kernel(ClaheArgs a, unsigned int* __restrict__ hist) {
    clahe_count_u16(a, blockIdx.x, static_cast<long long>(blockIdx.y) * blockDim.x + threadIdx.x,
                    static_cast<long long>(gridDim.y) * blockDim.x, hist + static_cast<std::size_t>(blockIdx.x) * 65536);
}

/// One tile's table from its histogram `h`: clip, redistribute, cumulate, scale. Every thread of the block
/// calls it; each owns hist_size / blockDim.x consecutive bins.
template <class T>
__device__ __forceinline__ void clahe_lut_block(const unsigned int* __restrict__ h, const fmath::ClaheGeometry& g,
                                                T* __restrict__ lut) {
    __shared__ unsigned long long scratch[33];
    const int bins = g.hist_size;
    const int per = bins / blockDim.x;
    const int b0 = threadIdx.x * per;
    unsigned long long clipped = 0;
    if (g.clip > 0)
        for (int b = b0; b < b0 + per; ++b)
            if (h[b] > static_cast<unsigned int>(g.clip)) clipped += h[b] - g.clip;
    clipped = block_sum<unsigned long long>(clipped, scratch);
    unsigned long long mine = 0;
    for (int b = b0; b < b0 + per; ++b)
        mine += fmath::clahe_redistributed(h[b], b, g.clip, bins, static_cast<long long>(clipped));
    unsigned long long total;
    unsigned long long sum = block_exclusive_scan(mine, scratch, total);
    const int max_value = bins - 1;
    for (int b = b0; b < b0 + per; ++b) {
        sum += fmath::clahe_redistributed(h[b], b, g.clip, bins, static_cast<long long>(clipped));
        lut[b] = static_cast<T>(fmath::clahe_lut_entry(static_cast<long long>(sum), g.lut_scale, max_value));
    }
}

/// One block per tile.
template <class T>
__global__ void clahe_lut_kernel(const unsigned int* __restrict__ hist, fmath::ClaheGeometry g, T* __restrict__ luts) {
    const std::size_t tile = static_cast<std::size_t>(blockIdx.x) * g.hist_size;
    clahe_lut_block(hist + tile, g, luts + tile);
}

/// CLAHE's output for sample v at column x of a row whose vertical blend is `ay`, from the tile tables `luts`.
template <class T>
__device__ __forceinline__ T clahe_pixel(const T* __restrict__ luts, const fmath::ClaheGeometry& g, int x,
                                         const fmath::ClaheAxis& ay, int v) {
    const int bins = g.hist_size;
    const T* p1 = luts + static_cast<std::size_t>(ay.t1) * g.tiles_x * bins;
    const T* p2 = luts + static_cast<std::size_t>(ay.t2) * g.tiles_x * bins;
    const fmath::ClaheAxis ax = fmath::clahe_axis(x, g.inv_tw, g.tiles_x);
    const std::size_t i1 = static_cast<std::size_t>(ax.t1) * bins + v;
    const std::size_t i2 = static_cast<std::size_t>(ax.t2) * bins + v;
    return static_cast<T>(
        fmath::clahe_blend(__ldg(p1 + i1), __ldg(p1 + i2), __ldg(p2 + i1), __ldg(p2 + i2), ax, ay, bins - 1));
}

template <class T>
__global__ void clahe_interp_kernel(const std::uint8_t* __restrict__ src, std::size_t spitch, std::uint8_t* dst,
                                    std::size_t dpitch, fmath::ClaheGeometry g, const T* __restrict__ luts) {
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < g.height; y += gridDim.y * blockDim.y) {
        const fmath::ClaheAxis ay = fmath::clahe_axis(y, g.inv_th, g.tiles_y);
        const T* s = reinterpret_cast<const T*>(src + static_cast<std::size_t>(y) * spitch);
        T* d = reinterpret_cast<T*>(dst + static_cast<std::size_t>(y) * dpitch);
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < g.width; x += gridDim.x * blockDim.x)
            d[x] = clahe_pixel(luts, g, x, ay, s[x]);
    }
}

}  // namespace imghist::detail::kernels
