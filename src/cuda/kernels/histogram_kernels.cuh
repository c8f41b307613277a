// Internal: the histogram kernels.
//
// Two kernel templates: histogram_kernel serves every request, and contiguous_kernel (below) the small unmasked
// images the plan gives it. histogram_kernel's parameters: the sample type T, the channel count C, the
// binning evaluation M (binning.hpp; Shift is split into ShiftFull when no range test is needed), whether
// the launch is a batch B (a single image's instance carries none of the batch's lookup, so its counting
// loop keeps every value in registers), and where the counters live:
//   Smem    — privatized copies in the block's shared memory (the fast path);
//   Split   — for histograms too wide for one block (e.g. 65536 bins): the slots are cut into K ranges
//             and K sibling blocks (consecutive block indices) read the same tiles, each counting only the
//             samples of its own range. Siblings run side by side, so the second read of a tile is
//             served by L2 and DRAM still sees the data once;
//   Global  — straight into global memory (any GPU, any width; the slow fallback).
//
// Work is cut into tiles (a few rows of an image, or a chunk of one long row) and each block takes one
// contiguous range of tiles, so in a batch a block meets few image boundaries. Within a tile the threads
// read the rows' 16-byte-aligned middles with 16-byte loads, several in flight per thread, and pick up
// the unaligned head and tail samples of every row separately: the result is exact for every ROI
// x-offset and every pitch, and the bulk of the bytes move in full sectors.
//
// A single-image launch that overwrites device memory does it in one pass (Params::zero_first): the first block to
// arrive zeroes the output while the others count, and every block adds its counts straight into it once that is
// published. Mapped host outputs (blocking calls) and histograms of more counters than one warp zeroes quickly
// (HistogramLimits::zero_first_max_counters) are counted in the workspace instead and copied out by the last block to
// finish (finish_merge), which for a blocking call tags every word it stores in page-locked host memory with the call's
// number: the host reads the result once every word carries it, instead of synchronising the stream, whose wake-up
// costs a small call more (docs/DESIGN.md section 5). A batch that overwrites stores the counts
// of every image one block holds whole (Params::store_whole) and adds those of images shared between blocks into
// outputs zeroed before the launch; images of one geometry at equal distances are found by their strides
// (Params::strides) instead of a descriptor array. contiguous_kernel is the same work, either way, for an 8-bit, 16-bit
// or float image small enough for one range per block, contiguous or in rows of one 16-byte alignment, without the
// general kernel's descriptors and tiling.
//
// Shared-memory counters are privatized: with S = bins + 1 slots per channel (slot `bins` counts the
// samples out of range, so the hot loop has no branch; 8-bit samples are counted as their 256 raw values and
// folded into bins at the flush), copy k of slot s of channel c sits at
// ((c*S + s) * copies + k), and lane l uses copy l % copies. With 32 copies every lane owns one bank, so
// a warp's 32 increments never conflict in a bank whatever the data (uniform noise or a constant image);
// fewer copies trade some conflicts for room when the histogram is wide. Increments are shared-memory
// atomics (reductions) because the warps of a block share the copies.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/binning.hpp"  // BinParams, BinMode
#include "cuda/plan/histogram_params.hpp"  // Desc, Params: the launch parameters
#include "cuda/tuning/tuning.hpp"  // KernelBounds

namespace imghist::detail::cuda {

template <class T>
struct SampleTraits;
template <>
struct SampleTraits<std::uint8_t> {
    static constexpr int per_vec = 16;
    __device__ static __forceinline__ std::uint32_t get(const uint4& q, int k) {
        const unsigned w = k < 4 ? q.x : k < 8 ? q.y : k < 12 ? q.z : q.w;
        return __byte_perm(w, 0u, 0x4440u | static_cast<unsigned>(k & 3));  // one PRMT: byte k&3, zero-extended
    }
};
template <>
struct SampleTraits<std::uint16_t> {
    static constexpr int per_vec = 8;
    __device__ static __forceinline__ std::uint32_t get(const uint4& q, int k) {
        const unsigned w = k < 2 ? q.x : k < 4 ? q.y : k < 6 ? q.z : q.w;
        return __byte_perm(w, 0u, (k & 1) ? 0x4432u : 0x4410u);
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

/// The binning parameters the hot loop needs, held in registers: the rule's fields and the bin count.
struct BinRegs : BinFields {
    int bins;
    BinRegs() = default;  // KMode::Direct reads none of them
    __device__ __forceinline__ BinRegs(const BinFields& f, int bins_) : BinFields(f), bins(bins_) {}
};

/// Slot of one sample: its bin, or `bins` when it is out of range — binning.hpp's evaluations, chosen at
/// compile time (Direct: 8-bit values are counted raw and folded into bins at the flush).
template <class T, KMode M>
__device__ __forceinline__ unsigned int slot_of(T v, const BinRegs& p) {
    if constexpr (M == KMode::Direct) {
        return static_cast<std::uint32_t>(v);
    } else if constexpr (M == KMode::ShiftFull) {
        return shift_full_slot(static_cast<std::uint32_t>(v), p.shift);
    } else if constexpr (M == KMode::Shift) {
        return shift_slot(static_cast<std::uint32_t>(v), p.shift, p.bins);
    } else if constexpr (M == KMode::ScaleF32) {
        return scale_f32_slot(static_cast<float>(v), p.scale, p.high_f, p.bins);
    } else {
        return arith_slot(static_cast<double>(v), p.low, p.high, p.a, p.b, p.bins);
    }
}

/// Adds v to a global output counter; for 32-bit counters with a flag, reports a wrap through it. Without a
/// flag (the host has ruled a wrap out) the old value is not needed, so the addition is a reduction that
/// the thread does not wait for: a block's flush then ends without an L2 round trip.
__device__ __forceinline__ void add_out(void* counts, bool u64, unsigned long long idx, unsigned long long v,
                                        unsigned int* overflow_flag) {
    if (u64) {
        atomicAdd(static_cast<unsigned long long*>(counts) + idx, v);
    } else if (overflow_flag == nullptr) {
        atomicAdd(static_cast<unsigned int*>(counts) + idx, static_cast<unsigned int>(v));
    } else {
        const unsigned int add = static_cast<unsigned int>(v);
        const unsigned int old = atomicAdd(static_cast<unsigned int*>(counts) + idx, add);
        if ((v >> 32) != 0 || old + add < old) atomicOr(overflow_flag, 1u);
    }
}

// Shared-memory increment by address. No "memory" clobber: the counters are only ever read after a
// __syncthreads() or cluster barrier, and a clobber would make the compiler reload every parameter and
// descriptor field after each increment.
__device__ __forceinline__ void smem_inc(unsigned int addr) {
    asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(addr));
}

__device__ __forceinline__ void smem_add(unsigned int addr, unsigned int v) {
    asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(addr), "r"(v));
}

__device__ __forceinline__ unsigned int smem_addr(const void* p) {
    return static_cast<unsigned int>(__cvta_generic_to_shared(p));
}

/// Whether the vector holds sixteen equal bytes.
__device__ __forceinline__ bool sixteen_equal_bytes(const uint4& q) {
    const unsigned int b = __byte_perm(q.x, 0u, 0x0000u);  // byte 0 in all four bytes
    return q.x == b && q.y == b && q.z == b && q.w == b;
}

template <class T, int C, KMode M, Storage S>
struct Counter {
    BinRegs br;
    unsigned int lane_base;   // Smem/Split: shared byte address of this lane's copy of local slot 0
    unsigned int slot_bytes;  // Smem/Split: bytes between two slots (copies * 4)
    unsigned int chan_slots;  // slots per channel (bins + 1, or the 256 raw 8-bit values)
    unsigned int split_first; // Split: first flat slot owned by this block
    unsigned int split_slots; // Split: flat slots owned by this block
    unsigned int oor_base;    // Global: shared byte address of the C out-of-range counters
    unsigned int* overflow_flag;
    void* gcounts;            // Global
    unsigned long long gstride;
    bool gu64;

