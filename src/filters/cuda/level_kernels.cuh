// imghist filters — CUDA kernels of the level-table operations on 8-bit device images: contrast stretch and
// histogram matching with their tables derived on the device, and the multi-level Otsu search. Launch code
// is in level_table.cu; the rules these kernels reproduce are stated in filters.hpp (stretch_table,
// match_table, multiotsu_thresholds) and implemented for the host in stretch.cpp, match.cpp, multiotsu.cpp.
//
// Shape of a call on images above policy::one_launch_max_bytes() (smaller ones take the one launch of
// fused_kernels.cuh, which uses the same block functions): histogram kernel -> one apply kernel whose blocks
// each derive the 256-entry tables from the counts (a few block scans over 1 KiB that L2 serves) before the
// table pass — one kernel boundary and no host round trip, as equalize_apply_kernel does for equalization.
// Every kernel here is a template, so this header may be included by several translation units.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "filters/cuda/kernels.cuh"

namespace imghist::detail::kernels {

// ---- order statistics and percentiles over a 256-level histogram (blockDim.x == 256) ------------------------

/// The k-th smallest sample (0-based) of the block's histogram: the number of levels whose inclusive
/// cumulative count `cum` is <= k (cum is non-decreasing, so that is the first level with cum > k).
/// Every thread calls it with its own level's cum; it synchronises.
__device__ __forceinline__ int block_order_statistic(unsigned long long cum, unsigned long long k) {
    return __syncthreads_count(cum <= k);
}

/// np.percentile(..., q * 100) with the linear rule, exactly as stretch.cpp's percentile_of (n > 0).
__device__ __forceinline__ double block_percentile(unsigned long long cum, unsigned long long n, double q) {
    const double h = static_cast<double>(n - 1) * q;
    if (h >= static_cast<double>(n - 1)) return block_order_statistic(cum, n - 1);
    const double below = floor(h);
    const double g = h - below;
    const auto i = static_cast<unsigned long long>(below);
    const int a = block_order_statistic(cum, i);
    const int b = block_order_statistic(cum, i + 1);
    const double d = static_cast<double>(b - a);
    return g >= 0.5 ? static_cast<double>(b) - d * (1.0 - g) : static_cast<double>(a) + d * g;
}

// ---- table builders: entry threadIdx.x of one channel's table; every thread calls (they synchronise) ---------

/// Contrast stretch (stretch_table): q_lo = low / 100, q_hi = (100 - high) / 100, both rounded as the host
/// rounds them.
template <class Count>
__device__ __forceinline__ std::uint8_t stretch_entry_block(const Count* __restrict__ counts, double q_lo, double q_hi) {
    __shared__ unsigned long long scratch[33];
    const int v = threadIdx.x;
    const unsigned long long h = counts[v];
    unsigned long long n;
    const unsigned long long cum = block_exclusive_scan(h, scratch, n) + h;
    const double lo = block_percentile(cum, n, q_lo);
    const double hi = block_percentile(cum, n, q_hi);
    double out;
    if (lo != hi) {
        const double x = static_cast<double>(v);
        const double c = x < lo ? lo : (x > hi ? hi : x);  // np.clip
        out = (c - lo) / (hi - lo) * 255.0;
    } else {
        out = lo;
    }
    return static_cast<std::uint8_t>(static_cast<unsigned>(out));  // truncation, as NumPy's astype
}

using fmath::match_interp;  // np.interp over the target's points (filter_math.hpp)

/// Histogram matching (match_table): source counts against target counts (both 256 levels, non-empty);
/// `ht` is the target's count at level threadIdx.x (callers load it early: it does not depend on the image).
template <class SrcCount>
__device__ __forceinline__ std::uint8_t match_entry_block(const SrcCount* __restrict__ source, unsigned long long ht) {
    __shared__ unsigned long long scratch[33];
    __shared__ double xp[256];
    __shared__ int fp[256];
    const int v = threadIdx.x;
    static_assert(sizeof(SrcCount) == 4, "source counts are 32-bit (images of fewer than 2^32 pixels)");
    const unsigned long long hs = source[v];
    // Two scans, not three: the source's cumulative count (< 2^32) and the number of target levels that hold
    // samples (<= 256, so 9 bits never carry into it) share one 64-bit scan.
    unsigned long long packed_total, m;
    const unsigned long long packed = block_exclusive_scan((hs << 9) | (ht != 0 ? 1ull : 0ull), scratch, packed_total);
    const unsigned long long cum_s = (packed >> 9) + hs, n = packed_total >> 9;
    const unsigned long long cum_t = block_exclusive_scan(ht, scratch, m) + ht;
    // The target's points, in level order: (cumulative quantile, level) at each level it holds.
    const unsigned long long slot = packed & 511u, points = packed_total & 511u;
    if (ht != 0) {
        xp[slot] = static_cast<double>(cum_t) / static_cast<double>(m);
        fp[slot] = v;
    }
    __syncthreads();
    const double r = match_interp(static_cast<double>(cum_s) / static_cast<double>(n), xp, fp, static_cast<int>(points));
    __syncthreads();  // xp / fp are reused by the next call
    return static_cast<std::uint8_t>(__double2int_rn(r));  // half to even, as std::nearbyint
}

/// Histogram matching with the target's points given (match_points, computed once on the host), already in
/// shared memory (xp, fp: `points` entries, visible to the block). One block scan of the source.
template <class SrcCount>
__device__ __forceinline__ std::uint8_t match_entry_points(const SrcCount* __restrict__ source, const double* xp,
                                                           const int* fp, int points) {
    __shared__ unsigned long long scratch[33];
    const unsigned long long hs = source[threadIdx.x];
    unsigned long long n;
    const unsigned long long cum_s = block_exclusive_scan(hs, scratch, n) + hs;
    const double r = match_interp(static_cast<double>(cum_s) / static_cast<double>(n), xp, fp, points);
    return static_cast<std::uint8_t>(__double2int_rn(r));  // half to even, as std::nearbyint
}

/// The outcome of the multi-Otsu search kernel, read by the label pass and by the host.
struct MultiOtsuResult {
    int status;         ///< kMultiOtsuDone, or why the host must take over
    int thresholds[4];  ///< levels (not indices into the trimmed histogram), ascending
};
constexpr int kMultiOtsuDone = 0;
constexpr int kMultiOtsuOverflow = 1;  ///< too many near-best candidates for the device's frontier
constexpr int kMultiOtsuTooFew = 2;    ///< fewer distinct values than classes: the host reports the error

/// Multi-Otsu label table entry for level threadIdx.x (multiotsu_label_table with 255 as the top).
__device__ __forceinline__ std::uint8_t label_entry(const MultiOtsuResult& r, int classes) {
    const unsigned k1 = static_cast<unsigned>(classes - 1);
    unsigned label = 0;
    for (unsigned i = 0; i < k1; ++i) label += r.thresholds[i] <= static_cast<int>(threadIdx.x) ? 1u : 0u;
    return static_cast<std::uint8_t>((label * 255u + k1 / 2) / k1);
}

// ---- one apply kernel for all three operations ---------------------------------------------------------------

enum class LevelOp : int { Stretch, Match, Labels };

/// What the apply kernel derives its tables from. channel c reads `counts[c]` (nullptr: identity table,
/// the alpha channel of a luma stretch); a channel whose source equals the previous channel's reuses its
/// table (the three colour channels of a luma stretch share one).
template <class TgtCount>
struct LevelArgs {
    const unsigned int* counts[4];
    const TgtCount* target[4];       ///< Match: the target's counts for channel c
    double q_lo, q_hi;               ///< Stretch
    const MultiOtsuResult* result;   ///< Labels
    int classes;                     ///< Labels
};

template <int C, LevelOp Op, class TgtCount>
__global__ void level_apply_kernel(Span2D s, const __grid_constant__ LevelArgs<TgtCount> a) {
    extern __shared__ std::uint32_t tab[];
    __shared__ std::uint8_t lut[C * 256];
    if constexpr (Op == LevelOp::Labels) {
        if (a.result->status != kMultiOtsuDone) return;  // the host applies its own table instead
    }
#pragma unroll
    for (int c = 0; c < C; ++c) {
        std::uint8_t e = static_cast<std::uint8_t>(threadIdx.x);
        if (c > 0 && a.counts[c] == a.counts[c - 1] && a.target[c] == a.target[c - 1]) {
            e = lut[(c - 1) * 256 + threadIdx.x];
        } else if constexpr (Op == LevelOp::Stretch) {
            if (a.counts[c]) e = stretch_entry_block(a.counts[c], a.q_lo, a.q_hi);
        } else if constexpr (Op == LevelOp::Match) {
            e = match_entry_block(a.counts[c], static_cast<unsigned long long>(a.target[c][threadIdx.x]));
        } else {
            e = label_entry(*a.result, a.classes);
        }
        lut[c * 256 + threadIdx.x] = e;
    }
    __syncthreads();
    apply_tables<C>(s, lut, tab);
}

// ---- multi-level Otsu search (one block) ----------------------------------------------------------------------
//
// scikit-image's answer without its exhaustive walk, and without any tolerance on the answer: the walk is
// replaced by a bound that provably keeps every combination that could be the first maximum.
//   1. The variance table over the trimmed histogram of L <= 256 levels, upper triangle in shared memory:
//      scikit-image's H(i, j) = S^2 / P (float32, see multiotsu.cpp), except that the table holds
//      Ha = RN(S^2) * rcp(P) with the hardware's approximate reciprocal (relative error <= 2^-23) instead of
//      the IEEE division, which costs several times more: Ha is within (1 +- 2^-22) of H. The table only
//      feeds the bound; every sum that decides anything (LB below, every complete candidate) is formed
//      from exact H entries, computed from P and S as scikit-image does.
//   2. best[r][s]: the largest float32 sum of the H terms of the classes covering [s, L-1] cut by r more
//      thresholds (a dynamic program over the triangle), and one combination along its maxima; that
//      combination's float32 sum in scikit-image's order is a real candidate's value, so a lower bound LB
//      of the maximum F*.
//   3. A combination's float32 sum F (m <= 4 additions of non-negative terms) is at most (1 + 2^-24)^4 times
//      the exact sum of its H terms, each at most (1 + 2^-22) times its Ha; best[r][s] is at least
//      (1 - 2^-24)^3 times the largest exact sum of Ha terms of a completion, and prefixes are summed in double
//      precision. So UB = (prefix + best) * (1 + 2e-6) bounds F of every completion ((1 + 2^-24)^7 (1 + 2^-22)
//      < 1 + 7e-7; multiotsu.cpp's Search, on exact H, uses 1e-6), and a prefix with UB < LB has no
//      completion with F >= LB >= F*: dropping it cannot drop the first maximum. The survivors are expanded level by level (a frontier in shared memory) and every complete
//      survivor's F is evaluated exactly as scikit-image does; the winner is the largest F, and among equal
//      F the lexicographically smallest thresholds — scikit-image's strict '>' over its lexicographic walk.
// When the frontier would overflow (many near-equal candidates, e.g. sparse histograms whose empty runs
// make many threshold positions tie exactly), the kernel reports kMultiOtsuOverflow and the host runs
// the same search (multiotsu_thresholds).

constexpr int kMultiOtsuThreads = cuda::KernelBounds::multiotsu;
constexpr int kMultiOtsuFrontier = 4096;  // prefixes per frontier buffer
constexpr double kMultiOtsuMargin = 2e-6;

/// Dynamic shared memory of multiotsu_kernel, in bytes.
__host__ __device__ constexpr std::size_t multiotsu_smem_bytes() {
    return sizeof(float) * (256 * 257 / 2)            // H, upper triangle
           + sizeof(float) * 4 * 257                   // best[r][s]
           + sizeof(float) * 3 * 256                   // P, S, the probabilities
           + sizeof(std::uint32_t) * 2 * kMultiOtsuFrontier;
}

__device__ __forceinline__ int tri_offset(int i, int L) { return i * L - (i * (i - 1)) / 2; }

/// The search's shared state, the same for every thread of the block: the dynamic shared memory
/// (multiotsu_smem_bytes(), laid out as below; the frontier's two buffers of packed prefixes follow `prob`),
/// the frontier's counters, and the trimmed histogram's size — L levels, m = classes - 1 thresholds, set once
/// they are known. The phases of multiotsu_block read and write through it.
struct MultiOtsuSearch {
    float* H;       ///< Ha(i, j), upper triangle: row i from tri_offset(i, L)
    float* best;    ///< best[r * 257 + s]
    float* P;       ///< cumulative probability
    float* S;       ///< cumulative first moment
    float* prob;    ///< the trimmed histogram's probabilities
    int* front_n;   ///< [2]: the frontier buffers' fill counts (shared)
    int* overflow;  ///< set once a push finds its buffer full (shared)
    int L = 0, m = 0;

