// Internal: the histogram kernels.
//
// One kernel template serves every request; its parameters are the sample type T, the channel count C, the
// binning evaluation M (binning.hpp) and where the counters live (shared memory, or global memory when the
// bins do not fit a block's shared memory).
//
// Work is cut into tiles (a few rows of an image, or a chunk of one long row) and each block takes one
// contiguous range of tiles, so in a batch a block meets few image boundaries. Within a tile the threads
// read the rows' 16-byte-aligned middles with 16-byte loads, several in flight per thread, and pick up
// the unaligned head and tail samples of every row separately: the result is exact for every ROI
// x-offset and every pitch, and the bulk of the bytes move in full sectors.
//
// Shared-memory counters are privatized: copy k of bin b of channel c sits at ((c*bins + b) * copies + k),
// and lane l uses copy l % copies. With 32 copies every lane owns one bank, so a warp's 32 increments never
// conflict in a bank whatever the data (uniform noise or a constant image); fewer copies trade some
// conflicts for room when the histogram is wide. Increments are shared-memory atomics because the warps of
// a block share the copies.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "binning.hpp"

namespace imghist::detail::cuda {

struct Desc {
    const unsigned char* base;     ///< first sample of row 0
    unsigned long long pitch;      ///< bytes between rows
    unsigned long long row_len;    ///< samples per row (rows of a contiguous image are merged into one)
    unsigned int rows;
    unsigned int tile_rows;        ///< > 0: each tile is tile_rows whole rows
    unsigned int chunks_per_row;   ///< tile_rows == 0: each tile is one chunk of one row
    unsigned int chunk_vecs;       ///< 16-byte vectors per chunk
    unsigned long long tile_begin; ///< index of this image's first tile in the launch
    unsigned long long tiles;
    const unsigned char* mask;     ///< null: no mask (masked images keep rows of `width` pixels)
    unsigned long long mask_pitch;
    unsigned int width;            ///< pixels per row (masked images)
    void* counts;                  ///< output counters (u32 or u64, see Params::count_u64)
    unsigned long long ch_stride;  ///< counters between channel starts
    unsigned long long* oor;       ///< output out-of-range counters, one per channel, or null
};

struct Params {
    const Desc* descs;  ///< device array of ndesc entries, or null: use `one`
    unsigned int ndesc;
    unsigned long long total_tiles;
    Desc one;
    int bins;
    int copies_log2;
    int vectors;
    // binning
    double low, high, a, b;
    int shift;
    unsigned int limit;
    short lut[256];
    // output
    int count_u64;
    int direct;                      ///< 1: add straight into Desc::counts; 0: into ws, last block finalizes
    unsigned int* overflow_flag;     ///< set when a 32-bit output counter wraps (direct mode only)
    unsigned long long* ws_counts;   ///< C * bins, zero between launches
    unsigned long long* ws_oor;      ///< C, zero between launches
    unsigned int* ticket;            ///< zero between launches
};

template <class T>
struct SampleTraits;
template <>
struct SampleTraits<std::uint8_t> {
    static constexpr int per_vec = 16;
    __device__ static __forceinline__ std::uint32_t get(const uint4& q, int k) {
        const unsigned w = k < 4 ? q.x : k < 8 ? q.y : k < 12 ? q.z : q.w;
        return (w >> (8 * (k & 3))) & 0xFFu;
    }
};
template <>
struct SampleTraits<std::uint16_t> {
    static constexpr int per_vec = 8;
    __device__ static __forceinline__ std::uint32_t get(const uint4& q, int k) {
        const unsigned w = k < 2 ? q.x : k < 4 ? q.y : k < 6 ? q.z : q.w;
        return (w >> (16 * (k & 1))) & 0xFFFFu;
    }
};
template <>
struct SampleTraits<std::int32_t> {
    static constexpr int per_vec = 4;
    __device__ static __forceinline__ std::int32_t get(const uint4& q, int k) {
        return static_cast<std::int32_t>(k == 0 ? q.x : k == 1 ? q.y : k == 2 ? q.z : q.w);
    }
};
template <>
struct SampleTraits<float> {
    static constexpr int per_vec = 4;
    __device__ static __forceinline__ float get(const uint4& q, int k) {
        return __uint_as_float(k == 0 ? q.x : k == 1 ? q.y : k == 2 ? q.z : q.w);
    }
};

/// Bin of one sample, or -1.
template <class T, BinMode M>
__device__ __forceinline__ int device_bin(T v, const Params& p, const short* lut) {
    if constexpr (M == BinMode::Shift) {
        const auto u = static_cast<std::uint32_t>(v);
        if (p.limit != 0u && u >= p.limit) return -1;
        return static_cast<int>(u >> p.shift);
    } else if constexpr (M == BinMode::Lut8) {
        return lut[static_cast<std::uint32_t>(v)];
    } else {
        const double d = static_cast<double>(v);
        if (!(d >= p.low && d < p.high)) return -1;
        const double f = floor(__dadd_rn(__dmul_rn(d, p.a), p.b));
        return f < 0.0 ? 0 : (f >= static_cast<double>(p.bins) ? p.bins - 1 : static_cast<int>(f));
    }
}

/// Adds v to a global output counter; for 32-bit counters reports a wrap through the flag.
__device__ __forceinline__ void add_out(void* counts, bool u64, unsigned long long idx, unsigned long long v,
                                        unsigned int* overflow_flag) {
    if (u64) {
        atomicAdd(static_cast<unsigned long long*>(counts) + idx, v);
    } else {
        const unsigned int add = static_cast<unsigned int>(v);
        const unsigned int old = atomicAdd(static_cast<unsigned int*>(counts) + idx, add);
        if ((v >> 32) != 0 || old + add < old) {
            if (overflow_flag) atomicOr(overflow_flag, 1u);
        }
    }
}

template <class T, int C, BinMode M, bool Global>
struct Counter {
    unsigned int* hist;   // shared: C * bins << copies_log2 (Global: unused)
    unsigned int* oor;    // shared: C
    const short* lut;     // shared (Lut8)
    int lane_copy;
    int copies_log2;
    const Params* p;
    // Global mode targets
    void* gcounts;
    unsigned long long gstride;
    bool gu64;

