// imghist filters — contrast stretch by percentiles: NumPy's linear percentile read from cumulative counts,
// and scikit-image's rescale_intensity as a table (the rules are stated in filters.hpp).
#include <cmath>
#include <string>

#include "filters/level_table.hpp"

namespace imghist {
namespace {

/// The k-th smallest sample (0-based) of the histogram: the first level whose cumulative count exceeds k.
/// `cum` holds the cumulative counts.
int order_statistic(const std::vector<std::uint64_t>& cum, std::uint64_t k) {
    int lo = 0, hi = static_cast<int>(cum.size()) - 1;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (cum[static_cast<std::size_t>(mid)] > k) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

double percentile_of(const std::vector<std::uint64_t>& cum, double percent) {
    const std::uint64_t n = cum.back();
    const double q = percent / 100.0;
    const double h = static_cast<double>(n - 1) * q;
    if (h >= static_cast<double>(n - 1)) return order_statistic(cum, n - 1);
    const double below = std::floor(h);
    const double g = h - below;
    const auto i = static_cast<std::uint64_t>(below);
    const int a = order_statistic(cum, i), b = order_statistic(cum, i + 1);
    const double d = static_cast<double>(b - a);
    // np.lerp's two-sided form: exact at both ends.
    return g >= 0.5 ? static_cast<double>(b) - d * (1.0 - g) : static_cast<double>(a) + d * g;
}

std::vector<std::uint64_t> cumulative(const std::uint64_t* hist, int bins, const char* op) {
    if (!hist || bins < 1) throw Error(ErrorCode::InvalidArgument, std::string(op) + ": no histogram");
    std::vector<std::uint64_t> cum(static_cast<std::size_t>(bins));
    std::uint64_t sum = 0;
    for (int v = 0; v < bins; ++v) cum[static_cast<std::size_t>(v)] = sum += hist[v];
    if (sum == 0) throw Error(ErrorCode::InvalidArgument, std::string(op) + ": empty histogram");
    return cum;
}

void check_percent(double p, const char* what) {
    if (!(p >= 0.0 && p <= 100.0))
        throw Error(ErrorCode::InvalidArgument,
                    std::string("contrast stretch: the ") + what + " percent must lie in [0, 100], got " + std::to_string(p));
}

}  // namespace

double histogram_percentile(const std::uint64_t* hist, int bins, double percent) {
    check_percent(percent, "requested");
    return percentile_of(cumulative(hist, bins, "histogram_percentile"), percent);
}

LevelTable stretch_table(const std::uint64_t* hist, int bins, double low_percent, double high_percent) {
    check_percent(low_percent, "low");
    check_percent(high_percent, "high");
    if (low_percent + high_percent > 100.0)
        throw Error(ErrorCode::InvalidArgument, "contrast stretch: low + high percent exceed 100");
    const std::vector<std::uint64_t> cum = cumulative(hist, bins, "stretch_table");
    const double lo = percentile_of(cum, low_percent);
    const double hi = percentile_of(cum, 100.0 - high_percent);
    const double top = static_cast<double>(bins - 1);
    LevelTable t(static_cast<std::size_t>(bins));
    for (int v = 0; v < bins; ++v) {
        double out;
        if (lo != hi) {
            const double c = std::min(std::max(static_cast<double>(v), lo), hi);  // np.clip
            out = (c - lo) / (hi - lo) * top;
        } else {
            out = lo;
        }
        t[static_cast<std::size_t>(v)] = static_cast<std::uint16_t>(out);  // truncation, as NumPy's astype
    }
    return t;
}

void stretch_contrast(const ImageView& src, const ImageView& dst, double low_percent, double high_percent,
                      StretchMode mode, const FilterOptions& o) {
    detail::check_pair(src, dst, "stretch_contrast");
    const int levels = detail::level_count(src.type, "stretch_contrast");
    if (mode != StretchMode::Luma && mode != StretchMode::PerChannel)
        throw Error(ErrorCode::InvalidArgument, "stretch_contrast: unknown mode");
    check_percent(low_percent, "low");
    check_percent(high_percent, "high");
    if (low_percent + high_percent > 100.0)
        throw Error(ErrorCode::InvalidArgument, "contrast stretch: low + high percent exceed 100");
    const bool luma = mode == StretchMode::Luma && src.channels >= 3;
    if (detail::cuda_level_path_u8(src)) {
        // The same two quantiles percentile_of forms, rounded on the host once.
        detail::cuda_stretch_u8(src, dst, low_percent / 100.0, (100.0 - high_percent) / 100.0, luma, o.device,
                                o.stream);
        return;
    }
    LevelTable tables[4];
    if (luma) {
        const Histogram h = detail::luma_histogram(src, o);
        const LevelTable t = stretch_table(h.channel(0), levels, low_percent, high_percent);
        tables[0] = tables[1] = tables[2] = t;
        if (src.channels == 4) {
            tables[3].resize(static_cast<std::size_t>(levels));
            for (int v = 0; v < levels; ++v) tables[3][static_cast<std::size_t>(v)] = static_cast<std::uint16_t>(v);
        }
    } else {
        const Histogram h = detail::level_histogram(src, o);
        for (int c = 0; c < src.channels; ++c)
            tables[c] = stretch_table(h.channel(c), levels, low_percent, high_percent);
    }
    apply_table(src, dst, tables, o);
}

}  // namespace imghist
