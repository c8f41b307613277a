// imghist — histogram computation: bin specification, results, and the entry points.
//
// Capability table (both backends give identical answers, bit for bit):
//
//   sample type | channels | bins                      | range [low, high)         | notes
//   ------------+----------+---------------------------+---------------------------+---------------------------
//   u8          | 1, 3, 4  | 1 .. 256 (256 and 64 fast)| any (default [0, 256))    | 64 bins of [0,256) = top 6 bits
//   u16         | 1, 3, 4  | 1 .. 65536                | any (e.g. [0, 65536))     | 10/12/16-bit data
//   i32         | 1, 3, 4  | 1 .. 65536                | any (e.g. [0, 1024))      | "10-bit samples stored as int32"
//   f32         | 1, 3, 4  | 1 .. 65536                | any finite range          | NaN and +-inf never counted
//
//   mask: optional 8-bit, 1 channel, same width and height; pixels whose mask byte is 0 are skipped.
//   views: host or device, any pitch >= row bytes (a multiple of the sample size), any ROI x-offset.
//
// Binning rule (identical to cv::calcHist for uniform histograms): with a = bins / (high - low) and
// b = -a * low, both in double precision, a sample v is counted when low <= v < high, in bin
// clamp(floor(v * a + b), 0, bins - 1). Samples outside [low, high) and NaN are not counted; their number
// is reported per channel in `out_of_range`. Masked-out pixels are neither counted nor out of range.
//
// Asynchrony: calc_hist / calc_hist_batch / accumulate_hist return finished host results: they wait for their
// own work on the stream they use, and so for the work queued on it before them, never for the whole device
// (a single image's call returns when its kernel has written the result into page-locked memory, each word
// tagged with the call, instead of synchronising the stream; the kernel's own exit may follow a few
// microseconds later. Images of 2^32 samples or more synchronise the stream).
// CudaHistogrammer enqueues work on a caller stream and returns at once; it reuses its temporary storage, so
// steady-state calls allocate nothing.
#pragma once

#include "imghist/export.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "imghist/error.hpp"
#include "imghist/image.hpp"

struct CUstream_st;  // CUDA's stream type; Stream below is identical to cudaStream_t

namespace imghist {

namespace detail {
struct HistogrammerAccess;
}

using Stream = CUstream_st*;

struct IMGHIST_API BinSpec {
    int bins = 256;
    double low = 0.0;
    double high = 256.0;

    /// `bins` equal-width bins over [low, high).
    static BinSpec even(int bins, double low, double high) noexcept { return BinSpec{bins, low, high}; }
    /// 256 bins over [0, 256): one bin per 8-bit value.
    static BinSpec u8() noexcept { return BinSpec{256, 0.0, 256.0}; }
    /// 64 bins over [0, 256): the top 6 bits of a byte.
    static BinSpec u8_64() noexcept { return BinSpec{64, 0.0, 256.0}; }
    /// `bins` bins over the whole value range of an integer type: u8 [0,256), u16 [0,65536);
    /// for i32 and f32 there is no natural range and Error(InvalidArgument) is thrown.
    static BinSpec full(SampleType type, int bins);
    /// `bins` bins over [0, 2^bits): e.g. bits(10, 1024) for 10-bit data in u16 or i32 samples.
    static BinSpec bits(int bits, int bins);

