// imghist filters — internal interface of the batch filters (imghist/batch_filters.hpp) between the dispatch
// layer (batch.cpp) and the CUDA backend (cuda/batch_filters.cu, cuda/batch_clahe.cu; batch_no_cuda.cpp in a
// build without CUDA).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "filters/filter_math.hpp"
#include "filters/internal.hpp"
#include "imghist/batch_filters.hpp"

namespace imghist::detail {

/// A validated batch of device views: src[i] -> dst[i], all of one sample type and channel count. `uniform`:
/// every image has src[0]'s geometry and image i lies `src_stride` (`dst_stride`) bytes after image 0 (a
/// (N, H, W[, C]) array, or a list that happens to be one): the kernels address image i from image 0 and need
/// no per-image data on the device.
struct DeviceBatch {
    const ImageView* src = nullptr;
    const ImageView* dst = nullptr;
    std::size_t count = 0;
    bool uniform = false;
    std::ptrdiff_t src_stride = 0, dst_stride = 0;
};

/// Refuses a call with an `obstacle` to capture (non-null: why it must wait for the device or copy per-call data
/// from the host) while `stream` is being captured into a CUDA graph: Error(Unsupported) naming `op`. The entry
/// points call it before they enqueue anything, so a refused call leaves the capture valid and empty of its work.
/// (Without CUDA: nothing to refuse.)
void refuse_capture(Stream stream, const char* op, const char* obstacle);

// ---- CUDA backend: device batches, everything enqueued on `stream` (device -1: the current one) --------------
void cuda_equalize_batch(const DeviceBatch& b, int device, Stream stream);
void cuda_equalize_color_batch(const DeviceBatch& b, ColorEqualize mode, int device, Stream stream);
/// threshold_batch's device work. automatic == None: p as given. Otherwise the levels of all images are
/// computed on the device and applied with p.op / p.imaxval; `computed` (device or page-locked memory, N ints)
/// receives them on the stream when non-null; `host_levels` (N ints, host memory) when non-null makes the call
/// wait for the levels alone and fills it.
void cuda_threshold_batch(const DeviceBatch& b, const ThresholdParams& p, AutoThreshold automatic, int* computed,
                          int* host_levels, int device, Stream stream);
/// CLAHE of every image with its own geometry (geometries[i]; every image's tile grid is the same).
void cuda_clahe_batch(const DeviceBatch& b, const fmath::ClaheGeometry* geometries, int device, Stream stream);
/// stretch_contrast of every image (percents validated; luma: 3 or 4 channels in luma mode).
void cuda_stretch_batch(const DeviceBatch& b, double low_percent, double high_percent, bool luma, int device,
                        Stream stream);
/// Matching of every image to a device reference image or to a host target histogram (exactly one non-null;
/// the target validated: levels bins, 1 or C channels, none empty).
void cuda_match_batch(const DeviceBatch& b, const ImageView* reference, const Histogram* target, int device,
                      Stream stream);
/// Multi-level Otsu of every image; returns the thresholds (waits for them) and writes `computed` (device or
/// page-locked memory, N x (classes - 1) ints) when non-null.
std::vector<std::vector<int>> cuda_multiotsu_batch(const DeviceBatch& b, int classes, int* computed, int device,
                                                   Stream stream);

/// Host batches on the CUDA backend: the host images are copied to the device in groups (packed), `op` runs on
/// each group as a device batch — in place: its dst views are its src views, of dst's sizes — and the results
/// are copied back into dst. src[i] may be larger than dst[i] (pixels beyond dst's extent that the op reads,
/// CLAHE's border); every dst[i] starts at src[i]'s first pixel. `first` tells op the index of the group's
/// first image. Returns when dst is written.
using DeviceBatchOp = std::function<void(const DeviceBatch& group, std::size_t first, Stream stream)>;
void cuda_staged_batch(const ImageView* src, const ImageView* dst, std::size_t count, int device, Stream stream,
                       const DeviceBatchOp& op);

}  // namespace imghist::detail