    __device__ __forceinline__ void count(T v, int c) {
        const int b = device_bin<T, M>(v, *p, lut);
        if (b < 0) {
            atomicAdd(oor + c, 1u);
            return;
        }
        if constexpr (Global) {
            add_out(gcounts, gu64, static_cast<unsigned long long>(c) * gstride + b, 1ull, p->overflow_flag);
        } else {
            atomicAdd(hist + ((((c * p->bins) + b) << copies_log2) + lane_copy), 1u);
        }
    }

    /// The samples of one 16-byte vector whose first sample belongs to channel `phase`.
    __device__ __forceinline__ void count_vector(const uint4& q, int phase) {
        using Tr = SampleTraits<T>;
#pragma unroll
        for (int k = 0; k < Tr::per_vec; ++k) {
            int c = 0;
            if constexpr (C == 2 || C == 4) c = (phase + k) & (C - 1);
            else if constexpr (C == 3) {
                c = phase + (k % 3);
                c = c >= 3 ? c - 3 : c;
            }
            count(static_cast<T>(Tr::get(q, k)), c);
        }
    }
};

__device__ __forceinline__ unsigned int fast_div(unsigned int i, unsigned int n, float inv_n) {
    // i < 2^24: the float quotient is off by at most one.
    unsigned int q = __float2uint_rz(__uint2float_rz(i) * inv_n);
    if (q * n > i) --q;
    else if ((q + 1) * n <= i) ++q;
    return q;
}

template <class T>
__device__ __forceinline__ T load_sample(const unsigned char* p) {
    return *reinterpret_cast<const T*>(p);
}

template <class T, int C, BinMode M, bool Global>
__device__ void process_tile(const Desc& D, unsigned long long lt, Counter<T, C, M, Global>& ctr, const Params& p) {
    constexpr int SZ = sizeof(T);
    constexpr int SPV = 16 / SZ;
    const unsigned int tid = threadIdx.x;
    const unsigned int nthreads = blockDim.x;

    if (D.mask != nullptr) {
        // Masked: one pixel per thread step (rows of `width` pixels, tiles of whole rows).
        const unsigned int r0 = static_cast<unsigned int>(lt) * D.tile_rows;
        const unsigned int nr = min(D.tile_rows, D.rows - r0);
        const unsigned long long W = D.width;
        const unsigned long long total = W * nr;
        const float invW = 1.0f / static_cast<float>(W);
        for (unsigned long long i = tid; i < total; i += nthreads) {
            unsigned int r = 0;
            unsigned long long x = i;
            if (nr > 1) {
                r = fast_div(static_cast<unsigned int>(i), static_cast<unsigned int>(W), invW);
                x = i - static_cast<unsigned long long>(r) * W;
            }
            const unsigned long long row = r0 + r;
            if (D.mask[row * D.mask_pitch + x] == 0) continue;
            const unsigned char* px = D.base + row * D.pitch + x * (C * SZ);
#pragma unroll
            for (int c = 0; c < C; ++c) ctr.count(load_sample<T>(px + c * SZ), c);
        }
        return;
    }

    const unsigned long long L = D.row_len;
    const unsigned long long Lb = L * SZ;
    unsigned int r0, nr;
    unsigned long long vbeg, vcap;
    bool extras;
    if (D.tile_rows != 0) {
        r0 = static_cast<unsigned int>(lt) * D.tile_rows;
        nr = min(D.tile_rows, D.rows - r0);
        vbeg = 0;
        vcap = ~0ull;
        extras = true;
    } else {
        r0 = static_cast<unsigned int>(lt / D.chunks_per_row);
        const unsigned long long chunk = lt - static_cast<unsigned long long>(r0) * D.chunks_per_row;
        nr = 1;
        vbeg = chunk * D.chunk_vecs;
        vcap = D.chunk_vecs;
        extras = chunk == 0;
    }
    const bool uniform = nr == 1 || (D.pitch & 15ull) == 0;

    // Aligned middle of row r: vectors [0, vpr) starting at byte `a`; `h` samples before it.
    auto row_geometry = [&](unsigned long long row, unsigned long long& a, unsigned long long& vpr,
                            unsigned long long& h) {
        const unsigned long long s = reinterpret_cast<unsigned long long>(D.base + row * D.pitch);
        a = (s + 15ull) & ~15ull;
        const unsigned long long e = (s + Lb) & ~15ull;
        vpr = e > a ? (e - a) >> 4 : 0ull;
        h = (a - s) / SZ;
        if (vpr == 0) h = L;  // the whole row is "extras"
    };

    if (uniform) {
        unsigned long long a0, vpr, h;
        row_geometry(r0, a0, vpr, h);
        const unsigned long long nv_ll = vpr > vbeg ? min(vpr - vbeg, vcap) : 0ull;
        const unsigned int nv = static_cast<unsigned int>(nv_ll);
        const unsigned int total = nv * nr;  // tiles are sized so that this stays below 2^24
        const float inv_nv = nv ? 1.0f / static_cast<float>(nv) : 0.0f;
        const unsigned int step = nthreads * p.vectors;
        for (unsigned int base = tid; base < total; base += step) {
            uint4 q[4];
            int phase[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const unsigned int i = base + j * nthreads;
                if (j < p.vectors && i < total) {
                    unsigned int r = 0, v = i;
                    if (nr > 1) {
                        r = fast_div(i, nv, inv_nv);
                        v = i - r * nv;
                    }
                    const unsigned long long vv = vbeg + v;
                    const unsigned char* addr =
                        reinterpret_cast<const unsigned char*>(a0) + static_cast<unsigned long long>(r) * D.pitch + vv * 16ull;
                    q[j] = __ldg(reinterpret_cast<const uint4*>(addr));
                    phase[j] = C == 1 ? 0 : static_cast<int>((h + vv * SPV) % C);
                } else {
                    phase[j] = -1;
                }
            }
#pragma unroll
            for (int j = 0; j < 4; ++j)
                if (phase[j] >= 0) ctr.count_vector(q[j], phase[j]);
        }
    } else {
        // Rows start at different alignments (pitch not a multiple of 16): geometry per row.
        const unsigned int nvmax = static_cast<unsigned int>(Lb >> 4);
        const unsigned int total = nvmax * nr;
        const float inv_nv = nvmax ? 1.0f / static_cast<float>(nvmax) : 0.0f;
        for (unsigned int i = tid; i < total; i += nthreads) {
            const unsigned int r = fast_div(i, nvmax, inv_nv);
            const unsigned int v = i - r * nvmax;
            unsigned long long a, vpr, h;
            row_geometry(r0 + r, a, vpr, h);
            if (v >= vpr) continue;
            const uint4 q = __ldg(reinterpret_cast<const uint4*>(a + v * 16ull));
            ctr.count_vector(q, C == 1 ? 0 : static_cast<int>((h + static_cast<unsigned long long>(v) * SPV) % C));
        }
    }

    if (extras) {
        // Head and tail samples of every row: fewer than 32 per row.
        const unsigned int total = nr * 32u;
        for (unsigned int i = tid; i < total; i += nthreads) {
            const unsigned int r = i >> 5, k = i & 31u;
            unsigned long long a, vpr, h;
            row_geometry(r0 + r, a, vpr, h);
            const unsigned long long nx = L - vpr * SPV;
            if (k >= nx) continue;
            const unsigned long long x = k < h ? k : k + vpr * SPV;
            const unsigned char* row = D.base + static_cast<unsigned long long>(r0 + r) * D.pitch;
            ctr.count(load_sample<T>(row + x * SZ), C == 1 ? 0 : static_cast<int>(x % C));
        }
    }
}

template <class T, int C, BinMode M, bool Global>
__global__ void __launch_bounds__(1024) histogram_kernel(const Params p) {
    extern __shared__ unsigned int smem[];
    const int copies = 1 << p.copies_log2;
    const int hist_words = Global ? 0 : C * p.bins * copies;
    unsigned int* hist = smem;
    unsigned int* oor = smem + hist_words;
    short* lut = reinterpret_cast<short*>(oor + 4);
    const unsigned int tid = threadIdx.x;

    for (int i = tid; i < hist_words; i += blockDim.x) hist[i] = 0u;
    if (tid < 4) oor[tid] = 0u;
    if constexpr (M == BinMode::Lut8) {
        for (int i = tid; i < 256; i += blockDim.x) lut[i] = p.lut[i];
    }
    __syncthreads();

    Counter<T, C, M, Global> ctr;
    ctr.hist = hist;
    ctr.oor = oor;
    ctr.lut = lut;
    ctr.copies_log2 = p.copies_log2;
    ctr.lane_copy = static_cast<int>(tid & 31u) & (copies - 1);
    ctr.p = &p;

    const unsigned long long T_ = p.total_tiles, G = gridDim.x;
    unsigned long long t = T_ * blockIdx.x / G;
    const unsigned long long t_end = T_ * (blockIdx.x + 1) / G;

    // First image whose tiles contain t: the last entry with tile_begin <= t (empty images share
    // tile_begin with their successor and are skipped by taking the last).
    unsigned int d = 0;
    if (p.descs != nullptr) {
        unsigned int lo = 0, hi = p.ndesc;  // invariant: descs[lo].tile_begin <= t
        while (hi - lo > 1) {
            const unsigned int mid = (lo + hi) / 2;
            if (p.descs[mid].tile_begin <= t) lo = mid;
            else hi = mid;
        }
        d = lo;
    }

    while (t < t_end) {
        const Desc& D = p.descs != nullptr ? p.descs[d] : p.one;
        const unsigned long long img_end = min(t_end, D.tile_begin + D.tiles);
        const bool direct = p.direct != 0;
        if constexpr (Global) {
            ctr.gcounts = direct ? D.counts : static_cast<void*>(p.ws_counts);
            ctr.gstride = direct ? D.ch_stride : static_cast<unsigned long long>(p.bins);
            ctr.gu64 = direct ? p.count_u64 != 0 : true;
        }
        const bool any = t < img_end;
        for (; t < img_end; ++t) process_tile<T, C, M, Global>(D, t - D.tile_begin, ctr, p);
        ++d;
        if (!any) continue;
        __syncthreads();
        // Flush this block's counts for image D and clear them for the next image. Thread i reads the copies
        // of counter i rotated by i, so the threads of a warp hit different banks.
        if constexpr (!Global) {
            for (int i = tid; i < C * p.bins; i += blockDim.x) {
                unsigned int* base = hist + (i << p.copies_log2);
                unsigned long long sum = 0;
                for (int k = 0; k < copies; ++k) {
                    const int kk = (k + i) & (copies - 1);
                    sum += base[kk];
                    base[kk] = 0u;
                }
                if (sum == 0) continue;
                const int c = i / p.bins, b = i - c * p.bins;
                if (direct)
                    add_out(D.counts, p.count_u64 != 0, static_cast<unsigned long long>(c) * D.ch_stride + b, sum,
                            p.overflow_flag);
                else
                    atomicAdd(p.ws_counts + i, sum);
            }
        }
        if (tid < C) {
            const unsigned int o = oor[tid];
            oor[tid] = 0u;
            if (o != 0) {
                if (direct) {
                    if (D.oor) atomicAdd(D.oor + tid, static_cast<unsigned long long>(o));
                } else {
                    atomicAdd(p.ws_oor + tid, static_cast<unsigned long long>(o));
                }
            }
        }
        __syncthreads();
    }

    if (p.direct) return;
    // Single image, overwrite mode: the last block to finish copies the workspace to the output and
    // clears the workspace for the next launch (so no separate zeroing launch is needed).
    __shared__ bool last;
    __threadfence();
    __syncthreads();
    if (tid == 0) last = atomicAdd(p.ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    const Desc& D = p.descs != nullptr ? p.descs[0] : p.one;
    for (int i = tid; i < C * p.bins; i += blockDim.x) {
        const unsigned long long v = __ldcg(p.ws_counts + i);
        p.ws_counts[i] = 0ull;
        const int c = i / p.bins, b = i - c * p.bins;
        const unsigned long long idx = static_cast<unsigned long long>(c) * D.ch_stride + b;
        if (p.count_u64) static_cast<unsigned long long*>(D.counts)[idx] = v;
        else static_cast<unsigned int*>(D.counts)[idx] = static_cast<unsigned int>(v);
    }
    if (tid < C) {
        const unsigned long long o = __ldcg(p.ws_oor + tid);
        p.ws_oor[tid] = 0ull;
        if (D.oor) D.oor[tid] = o;
    }
    if (tid == 0) *p.ticket = 0u;
}

/// Zeroes the outputs of a batch (overwrite mode), one block per image.
__global__ void zero_outputs_kernel(const Desc* descs, unsigned int ndesc, int channels, int bins, int count_u64) {
    const Desc& D = descs[blockIdx.x];
    for (int i = threadIdx.x; i < channels * bins; i += blockDim.x) {
        const int c = i / bins, b = i - c * bins;
        const unsigned long long idx = static_cast<unsigned long long>(c) * D.ch_stride + b;
        if (count_u64) static_cast<unsigned long long*>(D.counts)[idx] = 0ull;
        else static_cast<unsigned int*>(D.counts)[idx] = 0u;
    }
    if (D.oor && threadIdx.x < channels) D.oor[threadIdx.x] = 0ull;
}

}  // namespace imghist::detail::cuda