    __device__ __forceinline__ explicit Counter(const Params& p) : br(p.rule, p.bins) {}
    Counter() = default;  // KMode::Direct with Smem storage: lane_base, slot_bytes and chan_slots suffice

    /// Smem: one increment of the slot of v, for the channel whose slot 0 is at cbase. The address is one
    /// multiply-add, which runs on the FMA pipe and leaves the ALU to the sample extraction.
    __device__ __forceinline__ void count_at(T v, unsigned int cbase) {
        const unsigned int s = slot_of<T, M>(v, br);
        smem_inc(cbase + s * slot_bytes);
    }

    __device__ __forceinline__ void count(T v, int c) {
        const unsigned int s = slot_of<T, M>(v, br);
        if constexpr (S == Storage::Smem) {
            smem_inc(lane_base + (static_cast<unsigned int>(c) * chan_slots + s) * slot_bytes);
        } else if constexpr (S == Storage::Split) {
            const unsigned int local = static_cast<unsigned int>(c) * chan_slots + s - split_first;
            if (local < split_slots) smem_inc(lane_base + local * slot_bytes);
        } else {
            if (s == static_cast<unsigned int>(br.bins)) {
                smem_inc(oor_base + 4u * c);
                return;
            }
            add_out(gcounts, gu64, static_cast<unsigned long long>(c) * gstride + s, 1ull, overflow_flag);
        }
    }

    /// The samples of one 16-byte vector whose first sample belongs to channel `phase`.
    __device__ __forceinline__ void count_vector(const uint4& q, int phase) {
        using Tr = SampleTraits<T>;
        if constexpr (S == Storage::Smem) {
            // Base address of the channel of sample k, for k mod C: computed once per vector.
            unsigned int cb[C];
#pragma unroll
            for (int j = 0; j < C; ++j) {
                int c = phase + j;
                c = c >= C ? c - C : c;
                cb[j] = lane_base + static_cast<unsigned int>(c) * chan_slots * slot_bytes;
            }
#pragma unroll
            for (int k = 0; k < Tr::per_vec; ++k) count_at(static_cast<T>(Tr::get(q, k)), cb[k % C]);
        } else {
#pragma unroll
            for (int k = 0; k < Tr::per_vec; ++k) {
                int c = phase + (k % C);
                c = c >= C ? c - C : c;
                count(static_cast<T>(Tr::get(q, k)), c);
            }
        }
    }