    __device__ __forceinline__ MultiOtsuSearch(unsigned char* smem, int* front_n_, int* overflow_)
        : H(reinterpret_cast<float*>(smem)),
          best(H + 256 * 257 / 2),
          P(best + 4 * 257),
          S(P + 256),
          prob(S + 256),
          front_n(front_n_),
          overflow(overflow_) {}
    /// The frontier's first buffer; the second follows it.
    __device__ __forceinline__ std::uint32_t* frontier() const { return reinterpret_cast<std::uint32_t*>(prob + 256); }

    /// Ha(i, j), from the table.
    __device__ __forceinline__ float Hat(int i, int j) const { return H[tri_offset(i, L) + (j - i)]; }
    /// scikit-image's H(i, j), exactly.
    __device__ __forceinline__ float Hx(int i, int j) const {
        const float p = P[j] - (i == 0 ? 0.f : P[i - 1]);
        const float sv = S[j] - (i == 0 ? 0.f : S[i - 1]);
        return (i == 0 && j == 0) || !(p > 0.f) ? 0.f : (sv * sv) / p;
    }
    /// A complete combination's float32 sum, in scikit-image's order.
    __device__ __forceinline__ float F(const int* c) const {
        float sigma = Hx(0, c[0]) + Hx(c[m - 1] + 1, L - 1);
        for (int i = 0; i + 1 < m; ++i) sigma += Hx(c[i] + 1, c[i + 1]);
        return sigma;
    }
    /// UB of every completion of the prefix c[0..k-1], k < m thresholds placed.
    __device__ __forceinline__ double bound(const int* c, int k) const {
        double sum = Hat(0, c[0]);
        for (int i = 0; i + 1 < k; ++i) sum += Hat(c[i] + 1, c[i + 1]);
        return (sum + static_cast<double>(best[(m - k) * 257 + c[k - 1] + 1])) * (1.0 + kMultiOtsuMargin);
    }
    /// Appends the prefix c[0..k-1] to frontier buffer front[buf], or marks the overflow.
    __device__ __forceinline__ void push(std::uint32_t* const (&front)[2], int buf, const int* c, int k) const {
        std::uint32_t key = 0;
        for (int i = 0; i < k; ++i) key |= static_cast<std::uint32_t>(c[i]) << (8 * i);
        const int at = atomicAdd(&front_n[buf], 1);
        if (at < kMultiOtsuFrontier) front[buf][at] = key;
        else *overflow = 1;
    }
};

/// Step 1: the probabilities of the trimmed histogram (levels from `lo`), the cumulative moments (sequential, as
/// scikit-image) and the variance triangle.
template <class Count>
__device__ __forceinline__ void multiotsu_moments(const MultiOtsuSearch& q, const Count* __restrict__ counts, int lo,
                                                  unsigned long long total) {
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5, nwarps = blockDim.x >> 5;
    const int L = q.L;
    if (t < L) q.prob[t] = static_cast<float>(static_cast<double>(counts[lo + t]) / static_cast<double>(total));
    __syncthreads();
    if (t < 2) {
        // Two independent sequential sums, as scikit-image forms them: lane 0 the cumulative probability P,
        // lane 1 the cumulative first moment S (whose first term is p[0], sic, not 0 * p[0]). The two lanes
        // run the same instructions side by side. Operands are read in chunks ahead of the arithmetic so that
        // no shared-memory round trip sits on the dependency chain.
        constexpr int kChunk = 16;
        float* const out_sum = t == 0 ? q.P : q.S;
        int i0 = 0;
        float acc = 0.f;
        for (; i0 < L; i0 += kChunk) {
            float c[kChunk];
#pragma unroll
            for (int k = 0; k < kChunk; ++k) {
                const int i = i0 + k;
                const float p = i < L ? q.prob[i] : 0.f;
                c[k] = t == 0 || i == 0 ? p : static_cast<float>(i) * p;
            }
#pragma unroll
            for (int k = 0; k < kChunk; ++k) {
                acc = i0 + k == 0 ? c[k] : acc + c[k];
                c[k] = acc;
            }
#pragma unroll
            for (int k = 0; k < kChunk; ++k)
                if (i0 + k < L) out_sum[i0 + k] = c[k];
        }
    }
    __syncthreads();
    for (int i = warp; i < L; i += nwarps) {
        const float p0 = i == 0 ? 0.f : q.P[i - 1];
        const float s0 = i == 0 ? 0.f : q.S[i - 1];
        float* row = q.H + tri_offset(i, L) - i;  // row[j] = Ha(i, j)
        for (int j = i + lane; j < L; j += 32) {
            const float p = q.P[j] - p0;
            const float sv = q.S[j] - s0;
            float r;
            asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(p));
            row[j] = (i == 0 && j == 0) || !(p > 0.f) ? 0.f : (sv * sv) * r;
        }
    }
    __syncthreads();
}