    bool operator==(const BinSpec& o) const noexcept {
        return bins == o.bins && low == o.low && high == o.high;
    }
};

/// Largest bin count accepted for a sample type (256 for u8, 65536 otherwise).
IMGHIST_API int max_bins(SampleType type) noexcept;

/// Auto: device images run on CUDA; host images run on the CPU without a device, and with one on whichever
/// backend this process has measured faster for calls like this one (same operation, sample type, channels,
/// size within a factor of two, pinned or pageable memory, CPU thread setting): the first calls of each kind
/// try each way (three consecutive calls each, the first not counted), the lower median of each one's recent
/// timings decides, and from calls 8, 16, 32 and 64 (those after settling) and every 128th call each other
/// way is re-checked for two calls. The filters whose table comes from the image's histogram (equalization,
/// Otsu and Triangle thresholds), and histograms of large pageable images, measure a third way beside the
/// two: counting on the device (with CPU threads counting part of a large image beside it) and, for the
/// filters, applying the table on the CPU. Every way gives identical results. PolicyOverrides::trace
/// (imghist/policy.hpp; IMGHIST_AUTO_TRACE=1 in the environment) writes each choice to stderr.
enum class Backend : std::uint8_t { Auto, Cpu, Cuda };
/// "auto", "cpu", "cuda".
IMGHIST_API const char* to_string(Backend b) noexcept;
/// Parses "auto" | "cpu" | "cuda"; throws Error(InvalidArgument) otherwise.
IMGHIST_API Backend parse_backend(const std::string& name);

/// False when this library was built without its CUDA backend (IMGHIST_WITH_CUDA=OFF): there are then
/// no devices, Auto means the CPU, and every CUDA request fails with Error(NoDevice).
IMGHIST_API bool built_with_cuda() noexcept;
/// Number of usable CUDA devices (0 when there is no driver, no device, or the build has no CUDA).
IMGHIST_API int cuda_device_count() noexcept;
inline bool cuda_available() noexcept { return cuda_device_count() > 0; }
/// Name of CUDA device `ordinal`, or "" when it does not exist.
IMGHIST_API std::string cuda_device_name(int ordinal = 0);

/// A finished histogram on the host. Counts are 64-bit, so accumulation cannot wrap.
struct IMGHIST_API Histogram {
    BinSpec spec{};
    int channels = 0;
    std::vector<std::uint64_t> counts;        ///< channels * bins, channel-major
    std::vector<std::uint64_t> out_of_range;  ///< one per channel
    Backend backend = Backend::Cpu;           ///< the backend that computed (the last part of) it

