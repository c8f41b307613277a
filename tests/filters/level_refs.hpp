// Plain-loop references of the level-table operations, as filters.hpp states their rules (the scikit-image
// script in tests/skimage checks the rules against scikit-image itself): sorted samples for np.percentile, a
// linear scan for np.interp, scikit-image's exhaustive multi-Otsu search written out. Shared by the single-image
// and the batch tests.
#pragma once

#include <opencv2/core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace level_refs {

inline int top_of(int depth) { return depth == CV_8U ? 255 : 65535; }

inline int sample(const cv::Mat& m, int y, int x, int c) {
    return m.depth() == CV_8U ? m.ptr<std::uint8_t>(y)[x * m.channels() + c] : m.ptr<std::uint16_t>(y)[x * m.channels() + c];
}
inline void put(cv::Mat& m, int y, int x, int c, int v) {
    if (m.depth() == CV_8U) m.ptr<std::uint8_t>(y)[x * m.channels() + c] = static_cast<std::uint8_t>(v);
    else m.ptr<std::uint16_t>(y)[x * m.channels() + c] = static_cast<std::uint16_t>(v);
}

/// The documented luma (the integers of cv::COLOR_BGR2YCrCb's Y).
inline int luma(const cv::Mat& m, int y, int x) {
    return (sample(m, y, x, 0) * 1868 + sample(m, y, x, 1) * 9617 + sample(m, y, x, 2) * 4899 + 8192) >> 14;
}

/// np.percentile(values, p), method "linear", from the sorted values.
inline double np_percentile(std::vector<int> v, double p) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    const double h = static_cast<double>(n - 1) * (p / 100.0);
    if (h >= static_cast<double>(n - 1)) return v.back();
    const std::size_t i = static_cast<std::size_t>(std::floor(h));
    const double g = h - std::floor(h);
    const double a = v[i], b = v[i + 1], d = b - a;
    return g >= 0.5 ? b - d * (1 - g) : a + d * g;
}

/// rescale_intensity(x, in_range=(lo, hi)) on one sample, as NumPy computes and converts it.
inline int rescale(int x, double lo, double hi, int top) {
    if (lo == hi) return static_cast<int>(lo);
    const double c = std::min(std::max(static_cast<double>(x), lo), hi);
    return static_cast<int>((c - lo) / (hi - lo) * top);
}

inline cv::Mat ref_stretch(const cv::Mat& src, double low, double high, bool luma_mode) {
    cv::Mat out = src.clone();
    const int cn = src.channels(), top = top_of(src.depth());
    auto channel_values = [&](int c) {
        std::vector<int> v;
        for (int y = 0; y < src.rows; ++y)
            for (int x = 0; x < src.cols; ++x) v.push_back(c < 0 ? luma(src, y, x) : sample(src, y, x, c));
        return v;
    };
    if (luma_mode && cn >= 3) {
        const std::vector<int> l = channel_values(-1);
        const double lo = np_percentile(l, low), hi = np_percentile(l, 100 - high);
        for (int y = 0; y < src.rows; ++y)
            for (int x = 0; x < src.cols; ++x)
                for (int c = 0; c < 3; ++c) put(out, y, x, c, rescale(sample(src, y, x, c), lo, hi, top));
        return out;
    }
    for (int c = 0; c < cn; ++c) {
        const std::vector<int> v = channel_values(c);
        const double lo = np_percentile(v, low), hi = np_percentile(v, 100 - high);
        for (int y = 0; y < src.rows; ++y)
            for (int x = 0; x < src.cols; ++x) put(out, y, x, c, rescale(sample(src, y, x, c), lo, hi, top));
    }
    return out;
}

/// round_half_even(np.interp(quantile of v in src, target quantiles, target levels)), per sample.
inline cv::Mat ref_match(const cv::Mat& src, const std::vector<std::map<int, std::uint64_t>>& target) {
    cv::Mat out = src.clone();
    for (int c = 0; c < src.channels(); ++c) {
        const auto& t = target[target.size() == 1 ? 0 : static_cast<std::size_t>(c)];
        std::map<int, std::uint64_t> counts;
        for (int y = 0; y < src.rows; ++y)
            for (int x = 0; x < src.cols; ++x) ++counts[sample(src, y, x, c)];
        const double n = static_cast<double>(src.total());
        std::uint64_t m = 0;
        for (auto& kv : t) m += kv.second;
        std::vector<double> xp, fp;
        std::uint64_t cum = 0;
        for (auto& kv : t) {
            cum += kv.second;
            xp.push_back(static_cast<double>(cum) / static_cast<double>(m));
            fp.push_back(kv.first);
        }
        std::map<int, int> table;
        cum = 0;
        for (auto& kv : counts) {
            cum += kv.second;
            const double q = static_cast<double>(cum) / n;
            double r = 0;
            if (q <= xp.front()) r = fp.front();
            else if (q >= xp.back()) r = fp.back();
            else
                for (std::size_t j = 0; j + 1 < xp.size(); ++j)
                    if (xp[j] <= q && q < xp[j + 1]) {
                        r = xp[j] == q ? fp[j] : (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]) * (q - xp[j]) + fp[j];
                        break;
                    }
            table[kv.first] = static_cast<int>(std::nearbyint(r));
        }
        for (int y = 0; y < src.rows; ++y)
            for (int x = 0; x < src.cols; ++x) put(out, y, x, c, table[sample(src, y, x, c)]);
    }
    return out;
}

