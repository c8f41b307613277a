// imghist filters — the table pass of the level-table operations (u8 through the 8-bit LUT paths, u16
// through 65536-entry tables) and the full-range and luma histograms they start from.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "core/checks.hpp"
#include "filters/internal.hpp"
#include "filters/level_table.hpp"

namespace imghist {
namespace detail {
namespace {

template <class T>
void cpu_luma_histogram(const ImageView& src, std::uint64_t* hist, int levels, int threads) {
    std::mutex merge;
    parallel_for(src.height, threads, [&](int y0, int y1) {
        std::vector<std::uint64_t> local(static_cast<std::size_t>(levels), 0);
        for (int y = y0; y < y1; ++y) {
            const auto* row = reinterpret_cast<const T*>(src.row(y));
            for (int x = 0; x < src.width; ++x) {
                const T* px = row + static_cast<std::size_t>(x) * src.channels;
                ++local[static_cast<std::size_t>(fmath::ycrcb_luma(px[0], px[1], px[2]))];
            }
        }
        std::lock_guard<std::mutex> lock(merge);
        for (int v = 0; v < levels; ++v) hist[v] += local[static_cast<std::size_t>(v)];
    });
}

void cpu_apply_table16(const ImageView& src, const ImageView& dst, const LevelTable* tables, int threads) {
    const int C = src.channels;
    parallel_for(src.height, threads, [&](int y0, int y1) {
        for (int y = y0; y < y1; ++y) {
            const auto* s = reinterpret_cast<const std::uint16_t*>(src.row(y));
            auto* d = reinterpret_cast<std::uint16_t*>(const_cast<std::uint8_t*>(dst.row(y)));
            const std::size_t n = static_cast<std::size_t>(src.width) * C;
            if (C == 1) {
                const std::uint16_t* t = tables[0].data();
                for (std::size_t i = 0; i < n; ++i) d[i] = t[s[i]];
            } else {
                for (std::size_t i = 0; i < n; i += C)
                    for (int c = 0; c < C; ++c) d[i + c] = tables[c][s[i + c]];
            }
        }
    });
}

}  // namespace

int level_count(SampleType type, const char* op) {
    if (type == SampleType::U8) return 256;
    if (type == SampleType::U16) return 65536;
    throw Error(ErrorCode::Unsupported, std::string(op) + ": u8 and u16 images only");
}

Histogram level_histogram(const ImageView& src, const FilterOptions& o) {
    Options ho;
    ho.backend = o.backend;  // calc_hist resolves it (Auto on a host image: the measured choice)
    ho.device = o.device;
    ho.cpu_threads = o.cpu_threads;
    ho.stream = o.stream;
    const int levels = level_count(src.type, "histogram");
    return calc_hist(src, levels == 256 ? BinSpec::u8() : BinSpec::full(SampleType::U16, levels), ho);
}

Histogram luma_histogram(const ImageView& src, const FilterOptions& o) {
    const int levels = level_count(src.type, "luma histogram");
    if (src.channels != 3 && src.channels != 4)
        throw Error(ErrorCode::Unsupported, "luma histogram: 3- or 4-channel images only");
    Histogram h = Histogram::zeros(levels == 256 ? BinSpec::u8() : BinSpec::full(SampleType::U16, levels), 1);
    if (src.location == Location::Device) {
        h.backend = Backend::Cuda;
        cuda_luma_histogram(src, h.channel(0), o.device, o.stream);
        return h;
    }
    if (levels == 256) cpu_luma_histogram<std::uint8_t>(src, h.channel(0), levels, o.cpu_threads);
    else cpu_luma_histogram<std::uint16_t>(src, h.channel(0), levels, o.cpu_threads);
    return h;
}

}  // namespace detail

void apply_table(const ImageView& src, const ImageView& dst, const LevelTable* tables, const FilterOptions& o) {
    detail::check_pair(src, dst, "apply_table");
    const int levels = detail::level_count(src.type, "apply_table");
    if (!tables) throw Error(ErrorCode::InvalidArgument, "apply_table: no tables");
    for (int c = 0; c < src.channels; ++c) {
        if (tables[c].size() != static_cast<std::size_t>(levels))
            throw Error(ErrorCode::InvalidArgument, "apply_table: the table of channel " + std::to_string(c) + " has " +
                                                        std::to_string(tables[c].size()) + " entries, the image's type " +
                                                        std::to_string(levels));
        const auto top = *std::max_element(tables[c].begin(), tables[c].end());
        if (top >= levels)
            throw Error(ErrorCode::InvalidArgument, "apply_table: the table of channel " + std::to_string(c) +
                                                        " holds " + std::to_string(top) + ", above the type's range");
    }
    if (levels == 256) {
        // The 8-bit LUT paths (a 256-byte table per channel) of apply_lut.
        Lut8 luts[4];
        for (int c = 0; c < src.channels; ++c)
            for (int v = 0; v < 256; ++v) luts[c][static_cast<std::size_t>(v)] = static_cast<std::uint8_t>(tables[c][static_cast<std::size_t>(v)]);
        apply_lut(src, dst, luts, o);
        return;
    }
    if (detail::resolve_backend(o.backend, src) == Backend::Cpu) {
        detail::cpu_apply_table16(src, dst, tables, o.cpu_threads);
        return;
    }
    if (src.location == Location::Device) {
        detail::cuda_apply_table16(src, dst, tables, o.device, o.stream);
        return;
    }
    detail::cuda_staged(src, dst, o.device, o.stream, [&](const ImageView& s, const ImageView& d, Stream st) {
        detail::cuda_apply_table16(s, d, tables, -1, st);
    });
}

}  // namespace imghist
