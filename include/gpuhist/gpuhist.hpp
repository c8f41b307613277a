// gpuhist — OpenCV-compatible histogram filters on the GPU and on the CPU.
//
// Drop-in counterparts of OpenCV functions, with the same names, argument order, output types and —
// to the last bit — the same answers:
//
//   gpuhist::calcHist      cv::cuda::calcHist (GpuMat: CV_32SC1, one row per channel)
//                          cv::calcHist       (host arrays: its own two signatures, and a shorter form with
//                          one CV_32F column per channel)
//   gpuhist::equalizeHist  cv::equalizeHist; 3/4-channel BGR(A) images: EQUALIZE_LUMA (Y of YCrCb, as
//                          cvtColor computes it) or EQUALIZE_PER_CHANNEL
//   gpuhist::threshold     cv::threshold: THRESH_BINARY, _BINARY_INV, _TRUNC, _TOZERO, _TOZERO_INV,
//                          optionally | THRESH_OTSU (CV_8UC1, CV_16UC1) or | THRESH_TRIANGLE (CV_8UC1)
//   gpuhist::createCLAHE   cv::createCLAHE: CV_8UC1 and CV_16UC1; within one grey level of cv::CLAHE and
//                          identical on the vast majority of pixels
//
// and, following scikit-image 0.19 (OpenCV has no counterpart; the rules are in imghist/filters.hpp):
//
//   gpuhist::stretchContrast     exposure.rescale_intensity(img, in_range=np.percentile(img, (low,
//                                100 - high))), identical; colour: EQUALIZE_LUMA (one table from the luma's
//                                percentiles for B, G, R; alpha copied) or EQUALIZE_PER_CHANNEL
//   gpuhist::matchHistograms     exposure.match_histograms (per channel), rounded half to even: within one
//                                grey level of scikit-image
//   gpuhist::thresholdMultiOtsu  filters.threshold_multiotsu (identical thresholds) and np.digitize scaled to
//                                the full range as the output image
//
//   function            | depths              | channels | GpuMat | host arrays
//   --------------------+---------------------+----------+--------+------------
//   calcHist            | 8U (16U, 32F: host) | 1, 3, 4  | yes    | yes     (cv::calcHist's forms: 1-4)
//   equalizeHist        | 8U                  | 1, 3, 4  | yes    | yes
//   threshold           | 8U, 16U, 32F        | 1, 3, 4  | yes    | yes     (automatic modes: 1 channel)
//   CLAHE::apply        | 8U, 16U             | 1        | yes    | yes
//   stretchContrast     | 8U, 16U             | 1, 3, 4  | yes    | yes
//   matchHistograms     | 8U, 16U             | 1, 3, 4  | yes    | yes
//   thresholdMultiOtsu  | 8U, 16U (span<=4096)| 1        | yes    | yes
//
// Every function above also exists over batches of images (gpuhist/batch.hpp: equalizeHistBatch, thresholdBatch,
// thresholdBatchAsync, stretchContrastBatch, matchHistogramsBatch, matchHistogramsToHistBatch,
// thresholdMultiOtsuBatch, claheBatch), std::vector<GpuMat> or std::vector<cv::Mat> in and out, in a few launches
// for the whole batch, image i's output equal to the single function's.
//
// The last three on 8U GpuMats stay on the device: histogram, table and pass in one launch (images up to
// imghist::PolicyOverrides::one_launch_max_bytes, 4 MiB unless overridden; equalizeHist and threshold's Otsu /
// Triangle too), else the histogram, then one kernel that
// derives the table from the counts and applies it; stretchContrast and matchHistograms return without
// waiting, thresholdMultiOtsu (whose threshold search runs on the device too) waits once, for the
// thresholds it returns (the label pass behind the search completes in stream order).
// On 16U GpuMats they take the histogram to the host for the table / threshold computation: they wait for
// their stream once (for that histogram), then enqueue the table pass and return.
//
// Arguments follow OpenCV's conventions: sources are cv::InputArray and destinations cv::OutputArray, so a
// host argument may be a cv::Mat, a ROI view (also as an rvalue destination: equalizeHist(src, big(roi))),
// a cv::UMat, a cv::cuda::HostMem or a std::vector<uchar> (a 1 x N image), and the destination is created
// or reused as OpenCV does (Mat::create: kept when it already has the size and type, otherwise allocated;
// a fixed-size destination such as a ROI of the wrong size is an error). Arrays of kind GpuMat take the
// GpuMat path (then the destination must be a GpuMat too); the overloads taking GpuMat& are that path.
// Host calls on the CPU backend use cv::getNumThreads() worker threads, so cv::setNumThreads applies.
//
// Streams. Every function takes an optional last argument that is either a cv::cuda::Stream (OpenCV
// builds with CUDA) or a raw cudaStream_t. GpuMat overloads enqueue their work on that stream and return
// at once: histogram, table and apply stay on the device, with no copy to the host and no
// synchronisation. The exceptions return a computed value and wait for the work that yields it only, and
// dst completes in stream order after they return: threshold() with THRESH_OTSU / THRESH_TRIANGLE waits
// for the image's histogram (the level is computed on the host; thresholdAsync() does not wait at all),
// thresholdMultiOtsu() on 8U for its threshold search, and the 16U level-table operations above for their
// histogram. Without a stream argument GpuMat work goes to the default stream. Host calls return when dst
// is written.
//
// Backends. GpuMat inputs always run on CUDA. Host inputs run on the backend setBackend() sets, by default
// Backend::Auto: the threaded CPU backend without a device, and with one whichever way this process has
// measured faster for calls like it (imghist/histogram.hpp, Backend); every way gives the identical answer.
// On CUDA, host images are streamed through pinned staging buffers so that PCIe transfers overlap the host
// copies (Mats in page-locked memory, see createPinnedMat, are transferred directly).
//
// OpenCV without CUDA (e.g. Debian's packages). There cv::cuda::GpuMat cannot allocate; it can only view
// memory someone else owns. Use gpuhist::DeviceImage (imghist::DeviceImage), an owning device image,
// and view it as a GpuMat:
//
//     gpuhist::DeviceImage src_store(width, height), dst_store(width, height);
//     src_store.upload(imghist::view_of(host_mat));
//     cv::cuda::GpuMat src = gpuhist::asGpuMat(src_store), dst = gpuhist::asGpuMat(dst_store);
//     gpuhist::equalizeHist(src, dst, stream);
//
// Outputs that already have the right size and type are written in place (views included). Otherwise,
// where OpenCV has CUDA, they are allocated with GpuMat::create(); where it has none, an exception with
// code cv::Error::GpuNotSupported explains that the output must be a view of a DeviceImage.
//
// Errors reach callers as cv::Exception with OpenCV's codes: cv::Error::StsBadArg (empty input, bad
// parameters), StsUnsupportedFormat (depth), BadNumChannels (channel count), StsUnmatchedSizes (src/mask
// or src/dst shapes), GpuNotSupported (no usable device, or an output that cannot be allocated),
// GpuApiCallError (a CUDA failure), StsNoMem (allocation failure).
#pragma once

