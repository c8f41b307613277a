// imghist filters — multi-level Otsu: scikit-image's threshold_multiotsu, found by a pruned search instead of
// its exhaustive one (the rule and the pruning argument are stated in filters.hpp and below).
#include <algorithm>
#include <string>

#include "level_table.hpp"

namespace imghist {
namespace {

constexpr int kMaxSpan = 4096;  // levels between min and max of an image the search accepts
constexpr int kMaxClasses = 5;

/// The between-class variance table of scikit-image's _multiotsu.pyx, in float32, upper triangle stored
/// row by row as it does: H(i, j) at i * (2L - i + 1) / 2 + j - i.
class VarianceTable {
public:
    VarianceTable(const std::uint64_t* counts, int L, std::uint64_t total) : L_(L) {
        std::vector<float> P(static_cast<std::size_t>(L)), S(static_cast<std::size_t>(L));
        auto prob = [&](int i) { return static_cast<float>(static_cast<double>(counts[i]) / static_cast<double>(total)); };
        P[0] = prob(0);
        S[0] = prob(0);  // (sic) scikit-image starts the first moment at p[0], not 0 * p[0]
        for (int i = 1; i < L; ++i) {
            const float p = prob(i);
            P[static_cast<std::size_t>(i)] = P[static_cast<std::size_t>(i - 1)] + p;
            S[static_cast<std::size_t>(i)] = S[static_cast<std::size_t>(i - 1)] + static_cast<float>(i) * p;
        }
        h_.assign(static_cast<std::size_t>(L) * (L + 1) / 2, 0.f);
        // Row 0: H(0, j) = S[j]^2 / P[j], except H(0, 0), which scikit-image leaves at 0.
        for (int j = 1; j < L; ++j) {
            const float p = P[static_cast<std::size_t>(j)];
            if (p > 0) {
                const float s = S[static_cast<std::size_t>(j)];
                h_[static_cast<std::size_t>(j)] = (s * s) / p;
            }
        }
        std::size_t idx = static_cast<std::size_t>(L);
        for (int i = 1; i < L; ++i)
            for (int j = i; j < L; ++j, ++idx) {
                const float p = P[static_cast<std::size_t>(j)] - P[static_cast<std::size_t>(i - 1)];
                if (p > 0) {
                    const float s = S[static_cast<std::size_t>(j)] - S[static_cast<std::size_t>(i - 1)];
                    h_[idx] = (s * s) / p;
                }
            }
    }
    float operator()(int i, int j) const {
        return h_[static_cast<std::size_t>(i) * (2 * static_cast<std::size_t>(L_) - i + 1) / 2 + j - i];
    }

private:
    int L_;
    std::vector<float> h_;
};

/// Finds scikit-image's threshold indices. Every combination's float32 sum F differs from its exact sum R
/// by at most m * 2^-24 * R (m <= 4 additions of non-negative terms), so the first combination reaching the
/// largest F has R >= Rmax * (1 - 2 * 4 * 2^-24) > Rmax * (1 - 1e-6). The dynamic program gives, for every
/// start level and number of remaining thresholds, the largest exact sum of the classes that follow
/// (`best`); the search walks the combinations in scikit-image's (lexicographic) order, skips every prefix
/// whose bound falls below Rmax * (1 - 1e-6), and evaluates the rest exactly as scikit-image does.
class Search {
public:
    Search(const VarianceTable& H, int L, int m) : H_(H), L_(L), m_(m) {
        // best[r][s]: the largest exact sum of H over classes covering [s, L-1] cut by r thresholds, each
        // threshold t with r' thresholds still to place (itself included) obeying t <= L - 1 - r'.
        best_.assign(static_cast<std::size_t>(m) * (L + 1), 0.0);
        for (int s = 0; s < L; ++s) at(0, s) = H_(s, L - 1);
        for (int r = 1; r < m; ++r)
            for (int s = 0; s < L; ++s) {
                double b = -1.0;
                for (int t = s; t <= L - 1 - r; ++t) b = std::max(b, static_cast<double>(H_(s, t)) + at(r - 1, t + 1));
                at(r, s) = b;
            }
        double rmax = -1.0;
        for (int t = 0; t <= L - 1 - m; ++t) rmax = std::max(rmax, static_cast<double>(H_(0, t)) + at(m - 1, t + 1));
        floor_ = rmax * (1.0 - 1e-6);
        current_.assign(static_cast<std::size_t>(m), 0);
        result_.assign(static_cast<std::size_t>(m), 0);
    }

    std::vector<int> run() {
        walk(0, 0, 0.0);
        return result_;
    }

private:
    double& at(int r, int s) { return best_[static_cast<std::size_t>(r) * (L_ + 1) + s]; }

    void walk(int depth, int start, double prefix) {
        if (depth == m_) {
            // scikit-image's order of float32 additions: first class + last class, then the middle ones.
            float sigma = H_(0, current_[0]) + H_(current_[static_cast<std::size_t>(m_ - 1)] + 1, L_ - 1);
            for (int i = 0; i + 1 < m_; ++i)
                sigma += H_(current_[static_cast<std::size_t>(i)] + 1, current_[static_cast<std::size_t>(i + 1)]);
            if (sigma > sigma_max_) {
                sigma_max_ = sigma;
                result_ = current_;
            }
            return;
        }
        const int remaining = m_ - depth;  // thresholds still to place, this one included
        for (int t = start; t <= L_ - 1 - remaining; ++t) {
            const double closed = prefix + static_cast<double>(H_(start, t));
            if (closed + at(remaining - 1, t + 1) < floor_) continue;
            current_[static_cast<std::size_t>(depth)] = t;
            walk(depth + 1, t + 1, closed);
        }
    }

    const VarianceTable& H_;
    int L_, m_;
    std::vector<double> best_;
    double floor_ = 0;
    float sigma_max_ = 0.f;
    std::vector<int> current_, result_;
};

}  // namespace

std::vector<int> multiotsu_thresholds(const std::uint64_t* hist, int bins, int classes) {
    if (!hist || (bins != 256 && bins != 65536))
        throw Error(ErrorCode::InvalidArgument, "multi-Otsu: the histogram must have 256 or 65536 bins");
    if (classes < 2 || classes > kMaxClasses)
        throw Error(ErrorCode::InvalidArgument,
                    "multi-Otsu: classes must lie in [2, 5], got " + std::to_string(classes));
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
    if (distinct < classes)
        throw Error(ErrorCode::InvalidArgument, "multi-Otsu: the image has only " + std::to_string(distinct) +
                                                    " different values; it cannot be split into " +
                                                    std::to_string(classes) + " classes");
    std::vector<int> t;
    if (distinct == classes) {
        for (int i = 0; i < L && static_cast<int>(t.size()) < classes - 1; ++i)
            if (counts[i] != 0) t.push_back(lo + i);
        return t;
    }
    const VarianceTable H(counts, L, total);
    t = Search(H, L, classes - 1).run();
    for (int& v : t) v += lo;
    return t;
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
    const Histogram h = detail::level_histogram(src, o);
    std::vector<int> t = multiotsu_thresholds(h.channel(0), levels, classes);
    const LevelTable table = multiotsu_label_table(t, levels);
    apply_table(src, dst, &table, o);
    return t;
}

}  // namespace imghist