    /// 8-bit gray, raw values: when the vector is sixteen equal bytes, counts them with one increment by 16
    /// and returns true (a sixteenth of the shared-memory atomics that bound the counting of flat data).
    __device__ __forceinline__ bool count_if_flat(const uint4& q) {
        static_assert(S == Storage::Smem && C == 1 && M == KMode::Direct && sizeof(T) == 1, "8-bit gray, raw values");
        if (!sixteen_equal_bytes(q)) return false;
        smem_add(lane_base + (q.x & 0xFFu) * slot_bytes, 16u);
        return true;
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

/// A masked tile of whole rows: one pixel per thread step (rows of `width` pixels).
template <class T, int C, KMode M, Storage S>
__device__ __forceinline__ void count_masked_tile(const Desc& D, unsigned long long lt, Counter<T, C, M, S>& ctr) {
    constexpr int SZ = sizeof(T);
    const unsigned int tid = threadIdx.x;
    const unsigned int nthreads = blockDim.x;
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
}

/// The part of an unmasked image one tile covers: rows [r0, r0 + nr) of L samples (Lb bytes), and of each row's
/// aligned middle the vectors [vbeg, vbeg + vcap).
struct TileCut {
    unsigned long long L, Lb;
    unsigned int r0, nr;
    unsigned long long vbeg, vcap;
};

/// Aligned middle of row `row`: vectors [0, vpr) starting at byte `a`; `h` samples before it.
template <int SZ>
__device__ __forceinline__ void row_geometry(const Desc& D, const TileCut& tc, unsigned long long row, unsigned long long& a,
                                             unsigned long long& vpr, unsigned long long& h) {
    const unsigned long long s = reinterpret_cast<unsigned long long>(D.base + row * D.pitch);
    a = (s + 15ull) & ~15ull;
    const unsigned long long e = (s + tc.Lb) & ~15ull;
    vpr = e > a ? (e - a) >> 4 : 0ull;
    h = (a - s) / SZ;
    if (vpr == 0) h = tc.L;  // the whole row is "extras"
}

/// The aligned middles of a tile whose rows share one alignment: p.vectors loads in flight per thread, all
/// issued before any is counted.
template <class T, int C, KMode M, Storage S>
__device__ __forceinline__ void count_uniform_vectors(const Desc& D, const TileCut& tc, Counter<T, C, M, S>& ctr,
                                                      const Params& p) {
    constexpr int SPV = 16 / sizeof(T);
    const unsigned int tid = threadIdx.x;
    const unsigned int nthreads = blockDim.x;
    const unsigned int nr = tc.nr;
    unsigned long long a0, vpr, h;
    row_geometry<sizeof(T)>(D, tc, tc.r0, a0, vpr, h);
    const unsigned long long nv_ll = vpr > tc.vbeg ? min(vpr - tc.vbeg, tc.vcap) : 0ull;
    const unsigned int nv = static_cast<unsigned int>(nv_ll);
    const unsigned int total = nv * nr;  // tiles are sized so that this stays below 2^24
    const float inv_nv = nr > 1 && nv ? 1.0f / static_cast<float>(nv) : 0.0f;  // fast_div's, rows > 1 only
    const unsigned int step = nthreads * p.vectors;
    const unsigned char* tile_base = reinterpret_cast<const unsigned char*>(a0) + tc.vbeg * 16ull;
    const int phase0 = C == 1 ? 0 : static_cast<int>((h + tc.vbeg * SPV) % C);
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
                const unsigned char* addr = tile_base + static_cast<unsigned long long>(r) * D.pitch + v * 16ull;
                q[j] = __ldg(reinterpret_cast<const uint4*>(addr));
                phase[j] = C == 1 ? 0 : static_cast<int>((phase0 + v * SPV) % C);
            } else {
                phase[j] = -1;
            }
        }
#pragma unroll
        for (int j = 0; j < 4; ++j)
            if (phase[j] >= 0) ctr.count_vector(q[j], phase[j]);
    }
}

/// The aligned middles of a tile whose rows start at different alignments (pitch not a multiple of 16):
/// geometry per row.
template <class T, int C, KMode M, Storage S>
__device__ __forceinline__ void count_row_vectors(const Desc& D, const TileCut& tc, Counter<T, C, M, S>& ctr) {
    constexpr int SPV = 16 / sizeof(T);
    const unsigned int nvmax = static_cast<unsigned int>(tc.Lb >> 4);
    const unsigned int total = nvmax * tc.nr;
    const float inv_nv = nvmax ? 1.0f / static_cast<float>(nvmax) : 0.0f;
    for (unsigned int i = threadIdx.x; i < total; i += blockDim.x) {
        const unsigned int r = fast_div(i, nvmax, inv_nv);
        const unsigned int v = i - r * nvmax;
        unsigned long long a, vpr, h;
        row_geometry<sizeof(T)>(D, tc, tc.r0 + r, a, vpr, h);
        if (v >= vpr) continue;
        const uint4 q = __ldg(reinterpret_cast<const uint4*>(a + v * 16ull));
        ctr.count_vector(q, C == 1 ? 0 : static_cast<int>((h + static_cast<unsigned long long>(v) * SPV) % C));
    }
}

/// The unaligned head and tail samples of a tile whose rows share one alignment: the same count, nx < 32, in
/// every row of the tile (often none at all).
template <class T, int C, KMode M, Storage S>
__device__ __forceinline__ void count_uniform_extras(const Desc& D, const TileCut& tc, Counter<T, C, M, S>& ctr) {
    constexpr int SZ = sizeof(T);
    constexpr int SPV = 16 / SZ;
    const unsigned int tid = threadIdx.x;
    const unsigned int nthreads = blockDim.x;
    const unsigned int r0 = tc.r0, nr = tc.nr;
    unsigned long long a0, vpr, h;
    row_geometry<SZ>(D, tc, r0, a0, vpr, h);
    const unsigned int nx = static_cast<unsigned int>(tc.L - vpr * SPV);
    const unsigned int total = nr * nx;
    const float inv_nx = nr > 1 && nx ? 1.0f / static_cast<float>(nx) : 0.0f;
    for (unsigned int i = tid; i < total; i += nthreads) {
        const unsigned int r = nr > 1 ? fast_div(i, nx, inv_nx) : 0u;
        const unsigned int k = i - r * nx;
        const unsigned long long x = k < h ? k : k + vpr * SPV;
        const unsigned char* row = D.base + static_cast<unsigned long long>(r0 + r) * D.pitch;
        ctr.count(load_sample<T>(row + x * SZ), C == 1 ? 0 : static_cast<int>(x % C));
    }
}

/// The unaligned head and tail samples of every row of a tile whose rows start at different alignments: fewer
/// than 32 per row.
template <class T, int C, KMode M, Storage S>
__device__ __forceinline__ void count_row_extras(const Desc& D, const TileCut& tc, Counter<T, C, M, S>& ctr) {
    constexpr int SZ = sizeof(T);
    constexpr int SPV = 16 / SZ;
    const unsigned int tid = threadIdx.x;
    const unsigned int nthreads = blockDim.x;
    const unsigned int r0 = tc.r0, nr = tc.nr;
    const unsigned int total = nr * 32u;
    for (unsigned int i = tid; i < total; i += nthreads) {
        const unsigned int r = i >> 5, k = i & 31u;
        unsigned long long a, vpr, h;
        row_geometry<SZ>(D, tc, r0 + r, a, vpr, h);
        const unsigned long long nx = tc.L - vpr * SPV;
        if (k >= nx) continue;
        const unsigned long long x = k < h ? k : k + vpr * SPV;
        const unsigned char* row = D.base + static_cast<unsigned long long>(r0 + r) * D.pitch;
        ctr.count(load_sample<T>(row + x * SZ), C == 1 ? 0 : static_cast<int>(x % C));
    }
}

