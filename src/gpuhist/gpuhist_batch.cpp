// gpuhist — the batch filters (gpuhist/batch.hpp): checks every image as the single functions check one (the
// message naming the image), shapes the destinations, and calls imghist's batch filters with lists of views.
#include <string>

#include "support.hpp"  // beside this file: the layer's internal helpers

namespace gpuhist {

using namespace detail;

namespace {

/// Runs check(i) for every image; an OpenCV error names its image.
template <class Check>
void each_image(std::size_t n, const char* func, Check&& check) {
    for (std::size_t i = 0; i < n; ++i) {
        try {
            check(i);
        } catch (const cv::Exception& e) {
            throw cv::Exception(e.code, "batch image " + std::to_string(i) + ": " + e.err, func, __FILE__, __LINE__);
        }
    }
}

/// Destinations of src's sizes and types (kept where they have them), and the view lists of both.
struct Views {
    std::vector<imghist::ImageView> src, dst;
};

Views device_views(const GpuMatBatch& src, GpuMatBatch& dst, const char* func) {
    require_device(func);
    if (dst.size() != src.size()) dst.resize(src.size());
    Views v;
    v.src.reserve(src.size());
    v.dst.reserve(src.size());
    each_image(src.size(), func, [&](std::size_t i) {
        ensure_output(dst[i], src[i].rows, src[i].cols, src[i].type(), func);
        v.src.push_back(imghist::view_of(src[i]));
        v.dst.push_back(imghist::view_of(dst[i]));
    });
    return v;
}

Views host_views(const MatBatch& src, MatBatch& dst) {
    if (dst.size() != src.size()) dst.resize(src.size());
    Views v;
    v.src.reserve(src.size());
    v.dst.reserve(src.size());
    for (std::size_t i = 0; i < src.size(); ++i) {
        dst[i].create(src[i].size(), src[i].type());
        v.src.push_back(imghist::view_of(src[i]));
        v.dst.push_back(imghist::view_of(dst[i]));
    }
    return v;
}

imghist::ImageBatch list(const std::vector<imghist::ImageView>& v) { return imghist::ImageBatch::list(v); }

template <class M>
void check_equalize_inputs(const std::vector<M>& src, const char* func) {
    each_image(src.size(), func, [&](std::size_t i) {
        check_input(src[i], func);
        check_depth(src[i], {CV_8U}, func);
        check_channels(src[i], {1, 3, 4}, func);
    });
}

/// equalize_hist_batch or equalize_hist_color_batch for the images' channel count (one count per batch).
void equalize(const Views& v, EqualizeMode mode, const imghist::FilterOptions& o) {
    if (v.src.empty()) return;
    if (v.src[0].channels == 1) imghist::equalize_hist_batch(list(v.src), list(v.dst), o);
    else imghist::equalize_hist_color_batch(list(v.src), list(v.dst), color_mode(mode), o);
}

template <class M>
ThresholdKind check_threshold_inputs(const std::vector<M>& src, int type, const char* func) {
    const ThresholdKind k = parse_threshold_type(type, func);
    each_image(src.size(), func, [&](std::size_t i) { check_threshold_input(src[i], k, func); });
    return k;
}

template <class M>
void check_level_inputs(const std::vector<M>& src, std::initializer_list<int> channels, const char* func) {
    each_image(src.size(), func, [&](std::size_t i) { check_level_input(src[i], channels, func); });
}

template <class M>
void check_clahe_inputs(const std::vector<M>& src, const char* func) {
    each_image(src.size(), func, [&](std::size_t i) {
        check_input(src[i], func);
        check_depth(src[i], {CV_8U, CV_16U}, func);
        check_channels(src[i], {1}, func);
    });
}

/// Each ROI's parent pixels beyond it (the padding cv::CLAHE takes from them).
template <class M>
std::vector<imghist::ClaheBorder> clahe_borders(const std::vector<M>& src) {
    std::vector<imghist::ClaheBorder> b(src.size());
    for (std::size_t i = 0; i < src.size(); ++i) {
        const cv::Size extra = beyond_roi(src[i]);
        b[i] = imghist::ClaheBorder{extra.width, extra.height};
    }
    return b;
}

imghist::Clahe make_clahe(double clipLimit, cv::Size tileGridSize) {
    return imghist::Clahe(clipLimit, tileGridSize.width, tileGridSize.height);
}

}  // namespace

// ---- equalizeHist ------------------------------------------------------------------------------------------------
void equalizeHistBatch(const GpuMatBatch& src, GpuMatBatch& dst, EqualizeMode mode, StreamArg stream) {
    const char* func = "gpuhist::equalizeHistBatch";
    check_equalize_inputs(src, func);
    const Views v = device_views(src, dst, func);
    guarded(func, [&] { equalize(v, mode, gpu_options(stream)); });
}

void equalizeHistBatch(const GpuMatBatch& src, GpuMatBatch& dst, StreamArg stream) {
    equalizeHistBatch(src, dst, EQUALIZE_LUMA, stream);
}

void equalizeHistBatch(const MatBatch& src, MatBatch& dst, EqualizeMode mode, StreamArg stream) {
    const char* func = "gpuhist::equalizeHistBatch";
    check_equalize_inputs(src, func);
    const Views v = host_views(src, dst);
    guarded(func, [&] { equalize(v, mode, host_options(stream)); });
}

void equalizeHistBatch(const MatBatch& src, MatBatch& dst, StreamArg stream) {
    equalizeHistBatch(src, dst, EQUALIZE_LUMA, stream);
}

// ---- threshold ---------------------------------------------------------------------------------------------------
std::vector<double> thresholdBatch(const GpuMatBatch& src, GpuMatBatch& dst, double thresh, double maxval, int type,
                                   StreamArg stream) {
    const char* func = "gpuhist::thresholdBatch";
    const ThresholdKind k = check_threshold_inputs(src, type, func);
    const Views v = device_views(src, dst, func);
    return guarded(func, [&] {
        return imghist::threshold_batch(list(v.src), list(v.dst), thresh, maxval, k.type, k.automatic,
                                        gpu_options(stream), nullptr);
    });
}

void thresholdBatchAsync(const GpuMatBatch& src, GpuMatBatch& dst, double thresh, double maxval, int type,
                         int* computedThresholds, StreamArg stream) {
    const char* func = "gpuhist::thresholdBatchAsync";
    const ThresholdKind k = check_threshold_inputs(src, type, func);
    const Views v = device_views(src, dst, func);
    guarded(func, [&] {
        if (k.automatic != imghist::AutoThreshold::None && computedThresholds == nullptr && !src.empty()) {
            // The levels must go somewhere for the call not to wait: page-locked memory of this thread's, which
            // every device can write and nobody reads.
            thread_local imghist::PinnedBuffer discarded;
            discarded.reserve(src.size() * sizeof(int));
            computedThresholds = discarded.as<int>();
        }
        imghist::threshold_batch(list(v.src), list(v.dst), thresh, maxval, k.type, k.automatic, gpu_options(stream),
                                 computedThresholds);
    });
}

std::vector<double> thresholdBatch(const MatBatch& src, MatBatch& dst, double thresh, double maxval, int type,
                                   StreamArg stream) {
    const char* func = "gpuhist::thresholdBatch";
    const ThresholdKind k = check_threshold_inputs(src, type, func);
    const Views v = host_views(src, dst);
    return guarded(func, [&] {
        return imghist::threshold_batch(list(v.src), list(v.dst), thresh, maxval, k.type, k.automatic,
                                        host_options(stream), nullptr);
    });
}

// ---- contrast stretch, histogram matching, multi-level Otsu -------------------------------------------------------
void stretchContrastBatch(const GpuMatBatch& src, GpuMatBatch& dst, double lowPercent, double highPercent,
                          EqualizeMode mode, StreamArg stream) {
    const char* func = "gpuhist::stretchContrastBatch";
    check_level_inputs(src, {1, 3, 4}, func);
    const Views v = device_views(src, dst, func);
    guarded(func, [&] {
        imghist::stretch_contrast_batch(list(v.src), list(v.dst), lowPercent, highPercent, stretch_mode(mode),
                                        gpu_options(stream));
    });
}

void stretchContrastBatch(const MatBatch& src, MatBatch& dst, double lowPercent, double highPercent, EqualizeMode mode,
                          StreamArg stream) {
    const char* func = "gpuhist::stretchContrastBatch";
    check_level_inputs(src, {1, 3, 4}, func);
    const Views v = host_views(src, dst);
    guarded(func, [&] {
        imghist::stretch_contrast_batch(list(v.src), list(v.dst), lowPercent, highPercent, stretch_mode(mode),
                                        host_options(stream));
    });
}

void matchHistogramsBatch(const GpuMatBatch& src, const cv::cuda::GpuMat& reference, GpuMatBatch& dst,
                          StreamArg stream) {
    const char* func = "gpuhist::matchHistogramsBatch";
    check_level_inputs(src, {1, 3, 4}, func);
    if (!src.empty()) check_reference(src[0].type(), reference, func);
    const Views v = device_views(src, dst, func);
    guarded(func, [&] {
        imghist::match_histograms_batch(list(v.src), imghist::view_of(reference), list(v.dst), gpu_options(stream));
    });
}

void matchHistogramsBatch(const MatBatch& src, cv::InputArray ref_arr, MatBatch& dst, StreamArg stream) {
    const char* func = "gpuhist::matchHistogramsBatch";
    check_level_inputs(src, {1, 3, 4}, func);
    const Reference ref = reference_of(ref_arr, src.empty() ? std::nullopt : std::optional<int>(src[0].type()), func);
    const Views v = host_views(src, dst);
    guarded(func, [&] { imghist::match_histograms_batch(list(v.src), ref.view, list(v.dst), host_options(stream)); });
}

void matchHistogramsToHistBatch(const GpuMatBatch& src, cv::InputArray hist_arr, GpuMatBatch& dst, StreamArg stream) {
    const char* func = "gpuhist::matchHistogramsToHistBatch";
    check_level_inputs(src, {1, 3, 4}, func);
    if (src.empty()) return;
    const imghist::Histogram target = target_histogram(hist_arr.getMat(), src[0].depth(), src[0].channels(), func);
    const Views v = device_views(src, dst, func);
    guarded(func, [&] { imghist::match_to_histogram_batch(list(v.src), list(v.dst), target, gpu_options(stream)); });
}

void matchHistogramsToHistBatch(const MatBatch& src, cv::InputArray hist_arr, MatBatch& dst, StreamArg stream) {
    const char* func = "gpuhist::matchHistogramsToHistBatch";
    check_level_inputs(src, {1, 3, 4}, func);
    if (src.empty()) return;
    const imghist::Histogram target = target_histogram(hist_arr.getMat(), src[0].depth(), src[0].channels(), func);
    const Views v = host_views(src, dst);
    guarded(func, [&] { imghist::match_to_histogram_batch(list(v.src), list(v.dst), target, host_options(stream)); });
}

std::vector<std::vector<int>> thresholdMultiOtsuBatch(const GpuMatBatch& src, GpuMatBatch& dst, int classes,
                                                      StreamArg stream) {
    const char* func = "gpuhist::thresholdMultiOtsuBatch";
    check_level_inputs(src, {1}, func);
    const Views v = device_views(src, dst, func);
    return guarded(func, [&] {
        return imghist::threshold_multiotsu_batch(list(v.src), list(v.dst), classes, gpu_options(stream));
    });
}

std::vector<std::vector<int>> thresholdMultiOtsuBatch(const MatBatch& src, MatBatch& dst, int classes,
                                                      StreamArg stream) {
    const char* func = "gpuhist::thresholdMultiOtsuBatch";
    check_level_inputs(src, {1}, func);
    const Views v = host_views(src, dst);
    return guarded(func, [&] {
        return imghist::threshold_multiotsu_batch(list(v.src), list(v.dst), classes, host_options(stream));
    });
}

// ---- CLAHE -------------------------------------------------------------------------------------------------------
void claheBatch(const GpuMatBatch& src, GpuMatBatch& dst, double clipLimit, cv::Size tileGridSize, StreamArg stream) {
    const char* func = "gpuhist::claheBatch";
    check_clahe_inputs(src, func);
    const Views v = device_views(src, dst, func);
    const std::vector<imghist::ClaheBorder> borders = clahe_borders(src);
    guarded(func, [&] {
        imghist::clahe_batch(make_clahe(clipLimit, tileGridSize), list(v.src), list(v.dst), gpu_options(stream),
                             borders.data());
    });
}

void claheBatch(const MatBatch& src, MatBatch& dst, double clipLimit, cv::Size tileGridSize, StreamArg stream) {
    const char* func = "gpuhist::claheBatch";
    check_clahe_inputs(src, func);
    const std::vector<imghist::ClaheBorder> borders = clahe_borders(src);
    const Views v = host_views(src, dst);
    guarded(func, [&] {
        imghist::clahe_batch(make_clahe(clipLimit, tileGridSize), list(v.src), list(v.dst), host_options(stream),
                             borders.data());
    });
}

}  // namespace gpuhist