#include "imghist/export.hpp"

#include <opencv2/core.hpp>
#include <opencv2/core/cuda.hpp>
#include <opencv2/imgproc.hpp>

#include "imghist/buffer.hpp"
#include "imghist/filters.hpp"
#include "imghist/histogram.hpp"
#include "imghist/opencv.hpp"

namespace gpuhist {

using imghist::Backend;
using imghist::DeviceImage;

/// A GpuMat header over a DeviceImage (no copy; keep the DeviceImage alive while the GpuMat is used).
inline cv::cuda::GpuMat asGpuMat(DeviceImage& image) { return imghist::as_gpumat(image); }

/// (Re)shapes `storage` for an OpenCV type (CV_8UC1, CV_8UC3, CV_16UC1, ...) and returns a GpuMat view.
IMGHIST_API cv::cuda::GpuMat createDeviceMat(DeviceImage& storage, int rows, int cols, int type);

/// A cv::Mat over page-locked host memory held by `storage` (grown as needed; keep it alive while the Mat
/// is used). cv::Mat inputs and outputs in such memory skip the staging copies of the CUDA backend.
IMGHIST_API cv::Mat createPinnedMat(imghist::PinnedBuffer& storage, int rows, int cols, int type);

/// The optional stream argument: nothing (default stream), a cv::cuda::Stream, or a cudaStream_t.
class IMGHIST_API StreamArg {
public:
    StreamArg() noexcept = default;
    StreamArg(cv::cuda::Stream& stream);  // NOLINT: implicit on purpose
    StreamArg(imghist::Stream stream) noexcept : stream_(stream), given_(true) {}  // NOLINT
    imghist::Stream get() const noexcept { return stream_; }
    bool given() const noexcept { return given_; }

private:
    imghist::Stream stream_ = nullptr;
    bool given_ = false;
};

/// Backend for host inputs (process-wide; default Backend::Auto).
IMGHIST_API void setBackend(Backend backend);
IMGHIST_API Backend getBackend();

enum EqualizeMode { EQUALIZE_LUMA = 0, EQUALIZE_PER_CHANNEL = 1 };

// ---- calcHist --------------------------------------------------------------------------------------------
/// cv::cuda::calcHist: 256-bin histogram of an 8-bit image into `hist`, CV_32SC1 of 1 x 256 (channels x 256
/// for 3/4-channel images, row c = channel c).
IMGHIST_API void calcHist(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& hist, StreamArg stream = {});
/// cv::cuda::calcHist with a mask (CV_8UC1, same size; pixels where it is 0 are skipped).
IMGHIST_API void calcHist(const cv::cuda::GpuMat& src, const cv::cuda::GpuMat& mask, cv::cuda::GpuMat& hist,
              StreamArg stream = {});
/// histSize bins over [lowerLevel, upperLevel) with cv::calcHist's binning rule (histSize = 64 over
/// [0, 256) is the 64-bin variant); channels x histSize, CV_32SC1.
IMGHIST_API
void calcHist(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& hist, int histSize, float lowerLevel, float upperLevel,
              const cv::cuda::GpuMat& mask = cv::cuda::GpuMat(), StreamArg stream = {});
/// Host arrays: what cv::calcHist(&src, 1, {c}, mask, hist, 1, {histSize}, {{lowerLevel, upperLevel}})
/// returns, CV_32F histSize x 1; for 3/4-channel images histSize x channels, column c for channel c. 8U, 16U,
/// 32F. A GpuMat src (with GpuMat hist and mask) gives the GpuMat result above.
IMGHIST_API void calcHist(cv::InputArray src, cv::OutputArray hist, int histSize = 256, float lowerLevel = 0.f,
              float upperLevel = 256.f, cv::InputArray mask = cv::noArray(), StreamArg stream = {});
/// cv::calcHist, as OpenCV declares it, for host images (cv::Mat): the same arguments, the same result and
/// the same accumulation (each previous value rounded to an int, the counts added, CV_32F again; a hist that
/// has to be reallocated is not accumulated into). One-dimensional uniform histograms (dims = 1, uniform,
/// or ranges = nullptr for 8-bit images meaning [0, 256)) of one channel, counted across the images'
/// concatenated channels as cv::calcHist counts them, of 8U, 16U and 32F images with 1-4 channels, are
/// computed here (the CPU backend reads only that channel); everything else — dims > 1, non-uniform
/// ranges, more than 4 channels, more than 256 bins of 8-bit data — is passed to cv::calcHist itself.
/// Result: CV_32F, histSize[0] x 1. Errors: cv::Exception (StsBadArg for arguments cv::calcHist asserts on,
/// StsUnmatchedSizes / StsUnmatchedFormats for images unlike image 0, StsUnsupportedFormat for depths).
IMGHIST_API void calcHist(const cv::Mat* images, int nimages, const int* channels, cv::InputArray mask,
                          cv::OutputArray hist, int dims, const int* histSize, const float** ranges,
                          bool uniform = true, bool accumulate = false);
/// cv::calcHist's vector form: calcHist({img}, {channel}, mask, hist, {histSize}, {low, high}), as above
/// (ranges may be empty for 8-bit images). `images` is a list of host images (std::vector<cv::Mat>, ...) or
/// a single one.
IMGHIST_API void calcHist(cv::InputArrayOfArrays images, const std::vector<int>& channels, cv::InputArray mask,
                          cv::OutputArray hist, const std::vector<int>& histSize, const std::vector<float>& ranges,
                          bool accumulate = false);

// ---- equalizeHist ----------------------------------------------------------------------------------------
/// cv::equalizeHist (CV_8UC1); 3/4-channel images use EQUALIZE_LUMA.
IMGHIST_API void equalizeHist(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& dst, StreamArg stream = {});
IMGHIST_API
void equalizeHist(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& dst, EqualizeMode mode, StreamArg stream = {});
IMGHIST_API void equalizeHist(cv::InputArray src, cv::OutputArray dst, StreamArg stream = {});
IMGHIST_API void equalizeHist(cv::InputArray src, cv::OutputArray dst, EqualizeMode mode, StreamArg stream = {});

// ---- threshold -------------------------------------------------------------------------------------------
/// cv::threshold; returns the threshold used. With THRESH_OTSU / THRESH_TRIANGLE the GpuMat overload waits
/// for that value (the histogram, counted on the stream) and enqueues the pass that writes dst without
/// waiting for it (use thresholdAsync to stay asynchronous throughout).
IMGHIST_API double threshold(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& dst, double thresh, double maxval, int type,
                 StreamArg stream = {});
/// Asynchronous threshold. With THRESH_OTSU / THRESH_TRIANGLE the computed threshold is written, on the
/// stream, to `computedThreshold` when non-null: an int in device memory or in pinned host memory.
IMGHIST_API
void thresholdAsync(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& dst, double thresh, double maxval, int type,
                    int* computedThreshold = nullptr, StreamArg stream = {});
IMGHIST_API double threshold(cv::InputArray src, cv::OutputArray dst, double thresh, double maxval, int type,
                 StreamArg stream = {});

// ---- contrast stretch, histogram matching, multi-level Otsu -------------------------------------------------
/// Contrast stretch by percentiles: lowPercent of the samples (per np.percentile) go to 0, highPercent to the
/// maximum, linearly in between (imghist::stretch_table). lowPercent = 2, highPercent = 1 is ImageMagick's
/// -normalize; 0, 0 is -auto-level. 3/4-channel images use `mode` (EQUALIZE_LUMA by default).
IMGHIST_API
void stretchContrast(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& dst, double lowPercent, double highPercent,
                     EqualizeMode mode = EQUALIZE_LUMA, StreamArg stream = {});
IMGHIST_API void stretchContrast(cv::InputArray src, cv::OutputArray dst, double lowPercent, double highPercent,
                     EqualizeMode mode = EQUALIZE_LUMA, StreamArg stream = {});

/// Histogram matching of each channel of src to the same channel of `reference` (same depth and channel
/// count, any size), as imghist::match_table.
IMGHIST_API void matchHistograms(const cv::cuda::GpuMat& src, const cv::cuda::GpuMat& reference, cv::cuda::GpuMat& dst,
                     StreamArg stream = {});
/// Host arrays (or GpuMats, then as the overload above); the reference may be a host array or a GpuMat.
IMGHIST_API
void matchHistograms(cv::InputArray src, cv::InputArray reference, cv::OutputArray dst, StreamArg stream = {});
/// Histogram matching to a given histogram: `targetHist` as cv::calcHist returns it for this depth's full
/// range (256 x 1 for 8U, 65536 x 1 for 16U, or one column per channel; CV_32F or CV_32S, non-negative
/// integer counts). One column is used for every channel. Host images only.
IMGHIST_API
void matchHistogramsToHist(cv::InputArray src, cv::InputArray targetHist, cv::OutputArray dst, StreamArg stream = {});

/// Multi-level Otsu: returns the classes - 1 thresholds of skimage.filters.threshold_multiotsu (classes 2..5)
/// and writes the label image np.digitize(src, thresholds) scaled to the depth's full range (3 classes on 8U:
/// 0, 128, 255; see imghist::multiotsu_label_table).
IMGHIST_API std::vector<int> thresholdMultiOtsu(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& dst, int classes = 3,
                                    StreamArg stream = {});
IMGHIST_API
std::vector<int> thresholdMultiOtsu(cv::InputArray src, cv::OutputArray dst, int classes = 3, StreamArg stream = {});

// ---- CLAHE -----------------------------------------------------------------------------------------------
/// cv::CLAHE with GPU overloads. apply(InputArray, OutputArray) accepts host arrays or GpuMat (default stream).
/// In-place use (src and dst the same image) is allowed, as with cv::CLAHE. Like cv::CLAHE, a ROI source
/// whose size is not a multiple of the grid takes its padding from the parent image's pixels beyond the
/// ROI where there are any (then reflects), for cv::Mat and GpuMat sources alike.
class IMGHIST_API CLAHE : public cv::CLAHE {
public:
    CLAHE(double clipLimit, cv::Size tileGridSize);

    void apply(cv::InputArray src, cv::OutputArray dst) override;
    void apply(const cv::cuda::GpuMat& src, cv::cuda::GpuMat& dst, StreamArg stream = {});
    /// apply(src, dst) with a stream (no default here: the two-argument form is cv::CLAHE's override).
    void apply(cv::InputArray src, cv::OutputArray dst, StreamArg stream);

    void setClipLimit(double clipLimit) override;
    double getClipLimit() const override;
    void setTilesGridSize(cv::Size tileGridSize) override;
    cv::Size getTilesGridSize() const override;
    void collectGarbage() override;

private:
    imghist::Clahe impl_;
};

IMGHIST_API cv::Ptr<CLAHE> createCLAHE(double clipLimit = 40.0, cv::Size tileGridSize = cv::Size(8, 8));

}  // namespace gpuhist

#include "gpuhist/batch.hpp"  // the same filters over batches of images