/// Counts tile `lt` of image D.
template <class T, int C, KMode M, Storage S>
__device__ __forceinline__ void process_tile(const Desc& D, unsigned long long lt, Counter<T, C, M, S>& ctr,
                                             const Params& p) {
    if (D.mask != nullptr) {
        count_masked_tile(D, lt, ctr);
        return;
    }
    const unsigned long long L = D.row_len;
    const unsigned long long Lb = L * sizeof(T);
    unsigned int r0, nr;
    unsigned long long vcap, vbeg;
    bool extras;
    if (D.tile_rows != 0) {
        r0 = static_cast<unsigned int>(lt) * D.tile_rows;
        nr = min(D.tile_rows, D.rows - r0);
        vbeg = 0;
        vcap = ~0ull;
        extras = true;
    } else {
        r0 = lt < 0xFFFFFFFFull ? static_cast<unsigned int>(lt) / D.chunks_per_row
                                : static_cast<unsigned int>(lt / D.chunks_per_row);
        const unsigned long long chunk = lt - static_cast<unsigned long long>(r0) * D.chunks_per_row;
        nr = 1;
        vbeg = chunk * D.chunk_vecs;
        vcap = D.chunk_vecs;
        extras = chunk == 0;
    }
    const bool uniform = nr == 1 || (D.pitch & 15ull) == 0;
    const TileCut tc{L, Lb, r0, nr, vbeg, vcap};
    if (uniform) count_uniform_vectors(D, tc, ctr, p);
    else count_row_vectors(D, tc, ctr);
    if (extras && uniform) count_uniform_extras(D, tc, ctr);
    else if (extras) count_row_extras(D, tc, ctr);
}

/// Sum of the `copies` privatized copies of one slot (at `base`), which it leaves zero when `clear` (a block
/// that flushes once need not). Thread i starts at a rotated position so that the threads of a warp spread
/// over the banks; four copies per 16-byte access when there are at least four.
template <bool clear = true>
__device__ __forceinline__ unsigned long long take_copies(unsigned int* base, int copies, unsigned int i) {
    unsigned long long sum = 0;
    if (copies >= 4) {
        uint4* b4 = reinterpret_cast<uint4*>(base);
        const int quads = copies >> 2;
#pragma unroll 4
        for (int k = 0; k < quads; ++k) {
            const int kk = (k + static_cast<int>(i)) & (quads - 1);
            const uint4 q = b4[kk];
            sum += static_cast<unsigned long long>(q.x) + q.y + q.z + q.w;
            if (clear) b4[kk] = make_uint4(0u, 0u, 0u, 0u);
        }
    } else {
        for (int k = 0; k < copies; ++k) {
            const int kk = (k + static_cast<int>(i)) & (copies - 1);
            sum += base[kk];
            if (clear) base[kk] = 0u;
        }
    }
    return sum;
}

/// Zeroes `words` shared counters (16-byte stores when the count allows; dynamic shared memory is 16-byte
/// aligned).
__device__ __forceinline__ void zero_shared(unsigned int* hist, int words) {
    if ((words & 3) == 0) {
        uint4* h4 = reinterpret_cast<uint4*>(hist);
        for (int i = threadIdx.x; i < words / 4; i += blockDim.x) h4[i] = make_uint4(0u, 0u, 0u, 0u);
    } else {
        for (int i = threadIdx.x; i < words; i += blockDim.x) hist[i] = 0u;
    }
}

/// Overwrite in one launch (Params::zero_first), first half — run by the last warp of every block at its
/// start, while the other warps begin counting: the warp takes an arrival number, and the first block to
/// arrive zeroes the output and publishes the grid size in sync[1]. Whichever block that is, it is running,
/// so no block waits for one that has not been scheduled. The release store makes the lanes' zeroes (ordered
/// before it by __syncwarp) visible to every block that reads the publication with an acquire load.
__device__ __forceinline__ void zero_output_if_first(const OutputRef& o, int channels) {
    const unsigned int lane = threadIdx.x & 31u;
    const unsigned int warp_mask = __activemask();
    unsigned int arrival = 0;
    if (lane == 0) {
        arrival = atomicAdd(o.sync, 1u);
        if (arrival == gridDim.x - 1) *o.sync = 0u;  // every block has arrived: ready for the next launch
    }
    arrival = __shfl_sync(warp_mask, arrival, 0);
    if (arrival != 0) return;
    // Channel by channel: no division per counter on the path every other block waits for. Where each
    // channel's counters start and end on 16-byte boundaries (every packed output of a multiple of 4 bins
    // from cudaMalloc), 16-byte stores: a quarter of the stores (half for 64-bit counts).
    const unsigned int bins = static_cast<unsigned int>(o.bins);
    const unsigned int cs = o.count_u64 ? 8u : 4u;
    const bool vec = (reinterpret_cast<std::uintptr_t>(o.counts) & 15u) == 0 && (o.ch_stride * cs) % 16u == 0 &&
                     (bins * cs) % 16u == 0;
    for (int c = 0; c < channels; ++c) {
        const unsigned long long first = static_cast<unsigned long long>(c) * o.ch_stride;
        if (vec) {
            uint4* v = reinterpret_cast<uint4*>(static_cast<char*>(o.counts) + first * cs);
            for (unsigned int i = lane; i < bins * cs / 16u; i += 32u) v[i] = make_uint4(0u, 0u, 0u, 0u);
        } else if (o.count_u64) {
            for (unsigned int b = lane; b < bins; b += 32u) static_cast<unsigned long long*>(o.counts)[first + b] = 0ull;
        } else {
            for (unsigned int b = lane; b < bins; b += 32u) static_cast<unsigned int*>(o.counts)[first + b] = 0u;
        }
    }
    if (o.oor && lane < static_cast<unsigned int>(channels)) o.oor[lane] = 0ull;
    __syncwarp(warp_mask);
    if (lane == 0) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(o.sync + 1), "r"(gridDim.x) : "memory");
}

