// imghist filters — the batch filters (imghist/batch_filters.hpp): checks, the backend, the CPU backend's
// schedule of images over threads (each image through the single call's CPU path, so every answer is the single
// call's), and host batches through the device. The device work is in cuda/batch_filters.cu.
#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "core/policy/batch_backend.hpp"
#include "filters/batch.hpp"
#include "filters/batch_checks.hpp"
#include "filters/level_table.hpp"

namespace imghist {
namespace {

using detail::PreparedBatch;

void require(bool ok, ErrorCode code, const std::string& msg) {
    if (!ok) throw Error(code, msg);
}

/// Images of at least this many bytes, and of at least a thread's share of the batch, are not given to one
/// thread: each runs alone with every thread (the single call's own split), before the others are spread over
/// the threads one image each. Below it one image is too little work to split.
constexpr std::size_t kSplitImageMinBytes = std::size_t(1) << 20;

std::size_t bytes_of(const ImageView& v) { return v.row_bytes() * static_cast<std::size_t>(v.height); }

/// Runs fn(i, threads) for every image on the CPU: large images one after another with all `cpu_threads`,
/// then the rest on up to `cpu_threads` threads that take the next image as they finish one (largest first).
/// An exception names its image; the first one is rethrown when every thread has stopped.
template <class Fn>
void cpu_each(const PreparedBatch& b, int cpu_threads, Fn&& fn) {
    const int threads = cpu_threads > 0 ? cpu_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    auto run = [&](std::size_t i, int t) {
        try {
            fn(i, t);
        } catch (const Error& e) {
            throw Error(e.code(), "batch image " + std::to_string(i) + ": " + e.what());
        }
    };
    std::size_t total = 0;
    for (const ImageView& v : b.src) total += bytes_of(v);
    const std::size_t split = std::max(kSplitImageMinBytes, total / static_cast<std::size_t>(threads));
    std::vector<std::size_t> rest;
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (threads > 1 && bytes_of(b.src[i]) >= split) run(i, threads);
        else rest.push_back(i);
    }
    std::stable_sort(rest.begin(), rest.end(),
                     [&](std::size_t x, std::size_t y) { return bytes_of(b.src[x]) > bytes_of(b.src[y]); });
    std::atomic<std::size_t> next{0};
    const int parts = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(threads), rest.size()));
    detail::parallel_for(parts, parts, [&](int, int) {
        for (std::size_t k = next++; k < rest.size(); k = next++) run(rest[k], 1);
    });
}

/// The options of one image's single call on the CPU.
FilterOptions cpu_options(int threads) {
    FilterOptions o;
    o.backend = Backend::Cpu;
    o.cpu_threads = threads;
    return o;
}

/// Runs op(device batch, index of its first image, device, stream) on the device: directly for a device
/// batch, through cuda_staged_batch for a host batch (src_ext: the host regions to copy, default the sources).
template <class Op>
void on_device(const PreparedBatch& b, const FilterOptions& o, Op&& op, const std::vector<ImageView>* src_ext = nullptr) {
    if (b.first().location == Location::Device) {
        op(b.device(), std::size_t(0), o.device, o.stream);
        return;
    }
    const std::vector<ImageView>& up = src_ext ? *src_ext : b.src;
    detail::cuda_staged_batch(up.data(), b.dst.data(), b.size(), o.device, o.stream,
                              [&](const detail::DeviceBatch& g, std::size_t first, Stream s) { op(g, first, -1, s); });
}

bool on_cpu(const PreparedBatch& b, const FilterOptions& o) {
    return detail::batch_backend(o.backend, b.first().location) == Backend::Cpu;
}

void check_percents(double low, double high) {
    require(low >= 0.0 && low <= 100.0 && high >= 0.0 && high <= 100.0, ErrorCode::InvalidArgument,
            "contrast stretch: the percents must lie in [0, 100]");
    require(low + high <= 100.0, ErrorCode::InvalidArgument, "contrast stretch: low + high percent exceed 100");
}

}  // namespace

