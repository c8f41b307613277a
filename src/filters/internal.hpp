// imghist filters — internal interfaces between the dispatch layer and the two backends.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "filters/filter_math.hpp"
#include "imghist/error.hpp"
#include "imghist/filters.hpp"
#include "core/parallel_for.hpp"
#include "cuda/runtime/staging.hpp"  // cuda_staged: host views through the device

namespace imghist::detail {

/// cv::threshold's parameters after its normalisation for one sample type.
struct ThresholdParams {
    int op = fmath::kBinary;
    int ithresh = 0;      ///< u8 / u16: floor(thresh) (may lie outside the type's range)
    int imaxval = 0;      ///< u8 / u16: round(maxval) saturated to the type
    float fthresh = 0;    ///< f32
    float fmaxval = 0;    ///< f32
    double used = 0;      ///< what cv::threshold returns
};
/// The 8-bit table of a threshold: entry v is the output for input v.
Lut8 threshold_lut(const ThresholdParams& p);
/// Normalises (thresh, maxval) as cv::threshold does for `type` (u8, u16 or f32).
ThresholdParams threshold_params(SampleType type, double thresh, double maxval, ThresholdType op);

/// Validation helpers (throw Error(InvalidArgument / Unsupported) with precise messages).
/// A filter's source or destination: not empty, and valid as the core defines it (detail::validate_image).
void check_view(const ImageView& v, const char* op, const char* role);
void check_same_shape(const ImageView& src, const ImageView& dst);

// ---- CPU backend -------------------------------------------------------------------------------------------
// parallel_for: the core's (core/parallel_for.hpp).
void cpu_apply_lut(const ImageView& src, const ImageView& dst, const Lut8* luts, int threads);
void cpu_threshold(const ImageView& src, const ImageView& dst, const ThresholdParams& p, int threads);
void cpu_equalize_luma(const ImageView& src, const ImageView& dst, int threads);
void cpu_clahe(const ImageView& src, const ImageView& dst, const fmath::ClaheGeometry& g, int threads);

// ---- CUDA backend (device views; asynchronous on `stream`) -------------------------------------------------
// Implemented in cuda/filters_cuda.cu, or by no_cuda.cpp (Error(NoDevice)) in a build without CUDA.
void cuda_equalize(const ImageView& src, const ImageView& dst, int device, Stream stream);
void cuda_equalize_color(const ImageView& src, const ImageView& dst, ColorEqualize mode, int device,
                         Stream stream);
void cuda_apply_lut(const ImageView& src, const ImageView& dst, const Lut8* luts, int device, Stream stream);
/// automatic == None: uses p as given. Otherwise computes the threshold on the device, writes it to
/// `computed` (device or pinned host memory) when non-null, and applies with p.op / p.imaxval. Enqueues
/// everything and returns without waiting.
void cuda_threshold(const ImageView& src, const ImageView& dst, const ThresholdParams& p, AutoThreshold automatic,
                    int* computed, int device, Stream stream);
void cuda_clahe(const ImageView& src, const ImageView& dst, const fmath::ClaheGeometry& g, int device,
                Stream stream);

}  // namespace imghist::detail