/// Second half, by one thread of every block exactly once, before the block's first addition (or at its
/// end when it has none): waits for the publication and counts itself past it; the last block to pass
/// leaves sync[1] at zero.
__device__ __forceinline__ void wait_output_zeroed(unsigned int* sync) {
    unsigned int v;
    do {
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(sync + 1) : "memory");
    } while (v == 0u);
    atomicSub(sync + 1, 1u);
}

/// The tiles [t, t_end) of block group `group` of `groups`, an even share of `total`: 32-bit divisions when
/// the products fit (every frame-sized image), the 64-bit ones (a long subroutine each) only for launches of
/// more than 65535 tiles.
__device__ __forceinline__ void tile_range(unsigned long long total, unsigned int group, unsigned int groups,
                                           unsigned long long& t, unsigned long long& t_end) {
    if (total < 65536ull) {
        const unsigned int T32 = static_cast<unsigned int>(total);
        t = T32 * group / groups;
        t_end = T32 * (group + 1) / groups;
    } else {
        t = total * group / groups;
        t_end = total * (group + 1) / groups;
    }
}

/// Image d of a launch: its descriptor, or for an equally spaced batch (no descriptor array) the first
/// image's moved by d strides.
__device__ __forceinline__ Desc desc_at(const Params& p, unsigned int d) {
    if (p.descs != nullptr) return p.descs[d];
    Desc D = p.one;
    if (d != 0) {
        const long long k = static_cast<long long>(d);
        D.base += k * p.strides.image;
        D.counts = static_cast<char*>(D.counts) + k * p.strides.counts;
        if (D.oor) D.oor = reinterpret_cast<unsigned long long*>(reinterpret_cast<char*>(D.oor) + k * p.strides.oor);
        D.tile_begin = static_cast<unsigned long long>(d) * D.tiles;
    }
    return D;
}

/// Where a flush puts a block's counts: counters (32- or 64-bit, `stride` apart between channels) and the
/// out-of-range counters (null: not wanted). The output itself, or the launch's workspace.
struct FlushTarget {
    void* counts;
    unsigned long long stride;
    unsigned long long* oor;
    unsigned int bins;
    bool u64;

    /// The count of slot b of channel c (a bin, or `bins`: out of range), added.
    __device__ __forceinline__ void add(unsigned int c, unsigned int b, unsigned long long sum,
                                        unsigned int* overflow_flag) const {
        if (b == bins) {
            if (oor) atomicAdd(oor + c, sum);
        } else {
            add_out(counts, u64, static_cast<unsigned long long>(c) * stride + b, sum, overflow_flag);
        }
    }
    /// The same, stored: the caller holds the whole count of that counter.
    __device__ __forceinline__ void store(unsigned int c, unsigned int b, unsigned long long sum) const {
        if (b == bins) {
            if (oor) oor[c] = sum;
        } else if (u64) {
            static_cast<unsigned long long*>(counts)[static_cast<unsigned long long>(c) * stride + b] = sum;
        } else {
            static_cast<unsigned int*>(counts)[static_cast<unsigned long long>(c) * stride + b] =
                static_cast<unsigned int>(sum);
        }
    }
};

/// The workspace counters of the last-block merge as a flush target (bins counters per channel).
__device__ __forceinline__ FlushTarget merge_target(const MergeRef& m, unsigned int bins) {
    return FlushTarget{m.counts, bins, m.oor, bins, m.u64 != 0};
}

