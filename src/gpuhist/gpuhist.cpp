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

// ---- calcHist: cv::calcHist's own signatures, host arrays ---------------------------------------------------------
namespace {

/// The image and its channel that cv::calcHist counts for channel `c` of the images' concatenated channels.
struct ChannelOf {
    int image, channel;
};

ChannelOf locate_channel(const cv::Mat* images, int nimages, const int* channels, const char* func) {
    if (!channels) {
        // cv::calcHist: without `channels`, dimension i is image i, which must have one channel.
        if (nimages != 1 || images[0].channels() != 1)
            fail(cv::Error::StsBadArg, "without channels, one single-channel image is expected (got " +
                                           std::to_string(nimages) + " images, the first with " +
                                           std::to_string(images[0].channels()) + " channels)", func);
        return {0, 0};
    }
    int c = channels[0];
    if (c < 0) fail(cv::Error::StsBadArg, "channel " + std::to_string(c) + " is negative", func);
    int total = 0;
    for (int j = 0; j < nimages; ++j) {
        if (c - total < images[j].channels()) return {j, c - total};
        total += images[j].channels();
    }
    fail(cv::Error::StsBadArg, "channel " + std::to_string(c) + " is beyond the images' " + std::to_string(total) +
                                   " channels", func);
}

/// The histogram's counts written as cv::calcHist writes them: with `accumulate`, each previous value rounded
/// to an int (cvRound, saturated) plus the new count; CV_32F of the int.
void write_counts(const imghist::Histogram& h, bool accumulate, cv::Mat& hist) {
    float* out = hist.ptr<float>();
    for (int b = 0; b < h.bins(); ++b) {
        const long long before = accumulate ? cv::saturate_cast<int>(out[b]) : 0;
        out[b] = static_cast<float>(before + static_cast<long long>(h.at(0, b)));
    }
}

}  // namespace

void calcHist(const cv::Mat* images, int nimages, const int* channels, cv::InputArray mask_arr, cv::OutputArray hist_arr,
              int dims, const int* histSize, const float** ranges, bool uniform, bool accumulate) {
    const char* func = "gpuhist::calcHist";
    if (images == nullptr || nimages < 1) fail(cv::Error::StsBadArg, "no images (nimages must be at least 1)", func);
    if (dims < 1 || histSize == nullptr) fail(cv::Error::StsBadArg, "dims must be at least 1, with its histSize", func);
    if (mask_arr.isGpuMat()) fail(cv::Error::StsBadArg, "host arrays only: a GpuMat mask goes with GpuMat images", func);
    auto opencv = [&] {  // what this library does not count itself: cv::calcHist's own answer
        cv::calcHist(images, nimages, channels, mask_arr, hist_arr, dims, histSize, ranges, uniform, accumulate);
    };
    if (dims != 1 || (!uniform && ranges != nullptr)) return opencv();
    const ChannelOf at = locate_channel(images, nimages, channels, func);
    const cv::Mat& src = images[at.image];
    if (src.size() != images[0].size())
        fail(cv::Error::StsUnmatchedSizes, "image " + std::to_string(at.image) + " differs in size from image 0", func);
    if (src.depth() != images[0].depth())
        fail(cv::Error::StsUnmatchedFormats, "image " + std::to_string(at.image) + " differs in depth from image 0", func);
    check_depth(src, {CV_8U, CV_16U, CV_32F}, func);
    const cv::Mat mask = mask_arr.getMat();
    check_mask(mask, src, func);
    const int bins = histSize[0];
    if (bins < 1) fail(cv::Error::StsBadArg, "histSize must be positive, got " + std::to_string(bins), func);
    if (ranges == nullptr && src.depth() != CV_8U)
        fail(cv::Error::StsBadArg, "ranges may be left out for 8-bit images only", func);
    if (ranges != nullptr && (ranges[0] == nullptr || !(ranges[0][0] < ranges[0][1])))
        fail(cv::Error::StsBadArg, "the range must be [low, high) with low < high", func);
    const imghist::SampleType type = imghist::sample_type_from_cv_depth(src.depth());
    if (src.channels() > 4 || bins > imghist::max_bins(type)) return opencv();
    const float low = ranges ? ranges[0][0] : 0.f, high = ranges ? ranges[0][1] : 256.f;

    // The output as cv::calcHist makes it: histSize x 1 CV_32F; accumulating only into the storage it had.
    const uchar* const before = hist_arr.getMat().ptr();
    hist_arr.create(1, &bins, CV_32F);
    cv::Mat hist = hist_arr.getMat();
    accumulate = accumulate && hist.data == before;
    guarded(func, [&] {
        imghist::Options o;
        o.backend = g_backend.load();
        o.cpu_threads = host_threads();
        o.channel = src.channels() > 1 ? at.channel : -1;
        if (!mask.empty()) o.mask = imghist::view_of(mask);
        const imghist::Histogram h = imghist::calc_hist(imghist::view_of(src), imghist::BinSpec::even(bins, low, high), o);
        write_counts(h, accumulate, hist);
    });
}

