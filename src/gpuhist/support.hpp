// gpuhist — the OpenCV layer's shared helpers (gpuhist.cpp, gpuhist_batch.cpp): the one translation of
// imghist::Error into cv::Exception, argument checks with OpenCV's codes, outputs created as OpenCV creates
// them, and the options of host and GpuMat calls. Internal: not installed.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "gpuhist/gpuhist.hpp"

namespace gpuhist::detail {

// ---- the one translation point from imghist::Error to cv::Exception ----------------------------------------
inline int cv_code(imghist::ErrorCode c) {
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

[[noreturn]] inline void fail(int code, const std::string& msg, const char* func) {
    throw cv::Exception(code, msg, func, __FILE__, __LINE__);
}

// ---- argument checks with OpenCV's codes ---------------------------------------------------------------------
template <class M>
inline void check_input(const M& m, const char* func) {
    if (m.empty()) fail(cv::Error::StsBadArg, "empty input image", func);
}

template <class M>
inline void check_depth(const M& m, std::initializer_list<int> depths, const char* func) {
    for (int d : depths)
        if (m.depth() == d) return;
    fail(cv::Error::StsUnsupportedFormat, "unsupported depth " + std::to_string(m.depth()) + " (" +
                                              cv::typeToString(m.type()) + ")", func);
}

template <class M>
inline void check_channels(const M& m, std::initializer_list<int> counts, const char* func) {
    for (int c : counts)
        if (m.channels() == c) return;
    fail(cv::Error::BadNumChannels, "unsupported channel count " + std::to_string(m.channels()), func);
}

template <class M>
inline void check_mask(const M& mask, const M& src, const char* func) {
    if (mask.empty()) return;
    if (mask.type() != CV_8UC1) fail(cv::Error::StsUnsupportedFormat, "the mask must be CV_8UC1", func);
    if (mask.size() != src.size()) fail(cv::Error::StsUnmatchedSizes, "the mask and the image differ in size", func);
}

/// GpuMat output of the given shape: kept when it already fits, created where OpenCV has CUDA.
inline void ensure_output(cv::cuda::GpuMat& dst, int rows, int cols, int type, const char* func) {
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
inline const cv::cuda::GpuMat& gpu_source(cv::InputArray a) {
    CV_Assert(a.kind() == cv::_InputArray::CUDA_GPU_MAT);
    return *static_cast<const cv::cuda::GpuMat*>(a.getObj());
}

/// The GpuMat behind an OutputArray whose source is a GpuMat. A fixed-size destination (an rvalue view) must
/// already have the output's shape: it cannot be reallocated, as with cv::Mat.
inline cv::cuda::GpuMat& gpu_destination(cv::OutputArray dst, int rows, int cols, int type, const char* func) {
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
inline cv::Mat host_destination(cv::OutputArray dst, cv::Size size, int type) {
    dst.create(size, type);
    return dst.getMat();
}

inline void require_device(const char* func) {
    if (!imghist::cuda_available())
        fail(cv::Error::GpuNotSupported, "GpuMat operations need a CUDA device, and none is available", func);
}

/// The CPU backend's worker threads for host calls: OpenCV's setting (cv::setNumThreads / getNumThreads).
inline int host_threads() { return std::max(1, cv::getNumThreads()); }

inline imghist::FilterOptions host_options(const StreamArg& s) {
    imghist::FilterOptions o;
    o.backend = getBackend();
    o.stream = s.get();
    o.cpu_threads = host_threads();
    return o;
}

inline imghist::FilterOptions gpu_options(const StreamArg& s) {
    imghist::FilterOptions o;
    o.backend = Backend::Cuda;
    o.stream = s.get();
    return o;
}

struct ThresholdKind {
    imghist::ThresholdType type;
    imghist::AutoThreshold automatic;
};

inline ThresholdKind parse_threshold_type(int type, const char* func) {
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
inline void check_threshold_input(const M& src, const ThresholdKind& k, const char* func) {
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


inline imghist::ColorEqualize color_mode(EqualizeMode mode) {
    return mode == EQUALIZE_PER_CHANNEL ? imghist::ColorEqualize::PerChannel : imghist::ColorEqualize::Luma;
}

inline imghist::StretchMode stretch_mode(EqualizeMode mode) {
    return mode == EQUALIZE_PER_CHANNEL ? imghist::StretchMode::PerChannel : imghist::StretchMode::Luma;
}

template <class M>
inline void check_level_input(const M& src, std::initializer_list<int> channels, const char* func) {
    check_input(src, func);
    check_depth(src, {CV_8U, CV_16U}, func);
    check_channels(src, channels, func);
}

template <class M>
inline void check_reference(int src_type, const M& reference, const char* func) {
    check_input(reference, func);
    if (reference.type() != src_type)
        fail(cv::Error::StsUnmatchedFormats, "the reference must have the image's type (" +
                                                 cv::typeToString(src_type) + ")", func);
}

/// matchHistograms' reference, on the device or on the host (a host image may be matched to either): its
/// view and the GpuMat or Mat that keeps its pixels alive.
struct Reference {
    cv::cuda::GpuMat device;
    cv::Mat host;
    imghist::ImageView view;
};

/// The reference of `ref_arr`, checked against the images' type `src_type` (none: an empty batch, nothing to
/// check it against).
inline Reference reference_of(cv::InputArray ref_arr, std::optional<int> src_type, const char* func) {
    Reference r;
    if (ref_arr.isGpuMat()) {
        r.device = gpu_source(ref_arr);
        if (src_type) check_reference(*src_type, r.device, func);
        r.view = imghist::view_of(r.device);
    } else {
        r.host = ref_arr.getMat();
        if (src_type) check_reference(*src_type, r.host, func);
        r.view = imghist::view_of(r.host);
    }
    return r;
}

/// A target histogram as cv::calcHist returns it (levels x 1, or one column per channel; CV_32F or CV_32S,
/// non-negative integer counts) for images of `depth` with `channels` channels.
inline imghist::Histogram target_histogram(const cv::Mat& targetHist, int depth, int channels, const char* func) {
    const int levels = depth == CV_8U ? 256 : 65536;
    if (targetHist.rows != levels || (targetHist.cols != 1 && targetHist.cols != channels) ||
        targetHist.channels() != 1 || (targetHist.depth() != CV_32F && targetHist.depth() != CV_32S))
        fail(cv::Error::StsBadArg, "the target histogram must be CV_32F or CV_32S, " + std::to_string(levels) +
                                       " rows, 1 or " + std::to_string(channels) + " columns", func);
    imghist::Histogram target = imghist::Histogram::zeros(
        depth == CV_8U ? imghist::BinSpec::u8() : imghist::BinSpec::full(imghist::SampleType::U16, levels),
        targetHist.cols);
    for (int c = 0; c < targetHist.cols; ++c)
        for (int b = 0; b < levels; ++b) {
            const double v = targetHist.depth() == CV_32F ? targetHist.at<float>(b, c) : targetHist.at<int>(b, c);
            if (!(v >= 0) || v != std::floor(v))
                fail(cv::Error::StsBadArg, "the target histogram must hold non-negative integer counts", func);
            target.channel(c)[b] = static_cast<std::uint64_t>(v);
        }
    return target;
}

}  // namespace gpuhist::detail