    int bins() const noexcept { return spec.bins; }
    const std::uint64_t* channel(int c) const noexcept { return counts.data() + static_cast<std::size_t>(c) * spec.bins; }
    std::uint64_t* channel(int c) noexcept { return counts.data() + static_cast<std::size_t>(c) * spec.bins; }
    std::uint64_t at(int c, int bin) const noexcept { return channel(c)[bin]; }
    /// Sum of the counts of channel c.
    std::uint64_t total(int c = 0) const noexcept;
    /// Zeroed histogram of the given shape.
    static Histogram zeros(const BinSpec& spec, int channels);
};

struct Options {
    Backend backend = Backend::Auto;   ///< Auto: see Backend (measured choice for host images)
    std::optional<ImageView> mask;     ///< 8-bit, 1 channel, same size; same location as the image
    /// -1: every channel. 0 .. channels - 1: that channel alone, and the result has one channel (as
    /// cv::calcHist of one channel); the CPU backend then reads no other channel's samples.
    int channel = -1;
    int device = -1;                   ///< CUDA device ordinal; -1 = the calling thread's current device
    int cpu_threads = 0;               ///< CPU worker threads; 0 = all hardware threads
    /// CUDA stream used (and waited for) by the blocking calls. nullptr: device images are read on the
    /// legacy default stream, so the call is ordered like any default-stream operation (after the caller's
    /// cudaMemcpy and earlier work on blocking streams; cudaStreamNonBlocking streams are not waited for);
    /// host images are staged on a non-blocking stream of the library's own. Multi-stream code, and code
    /// that captures CUDA graphs, should pass its stream.
    Stream stream = nullptr;
};

/// Histogram of one image, one per channel, in a single pass over the data.
IMGHIST_API
Histogram calc_hist(const ImageView& image, const BinSpec& spec = BinSpec::u8(), const Options& options = {});

/// Adds the histogram of `image` to `hist` (whose spec is used; its channel count must match: one when
/// options.channel selects a channel).
IMGHIST_API void accumulate_hist(const ImageView& image, Histogram& hist, const Options& options = {});

/// One histogram per image; sizes may differ, sample type and channel count must not.
/// On CUDA the whole batch is one kernel launch. The same mask option is not allowed here: pass
/// per-image masks with `masks` (empty = none; otherwise one per image).
IMGHIST_API
std::vector<Histogram> calc_hist_batch(const std::vector<ImageView>& images, const BinSpec& spec = BinSpec::u8(),
                                     const Options& options = {}, const std::vector<ImageView>& masks = {});

/// The planes of a YCbCr JPEG at their stored sampling, as a decoder's raw output gives them (nvJPEG's
/// NVJPEG_OUTPUT_YUV, libjpeg's raw_data_out): `y` has the image's size, `cb` and `cr` are
/// ceil(width / chroma_x) x ceil(height / chroma_y). 8-bit, one channel each; all three on the host or all on
/// the same device.
struct YCbCrPlanes {
    ImageView y, cb, cr;
    int chroma_x = 1, chroma_y = 1;  ///< chroma subsampling: 1x1 (4:4:4), 2x1 (4:2:2) or 2x2 (4:2:0)
};

/// Histograms of the RGB image that YCbCr planes decode to as libjpeg-turbo decodes a JPEG by default (and
/// so cv::imread): chroma upsampled with its "fancy" (triangular) filter and converted with its fixed-point
/// tables; channels 0, 1, 2 are R, G, B. The RGB values are counted as they are computed: no RGB image is
/// made. Equal to calc_hist of libjpeg-turbo's RGB decode of the file, bin for bin. Binning is calc_hist's for
/// 8-bit samples. Device planes run on CUDA (the whole batch in one launch, the device the planes are on or
/// options.device, synchronised on options.stream); host planes on the CPU; Options::mask and
/// Options::channel are not taken.
IMGHIST_API
std::vector<Histogram> calc_hist_ycbcr_batch(const std::vector<YCbCrPlanes>& images, const BinSpec& spec = BinSpec::u8(),
                                          const Options& options = {});

// ---------------------------------------------------------------------------------------------------------
// Device-resident, asynchronous API.

enum class CountType : std::uint8_t { U32, U64 };

/// Caller-owned device memory that receives a histogram.
struct DeviceHistogramView {
    void* counts = nullptr;               ///< channels blocks of `bins` counters of `type`
    CountType type = CountType::U32;
    std::size_t channel_stride = 0;       ///< counters between channel starts; 0 = bins
    unsigned long long* out_of_range = nullptr;  ///< optional: one counter per channel
    /// Required when accumulating into 32-bit counts: set to nonzero (never cleared by the library) if a
    /// counter would have passed 2^32-1; the counter then holds the wrapped value and must be discarded.
    unsigned int* overflow_flag = nullptr;
};

struct AsyncOptions {
    std::optional<ImageView> mask;  ///< device view, 8-bit, 1 channel, same size as the image
    bool accumulate = false;        ///< add to the existing counts instead of overwriting them
};

/// GPU histograms on one device; calls enqueue on the given stream and return immediately. One object may
/// be used from one host thread at a time. Temporary storage is the library's, one workspace per (device,
/// stream) shared by every call on that stream (histograms and filters alike), allocated on first use and
/// kept for the next call: at most 16 workspaces per device (a 17th stream makes the least recently used
/// one go, after a wait for the device), and staging copies of host images above 64 MiB are freed when the
/// blocking call that made them returns (histograms of such images stream through a kept 64 MiB ring
/// instead; release_workspaces() below frees them all).
class IMGHIST_API CudaHistogrammer {
public:
    /// device = -1: the current device. Throws Error(NoDevice) when CUDA is unavailable.
    explicit CudaHistogrammer(int device = -1);
    ~CudaHistogrammer();
    CudaHistogrammer(CudaHistogrammer&&) noexcept;
    CudaHistogrammer& operator=(CudaHistogrammer&&) noexcept;
    CudaHistogrammer(const CudaHistogrammer&) = delete;
    CudaHistogrammer& operator=(const CudaHistogrammer&) = delete;

    int device() const noexcept;

    /// Histogram of a device image into `out` (device memory), enqueued on `stream`.
    void compute(const ImageView& image, const BinSpec& spec, const DeviceHistogramView& out,
                 Stream stream = nullptr, const AsyncOptions& options = {});

    /// One launch for a whole batch of device images (same type and channels); out[i] receives image i
    /// (outputs must not overlap). masks: empty, or one device mask per image. Images of one geometry at
    /// equal distances with outputs at equal distances (a [N, H, W] tensor) need no per-image descriptors
    /// on the device.
    void compute_batch(const ImageView* images, std::size_t count, const BinSpec& spec,
                      const DeviceHistogramView* out, Stream stream = nullptr, bool accumulate = false,
                      const ImageView* masks = nullptr);

private:
    friend struct detail::HistogrammerAccess;  // the benchmark's launch-shape override (not API)
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// Frees the library's cached CUDA workspaces (device temporaries, pinned staging buffers, private
/// streams) of the histograms and the filters, after waiting for the device; workspaces in use by a call
/// on another thread at that moment are kept.
IMGHIST_API void release_workspaces();

}  // namespace imghist