void calcHist(cv::InputArrayOfArrays images, const std::vector<int>& channels, cv::InputArray mask, cv::OutputArray hist,
              const std::vector<int>& histSize, const std::vector<float>& ranges, bool accumulate) {
    const char* func = "gpuhist::calcHist";
    const int kind = images.kind();
    if (kind == cv::_InputArray::CUDA_GPU_MAT || kind == cv::_InputArray::STD_VECTOR_CUDA_GPU_MAT)
        fail(cv::Error::StsBadArg, "host arrays only: GpuMat images take calcHist(GpuMat, GpuMat, ...)", func);
    // A list of images as cv::calcHist takes it; a single array is one image.
    std::vector<cv::Mat> mats;
    if (kind == cv::_InputArray::STD_VECTOR_MAT || kind == cv::_InputArray::STD_ARRAY_MAT ||
        kind == cv::_InputArray::STD_VECTOR_UMAT || kind == cv::_InputArray::STD_VECTOR_VECTOR) {
        for (std::size_t i = 0; i < images.total(); ++i) mats.push_back(images.getMat(static_cast<int>(i)));
    } else if (!images.empty()) {
        mats.push_back(images.getMat());
    }
    const std::size_t dims = histSize.size();
    if (mats.empty()) fail(cv::Error::StsBadArg, "no images", func);
    if (dims == 0) fail(cv::Error::StsBadArg, "histSize is empty", func);
    if (!channels.empty() && channels.size() != dims)
        fail(cv::Error::StsBadArg, "channels must be empty or hold one entry per histSize entry", func);
    if (!ranges.empty() && ranges.size() != 2 * dims)
        fail(cv::Error::StsBadArg, "ranges must be empty (8-bit images) or hold two values per histSize entry", func);
    std::vector<const float*> range_ptrs;
    for (std::size_t i = 0; i < ranges.size(); i += 2) range_ptrs.push_back(&ranges[i]);
    // Qualified: argument-dependent lookup would find cv::calcHist as well.
    gpuhist::calcHist(mats.data(), static_cast<int>(mats.size()), channels.empty() ? nullptr : channels.data(), mask,
                      hist, static_cast<int>(dims), histSize.data(), range_ptrs.empty() ? nullptr : range_ptrs.data(),
                      true, accumulate);
}

// ---- equalizeHist --------------------------------------------------------------------------------------------
namespace {

template <class M>
void check_equalize_input(const M& src, const char* func) {
    check_input(src, func);
    check_depth(src, {CV_8U}, func);
    check_channels(src, {1, 3, 4}, func);
}

/// A gray image through imghist::equalize_hist, a colour one through equalize_hist_color in `mode`.
template <class M>
void equalize(const M& src, const M& dst, EqualizeMode mode, const imghist::FilterOptions& o, const char* func) {
    guarded(func, [&] {
        if (src.channels() == 1)
            imghist::equalize_hist(imghist::view_of(src), imghist::view_of(dst), o);
        else
            imghist::equalize_hist_color(imghist::view_of(src), imghist::view_of(dst), color_mode(mode), o);
    });
}

}  // namespace

void equalizeHist(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& dst, EqualizeMode mode, StreamArg stream) {
    const char* func = "gpuhist::equalizeHist";
    check_equalize_input(src, func);
    require_device(func);
    ensure_output(dst, src.rows, src.cols, src.type(), func);
    equalize(src, dst, mode, gpu_options(stream), func);
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
    check_equalize_input(src, func);
    const cv::Mat dst = host_destination(dst_arr, src.size(), src.type());
    equalize(src, dst, mode, host_options(stream), func);
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
    const Reference ref = reference_of(ref_arr, src.type(), func);
    cv::Mat dst = host_destination(dst_arr, src.size(), src.type());
    guarded(func, [&] {
        imghist::match_histograms(imghist::view_of(src), ref.view, imghist::view_of(dst), host_options(stream));
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