/// Step 2: the bound of every completion, best[r][s] with r thresholds still to place (float32, as Search does).
__device__ __forceinline__ void multiotsu_completions(const MultiOtsuSearch& q) {
    const int t = threadIdx.x, L = q.L;
    for (int s = t; s < L; s += blockDim.x) q.best[s] = q.Hat(s, L - 1);
    __syncthreads();
    // Four threads per row s (1024 threads, 256 rows), each taking every fourth u: no long per-row
    // reductions, and the rows of a warp run side by side.
    static_assert(kMultiOtsuThreads == 4 * 256, "the dynamic program gives each row four threads");
    for (int r = 1; r < q.m; ++r) {
        const float* next = q.best + (r - 1) * 257;
        const int s = t >> 2, last = L - 1 - r;
        float b = -1.f;
        if (s <= last) {
            const float* row = q.H + tri_offset(s, L) - s;  // row[u] = Ha(s, u)
            for (int u = s + (t & 3); u <= last; u += 4) b = fmaxf(b, row[u] + next[u + 1]);
        }
        b = fmaxf(b, __shfl_xor_sync(0xFFFFFFFFu, b, 1));
        b = fmaxf(b, __shfl_xor_sync(0xFFFFFFFFu, b, 2));
        if ((t & 3) == 0 && s <= last) q.best[r * 257 + s] = b;
        __syncthreads();
    }
}