inline std::vector<std::map<int, std::uint64_t>> counts_of(const cv::Mat& m) {
    std::vector<std::map<int, std::uint64_t>> r(static_cast<std::size_t>(m.channels()));
    for (int y = 0; y < m.rows; ++y)
        for (int x = 0; x < m.cols; ++x)
            for (int c = 0; c < m.channels(); ++c) ++r[static_cast<std::size_t>(c)][sample(m, y, x, c)];
    return r;
}

/// skimage's _get_multiotsu_thresh_indices_lut, written out: exhaustive recursion in lexicographic order,
/// float32 arithmetic, strict '>'; threshold indices into `prob`.
inline std::vector<int> ref_multiotsu_search(const std::vector<float>& prob, int classes) {
    const int L = static_cast<int>(prob.size()), m = classes - 1;
    std::vector<float> P(static_cast<std::size_t>(L)), S(static_cast<std::size_t>(L));
    P[0] = S[0] = prob[0];
    for (int i = 1; i < L; ++i) {
        P[static_cast<std::size_t>(i)] = P[static_cast<std::size_t>(i - 1)] + prob[static_cast<std::size_t>(i)];
        S[static_cast<std::size_t>(i)] = S[static_cast<std::size_t>(i - 1)] + static_cast<float>(i) * prob[static_cast<std::size_t>(i)];
    }
    auto H = [&](int i, int j) -> float {
        if (i == 0) {
            if (j == 0) return 0.f;
            const float p = P[static_cast<std::size_t>(j)], s = S[static_cast<std::size_t>(j)];
            return p > 0 ? (s * s) / p : 0.f;
        }
        const float p = P[static_cast<std::size_t>(j)] - P[static_cast<std::size_t>(i - 1)];
        if (!(p > 0)) return 0.f;
        const float s = S[static_cast<std::size_t>(j)] - S[static_cast<std::size_t>(i - 1)];
        return (s * s) / p;
    };
    std::vector<int> cur(static_cast<std::size_t>(m)), best(static_cast<std::size_t>(m));
    float smax = 0;
    std::function<void(int, int)> rec = [&](int start, int d) {
        if (d == m) {
            float s = H(0, cur[0]) + H(cur[static_cast<std::size_t>(m - 1)] + 1, L - 1);
            for (int i = 0; i + 1 < m; ++i) s += H(cur[static_cast<std::size_t>(i)] + 1, cur[static_cast<std::size_t>(i + 1)]);
            if (s > smax) {
                smax = s;
                best = cur;
            }
            return;
        }
        for (int t = start; t < L - m + d; ++t) {
            cur[static_cast<std::size_t>(d)] = t;
            rec(t + 1, d + 1);
        }
    };
    rec(0, 0);
    return best;
}

/// skimage's threshold_multiotsu on an image whose histogram is `hist`.
inline std::vector<int> ref_multiotsu(const std::vector<std::uint64_t>& hist, int classes) {
    int lo = 0, hi = static_cast<int>(hist.size()) - 1;
    while (hist[static_cast<std::size_t>(lo)] == 0) ++lo;
    while (hist[static_cast<std::size_t>(hi)] == 0) --hi;
    const int L = hi - lo + 1, m = classes - 1;
    std::uint64_t total = 0;
    int distinct = 0;
    for (int i = lo; i <= hi; ++i) {
        total += hist[static_cast<std::size_t>(i)];
        distinct += hist[static_cast<std::size_t>(i)] != 0;
    }
    std::vector<int> out;
    if (distinct == classes) {
        for (int i = lo; i <= hi && static_cast<int>(out.size()) < m; ++i)
            if (hist[static_cast<std::size_t>(i)]) out.push_back(i);
        return out;
    }
    std::vector<float> prob(static_cast<std::size_t>(L));
    for (int i = 0; i < L; ++i) prob[static_cast<std::size_t>(i)] = static_cast<float>(static_cast<double>(hist[static_cast<std::size_t>(lo + i)]) / static_cast<double>(total));
    std::vector<int> best = ref_multiotsu_search(prob, classes);
    for (int& t : best) t += lo;
    return best;
}

inline std::vector<std::uint64_t> level_hist(const cv::Mat& gray) {
    std::vector<std::uint64_t> h(gray.depth() == CV_8U ? 256 : 65536, 0);
    for (int y = 0; y < gray.rows; ++y)
        for (int x = 0; x < gray.cols; ++x) ++h[static_cast<std::size_t>(sample(gray, y, x, 0))];
    return h;
}

inline cv::Mat ref_labels(const cv::Mat& gray, const std::vector<int>& t) {
    cv::Mat out = gray.clone();
    const int k1 = static_cast<int>(t.size()), top = top_of(gray.depth());
    for (int y = 0; y < gray.rows; ++y)
        for (int x = 0; x < gray.cols; ++x) {
            const int v = sample(gray, y, x, 0);
            const int label = static_cast<int>(std::count_if(t.begin(), t.end(), [v](int th) { return th <= v; }));
            put(out, y, x, 0, (label * top + k1 / 2) / k1);
        }
    return out;
}

}  // namespace level_refs
