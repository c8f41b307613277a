// gpuhist — the OpenCV-compatible layer: checks arguments the way OpenCV users expect, maps cv::Mat /
// GpuMat to imghist views, and translates imghist::Error into cv::Exception at a single point.
#include "gpuhist/gpuhist.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>

#include "support.hpp"  // beside this file: the layer's internal helpers

namespace gpuhist {
namespace {

std::atomic<Backend> g_backend{Backend::Auto};

}  // namespace

using namespace detail;  // the checks and the error translation (support.hpp)

StreamArg::StreamArg(cv::cuda::Stream& stream)
    : stream_(static_cast<imghist::Stream>(stream.cudaPtr())), given_(true) {}

void setBackend(Backend backend) { g_backend.store(backend); }
Backend getBackend() { return g_backend.load(); }

cv::cuda::GpuMat createDeviceMat(DeviceImage& storage, int rows, int cols, int type) {
    return guarded("gpuhist::createDeviceMat", [&] {
        storage.create(cols, rows, imghist::sample_type_from_cv_depth(CV_MAT_DEPTH(type)), CV_MAT_CN(type));
        return asGpuMat(storage);
    });
}

cv::Mat createPinnedMat(imghist::PinnedBuffer& storage, int rows, int cols, int type) {
    return guarded("gpuhist::createPinnedMat", [&] {
        if (rows < 0 || cols < 0) fail(cv::Error::StsBadArg, "negative size", "gpuhist::createPinnedMat");
        const std::size_t step = static_cast<std::size_t>(cols) * CV_ELEM_SIZE(type);
        storage.reserve(std::max<std::size_t>(1, step * static_cast<std::size_t>(rows)));
        return cv::Mat(rows, cols, type, storage.data(), step);
    });
}

// ---- calcHist ----------------------------------------------------------------------------------------------------
void calcHist(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& hist, int histSize, float lowerLevel, float upperLevel,
              const cv::cuda::GpuMat& mask, StreamArg stream) {
    const char* func = "gpuhist::calcHist";
    check_input(src, func);
    check_depth(src, {CV_8U}, func);
    check_channels(src, {1, 3, 4}, func);
    check_mask(mask, src, func);
    if (histSize < 1 || histSize > 256) fail(cv::Error::StsBadArg, "histSize must be in [1, 256] for 8-bit images", func);
    if (!(lowerLevel < upperLevel)) fail(cv::Error::StsBadArg, "lowerLevel must be below upperLevel", func);
    require_device(func);
    ensure_output(hist, src.channels(), histSize, CV_32SC1, func);
    if (src.size().area() >= (std::int64_t(1) << 32))
        fail(cv::Error::StsOutOfRange, "CV_32S counts cannot hold a histogram of 2^32 pixels or more", func);
    guarded(func, [&] {
        imghist::DeviceHistogramView out;
        out.counts = hist.data;
        out.type = imghist::CountType::U32;
        out.channel_stride = hist.step / sizeof(int);
        imghist::AsyncOptions ao;
        if (!mask.empty()) ao.mask = imghist::view_of(mask);
        imghist::CudaHistogrammer().compute(imghist::view_of(src), imghist::BinSpec::even(histSize, lowerLevel, upperLevel),
                                            out, stream.get(), ao);
    });
}

void calcHist(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& hist, StreamArg stream) {
    calcHist(src, hist, 256, 0.f, 256.f, cv::cuda::GpuMat(), stream);
}

void calcHist(const cv::cuda::GpuMat& src, const cv::cuda::GpuMat& mask, cv::cuda::GpuMat& hist, StreamArg stream) {
    calcHist(src, hist, 256, 0.f, 256.f, mask, stream);
}

void calcHist(cv::InputArray src_arr, cv::OutputArray hist_arr, int histSize, float lowerLevel, float upperLevel,
              cv::InputArray mask_arr, StreamArg stream) {
    const char* func = "gpuhist::calcHist";
    if (src_arr.isGpuMat()) {
        if (!mask_arr.empty() && !mask_arr.isGpuMat()) fail(cv::Error::StsBadArg, "a GpuMat source needs a GpuMat mask", func);
        const cv::cuda::GpuMat src = gpu_source(src_arr);
        const cv::cuda::GpuMat mask = mask_arr.empty() ? cv::cuda::GpuMat() : gpu_source(mask_arr);
        calcHist(src, gpu_destination(hist_arr, src.channels(), histSize, CV_32SC1, func), histSize, lowerLevel,
                 upperLevel, mask, stream);
        return;
    }
    const cv::Mat src = src_arr.getMat();
    const cv::Mat mask = mask_arr.getMat();
    check_input(src, func);
    check_depth(src, {CV_8U, CV_16U, CV_32F}, func);
    check_channels(src, {1, 3, 4}, func);
    check_mask(mask, src, func);
    if (histSize < 1) fail(cv::Error::StsBadArg, "histSize must be positive", func);
    if (!(lowerLevel < upperLevel)) fail(cv::Error::StsBadArg, "lowerLevel must be below upperLevel", func);
    guarded(func, [&] {
        imghist::Options o;
        o.backend = g_backend.load();
        o.stream = stream.get();
        o.cpu_threads = host_threads();
        if (!mask.empty()) o.mask = imghist::view_of(mask);
        const imghist::Histogram h = imghist::calc_hist(
            imghist::view_of(src), imghist::BinSpec::even(histSize, lowerLevel, upperLevel), o);
        cv::Mat hist = host_destination(hist_arr, cv::Size(src.channels(), histSize), CV_32F);
        for (int c = 0; c < src.channels(); ++c)
            for (int b = 0; b < histSize; ++b) hist.at<float>(b, c) = static_cast<float>(h.at(c, b));
    });
}

// ---- equalizeHist --------------------------------------------------------------------------------------------
void equalizeHist(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& dst, EqualizeMode mode, StreamArg stream) {
    const char* func = "gpuhist::equalizeHist";
    check_input(src, func);
    check_depth(src, {CV_8U}, func);
    check_channels(src, {1, 3, 4}, func);
    require_device(func);
    ensure_output(dst, src.rows, src.cols, src.type(), func);
    guarded(func, [&] {
        if (src.channels() == 1)
            imghist::equalize_hist(imghist::view_of(src), imghist::view_of(dst), gpu_options(stream));
        else
            imghist::equalize_hist_color(imghist::view_of(src), imghist::view_of(dst),
                                         color_mode(mode),
                                         gpu_options(stream));
    });
}

void equalizeHist(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& dst, StreamArg stream) {
    equalizeHist(src, dst, EQUALIZE_LUMA, stream);
}

void equalizeHist(cv::InputArray src_arr, cv::OutputArray dst_arr, EqualizeMode mode, StreamArg stream) {
    const char* func = "gpuhist::equalizeHist";
    if (src_arr.isGpuMat()) {
        const cv::cuda::GpuMat src = gpu_source(src_arr);
        equalizeHist(src, gpu_destination(dst_arr, src.rows, src.cols, src.type(), func), mode, stream);
        return;
    }
    const cv::Mat src = src_arr.getMat();
    check_input(src, func);
    check_depth(src, {CV_8U}, func);
    check_channels(src, {1, 3, 4}, func);
    cv::Mat dst = host_destination(dst_arr, src.size(), src.type());
    guarded(func, [&] {
        if (src.channels() == 1)
            imghist::equalize_hist(imghist::view_of(src), imghist::view_of(dst), host_options(stream));
        else
            imghist::equalize_hist_color(imghist::view_of(src), imghist::view_of(dst),
                                         color_mode(mode),
                                         host_options(stream));
    });
}

void equalizeHist(cv::InputArray src, cv::OutputArray dst, StreamArg stream) {
    equalizeHist(src, dst, EQUALIZE_LUMA, stream);
}

// ---- threshold -------------------------------------------------------------------------------------------------
double threshold(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& dst, double thresh, double maxval, int type,
                 StreamArg stream) {
    const char* func = "gpuhist::threshold";
    const ThresholdKind k = parse_threshold_type(type, func);
    check_threshold_input(src, k, func);
    require_device(func);
    ensure_output(dst, src.rows, src.cols, src.type(), func);
    return guarded(func, [&] {
        return imghist::threshold(imghist::view_of(src), imghist::view_of(dst), thresh, maxval, k.type, k.automatic,
                                  gpu_options(stream), nullptr);
    });
}

void thresholdAsync(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& dst, double thresh, double maxval, int type,
                    int* computedThreshold, StreamArg stream) {
    const char* func = "gpuhist::thresholdAsync";
    const ThresholdKind k = parse_threshold_type(type, func);
    check_threshold_input(src, k, func);
    require_device(func);
    ensure_output(dst, src.rows, src.cols, src.type(), func);
    guarded(func, [&] {
        // Without a caller location for the value, a pinned int of this thread's receives it: the call must
        // not wait, and nobody reads it.
        thread_local imghist::PinnedBuffer discarded(sizeof(int));
        int* out = computedThreshold ? computedThreshold : discarded.as<int>();
        imghist::threshold(imghist::view_of(src), imghist::view_of(dst), thresh, maxval, k.type, k.automatic,
                           gpu_options(stream), out);
    });
}

double threshold(cv::InputArray src_arr, cv::OutputArray dst_arr, double thresh, double maxval, int type,
                 StreamArg stream) {
    const char* func = "gpuhist::threshold";
    if (src_arr.isGpuMat()) {
        const cv::cuda::GpuMat src = gpu_source(src_arr);
        return threshold(src, gpu_destination(dst_arr, src.rows, src.cols, src.type(), func), thresh, maxval, type,
                         stream);
    }
    const cv::Mat src = src_arr.getMat();
    const ThresholdKind k = parse_threshold_type(type, func);
    check_threshold_input(src, k, func);
    cv::Mat dst = host_destination(dst_arr, src.size(), src.type());
    return guarded(func, [&] {
        return imghist::threshold(imghist::view_of(src), imghist::view_of(dst), thresh, maxval, k.type, k.automatic,
                                  host_options(stream), nullptr);
    });
}

// ---- contrast stretch, histogram matching, multi-level Otsu ---------------------------------------------------
void stretchContrast(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& dst, double lowPercent, double highPercent,
                     EqualizeMode mode, StreamArg stream) {
    const char* func = "gpuhist::stretchContrast";
    check_level_input(src, {1, 3, 4}, func);
    require_device(func);
    ensure_output(dst, src.rows, src.cols, src.type(), func);
    guarded(func, [&] {
        imghist::stretch_contrast(imghist::view_of(src), imghist::view_of(dst), lowPercent, highPercent,
                                  stretch_mode(mode), gpu_options(stream));
    });
}

void stretchContrast(cv::InputArray src_arr, cv::OutputArray dst_arr, double lowPercent, double highPercent,
                     EqualizeMode mode, StreamArg stream) {
    const char* func = "gpuhist::stretchContrast";
    if (src_arr.isGpuMat()) {
        const cv::cuda::GpuMat src = gpu_source(src_arr);
        stretchContrast(src, gpu_destination(dst_arr, src.rows, src.cols, src.type(), func), lowPercent, highPercent,
                        mode, stream);
        return;
    }
    const cv::Mat src = src_arr.getMat();
    check_level_input(src, {1, 3, 4}, func);
    cv::Mat dst = host_destination(dst_arr, src.size(), src.type());
    guarded(func, [&] {
        imghist::stretch_contrast(imghist::view_of(src), imghist::view_of(dst), lowPercent, highPercent,
                                  stretch_mode(mode), host_options(stream));
    });
}

void matchHistograms(const cv::cuda::GpuMat& src, const cv::cuda::GpuMat& reference, cv::cuda::GpuMat& dst,
                     StreamArg stream) {
    const char* func = "gpuhist::matchHistograms";
    check_level_input(src, {1, 3, 4}, func);
    check_reference(src.type(), reference, func);
    require_device(func);
    ensure_output(dst, src.rows, src.cols, src.type(), func);
    guarded(func, [&] {
        imghist::match_histograms(imghist::view_of(src), imghist::view_of(reference), imghist::view_of(dst),
                                  gpu_options(stream));
    });
}

void matchHistograms(cv::InputArray src_arr, cv::InputArray ref_arr, cv::OutputArray dst_arr, StreamArg stream) {
    const char* func = "gpuhist::matchHistograms";
    if (src_arr.isGpuMat()) {
        const cv::cuda::GpuMat src = gpu_source(src_arr);
        if (!ref_arr.isGpuMat()) fail(cv::Error::StsBadArg, "a GpuMat source needs a GpuMat reference", func);
        matchHistograms(src, gpu_source(ref_arr), gpu_destination(dst_arr, src.rows, src.cols, src.type(), func), stream);
        return;
    }
    const cv::Mat src = src_arr.getMat();
    check_level_input(src, {1, 3, 4}, func);
    // The reference may live on the device while the image is on the host.
    cv::cuda::GpuMat ref_dev;
    cv::Mat ref_host;
    imghist::ImageView ref;
    if (ref_arr.isGpuMat()) {
        ref_dev = gpu_source(ref_arr);
        check_reference(src.type(), ref_dev, func);
        ref = imghist::view_of(ref_dev);
    } else {
        ref_host = ref_arr.getMat();
        check_reference(src.type(), ref_host, func);
        ref = imghist::view_of(ref_host);
    }
    cv::Mat dst = host_destination(dst_arr, src.size(), src.type());
    guarded(func, [&] {
        imghist::match_histograms(imghist::view_of(src), ref, imghist::view_of(dst), host_options(stream));
    });
}

void matchHistogramsToHist(cv::InputArray src_arr, cv::InputArray hist_arr, cv::OutputArray dst_arr, StreamArg stream) {
    const char* func = "gpuhist::matchHistogramsToHist";
    if (src_arr.isGpuMat()) fail(cv::Error::StsBadArg, "host images only", func);
    const cv::Mat src = src_arr.getMat(), targetHist = hist_arr.getMat();
    check_level_input(src, {1, 3, 4}, func);
    const imghist::Histogram target = target_histogram(targetHist, src.depth(), src.channels(), func);
    cv::Mat dst = host_destination(dst_arr, src.size(), src.type());
    guarded(func, [&] {
        imghist::match_to_histogram(imghist::view_of(src), imghist::view_of(dst), target, host_options(stream));
    });
}

std::vector<int> thresholdMultiOtsu(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& dst, int classes,
                                    StreamArg stream) {
    const char* func = "gpuhist::thresholdMultiOtsu";
    check_level_input(src, {1}, func);
    require_device(func);
    ensure_output(dst, src.rows, src.cols, src.type(), func);
    return guarded(func, [&] {
        return imghist::threshold_multiotsu(imghist::view_of(src), imghist::view_of(dst), classes, gpu_options(stream));
    });
}

std::vector<int> thresholdMultiOtsu(cv::InputArray src_arr, cv::OutputArray dst_arr, int classes, StreamArg stream) {
    const char* func = "gpuhist::thresholdMultiOtsu";
    if (src_arr.isGpuMat()) {
        const cv::cuda::GpuMat src = gpu_source(src_arr);
        return thresholdMultiOtsu(src, gpu_destination(dst_arr, src.rows, src.cols, src.type(), func), classes, stream);
    }
    const cv::Mat src = src_arr.getMat();
    check_level_input(src, {1}, func);
    cv::Mat dst = host_destination(dst_arr, src.size(), src.type());
    return guarded(func, [&] {
        return imghist::threshold_multiotsu(imghist::view_of(src), imghist::view_of(dst), classes, host_options(stream));
    });
}

// ---- CLAHE -----------------------------------------------------------------------------------------------------
CLAHE::CLAHE(double clipLimit, cv::Size tileGridSize) : impl_(clipLimit, 8, 8) {
    guarded("gpuhist::createCLAHE", [&] { impl_.set_tiles(tileGridSize.width, tileGridSize.height); });
}

void CLAHE::apply(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& dst, StreamArg stream) {
    const char* func = "gpuhist::CLAHE::apply";
    check_input(src, func);
    check_depth(src, {CV_8U, CV_16U}, func);
    check_channels(src, {1}, func);
    require_device(func);
    ensure_output(dst, src.rows, src.cols, src.type(), func);
    const cv::Size extra = beyond_roi(src);
    guarded(func, [&] {
        impl_.apply(imghist::view_of(src), imghist::view_of(dst), gpu_options(stream), extra.width, extra.height);
    });
}

void CLAHE::apply(cv::InputArray src_arr, cv::OutputArray dst_arr, StreamArg stream) {
    const char* func = "gpuhist::CLAHE::apply";
    if (src_arr.isGpuMat()) {
        const cv::cuda::GpuMat src = gpu_source(src_arr);
        apply(src, gpu_destination(dst_arr, src.rows, src.cols, src.type(), func), stream);
        return;
    }
    const cv::Mat src = src_arr.getMat();
    check_input(src, func);
    check_depth(src, {CV_8U, CV_16U}, func);
    check_channels(src, {1}, func);
    const cv::Size extra = beyond_roi(src);
    cv::Mat dst = host_destination(dst_arr, src.size(), src.type());
    guarded(func, [&] {
        impl_.apply(imghist::view_of(src), imghist::view_of(dst), host_options(stream), extra.width, extra.height);
    });
}

void CLAHE::apply(cv::InputArray src, cv::OutputArray dst) { apply(src, dst, StreamArg()); }

void CLAHE::setClipLimit(double clipLimit) { impl_.set_clip_limit(clipLimit); }
double CLAHE::getClipLimit() const { return impl_.clip_limit(); }
void CLAHE::setTilesGridSize(cv::Size tileGridSize) {
    guarded("gpuhist::CLAHE::setTilesGridSize", [&] { impl_.set_tiles(tileGridSize.width, tileGridSize.height); });
}
cv::Size CLAHE::getTilesGridSize() const { return cv::Size(impl_.tiles_x(), impl_.tiles_y()); }
void CLAHE::collectGarbage() { imghist::release_workspaces(); }

cv::Ptr<CLAHE> createCLAHE(double clipLimit, cv::Size tileGridSize) {
    return cv::makePtr<CLAHE>(clipLimit, tileGridSize);
}

}  // namespace gpuhist