void equalize_hist_batch(const ImageBatch& src, const ImageBatch& dst, const FilterOptions& o) {
    const PreparedBatch b = detail::prepare_batch(src, dst, "equalize_hist_batch");
    if (b.empty()) return;
    require(b.first().type == SampleType::U8, ErrorCode::Unsupported, "equalize_hist_batch: 8-bit images only");
    require(b.first().channels == 1, ErrorCode::Unsupported,
            "equalize_hist_batch: 1-channel images only (use equalize_hist_color_batch for 3 or 4 channels)");
    if (on_cpu(b, o)) {
        cpu_each(b, o.cpu_threads, [&](std::size_t i, int t) { equalize_hist(b.src[i], b.dst[i], cpu_options(t)); });
        return;
    }
    on_device(b, o, [](const detail::DeviceBatch& d, std::size_t, int device, Stream s) {
        detail::cuda_equalize_batch(d, device, s);
    });
}

void equalize_hist_color_batch(const ImageBatch& src, const ImageBatch& dst, ColorEqualize mode,
                               const FilterOptions& o) {
    const PreparedBatch b = detail::prepare_batch(src, dst, "equalize_hist_color_batch");
    if (b.empty()) return;
    require(b.first().type == SampleType::U8, ErrorCode::Unsupported, "equalize_hist_color_batch: 8-bit images only");
    require(b.first().channels == 3 || b.first().channels == 4, ErrorCode::Unsupported,
            "equalize_hist_color_batch: 3- or 4-channel images only");
    require(mode == ColorEqualize::Luma || mode == ColorEqualize::PerChannel, ErrorCode::InvalidArgument,
            "equalize_hist_color_batch: unknown mode");
    if (on_cpu(b, o)) {
        cpu_each(b, o.cpu_threads,
                 [&](std::size_t i, int t) { equalize_hist_color(b.src[i], b.dst[i], mode, cpu_options(t)); });
        return;
    }
    on_device(b, o, [mode](const detail::DeviceBatch& d, std::size_t, int device, Stream s) {
        detail::cuda_equalize_color_batch(d, mode, device, s);
    });
}

std::vector<double> threshold_batch(const ImageBatch& src, const ImageBatch& dst, double thresh, double maxval,
                                    ThresholdType type, AutoThreshold automatic, const FilterOptions& o, int* computed) {
    const PreparedBatch b = detail::prepare_batch(src, dst, "threshold_batch");
    if (b.empty()) return {};
    const ImageView& f = b.first();
    require(static_cast<int>(type) <= 4, ErrorCode::InvalidArgument, "threshold_batch: unknown threshold type");
    require(static_cast<int>(automatic) <= 2, ErrorCode::InvalidArgument, "threshold_batch: unknown automatic threshold");
    if (automatic == AutoThreshold::Otsu)
        require(f.channels == 1 && (f.type == SampleType::U8 || f.type == SampleType::U16), ErrorCode::Unsupported,
                "threshold_batch: Otsu needs 1-channel u8 or u16 images");
    if (automatic == AutoThreshold::Triangle)
        require(f.channels == 1 && f.type == SampleType::U8, ErrorCode::Unsupported,
                "threshold_batch: Triangle needs 1-channel u8 images");
    const detail::ThresholdParams p = detail::threshold_params(f.type, thresh, maxval, type);  // checks the type
    std::vector<double> used(b.size(), p.used);
    if (on_cpu(b, o)) {
        cpu_each(b, o.cpu_threads, [&](std::size_t i, int t) {
            used[i] = threshold(b.src[i], b.dst[i], thresh, maxval, type, automatic, cpu_options(t),
                                computed ? computed + i : nullptr);
        });
        return used;
    }
    if (automatic == AutoThreshold::None) {
        on_device(b, o, [&](const detail::DeviceBatch& d, std::size_t, int device, Stream s) {
            detail::cuda_threshold_batch(d, p, automatic, nullptr, nullptr, device, s);
        });
        return used;
    }
    if (f.location == Location::Device && computed) {
        detail::cuda_threshold_batch(b.device(), p, automatic, computed, nullptr, o.device, o.stream);
        return {};
    }
    std::vector<int> levels(b.size());
    on_device(b, o, [&](const detail::DeviceBatch& d, std::size_t first, int device, Stream s) {
        detail::cuda_threshold_batch(d, p, automatic, nullptr, levels.data() + first, device, s);
    });
    for (std::size_t i = 0; i < b.size(); ++i) {
        used[i] = levels[i];  // cv::threshold returns the level it found
        if (computed) computed[i] = levels[i];
    }
    return used;
}

