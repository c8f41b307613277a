// imghist — optional OpenCV interop (header-only; include it only where OpenCV is available).
//
// Converts between cv::Mat / cv::cuda::GpuMat and imghist views, and wraps a DeviceImage as a GpuMat.
// Works with every OpenCV build, including those without CUDA: only GpuMat's constructor that wraps an
// existing pointer is used.
#pragma once

#include <opencv2/core.hpp>
#include <opencv2/core/cuda.hpp>

#include "imghist/buffer.hpp"
#include "imghist/error.hpp"
#include "imghist/image.hpp"

namespace imghist {

/// Sample type of an OpenCV depth; throws Error(Unsupported) for depths imghist does not read.
inline SampleType sample_type_from_cv_depth(int depth) {
    switch (depth) {
        case CV_8U: return SampleType::U8;
        case CV_16U: return SampleType::U16;
        case CV_32S: return SampleType::I32;
        case CV_32F: return SampleType::F32;
        default: throw Error(ErrorCode::Unsupported, "unsupported OpenCV depth " + std::to_string(depth) +
                                                         " (imghist reads CV_8U, CV_16U, CV_32S, CV_32F)");
    }
}

inline int cv_depth(SampleType t) noexcept {
    switch (t) {
        case SampleType::U8: return CV_8U;
        case SampleType::U16: return CV_16U;
        case SampleType::I32: return CV_32S;
        case SampleType::F32: return CV_32F;
    }
    return CV_8U;
}

inline ImageView view_of(const cv::Mat& m) {
    if (m.dims > 2) throw Error(ErrorCode::Unsupported, "cv::Mat with more than 2 dimensions");
    return ImageView::host(m.data, m.cols, m.rows, sample_type_from_cv_depth(m.depth()), m.channels(),
                           m.empty() ? 0 : m.step[0]);
}

inline ImageView view_of(const cv::cuda::GpuMat& m) {
    return ImageView::device(m.data, m.cols, m.rows, sample_type_from_cv_depth(m.depth()), m.channels(),
                             m.empty() ? 0 : m.step);
}

/// A GpuMat header over a DeviceImage (no copy, no ownership: keep the DeviceImage alive).
inline cv::cuda::GpuMat as_gpumat(DeviceImage& img) {
    return cv::cuda::GpuMat(img.height(), img.width(), CV_MAKETYPE(cv_depth(img.type()), img.channels()),
                            img.data(), img.pitch());
}

/// A cv::Mat header over a host view (no copy).
inline cv::Mat as_mat(const ImageView& v) {
    return cv::Mat(v.height, v.width, CV_MAKETYPE(cv_depth(v.type), v.channels), const_cast<void*>(v.data),
                   v.pitch);
}

}  // namespace imghist