/// The combination along the maxima of best, into c (one warp): each threshold maximises Ha(s, t) + best[r - 1][t + 1]
/// from s = the previous one + 1, the first such t among equal sums.
__device__ __forceinline__ void multiotsu_maxima(const MultiOtsuSearch& q, int (&c)[4]) {
    const int lane = threadIdx.x & 31, m = q.m, L = q.L;
    int s = 0;
    for (int k = 0; k < m; ++k) {
        const int r = m - k;  // thresholds still to place, this one included
        const float* row = q.H + tri_offset(s, L) - s;
        const float* next = q.best + (r - 1) * 257;
        float b = -1.f;
        int bt = s;
        for (int u = s + lane; u <= L - 1 - r; u += 32) {
            const float v = row[u] + next[u + 1];
            if (v > b) { b = v; bt = u; }
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const float ob = __shfl_down_sync(0xFFFFFFFFu, b, o);
            const int ot = __shfl_down_sync(0xFFFFFFFFu, bt, o);
            if (ob > b || (ob == b && ot < bt)) { b = ob; bt = ot; }
        }
        c[k] = __shfl_sync(0xFFFFFFFFu, bt, 0);
        s = c[k] + 1;
    }
}

/// Step 3: level-by-level expansion of the prefixes whose bound reaches LB through the frontier's two buffers
/// `front`; complete ones are evaluated. Returns the warp's best complete combination in lane 0: the largest F
/// (best_f), then the smallest key (best_key: the thresholds packed first-highest, so that a smaller key is the
/// lexicographically smaller combination).
__device__ __forceinline__ void multiotsu_expand(const MultiOtsuSearch& q, std::uint32_t* const (&front)[2], double lb,
                                                 float& best_f, std::uint32_t& best_key) {
    const int t = threadIdx.x, L = q.L, m = q.m;
    float my_f = -1.f;
    std::uint32_t my_key = 0xFFFFFFFFu;
    auto consider = [&](const int* c) {
        const float f = q.F(c);
        std::uint32_t key = 0;
        for (int i = 0; i < m; ++i) key |= static_cast<std::uint32_t>(c[i]) << (24 - 8 * i);
        if (f > 0.f && (f > my_f || (f == my_f && key < my_key))) {
            my_f = f;
            my_key = key;
        }
    };
    // Level 1: t0 in [0, L-1-m].
    for (int u = t; u <= L - 1 - m; u += blockDim.x) {
        const int c[4] = {u, 0, 0, 0};
        if (m == 1) consider(c);
        else if (q.bound(c, 1) >= lb) q.push(front, 0, c, 1);
    }
    __syncthreads();
    int cur = 0;
    for (int k = 2; k <= m; ++k) {
        const int n = min(q.front_n[cur], kMultiOtsuFrontier);
        if (*q.overflow) break;
        if (t == 0) q.front_n[cur ^ 1] = 0;
        __syncthreads();
        // Thresholds placed so far: k - 1; the next one (index k - 1) has m - k + 1 still to place, itself
        // included, so it lies in [prev + 1, L - 1 - (m - k + 1)].
        for (int w = t; w < n * 256; w += blockDim.x) {
            const std::uint32_t key = front[cur][w >> 8];
            int c[4];
            for (int i = 0; i < k - 1; ++i) c[i] = static_cast<int>((key >> (8 * i)) & 0xFFu);
            const int u = c[k - 2] + 1 + (w & 255);
            if (u > L - 1 - (m - k + 1)) continue;
            c[k - 1] = u;
            if (k == m) consider(c);
            else if (q.bound(c, k) >= lb) q.push(front, cur ^ 1, c, k);
        }
        __syncthreads();
        cur ^= 1;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float of = __shfl_down_sync(0xFFFFFFFFu, my_f, o);
        const std::uint32_t ok = __shfl_down_sync(0xFFFFFFFFu, my_key, o);
        if (of > my_f || (of == my_f && ok < my_key)) { my_f = of; my_key = ok; }
    }
    best_f = my_f;
    best_key = my_key;
}

