// gpuhist — the OpenCV-compatible layer: checks arguments the way OpenCV users expect, maps cv::Mat /
// GpuMat to imghist views, and translates imghist::Error into cv::Exception at a single point.
#include "gpuhist/gpuhist.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>

#include "internal.hpp"

namespace gpuhist {
namespace {

std::atomic<Backend> g_backend{Backend::Auto};

// ---- the one translation point from imghist::Error to cv::Exception ----------------------------------------
int cv_code(imghist::ErrorCode c) {
    switch (c) {
        case imghist::ErrorCode::InvalidArgument: return cv::Error::StsBadArg;
        case imghist::ErrorCode::Unsupported: return cv::Error::StsUnsupportedFormat;
        case imghist::ErrorCode::OutOfMemory: return cv::Error::StsNoMem;
        case imghist::ErrorCode::NoDevice: return cv::Error::GpuNotSupported;
        case imghist::ErrorCode::Cuda: return cv::Error::GpuApiCallError;
        case imghist::ErrorCode::Overflow: return cv::Error::StsOutOfRange;
        case imghist::ErrorCode::Io: return cv::Error::StsError;
    }
    return cv::Error::StsError;
}

template <class F>
auto guarded(const char* func, F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const imghist::Error& e) {
        throw cv::Exception(cv_code(e.code()), e.what(), func, __FILE__, __LINE__);
    }
}

[[noreturn]] void fail(int code, const std::string& msg, const char* func) {
    throw cv::Exception(code, msg, func, __FILE__, __LINE__);
}

// ---- argument checks with OpenCV's codes ---------------------------------------------------------------------
template <class M>
void check_input(const M& m, const char* func) {
    if (m.empty()) fail(cv::Error::StsBadArg, "empty input image", func);
}

template <class M>
void check_depth(const M& m, std::initializer_list<int> depths, const char* func) {
    for (int d : depths)
        if (m.depth() == d) return;
    fail(cv::Error::StsUnsupportedFormat, "unsupported depth " + std::to_string(m.depth()) + " (" +
                                              cv::typeToString(m.type()) + ")", func);
}

template <class M>
void check_channels(const M& m, std::initializer_list<int> counts, const char* func) {
    for (int c : counts)
        if (m.channels() == c) return;
    fail(cv::Error::BadNumChannels, "unsupported channel count " + std::to_string(m.channels()), func);
}

template <class M>
void check_mask(const M& mask, const M& src, const char* func) {
    if (mask.empty()) return;
    if (mask.type() != CV_8UC1) fail(cv::Error::StsUnsupportedFormat, "the mask must be CV_8UC1", func);
    if (mask.size() != src.size()) fail(cv::Error::StsUnmatchedSizes, "the mask and the image differ in size", func);
}

/// GpuMat output of the given shape: kept when it already fits, created where OpenCV has CUDA.
void ensure_output(cv::cuda::GpuMat& dst, int rows, int cols, int type, const char* func) {
    if (!dst.empty() && dst.rows == rows && dst.cols == cols && dst.type() == type) return;
    if (cv::cuda::getCudaEnabledDeviceCount() > 0) {
        dst.create(rows, cols, type);
        return;
    }
    fail(cv::Error::GpuNotSupported,
         "the output GpuMat must already be " + std::to_string(rows) + "x" + std::to_string(cols) + " " +
             cv::typeToString(type) +
             ": this OpenCV build cannot allocate device memory; view a gpuhist::DeviceImage as the output "
             "(gpuhist::createDeviceMat / gpuhist::asGpuMat)",
         func);
}

/// The GpuMat behind an InputArray that holds one. _InputArray::getGpuMat() throws "CUDA support is not
/// enabled" in OpenCV builds without CUDA (Debian's among them), although a GpuMat view of memory someone
/// else owns is usable there: read the object itself.
const cv::cuda::GpuMat& gpu_source(cv::InputArray a) {
    CV_Assert(a.kind() == cv::_InputArray::CUDA_GPU_MAT);
    return *static_cast<const cv::cuda::GpuMat*>(a.getObj());
}

/// The GpuMat behind an OutputArray whose source is a GpuMat. A fixed-size destination (an rvalue view) must
/// already have the output's shape: it cannot be reallocated, as with cv::Mat.
cv::cuda::GpuMat& gpu_destination(cv::OutputArray dst, int rows, int cols, int type, const char* func) {
    if (!dst.isGpuMat()) fail(cv::Error::StsBadArg, "a GpuMat source needs a GpuMat destination", func);
    cv::cuda::GpuMat& d = dst.getGpuMatRef();
    if ((dst.fixedSize() && (d.rows != rows || d.cols != cols)) || (dst.fixedType() && d.type() != type))
        fail(cv::Error::StsUnmatchedSizes,
             "the destination view is " + std::to_string(d.rows) + "x" + std::to_string(d.cols) + " " +
                 cv::typeToString(d.type()) + ", the result " + std::to_string(rows) + "x" + std::to_string(cols) +
                 " " + cv::typeToString(type),
             func);
    return d;
}

/// A host destination created (or kept) as OpenCV does, and the Mat that writes into it (for a UMat, a
/// mapping that is released when the Mat is destroyed).
cv::Mat host_destination(cv::OutputArray dst, cv::Size size, int type) {
    dst.create(size, type);
    return dst.getMat();
}

void require_device(const char* func) {
    if (!imghist::cuda_available())
        fail(cv::Error::GpuNotSupported, "GpuMat operations need a CUDA device, and none is available", func);
}

/// The CPU backend's worker threads for host calls: OpenCV's setting (cv::setNumThreads / getNumThreads).
int host_threads() { return std::max(1, cv::getNumThreads()); }

imghist::FilterOptions host_options(const StreamArg& s) {
    imghist::FilterOptions o;
    o.backend = g_backend.load();
    o.stream = s.get();
    o.cpu_threads = host_threads();
    return o;
}

imghist::FilterOptions gpu_options(const StreamArg& s) {
    imghist::FilterOptions o;
    o.backend = Backend::Cuda;
    o.stream = s.get();
    return o;
}

struct ThresholdKind {
    imghist::ThresholdType type;
    imghist::AutoThreshold automatic;
};

ThresholdKind parse_threshold_type(int type, const char* func) {
    const int base = type & cv::THRESH_MASK;
    const int flags = type & ~cv::THRESH_MASK;
    if (base > cv::THRESH_TOZERO_INV) fail(cv::Error::StsBadArg, "unknown threshold type " + std::to_string(type), func);
    ThresholdKind k{static_cast<imghist::ThresholdType>(base), imghist::AutoThreshold::None};
    if (flags == cv::THRESH_OTSU) k.automatic = imghist::AutoThreshold::Otsu;
    else if (flags == cv::THRESH_TRIANGLE) k.automatic = imghist::AutoThreshold::Triangle;
    else if (flags != 0) fail(cv::Error::StsBadArg, "unsupported threshold flags " + std::to_string(type), func);
    return k;
}

template <class M>
void check_threshold_input(const M& src, const ThresholdKind& k, const char* func) {
    check_input(src, func);
    if (k.automatic == imghist::AutoThreshold::None) {
        check_depth(src, {CV_8U, CV_16U, CV_32F}, func);
        check_channels(src, {1, 2, 3, 4}, func);
    } else {
        if (k.automatic == imghist::AutoThreshold::Otsu) check_depth(src, {CV_8U, CV_16U}, func);
        else check_depth(src, {CV_8U}, func);
        check_channels(src, {1}, func);
    }
}

/// Pixels of the parent image beyond a ROI's right and bottom edges (cv::CLAHE pads tiles with them).
template <class M>
cv::Size beyond_roi(const M& m) {
    cv::Size whole;
    cv::Point ofs;
    m.locateROI(whole, ofs);
    return cv::Size(std::max(0, whole.width - m.cols - ofs.x), std::max(0, whole.height - m.rows - ofs.y));
}

}  // namespace

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
    guarded(func, [&] {
        const imghist::ImageView m = imghist::view_of(mask);
        imghist::detail::cuda_histogram_into(imghist::view_of(src), mask.empty() ? nullptr : &m,
                                             imghist::BinSpec::even(histSize, lowerLevel, upperLevel), hist.data,
                                             hist.step / sizeof(int), stream.get());
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
        const imghist::Histogram h = imghist::calcHist(
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
        const imghist::Histogram h = imghist::calcHist(imghist::view_of(src), imghist::BinSpec::even(bins, low, high), o);
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
imghist::ColorEqualize color_mode(EqualizeMode mode) {
    return mode == EQUALIZE_PER_CHANNEL ? imghist::ColorEqualize::PerChannel : imghist::ColorEqualize::Luma;
}
}  // namespace

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
        // Without a caller location for the value, the workspace's device int receives it (no waiting).
        int* out = computedThreshold;
        imghist::threshold(imghist::view_of(src), imghist::view_of(dst), thresh, maxval, k.type, k.automatic,
                           gpu_options(stream), out ? out : imghist::detail::cuda_pinned_int(-1, stream.get()));
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
namespace {
imghist::StretchMode stretch_mode(EqualizeMode mode) {
    return mode == EQUALIZE_PER_CHANNEL ? imghist::StretchMode::PerChannel : imghist::StretchMode::Luma;
}

template <class M>
void check_level_input(const M& src, std::initializer_list<int> channels, const char* func) {
    check_input(src, func);
    check_depth(src, {CV_8U, CV_16U}, func);
    check_channels(src, channels, func);
}

template <class M>
void check_reference(int src_type, const M& reference, const char* func) {
    check_input(reference, func);
    if (reference.type() != src_type)
        fail(cv::Error::StsUnmatchedFormats, "the reference must have the image's type (" +
                                                 cv::typeToString(src_type) + ")", func);
}
}  // namespace

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
    const int levels = src.depth() == CV_8U ? 256 : 65536;
    if (targetHist.rows != levels || (targetHist.cols != 1 && targetHist.cols != src.channels()) ||
        targetHist.channels() != 1 || (targetHist.depth() != CV_32F && targetHist.depth() != CV_32S))
        fail(cv::Error::StsBadArg, "the target histogram must be CV_32F or CV_32S, " + std::to_string(levels) +
                                       " rows, 1 or " + std::to_string(src.channels()) + " columns", func);
    imghist::Histogram target = imghist::Histogram::zeros(
        src.depth() == CV_8U ? imghist::BinSpec::u8() : imghist::BinSpec::full(imghist::SampleType::U16, levels),
        targetHist.cols);
    for (int c = 0; c < targetHist.cols; ++c)
        for (int b = 0; b < levels; ++b) {
            const double v = targetHist.depth() == CV_32F ? targetHist.at<float>(b, c) : targetHist.at<int>(b, c);
            if (!(v >= 0) || v != std::floor(v))
                fail(cv::Error::StsBadArg, "the target histogram must hold non-negative integer counts", func);
            target.channel(c)[b] = static_cast<std::uint64_t>(v);
        }
    cv::Mat dst = host_destination(dst_arr, src.size(), src.type());
    guarded(func, [&] {
        imghist::match_histogram(imghist::view_of(src), imghist::view_of(dst), target, host_options(stream));
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
void CLAHE::collectGarbage() { imghist::release_filter_workspaces(); }

cv::Ptr<CLAHE> createCLAHE(double clipLimit, cv::Size tileGridSize) {
    return cv::makePtr<CLAHE>(clipLimit, tileGridSize);
}

}  // namespace gpuhist
