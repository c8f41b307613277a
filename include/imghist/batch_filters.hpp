// imghist batch filters — every filter of filters.hpp over a batch of images (image_batch.hpp): a uniform batch
// (a (N, H, W[, C]) array) or a list of views of any sizes.
//
// Exactness: output i, and threshold i, equal what the single-image call returns for image i, bit for bit
// (and so OpenCV's and scikit-image's answers, as filters.hpp states them). CLAHE keeps the single call's
// contract (within one grey level of cv::CLAHE) and equals the single call exactly.
//
// Arguments: src and dst have the same number of images; image i of dst has image i of src's size, sample type
// and channel count; all images are in one location (host or device). dst image i may be src image i itself
// (in place); otherwise no destination image may overlap another destination image or any source image
// (a broadcast source, repeating one image, is fine). An empty batch does nothing. Errors: imghist::Error, as
// for the single calls; a message about one image names it ("batch image 7: ..."). Arguments are checked before
// anything runs; an error that only the data reveals (multi-level Otsu of an image with too few levels) is
// reported after the other images' work was enqueued, which then may or may not have written their outputs.
//
// Backends:
//   - Device batches run on CUDA: the histograms of the whole batch in one launch (as calc_hist_batch), the
//     tables or thresholds of all images in one launch, the pass over all images in one launch, enqueued on
//     FilterOptions::stream without waiting (the exceptions below wait for the values they return). Scratch
//     lives in the stream's workspace and is reused: a steady stream of batches of one shape allocates
//     nothing. A uniform batch needs no per-image data on the device; a variable-shape batch copies one
//     descriptor array per call from page-locked memory.
//   - CUDA graphs: once a first call has sized the stream's workspace, a call on a uniform device batch that
//     returns nothing to the host (equalize, colour equalize, threshold without Otsu / Triangle or with
//     `computed`, CLAHE, 8-bit stretch, 8-bit matching to a device reference) can be captured from
//     FilterOptions::stream. Any other call on a stream being captured — a variable-shape or host batch, or one
//     that waits for values or host-made tables — throws Error(Unsupported) before it enqueues anything, so the
//     capture stays valid and holds none of its work.
//     16-bit contrast stretch, matching and multi-level Otsu take their histograms to the host for the tables
//     (one wait, as the single calls do), then enqueue one pass.
//   - Host batches run on the CPU backend for Backend::Auto and Backend::Cpu, with the images spread over
//     FilterOptions::cpu_threads threads (the largest ones split across threads themselves), and through the
//     device for Backend::Cuda (copied up, run as a device batch, copied back). Both return when dst is
//     written.
#pragma once

#include "imghist/export.hpp"

#include <vector>

#include "imghist/filters.hpp"
#include "imghist/image_batch.hpp"

namespace imghist {

/// equalize_hist (cv::equalizeHist) of every image: 8-bit, 1 channel.
IMGHIST_API void equalize_hist_batch(const ImageBatch& src, const ImageBatch& dst, const FilterOptions& options = {});

/// equalize_hist_color of every image: 8-bit, 3 or 4 channels (BGR / BGRA).
IMGHIST_API void equalize_hist_color_batch(const ImageBatch& src, const ImageBatch& dst, ColorEqualize mode,
                                           const FilterOptions& options = {});

/// threshold (cv::threshold) of every image with the same parameters. Returns what cv::threshold returns for
/// each image (the level used), except for the asynchronous form:
///   - AutoThreshold::None: nothing is computed; the call does not wait (device batches) and returns `thresh`
///     as cv::threshold normalises it, once per image.
///   - Otsu / Triangle on a device batch with `computed` non-null: the levels (one int per image, in image
///     order) are written to `computed` (device memory, or page-locked host memory the device can write) on
///     the stream, the binary outputs are made from them on the device, and the call returns an empty vector
///     at once: no host synchronisation at all (the call may be captured into a CUDA graph).
///   - Otsu / Triangle on a device batch without `computed`: everything is enqueued as above; the call waits
///     for the levels only and returns them (dst completes in stream order).
///   - Host batches: the call returns when dst is written; `computed` (host memory), when given, gets the
///     levels too.
IMGHIST_API std::vector<double> threshold_batch(const ImageBatch& src, const ImageBatch& dst, double thresh,
                                                double maxval, ThresholdType type,
                                                AutoThreshold automatic = AutoThreshold::None,
                                                const FilterOptions& options = {}, int* computed = nullptr);

/// Pixels of a larger image beyond an image's right and bottom edges (Clahe::apply's extra_right and
/// extra_bottom: cv::CLAHE on a ROI pads from them).
struct ClaheBorder {
    int right = 0;
    int bottom = 0;
};

/// clahe.apply(src[i], dst[i]) for every image: u8 or u16, 1 channel. `borders`: null (every image isolated,
/// as Clahe::apply's default) or one per image.
IMGHIST_API void clahe_batch(const Clahe& clahe, const ImageBatch& src, const ImageBatch& dst,
                             const FilterOptions& options = {}, const ClaheBorder* borders = nullptr);

/// stretch_contrast of every image (u8 or u16, 1 to 4 channels), each with its own percentiles.
IMGHIST_API void stretch_contrast_batch(const ImageBatch& src, const ImageBatch& dst, double low_percent,
                                        double high_percent, StretchMode mode = StretchMode::Luma,
                                        const FilterOptions& options = {});

/// match_histograms of every image against one reference (the same sample type and channel count, any size,
/// host or device): its histogram is taken once.
IMGHIST_API void match_histograms_batch(const ImageBatch& src, const ImageView& reference, const ImageBatch& dst,
                                        const FilterOptions& options = {});

/// match_to_histogram of every image against one target histogram (1 or the images' channel count).
IMGHIST_API void match_to_histogram_batch(const ImageBatch& src, const ImageBatch& dst, const Histogram& target,
                                          const FilterOptions& options = {});

/// threshold_multiotsu of every image (1 channel, u8 or u16). Returns each image's classes - 1 thresholds and
/// writes the label images. The call waits for the thresholds, once for the whole batch (device batches: the
/// searches of all images run in one launch; an image whose candidates overflow the device's search is
/// searched on the host, as in the single call). `computed`, when given, receives the thresholds too,
/// image after image (classes - 1 ints each): device memory or page-locked host memory for device batches,
/// host memory for host batches.
IMGHIST_API std::vector<std::vector<int>> threshold_multiotsu_batch(const ImageBatch& src, const ImageBatch& dst,
                                                                    int classes = 3, const FilterOptions& options = {},
                                                                    int* computed = nullptr);

}  // namespace imghist