/// The block-wide winner of the threads' bests (the largest F, then the smallest key), as levels from `lo`, or
/// kMultiOtsuOverflow, written by thread 0 to `out` and `host_out`. wf, wk: 32 words of shared memory each;
/// `overflow`: the search's flag (shared).
__device__ __forceinline__ void multiotsu_winner(float my_f, std::uint32_t my_key, float* wf, std::uint32_t* wk,
                                                 const int* overflow, int lo, int m, MultiOtsuResult* __restrict__ out,
                                                 MultiOtsuResult* __restrict__ host_out) {
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5, nwarps = blockDim.x >> 5;
    if (lane == 0) { wf[warp] = my_f; wk[warp] = my_key; }
    __syncthreads();
    if (t == 0) {
        float bf = -1.f;
        std::uint32_t bk = 0xFFFFFFFFu;
        for (int w = 0; w < nwarps; ++w)
            if (wf[w] > bf || (wf[w] == bf && wk[w] < bk)) { bf = wf[w]; bk = wk[w]; }
        MultiOtsuResult r{};
        if (*overflow || bf <= 0.f) {
            r.status = kMultiOtsuOverflow;
        } else {
            r.status = kMultiOtsuDone;
            for (int i = 0; i < m; ++i) r.thresholds[i] = lo + static_cast<int>((bk >> (24 - 8 * i)) & 0xFFu);
        }
        *out = r;
        *host_out = r;
    }
}