/// The end of a merged launch (MergeRef), called by every block after its counts are in the workspace: the
/// last block to arrive copies the workspace to `out` (plain stores: `out` may be page-locked host memory,
/// where device atomics would cross the bus), each word carrying m.tag when one is set, and zeroes the
/// workspace and the ticket for the next launch. A host waiting for a tagged result needs no other sign: a
/// word is final once it carries the tag, because each is one aligned 8-byte store (no system-scope fence and
/// no separate word behind the counts, which cost more: docs/DESIGN.md section 5).
__device__ __forceinline__ void finish_merge(const MergeRef& m, const FlushTarget& out, int C) {
    __shared__ bool last;
    const unsigned int tid = threadIdx.x;
    __threadfence();
    __syncthreads();
    if (tid == 0) last = atomicAdd(m.ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    const unsigned long long mark = static_cast<unsigned long long>(m.tag) << 32;  // counts < 2^32 when tagged
    const unsigned int bins = out.bins;
    const unsigned int n = static_cast<unsigned int>(C) * bins;
    for (unsigned int i = tid; i < n; i += blockDim.x) {
        unsigned long long v;
        if (m.u64) {
            auto* w = static_cast<unsigned long long*>(m.counts);
            v = __ldcg(w + i);
            w[i] = 0ull;
        } else {
            auto* w = static_cast<unsigned int*>(m.counts);
            v = __ldcg(w + i);
            w[i] = 0u;
        }
        const unsigned int c = C == 1 ? 0u : i / bins;
        out.store(c, i - c * bins, v | mark);
    }
    if (tid < static_cast<unsigned int>(C)) {
        const unsigned long long o = __ldcg(m.oor + tid);
        m.oor[tid] = 0ull;
        out.store(tid, bins, o | mark);
    }
    if (tid == 0) *m.ticket = 0u;
}

/// The first image of a batch launch whose tiles contain tile t: the last entry with tile_begin <= t (empty
/// images share tile_begin with their successor and are skipped by taking the last). Equally spaced images
/// all have one.tiles tiles.
__device__ __forceinline__ unsigned int first_image(const Params& p, unsigned long long t) {
    if (p.descs == nullptr) return static_cast<unsigned int>(t / p.one.tiles);
    unsigned int lo = 0, hi = p.ndesc;  // invariant: descs[lo].tile_begin <= t
    while (hi - lo > 1) {
        const unsigned int mid = (lo + hi) / 2;
        if (p.descs[mid].tile_begin <= t) lo = mid;
        else hi = mid;
    }
    return lo;
}

/// A block's counters in shared memory: of the C * slots flat slots (`slots` per channel), the `owned` ones from
/// `first`, `copies` privatized copies each (Smem/Split; none for Global), then C out-of-range words (Global).
struct BlockCounters {
    unsigned int* hist;
    unsigned int* oor;
    unsigned int first, owned, slots;
    int copies;
};

/// Flushes a block's counts of one image to `out` and clears them for the next image. Thread i reads the copies
/// of local slot i rotated by i, so the threads of a warp hit different banks. `store`: the block holds every
/// tile of the image (Params::store_whole) and stores the counts instead of adding them.
template <int C, Storage S>
__device__ __forceinline__ void flush_counts(const Params& p, const BlockCounters& bc, const FlushTarget& out, bool store,
                                             bool direct) {
    const unsigned int tid = threadIdx.x;
    if constexpr (S != Storage::Global) {
        for (unsigned int i = tid; i < bc.owned; i += blockDim.x) {
            const unsigned long long sum = take_copies(bc.hist + (i << p.copies_log2), bc.copies, i);
            const unsigned int f = bc.first + i;
            const unsigned int c = C == 1 ? 0u : f / bc.slots;
            unsigned int b = f - c * bc.slots;
            if (store) {  // every slot is its own counter (the host's condition): zeroes are written too
                out.store(c, b, sum);
                continue;
            }
            if (sum == 0) continue;
            if (p.fold) b = arith_slot(static_cast<double>(b), p.rule.low, p.rule.high, p.rule.a, p.rule.b, p.bins);
            out.add(c, b, sum, direct ? p.overflow_flag : nullptr);
        }
        // Raw 8-bit slots have no out-of-range slot: under the identity fold nothing is out of range.
        if (store && p.fold && tid < C) out.store(tid, out.bins, 0ull);
    } else {
        if (tid < C) {
            const unsigned int o = bc.oor[tid];
            bc.oor[tid] = 0u;
            if (o != 0) out.add(tid, out.bins, o, nullptr);
        }
    }
}

/// B: a batch launch (Params::descs, or equally spaced images). Single images take their own instance: the
/// batch's image lookup, strides and stored flush would otherwise cost the counting loop registers it has
/// none to spare of (64 at 1024 threads), and it would spill (docs/DESIGN.md section 5).
template <class T, int C, KMode M, Storage S, bool B>
__global__ void __launch_bounds__(KernelBounds::histogram) histogram_kernel(const Params p) {
    extern __shared__ unsigned int smem[];
    const int copies = 1 << p.copies_log2;
    // Slots per channel: bins + 1 (the last counts samples out of range), or the 256 raw values (fold).
    const unsigned int slots = p.fold ? 256u : static_cast<unsigned int>(p.bins) + 1u;
    const unsigned int flat_slots = C * slots;
    // Which slots this block counts, and how it is placed among the blocks.
    unsigned int split = 0, group = blockIdx.x, groups = gridDim.x;
    if constexpr (S == Storage::Split) {
        split = blockIdx.x % static_cast<unsigned int>(p.splits);
        group = blockIdx.x / static_cast<unsigned int>(p.splits);
        groups = gridDim.x / static_cast<unsigned int>(p.splits);
    }
    const unsigned int first = split * p.split_slots;
    const unsigned int owned = S == Storage::Split ? min(p.split_slots, flat_slots - min(first, flat_slots)) : flat_slots;
    // Layout: Smem/Split: owned slots * copies words; Global: none. Then 4 out-of-range words (Global).
    const int hist_words = S == Storage::Global ? 0 : static_cast<int>(owned) * copies;
    const BlockCounters bc{smem, smem + hist_words, first, owned, slots, copies};
    const unsigned int tid = threadIdx.x;

    zero_shared(bc.hist, hist_words);
    if (tid < 4) bc.oor[tid] = 0u;
    __syncthreads();
    const bool zero_first = S != Storage::Global && p.zero_first != 0;  // Global adds while it counts
    if (zero_first && tid >= ((blockDim.x - 1u) & ~31u))
        zero_output_if_first(OutputRef{p.one.counts, p.one.ch_stride, p.one.oor, p.bins, p.count_u64, p.sync}, C);
    bool passed = false;  // zero_first: this block has waited for the zeroed output

    Counter<T, C, M, S> ctr(p);
    ctr.overflow_flag = p.overflow_flag;
    ctr.oor_base = smem_addr(bc.oor);
    ctr.lane_base = smem_addr(bc.hist) + 4u * (static_cast<unsigned int>(tid & 31u) & (copies - 1));
    ctr.slot_bytes = 4u << p.copies_log2;
    ctr.chan_slots = slots;
    ctr.split_first = first;
    ctr.split_slots = owned;

    unsigned long long t, t_end;
    tile_range(p.total_tiles, group, groups, t, t_end);
    unsigned int d = 0;
    if constexpr (B) d = first_image(p, t);
    const bool direct = p.direct != 0;

    while (t < t_end) {
        const Desc D = B ? desc_at(p, d) : p.one;
        const unsigned long long img_end = min(t_end, D.tile_begin + D.tiles);

        if constexpr (S == Storage::Global) {
            ctr.gcounts = direct ? D.counts : p.merge.counts;
            ctr.gstride = direct ? D.ch_stride : static_cast<unsigned long long>(p.bins);
            ctr.gu64 = direct ? p.count_u64 != 0 : p.merge.u64 != 0;
        }
        const bool any = t < img_end;
        for (; t < img_end; ++t) process_tile<T, C, M, S>(D, t - D.tile_begin, ctr, p);
        ++d;
        if (!any) continue;
        if (zero_first && !passed) {
            if (tid == 0) wait_output_zeroed(p.sync);
            passed = true;
        }
        __syncthreads();
        // This block holds every tile of the image: it stores the counts (Params::store_whole). The block's
        // range is derived again here rather than kept through the counting loop.
        bool store = false;
        if (B && p.store_whole) {
            unsigned long long first_tile, end_tile;
            tile_range(p.total_tiles, group, groups, first_tile, end_tile);
            store = D.tile_begin >= first_tile && D.tile_begin + D.tiles <= end_tile;
        }
        const unsigned int bins = static_cast<unsigned int>(p.bins);
        const FlushTarget out = direct ? FlushTarget{D.counts, D.ch_stride, D.oor, bins, p.count_u64 != 0}
                                       : merge_target(p.merge, bins);
        flush_counts<C, S>(p, bc, out, store, direct);
        __syncthreads();
    }

    if (direct) {
        if (zero_first && !passed && tid == 0) wait_output_zeroed(p.sync);
        return;
    }
    // Single image, overwrite mode without zero_first (mapped host output, histograms over zero_first's
    // width): the last block to finish copies the workspace to the output.
    const Desc& D = p.one;
    finish_merge(p.merge, FlushTarget{D.counts, D.ch_stride, D.oor, static_cast<unsigned int>(p.bins), p.count_u64 != 0},
                 C);
}

/// The rows of contiguous_kernel's arguments (none for a contiguous image).
template <bool Merged>
__device__ __forceinline__ ContiguousRows rows_of(const ContiguousArgs<Merged, false>&) { return ContiguousRows{}; }
template <bool Merged>
__device__ __forceinline__ const ContiguousRows& rows_of(const ContiguousArgs<Merged, true>& p) { return p.rows; }

/// The 16-byte vectors of contiguous_kernel's image: vector i of one contiguous run, or (Rows) vector
/// i mod row_vectors of row i / row_vectors.
template <bool Rows>
struct VectorGrid {
    const unsigned char* aligned;  ///< the first vector (of row 0): 16-byte aligned
    unsigned long long pitch;
    unsigned long long row_magic;
    unsigned int row_vectors;

    __device__ __forceinline__ VectorGrid(const ContiguousParams& p, int sample_bytes, const ContiguousRows& r)
        : aligned(p.base + static_cast<unsigned long long>(p.head) * sample_bytes),
          pitch(r.pitch),
          row_magic(r.row_magic),
          row_vectors(r.row_vectors) {}
    /// i / row_vectors: one multiply (ContiguousRows::row_magic; a float-reciprocal division here made the
    /// CUDA 13.0 device compiler crash).
    __device__ __forceinline__ unsigned int row_of(unsigned int i) const {
        return static_cast<unsigned int>((static_cast<unsigned long long>(i) * row_magic) >> 40);
    }
    __device__ __forceinline__ uint4 load(unsigned int i) const {
        if (!Rows) return __ldg(reinterpret_cast<const uint4*>(aligned) + i);
        const unsigned int r = row_of(i);
        return __ldg(reinterpret_cast<const uint4*>(aligned + static_cast<unsigned long long>(r) * pitch) + (i - r * row_vectors));
    }
    /// The channel of the vector's first sample, `head` samples before the first vector of a row (every row
    /// starts with channel 0).
    template <int C, int SPV>
    __device__ __forceinline__ int phase(unsigned int i, unsigned int head) const {
        if (C == 1) return 0;
        const unsigned int column = Rows ? i - row_of(i) * row_vectors : i;
        return static_cast<int>((head + SPV * column) % C);
    }
};

/// contiguous_kernel's counting loop over the vectors [v, v_end) of the block, stepping by blockDim.x: groups
/// of four vectors per thread, each group's loads issued before the previous group is counted (the first
/// group, `q`, loaded by the caller), full groups counted without a test per vector and the last, partial
/// group after them. Flat: sixteen equal bytes are counted at once (Counter::count_if_flat).
template <bool Flat, class T, int C, KMode M, bool Merged, bool Rows>
__device__ __forceinline__ void count_vectors(Counter<T, C, M, Storage::Smem>& ctr, const VectorGrid<Rows>& grid,
                                              const ContiguousArgs<Merged, Rows>& p, unsigned int v, unsigned int v_end,
                                              uint4 (&q)[4]) {
    constexpr int SPV = 16 / static_cast<int>(sizeof(T));
    auto count = [&](const uint4& x, unsigned int at) {
        if constexpr (Flat) {
            if (ctr.count_if_flat(x)) return;
        }
        ctr.count_vector(x, grid.template phase<C, SPV>(at, p.head));
    };
    while (v + 3 * blockDim.x < v_end) {
        const unsigned int vn = v + 4 * blockDim.x;
        uint4 n[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) n[j] = vn + j * blockDim.x < v_end ? grid.load(vn + j * blockDim.x) : make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
        for (int j = 0; j < 4; ++j) count(q[j], v + j * blockDim.x);
#pragma unroll
        for (int j = 0; j < 4; ++j) q[j] = n[j];
        v = vn;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j)
        if (v + j * blockDim.x < v_end) count(q[j], v + j * blockDim.x);
}

/// contiguous_kernel in rows: the head and tail samples (fewer than 32 per row) of the rows whose first vector
/// is in the block's range [v_begin, v_end): 32 threads per row.
template <class T, int C, KMode M, bool Merged>
__device__ __forceinline__ void count_row_ends(Counter<T, C, M, Storage::Smem>& ctr, const ContiguousArgs<Merged, true>& p,
                                               unsigned int v_begin, unsigned int v_end) {
    constexpr int SPV = 16 / static_cast<int>(sizeof(T));
    const unsigned int per_row = p.head + p.tail;
    if (per_row == 0) return;
    const unsigned int rv = p.rows.row_vectors;
    const unsigned int r0 = (v_begin + rv - 1) / rv, r1 = (v_end + rv - 1) / rv;
    for (unsigned int k = threadIdx.x; k < (r1 - r0) * 32u; k += blockDim.x) {
        const unsigned int j = k & 31u;
        if (j >= per_row) continue;
        const unsigned int x = j < p.head ? j : j + rv * SPV;  // sample within the row
        const T* row = reinterpret_cast<const T*>(p.base + static_cast<unsigned long long>(r0 + (k >> 5)) * p.rows.pitch);
        ctr.count(row[x], C == 1 ? 0 : static_cast<int>(x % C));
    }
}

/// contiguous_kernel on one run: block 0 counts the unaligned head, the last block the tail.
template <class T, int C, KMode M, bool Merged>
__device__ __forceinline__ void count_run_ends(Counter<T, C, M, Storage::Smem>& ctr, const ContiguousArgs<Merged, false>& p,
                                               const T* samples) {
    constexpr int SPV = 16 / static_cast<int>(sizeof(T));
    const unsigned int tid = threadIdx.x;
    if (blockIdx.x == 0 && tid < p.head) ctr.count(samples[tid], C == 1 ? 0 : static_cast<int>(tid % C));
    if (blockIdx.x == gridDim.x - 1 && tid < p.tail) {
        const unsigned int o = p.head + SPV * p.vectors + tid;
        ctr.count(samples[o], C == 1 ? 0 : static_cast<int>(o % C));
    }
}

/// One image of C channels (8-bit samples counted raw, 16-bit or float samples binned as counted), small
/// enough that each block takes one range of its 16-byte vectors (the plan's small-image grid): contiguous, or
/// for Rows in rows of the same 16-byte alignment (ContiguousParams); overwritten in one pass or, for Merged
/// (blocking calls, histograms wider than the one-pass zeroing), through the last-block merge. The general
/// kernel's work without its generality: no descriptors, tiles, masks or batch, a parameter block of a few
/// words: at 640x480 the general kernel's prologue, tiling and flush are most of its instructions. Contiguous: block 0 also
/// counts the unaligned head, the last block the tail. Rows: vector i is vector i mod row_vectors of row
/// i / row_vectors, and a row's unaligned head and tail samples are counted by the block whose range holds
/// the row's first vector. Counting (Counter), the zeroing of the output, the merge and the fold of raw
/// 8-bit values into bins at the flush (binning.hpp's arith_slot) are the general kernel's. Each choice is
/// an instance of its own, so the contiguous one-pass kernel carries none of the others' code.
///
/// Flat 8-bit gray data (constant images, flat regions) is counted sixteen equal bytes at a time
/// (Counter::count_if_flat) by warps whose first vectors are mostly such runs; other warps never test for
/// it, since the test alone, made for every vector, slows uniform and noisy data (docs/DESIGN.md section 5).
template <class T, int C, KMode M, bool Merged, bool Rows>
__global__ void __launch_bounds__(KernelBounds::contiguous) contiguous_kernel(const ContiguousArgs<Merged, Rows> p) {
    extern __shared__ unsigned int smem[];
    constexpr int SZ = static_cast<int>(sizeof(T));
    constexpr int SPV = 16 / SZ;
    constexpr bool kFlat = C == 1 && SZ == 1 && M == KMode::Direct;
    const int copies = 1 << p.copies_log2;
    const unsigned int tid = threadIdx.x;
    // Slots per channel: the 256 raw values (Direct), or bins + 1 (the last counts samples out of range).
    const unsigned int slots = M == KMode::Direct ? 256u : static_cast<unsigned int>(p.out.bins) + 1u;
    const unsigned int flat_slots = C * slots;
    unsigned int* hist = smem;

    // This block's vectors [v_begin, v_end): vectors * blocks < 2^32 (the host takes this kernel for small
    // images).
    const unsigned int v_begin = p.vectors * blockIdx.x / gridDim.x;
    const unsigned int v_end = p.vectors * (blockIdx.x + 1) / gridDim.x;
    const T* samples = reinterpret_cast<const T*>(p.base);
    const VectorGrid<Rows> grid(p, SZ, rows_of(p));
    unsigned int v = v_begin + tid;
    // Groups of four vectors per thread, each group's loads issued before the previous group is counted, and
    // the first group's before the shared counters are zeroed: the loads' latency hides the zeroing and
    // the counting. Full groups are counted without a test per vector; the last, partial group after them.
    uint4 q[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) q[j] = v + j * blockDim.x < v_end ? grid.load(v + j * blockDim.x) : make_uint4(0u, 0u, 0u, 0u);
    zero_shared(hist, static_cast<int>(flat_slots) * copies);
    __syncthreads();
    if (!Merged && tid >= ((blockDim.x - 1u) & ~31u)) zero_output_if_first(p.out, C);

    Counter<T, C, M, Storage::Smem> ctr;
    ctr.br = BinRegs(p.rule, p.out.bins);
    ctr.lane_base = smem_addr(hist) + 4u * (tid & 31u & static_cast<unsigned int>(copies - 1));
    ctr.slot_bytes = 4u << p.copies_log2;
    ctr.chan_slots = slots;

    if constexpr (kFlat) {
        // Warp-uniform: every lane of the warp reaches this point. Flat mode when at least half of the
        // warp's first vectors are flat (with any one, textured parts of photographs paid the test).
        const bool flat_start = v < v_end && sixteen_equal_bytes(q[0]);
        if (__popc(__ballot_sync(0xFFFFFFFFu, flat_start)) >= 16) count_vectors<true>(ctr, grid, p, v, v_end, q);
        else count_vectors<false>(ctr, grid, p, v, v_end, q);
    } else {
        count_vectors<false>(ctr, grid, p, v, v_end, q);
    }
    if constexpr (Rows) count_row_ends(ctr, p, v_begin, v_end);
    else count_run_ends(ctr, p, samples);
    if (!Merged && tid == 0) wait_output_zeroed(p.out.sync);
    __syncthreads();

    const FlushTarget out{p.out.counts, p.out.ch_stride, p.out.oor, static_cast<unsigned int>(p.out.bins),
                          p.out.count_u64 != 0};
    FlushTarget to = out;
    if constexpr (Merged) to = merge_target(p.merge, static_cast<unsigned int>(p.out.bins));
    for (unsigned int i = tid; i < flat_slots; i += blockDim.x) {
        const unsigned long long sum = take_copies<false>(hist + (i << p.copies_log2), copies, i);
        if (sum == 0) continue;
        const unsigned int c = C == 1 ? 0u : i / slots;
        unsigned int b = i - c * slots;
        if constexpr (M == KMode::Direct) {
            if (!p.identity) b = arith_slot(static_cast<double>(b), p.rule.low, p.rule.high, p.rule.a, p.rule.b, p.out.bins);
        }
        to.add(c, b, sum, nullptr);
    }
    if constexpr (Merged) finish_merge(p.merge, out, C);
}

}  // namespace imghist::detail::cuda