void clahe_batch(const Clahe& clahe, const ImageBatch& src, const ImageBatch& dst, const FilterOptions& o,
                 const ClaheBorder* borders) {
    const PreparedBatch b = detail::prepare_batch(src, dst, "clahe_batch");
    if (b.empty()) return;
    const ImageView& f = b.first();
    require(f.channels == 1 && (f.type == SampleType::U8 || f.type == SampleType::U16), ErrorCode::Unsupported,
            "clahe_batch: 1-channel u8 or u16 images only");
    std::vector<fmath::ClaheGeometry> g(b.size());
    for (std::size_t i = 0; i < b.size(); ++i) {
        const ClaheBorder border = borders ? borders[i] : ClaheBorder{};
        require(border.right >= 0 && border.bottom >= 0, ErrorCode::InvalidArgument,
                "clahe_batch: batch image " + std::to_string(i) + ": negative extra border");
        g[i] = fmath::clahe_geometry(b.src[i].width, b.src[i].height, clahe.tiles_x(), clahe.tiles_y(),
                                     f.type == SampleType::U8 ? 256 : 65536, clahe.clip_limit(), border.right,
                                     border.bottom);
    }
    if (on_cpu(b, o)) {
        cpu_each(b, o.cpu_threads, [&](std::size_t i, int t) {
            clahe.apply(b.src[i], b.dst[i], cpu_options(t), borders ? borders[i].right : 0,
                        borders ? borders[i].bottom : 0);
        });
        return;
    }
    // Host images travel with the readable pixels beyond them that their tiles take (the single call's
    // extended view); device images are read there directly.
    std::vector<ImageView> ext = b.src;
    for (std::size_t i = 0; i < b.size(); ++i) {
        ext[i].width = g[i].ext_w;
        ext[i].height = g[i].ext_h;
    }
    on_device(
        b, o,
        [&](const detail::DeviceBatch& d, std::size_t first, int device, Stream s) {
            detail::cuda_clahe_batch(d, g.data() + first, device, s);
        },
        &ext);
}

void stretch_contrast_batch(const ImageBatch& src, const ImageBatch& dst, double low_percent, double high_percent,
                            StretchMode mode, const FilterOptions& o) {
    const PreparedBatch b = detail::prepare_batch(src, dst, "stretch_contrast_batch");
    if (b.empty()) return;
    detail::level_count(b.first().type, "stretch_contrast_batch");
    require(mode == StretchMode::Luma || mode == StretchMode::PerChannel, ErrorCode::InvalidArgument,
            "stretch_contrast_batch: unknown mode");
    check_percents(low_percent, high_percent);
    if (on_cpu(b, o)) {
        cpu_each(b, o.cpu_threads, [&](std::size_t i, int t) {
            stretch_contrast(b.src[i], b.dst[i], low_percent, high_percent, mode, cpu_options(t));
        });
        return;
    }
    const bool luma = mode == StretchMode::Luma && b.first().channels >= 3;
    on_device(b, o, [&](const detail::DeviceBatch& d, std::size_t, int device, Stream s) {
        detail::cuda_stretch_batch(d, low_percent, high_percent, luma, device, s);
    });
}

namespace {

/// Matching of every image of a checked batch to `target` (levels bins, 1 or C channels, none empty), or on the
/// device to `reference` (a device image) when given.
void match_batch(const PreparedBatch& b, const Histogram& target, const ImageView* reference, const FilterOptions& o) {
    if (on_cpu(b, o)) {
        cpu_each(b, o.cpu_threads,
                 [&](std::size_t i, int t) { match_to_histogram(b.src[i], b.dst[i], target, cpu_options(t)); });
        return;
    }
    on_device(b, o, [&](const detail::DeviceBatch& d, std::size_t, int device, Stream s) {
        detail::cuda_match_batch(d, reference, reference ? nullptr : &target, device, s);
    });
}

void check_target(const Histogram& target, int levels, int channels, const char* op) {
    require(target.bins() == levels && target.counts.size() == static_cast<std::size_t>(target.channels) * levels,
            ErrorCode::InvalidArgument,
            std::string(op) + ": the target histogram must have " + std::to_string(levels) + " bins for these images");
    require(target.channels == 1 || target.channels == channels, ErrorCode::InvalidArgument,
            std::string(op) + ": the target histogram must have 1 or " + std::to_string(channels) + " channels");
    for (int c = 0; c < target.channels; ++c) detail::target_total(target.channel(c), levels);
}

}  // namespace

