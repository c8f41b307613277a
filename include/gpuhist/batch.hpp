// gpuhist — the filters over batches of images, in OpenCV's spelling (included by gpuhist/gpuhist.hpp).
//
// Every function takes the images as a std::vector of cv::cuda::GpuMat (device batches) or of cv::Mat (host
// batches) of one depth and channel count, any sizes, and gives image i what the single-image function of the
// same name gives it, bit for bit (imghist/batch_filters.hpp states the contract and how the work is done:
// device batches in a few launches for the whole batch, host batches on the CPU with threads across images, or
// through the device with setBackend(Backend::Cuda)).
//
// Destinations: dst is resized to src.size(); dst[i] is kept when it already has src[i]'s size and type (a view
// of a DeviceImage, a ROI), otherwise created as the single functions create it (GpuMat::create where OpenCV has
// CUDA, cv::Mat::create for host batches). dst may be src itself (in place). No destination may overlap another
// image. Errors are cv::Exception with the single functions' codes; a message about one image names it
// ("batch image 3: ...").
//
// Streams: as the single functions. Device batches enqueue on the stream and return at once, except
// thresholdBatch with THRESH_OTSU / THRESH_TRIANGLE (waits for the levels it returns; thresholdBatchAsync does
// not wait at all), thresholdMultiOtsuBatch (waits once for the thresholds of the whole batch) and the 16U
// contrast stretch and matching (wait once for the histograms of the whole batch).
#pragma once

#include "imghist/export.hpp"

#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/core/cuda.hpp>

#include "gpuhist/gpuhist.hpp"
#include "imghist/batch_filters.hpp"

namespace gpuhist {

using GpuMatBatch = std::vector<cv::cuda::GpuMat>;
using MatBatch = std::vector<cv::Mat>;

// ---- equalizeHist ------------------------------------------------------------------------------------------------
/// equalizeHist of every image (CV_8UC1; 3 or 4 channels with EQUALIZE_LUMA or EQUALIZE_PER_CHANNEL).
IMGHIST_API void equalizeHistBatch(const GpuMatBatch& src, GpuMatBatch& dst, StreamArg stream = {});
IMGHIST_API void equalizeHistBatch(const GpuMatBatch& src, GpuMatBatch& dst, EqualizeMode mode, StreamArg stream = {});
IMGHIST_API void equalizeHistBatch(const MatBatch& src, MatBatch& dst, StreamArg stream = {});
IMGHIST_API void equalizeHistBatch(const MatBatch& src, MatBatch& dst, EqualizeMode mode, StreamArg stream = {});

// ---- threshold ---------------------------------------------------------------------------------------------------
/// threshold of every image with the same parameters; returns what cv::threshold returns for each image.
IMGHIST_API std::vector<double> thresholdBatch(const GpuMatBatch& src, GpuMatBatch& dst, double thresh, double maxval,
                                               int type, StreamArg stream = {});
/// Asynchronous: with THRESH_OTSU / THRESH_TRIANGLE the levels (one int per image) are written, on the stream, to
/// `computedThresholds` when non-null (device memory, or page-locked host memory); the binary outputs are made
/// on the device from them, without any host synchronisation.
IMGHIST_API void thresholdBatchAsync(const GpuMatBatch& src, GpuMatBatch& dst, double thresh, double maxval, int type,
                                     int* computedThresholds = nullptr, StreamArg stream = {});
IMGHIST_API std::vector<double> thresholdBatch(const MatBatch& src, MatBatch& dst, double thresh, double maxval,
                                               int type, StreamArg stream = {});

// ---- contrast stretch, histogram matching, multi-level Otsu -------------------------------------------------------
IMGHIST_API void stretchContrastBatch(const GpuMatBatch& src, GpuMatBatch& dst, double lowPercent, double highPercent,
                                      EqualizeMode mode = EQUALIZE_LUMA, StreamArg stream = {});
IMGHIST_API void stretchContrastBatch(const MatBatch& src, MatBatch& dst, double lowPercent, double highPercent,
                                      EqualizeMode mode = EQUALIZE_LUMA, StreamArg stream = {});

/// matchHistograms of every image against one reference image (its histogram is taken once).
IMGHIST_API void matchHistogramsBatch(const GpuMatBatch& src, const cv::cuda::GpuMat& reference, GpuMatBatch& dst,
                                      StreamArg stream = {});
/// Host images; the reference may be a host array or a GpuMat.
IMGHIST_API void matchHistogramsBatch(const MatBatch& src, cv::InputArray reference, MatBatch& dst,
                                      StreamArg stream = {});
/// matchHistogramsToHist of every image against one target histogram (as matchHistogramsToHist takes it).
IMGHIST_API void matchHistogramsToHistBatch(const GpuMatBatch& src, cv::InputArray targetHist, GpuMatBatch& dst,
                                            StreamArg stream = {});
IMGHIST_API void matchHistogramsToHistBatch(const MatBatch& src, cv::InputArray targetHist, MatBatch& dst,
                                            StreamArg stream = {});

/// thresholdMultiOtsu of every image; returns each image's thresholds (waits once for the whole batch).
IMGHIST_API std::vector<std::vector<int>> thresholdMultiOtsuBatch(const GpuMatBatch& src, GpuMatBatch& dst,
                                                                  int classes = 3, StreamArg stream = {});
IMGHIST_API std::vector<std::vector<int>> thresholdMultiOtsuBatch(const MatBatch& src, MatBatch& dst, int classes = 3,
                                                                  StreamArg stream = {});

// ---- CLAHE -------------------------------------------------------------------------------------------------------
/// createCLAHE(clipLimit, tileGridSize)->apply of every image (CV_8UC1, CV_16UC1); a ROI image takes its padding
/// from its parent's pixels beyond it, as with the single apply.
IMGHIST_API void claheBatch(const GpuMatBatch& src, GpuMatBatch& dst, double clipLimit = 40.0,
                            cv::Size tileGridSize = cv::Size(8, 8), StreamArg stream = {});
IMGHIST_API void claheBatch(const MatBatch& src, MatBatch& dst, double clipLimit = 40.0,
                            cv::Size tileGridSize = cv::Size(8, 8), StreamArg stream = {});

}  // namespace gpuhist