/// The search of one image by a block of kMultiOtsuThreads threads with multiotsu_smem_bytes() of dynamic shared
/// memory. `out` (device memory) is read by the label pass; `host_out` and `host_counts` are page-locked host
/// memory the device writes directly, for the caller after its wait (the counts for the host search when the
/// device declines).
template <class Count>
__device__ __forceinline__ void multiotsu_block(const Count* __restrict__ counts, int classes,
                                                MultiOtsuResult* __restrict__ out, MultiOtsuResult* __restrict__ host_out,
                                                unsigned int* __restrict__ host_counts) {
    extern __shared__ unsigned char smem[];
    __shared__ int lo_s, hi_s, front_n[2], overflow;
    MultiOtsuSearch q(smem, front_n, &overflow);
    std::uint32_t* const front[2] = {q.frontier(), q.frontier() + kMultiOtsuFrontier};
    __shared__ unsigned long long sum_scratch[33];
    __shared__ float lb_s;
    __shared__ float wf[32];
    __shared__ std::uint32_t wk[32];
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const int m = classes - 1;

    const unsigned long long h = t < 256 ? static_cast<unsigned long long>(counts[t]) : 0ull;
    if (t < 256) host_counts[t] = static_cast<unsigned int>(h);
    if (t == 0) {
        lo_s = 256;
        hi_s = -1;
        front_n[0] = front_n[1] = 0;
        overflow = 0;
    }
    __syncthreads();
    if (h != 0) {
        atomicMin(&lo_s, t);
        atomicMax(&hi_s, t);
    }
    // A shuffle reduction, not a shared 64-bit atomicAdd: that one is a compare-and-swap loop, and 256
    // threads contending on one word serialise for microseconds.
    const unsigned long long total = block_sum<unsigned long long>(h, sum_scratch);  // synchronises
    const int distinct = __syncthreads_count(h != 0);
    const int lo = lo_s, L = hi_s - lo_s + 1;
    if (distinct <= classes) {
        // Too few values (the host raises scikit-image's error) or exactly `classes` of them: the lowest
        // classes - 1 levels, as scikit-image's np.flatnonzero(prob)[:-1].
        if (t == 0) {
            MultiOtsuResult r{};
            r.status = distinct < classes ? kMultiOtsuTooFew : kMultiOtsuDone;
            int k = 0;
            for (int v = 0; v < 256 && k < m; ++v)
                if (counts[v] != 0) r.thresholds[k++] = v;
            *out = r;
            *host_out = r;
        }
        return;
    }

    q.L = L;
    q.m = m;
    multiotsu_moments(q, counts, lo, total);
    multiotsu_completions(q);
    if (warp == 0) {
        // LB: the float32 sum, in scikit-image's order, of the combination along the maxima.
        int c[4] = {0, 0, 0, 0};
        multiotsu_maxima(q, c);
        if (lane == 0) lb_s = q.F(c);
    }
    __syncthreads();
    float my_f;
    std::uint32_t my_key;
    multiotsu_expand(q, front, lb_s, my_f, my_key);
    multiotsu_winner(my_f, my_key, wf, wk, &overflow, lo, m, out, host_out);
}

template <class Count>
__global__ void __launch_bounds__(kMultiOtsuThreads)
    multiotsu_kernel(const Count* __restrict__ counts, int classes, MultiOtsuResult* __restrict__ out,
                     MultiOtsuResult* __restrict__ host_out, unsigned int* __restrict__ host_counts) {
    multiotsu_block(counts, classes, out, host_out, host_counts);
}

}  // namespace imghist::detail::kernels
