// imghist filters — histogram matching: scikit-image's match_histograms as a table per channel, with
// np.interp's arithmetic (fmath::match_interp; the rule is stated in filters.hpp).
#include <cmath>
#include <string>

#include "filters/internal.hpp"
#include "filters/level_table.hpp"

namespace imghist {

namespace detail {

std::uint64_t target_total(const std::uint64_t* target_hist, int bins) {
    std::uint64_t m = 0;
    for (int u = 0; u < bins; ++u) m += target_hist[u];
    if (m == 0) throw Error(ErrorCode::InvalidArgument, "histogram matching: the target histogram is empty");
    return m;
}

MatchPoints match_points(const std::uint64_t* target_hist, int bins) {
    const std::uint64_t m = target_total(target_hist, bins);
    MatchPoints p;
    p.xp.reserve(static_cast<std::size_t>(bins));  // one allocation each: the device path calls this per launch
    p.fp.reserve(static_cast<std::size_t>(bins));
    std::uint64_t cum = 0;
    for (int u = 0; u < bins; ++u) {
        if (target_hist[u] == 0) continue;
        cum += target_hist[u];
        p.xp.push_back(static_cast<double>(cum) / static_cast<double>(m));
        p.fp.push_back(u);
    }
    return p;
}

}  // namespace detail

LevelTable match_table(const std::uint64_t* source_hist, const std::uint64_t* target_hist, int bins) {
    if (!source_hist || !target_hist || bins < 1) throw Error(ErrorCode::InvalidArgument, "match_table: no histogram");
    const detail::MatchPoints points = detail::match_points(target_hist, bins);
    const std::vector<double>& xp = points.xp;
    const std::vector<int>& fp = points.fp;
    std::uint64_t n = 0;
    for (int v = 0; v < bins; ++v) n += source_hist[v];
    if (n == 0) throw Error(ErrorCode::InvalidArgument, "histogram matching: the source histogram is empty");
    const int count = static_cast<int>(xp.size());
    LevelTable t(static_cast<std::size_t>(bins));
    std::uint64_t cum = 0;
    for (int v = 0; v < bins; ++v) {
        cum += source_hist[v];
        const double r = fmath::match_interp(static_cast<double>(cum) / static_cast<double>(n), xp.data(), fp.data(), count);
        t[static_cast<std::size_t>(v)] = static_cast<std::uint16_t>(std::nearbyint(r));  // half to even
    }
    return t;
}

namespace {

void apply_matching(const ImageView& src, const ImageView& dst, const Histogram& target, int target_channels,
                    const FilterOptions& o) {
    const int levels = detail::level_count(src.type, "histogram matching");
    const Histogram h = detail::level_histogram(src, o);
    LevelTable tables[4];
    for (int c = 0; c < src.channels; ++c)
        tables[c] = match_table(h.channel(c), target.channel(target_channels == 1 ? 0 : c), levels);
    apply_table(src, dst, tables, o);
}

}  // namespace

void match_histograms(const ImageView& src, const ImageView& reference, const ImageView& dst,
                      const FilterOptions& o) {
    detail::check_pair(src, dst, "match_histograms");
    detail::check_view(reference, "match_histograms", "reference");
    if (reference.type != src.type || reference.channels != src.channels)
        throw Error(ErrorCode::InvalidArgument,
                    "match_histograms: the reference must have the image's sample type and channel count (" +
                        std::to_string(src.channels) + " channels)");
    detail::level_count(src.type, "match_histograms");
    if (detail::cuda_level_path_u8(src) && detail::cuda_level_path_u8(reference)) {
        detail::cuda_match_u8(src, &reference, nullptr, dst, o.device, o.stream);
        return;
    }
    FilterOptions ro = o;
    if (reference.location != src.location) ro.backend = Backend::Auto;  // each image on its own side
    const Histogram target = detail::level_histogram(reference, ro);
    apply_matching(src, dst, target, src.channels, o);
}

void match_to_histogram(const ImageView& src, const ImageView& dst, const Histogram& target, const FilterOptions& o) {
    detail::check_pair(src, dst, "match_to_histogram");
    const int levels = detail::level_count(src.type, "match_to_histogram");
    if (target.bins() != levels || target.counts.size() != static_cast<std::size_t>(target.channels) * levels)
        throw Error(ErrorCode::InvalidArgument, "match_to_histogram: the target histogram must have " +
                                                    std::to_string(levels) + " bins for this image");
    if (target.channels != 1 && target.channels != src.channels)
        throw Error(ErrorCode::InvalidArgument,
                    "match_to_histogram: the target histogram must have 1 or " + std::to_string(src.channels) + " channels");
    if (detail::cuda_level_path_u8(src)) {
        // Checked here, before anything is launched: the device path finds the points only when its cache of
        // the last target misses.
        for (int c = 0; c < target.channels; ++c) detail::target_total(target.channel(c), levels);
        detail::cuda_match_u8(src, nullptr, &target, dst, o.device, o.stream);
        return;
    }
    apply_matching(src, dst, target, target.channels, o);
}

}  // namespace imghist