void match_histograms_batch(const ImageBatch& src, const ImageView& reference, const ImageBatch& dst,
                            const FilterOptions& o) {
    const PreparedBatch b = detail::prepare_batch(src, dst, "match_histograms_batch");
    detail::check_view(reference, "match_histograms_batch", "reference");
    if (b.empty()) return;
    const ImageView& f = b.first();
    require(reference.type == f.type && reference.channels == f.channels, ErrorCode::InvalidArgument,
            "match_histograms_batch: the reference must have the images' sample type and channel count (" +
                std::to_string(f.channels) + " channels)");
    detail::level_count(f.type, "match_histograms_batch");
    const bool device_counts = f.location == Location::Device && reference.location == Location::Device &&
                               detail::cuda_level_path_u8(reference) && !on_cpu(b, o);
    if (device_counts) {
        match_batch(b, Histogram{}, &reference, o);
        return;
    }
    // The reference's histogram, once, where the reference is (as match_histograms takes it).
    if (reference.location == Location::Device)
        detail::refuse_capture(o.stream, "match_histograms_batch", "the reference's histogram is waited for on the host");
    FilterOptions ro = o;
    if (reference.location != f.location || reference.location == Location::Device) ro.backend = Backend::Auto;
    const Histogram target = detail::level_histogram(reference, ro);
    match_batch(b, target, nullptr, o);
}

void match_to_histogram_batch(const ImageBatch& src, const ImageBatch& dst, const Histogram& target,
                              const FilterOptions& o) {
    const PreparedBatch b = detail::prepare_batch(src, dst, "match_to_histogram_batch");
    if (b.empty()) return;
    const int levels = detail::level_count(b.first().type, "match_to_histogram_batch");
    check_target(target, levels, b.first().channels, "match_to_histogram_batch");
    match_batch(b, target, nullptr, o);
}

std::vector<std::vector<int>> threshold_multiotsu_batch(const ImageBatch& src, const ImageBatch& dst, int classes,
                                                        const FilterOptions& o, int* computed) {
    const PreparedBatch b = detail::prepare_batch(src, dst, "threshold_multiotsu_batch");
    if (b.empty()) return {};
    detail::level_count(b.first().type, "threshold_multiotsu_batch");
    require(b.first().channels == 1, ErrorCode::Unsupported, "threshold_multiotsu_batch: 1-channel images only");
    require(classes >= 2 && classes <= 5, ErrorCode::InvalidArgument,
            "threshold_multiotsu_batch: classes must lie in [2, 5], got " + std::to_string(classes));
    const std::size_t k = static_cast<std::size_t>(classes - 1);
    if (on_cpu(b, o)) {
        std::vector<std::vector<int>> t(b.size());
        cpu_each(b, o.cpu_threads,
                 [&](std::size_t i, int th) { t[i] = threshold_multiotsu(b.src[i], b.dst[i], classes, cpu_options(th)); });
        if (computed)
            for (std::size_t i = 0; i < b.size(); ++i) std::copy(t[i].begin(), t[i].end(), computed + i * k);
        return t;
    }
    if (b.first().location == Location::Device) return detail::cuda_multiotsu_batch(b.device(), classes, computed, o.device, o.stream);
    std::vector<std::vector<int>> t(b.size());
    on_device(b, o, [&](const detail::DeviceBatch& d, std::size_t first, int device, Stream s) {
        std::vector<std::vector<int>> part = detail::cuda_multiotsu_batch(d, classes, nullptr, device, s);
        std::move(part.begin(), part.end(), t.begin() + static_cast<std::ptrdiff_t>(first));
    });
    if (computed)
        for (std::size_t i = 0; i < b.size(); ++i) std::copy(t[i].begin(), t[i].end(), computed + i * k);
    return t;
}

}  // namespace imghist
