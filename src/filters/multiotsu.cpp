// imghist filters — multi-level Otsu: scikit-image's threshold_multiotsu, found by a bounded search instead
// of its exhaustive one, with the same answer (the rule is stated in filters.hpp, the bound below).
#include <algorithm>
#include <string>

#include "filters/level_table.hpp"

namespace imghist {
namespace {

constexpr int kMaxSpan = 4096;  // levels between min and max of an image the search accepts
constexpr int kMaxClasses = 5;

/// The between-class variance table of scikit-image's _multiotsu.pyx, in float32 and with its arithmetic:
/// H(i, j) for the class [i, j] of the trimmed histogram (probabilities `prob`), stored as a full L x L matrix
/// (row i from column i) so that the search reads rows contiguously.
class VarianceTable {
public:
    VarianceTable(const float* probabilities, int L)
        : L_(L), h_(static_cast<std::size_t>(L) * L <= kScratchFloats ? scratch() : own_) {
        std::vector<float> P(static_cast<std::size_t>(L)), S(static_cast<std::size_t>(L));
        auto prob = [&](int i) { return probabilities[i]; };
        P[0] = prob(0);
        S[0] = prob(0);  // (sic) scikit-image starts the first moment at p[0], not 0 * p[0]
        for (int i = 1; i < L; ++i) {
            const float p = prob(i);
            P[static_cast<std::size_t>(i)] = P[static_cast<std::size_t>(i - 1)] + p;
            S[static_cast<std::size_t>(i)] = S[static_cast<std::size_t>(i - 1)] + static_cast<float>(i) * p;
        }
        // Entries left of the diagonal are never read; the matrix is not cleared.
        if (h_.size() < static_cast<std::size_t>(L) * L) h_.resize(static_cast<std::size_t>(L) * L);
        h_[0] = 0.f;
        // Row 0: H(0, j) = S[j]^2 / P[j], except H(0, 0), which scikit-image leaves at 0. Other rows use the
        // differences from i - 1. A class whose float32 weight is not positive has H = 0.
        for (int i = 0; i < L; ++i) {
            const float p0 = i == 0 ? 0.f : P[static_cast<std::size_t>(i - 1)];
            const float s0 = i == 0 ? 0.f : S[static_cast<std::size_t>(i - 1)];
            float* row = h_.data() + static_cast<std::size_t>(i) * L;
            const float* Pj = P.data();
            const float* Sj = S.data();
            // The quotient is formed for every entry and then selected (not a branch around the division),
            // so that the loop vectorises; lanes with p <= 0 are discarded.
            for (int j = i == 0 ? 1 : i; j < L; ++j) {
                const float p = Pj[j] - p0;  // exact for i == 0 (x - 0)
                const float s = Sj[j] - s0;
                const float q = (s * s) / p;
                row[j] = p > 0 ? q : 0.f;
            }
        }
    }
    float operator()(int i, int j) const { return h_[static_cast<std::size_t>(i) * L_ + j]; }
    const float* row(int i) const { return h_.data() + static_cast<std::size_t>(i) * L_; }

private:
    /// The calling thread's matrix for spans up to 256 levels (8-bit images), reused: a fresh 256 KiB
    /// allocation per call costs more in page faults than the whole search. Wider (16-bit) spans, up to
    /// 64 MiB, get their own matrix for the call, so that a thread does not keep that much for good.
    static constexpr std::size_t kScratchFloats = 256 * 256;
    static std::vector<float>& scratch() {
        thread_local std::vector<float> m;
        return m;
    }
    int L_;
    std::vector<float> own_;
    std::vector<float>& h_;
};

/// Finds scikit-image's threshold indices without its exhaustive walk, and without any tolerance on the
/// answer (the CUDA search in cuda/level_kernels.cuh rests on the same argument):
///   - best(r, s): the largest float32 sum of the H terms of the classes covering [s, L-1] cut by r more
///     thresholds (a dynamic program; r <= 3 additions of non-negative terms, each rounding down by at most
///     a factor 1 - 2^-24, so best(r, s) >= (1 - 2^-24)^3 times the largest exact sum). Following its
///     maxima from level 0 gives one combination; its float32 sum F, formed as scikit-image forms it, is a
///     real candidate's value: a lower bound LB of the maximum F*.
///   - A combination's F (m <= 4 float32 additions of non-negative terms) is at most (1 + 2^-24)^4 times
///     the exact sum of its terms. With the prefix summed in double precision, every completion of a prefix
///     therefore has F <= (prefix + best) (1 + 2^-24)^4 / (1 - 2^-24)^3 (1 + 2^-50) < (prefix + best) (1 + 1e-6)
///     =: UB, and a prefix with UB < LB cannot lead to any combination with F >= F*.
/// The walk visits the remaining combinations in scikit-image's (lexicographic) order with its strict '>',
/// so it keeps the first maximum, as the exhaustive walk does: every combination it skips has F < F*, and
/// skipping such combinations cannot change which combination first reaches F*.
class Search {
public:
    static constexpr double kMargin = 1e-6;

    Search(const VarianceTable& H, int L, int m) : H_(H), L_(L), m_(m) {
        best_.assign(static_cast<std::size_t>(m) * (L + 1), -1.f);
        for (int s = 0; s < L; ++s) at(0, s) = H_(s, L - 1);
        for (int r = 1; r < m; ++r) {
            const float* next = &at(r - 1, 0);
            for (int s = 0; s <= L - 1 - r; ++s) at(r, s) = row_max(H_.row(s), next, s, L - 1 - r);
        }
        // One combination along the maxima: t_k maximises H(s, t) + best(r - 1, t + 1) from s = t_(k-1) + 1.
        current_.assign(static_cast<std::size_t>(m), 0);
        int s = 0;
        for (int k = 0; k < m; ++k) {
            const int r = m - k;  // thresholds still to place, this one included
            const float* row = H_.row(s);
            const float* next = &at(r - 1, 0);
            float b = -1.f;
            int bt = s;
            for (int t = s; t <= L - 1 - r; ++t)
                if (row[t] + next[t + 1] > b) {
                    b = row[t] + next[t + 1];
                    bt = t;
                }
            current_[static_cast<std::size_t>(k)] = bt;
            s = bt + 1;
        }
        lb_ = sigma();
        result_.assign(static_cast<std::size_t>(m), 0);
    }

    std::vector<int> run() {
        walk(0, 0, 0.0);
        return result_;
    }

private:
    float& at(int r, int s) { return best_[static_cast<std::size_t>(r) * (L_ + 1) + s]; }

    /// max over t in [t0, t1] of row[t] + next[t + 1], in independent lanes (vectorisable).
    static float row_max(const float* row, const float* next, int t0, int t1) {
        constexpr int kLanes = 8;
        float lane[kLanes];
        for (float& l : lane) l = -1.f;
        int t = t0;
        for (; t + kLanes - 1 <= t1; t += kLanes)
            for (int k = 0; k < kLanes; ++k) {
                const float v = row[t + k] + next[t + k + 1];
                lane[k] = v > lane[k] ? v : lane[k];
            }
        float b = -1.f;
        for (; t <= t1; ++t) b = std::max(b, row[t] + next[t + 1]);
        for (float l : lane) b = std::max(b, l);
        return b;
    }

    /// F of current_, with scikit-image's order of float32 additions: first class + last class, then the
    /// middle ones.
    float sigma() const {
        float f = H_(0, current_[0]) + H_(current_[static_cast<std::size_t>(m_ - 1)] + 1, L_ - 1);
        for (int i = 0; i + 1 < m_; ++i)
            f += H_(current_[static_cast<std::size_t>(i)] + 1, current_[static_cast<std::size_t>(i + 1)]);
        return f;
    }

    void walk(int depth, int start, double prefix) {
        if (depth == m_) {
            const float f = sigma();
            if (f > sigma_max_) {
                sigma_max_ = f;
                result_ = current_;
            }
            return;
        }
        const int remaining = m_ - depth;  // thresholds still to place, this one included
        const float* row = H_.row(start);
        const float* next = &at(remaining - 1, 0);
        const double lb = std::max(lb_, static_cast<double>(sigma_max_));
        for (int t = start; t <= L_ - 1 - remaining; ++t) {
            const double closed = prefix + static_cast<double>(row[t]);
            if ((closed + static_cast<double>(next[t + 1])) * (1.0 + kMargin) < lb) continue;
            current_[static_cast<std::size_t>(depth)] = t;
            walk(depth + 1, t + 1, closed);
        }
    }

    const VarianceTable& H_;
    int L_, m_;
    std::vector<float> best_;
    double lb_ = 0;
    float sigma_max_ = 0.f;
    std::vector<int> current_, result_;
};

void check_classes(int classes) {
    if (classes < 2 || classes > kMaxClasses)
        throw Error(ErrorCode::InvalidArgument,
                    "multi-Otsu: classes must lie in [2, 5], got " + std::to_string(classes));
}

void check_distinct(int distinct, int classes) {
    if (distinct < classes)
        throw Error(ErrorCode::InvalidArgument, "multi-Otsu: the image has only " + std::to_string(distinct) +
                                                    " different values; it cannot be split into " +
                                                    std::to_string(classes) + " classes");
}

/// The search on probabilities with at least `classes` non-zero entries; thresholds index `prob`.
std::vector<int> search_thresholds(const float* prob, int L, int distinct, int classes) {
    std::vector<int> t;
    if (distinct == classes) {
        for (int i = 0; i < L && static_cast<int>(t.size()) < classes - 1; ++i)
            if (prob[i] != 0) t.push_back(i);
        return t;
    }
    const VarianceTable H(prob, L);
    return Search(H, L, classes - 1).run();
}

}  // namespace

std::vector<int> multiotsu_thresholds(const std::uint64_t* hist, int bins, int classes) {
    if (!hist || (bins != 256 && bins != 65536))
        throw Error(ErrorCode::InvalidArgument, "multi-Otsu: the histogram must have 256 or 65536 bins");
    check_classes(classes);
    int lo = 0, hi = bins - 1;
    while (lo < bins && hist[lo] == 0) ++lo;
    if (lo == bins) throw Error(ErrorCode::InvalidArgument, "multi-Otsu: empty histogram");
    while (hist[hi] == 0) --hi;
    const int L = hi - lo + 1;
    if (L > kMaxSpan)
        throw Error(ErrorCode::Unsupported, "multi-Otsu: the image spans " + std::to_string(L) +
                                                " levels (min " + std::to_string(lo) + ", max " + std::to_string(hi) +
                                                "); at most 4096 are supported");
    const std::uint64_t* counts = hist + lo;
    std::uint64_t total = 0;
    int distinct = 0;
    for (int i = 0; i < L; ++i) {
        total += counts[i];
        distinct += counts[i] != 0;
    }
    // scikit-image counts the non-zero float32 probabilities; a non-zero count never rounds to 0 in float32
    // for images of fewer than 2^126 pixels, so counting non-zero counts is the same.
    check_distinct(distinct, classes);
    std::vector<float> prob(static_cast<std::size_t>(L));
    for (int i = 0; i < L; ++i)
        prob[static_cast<std::size_t>(i)] =
            static_cast<float>(static_cast<double>(counts[i]) / static_cast<double>(total));
    std::vector<int> t = search_thresholds(prob.data(), L, distinct, classes);
    for (int& v : t) v += lo;
    return t;
}

std::vector<int> multiotsu_threshold_indices(const float* probabilities, int levels, int classes) {
    if (!probabilities || levels < 1)
        throw Error(ErrorCode::InvalidArgument, "multi-Otsu: no probabilities");
    if (levels > kMaxSpan)
        throw Error(ErrorCode::Unsupported, "multi-Otsu: " + std::to_string(levels) +
                                                " levels; at most 4096 are supported");
    check_classes(classes);
    int distinct = 0;
    for (int i = 0; i < levels; ++i) {
        if (!(probabilities[i] >= 0))
            throw Error(ErrorCode::InvalidArgument, "multi-Otsu: probabilities must be non-negative numbers");
        distinct += probabilities[i] != 0;
    }
    check_distinct(distinct, classes);
    return search_thresholds(probabilities, levels, distinct, classes);
}

LevelTable multiotsu_label_table(const std::vector<int>& thresholds, int bins) {
    if (bins != 256 && bins != 65536)
        throw Error(ErrorCode::InvalidArgument, "multi-Otsu labels: 256 or 65536 levels");
    if (thresholds.empty()) throw Error(ErrorCode::InvalidArgument, "multi-Otsu labels: no thresholds");
    const std::uint32_t k1 = static_cast<std::uint32_t>(thresholds.size());  // classes - 1
    const std::uint32_t top = static_cast<std::uint32_t>(bins - 1);
    LevelTable t(static_cast<std::size_t>(bins));
    std::uint32_t label = 0;
    for (int v = 0; v < bins; ++v) {
        while (label < k1 && thresholds[label] <= v) ++label;  // np.digitize: thresholds <= v
        t[static_cast<std::size_t>(v)] = static_cast<std::uint16_t>((label * top + k1 / 2) / k1);
    }
    return t;
}

std::vector<int> threshold_multiotsu(const ImageView& src, const ImageView& dst, int classes, const FilterOptions& o) {
    detail::check_pair(src, dst, "threshold_multiotsu");
    const int levels = detail::level_count(src.type, "threshold_multiotsu");
    if (src.channels != 1) throw Error(ErrorCode::Unsupported, "threshold_multiotsu: 1-channel images only");
    if (classes < 2 || classes > kMaxClasses)
        throw Error(ErrorCode::InvalidArgument,
                    "threshold_multiotsu: classes must lie in [2, 5], got " + std::to_string(classes));
    if (detail::cuda_level_path_u8(src)) {
        std::vector<int> t;
        std::uint64_t hist[256];
        if (detail::cuda_multiotsu_u8(src, dst, classes, t, hist, o.device, o.stream)) return t;
        t = multiotsu_thresholds(hist, 256, classes);  // the device declined: see cuda_multiotsu_u8
        const LevelTable table = multiotsu_label_table(t, 256);
        apply_table(src, dst, &table, o);
        return t;
    }
    const Histogram h = detail::level_histogram(src, o);
    std::vector<int> t = multiotsu_thresholds(h.channel(0), levels, classes);
    const LevelTable table = multiotsu_label_table(t, levels);
    apply_table(src, dst, &table, o);
    return t;
}

}  // namespace imghist
