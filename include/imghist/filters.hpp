// imghist filters — histogram equalization, thresholding (fixed, Otsu, Triangle) and CLAHE on imghist
// image views, on the CPU (threaded) or on a CUDA device, with answers identical to OpenCV's.
//
// Capability table (both backends give the same bits; "=" means identical to the OpenCV function):
//
//   operation            | sample type | channels | OpenCV reference                        | exactness
//   ---------------------+-------------+----------+-----------------------------------------+----------
//   equalize_hist        | u8          | 1        | cv::equalizeHist                        | =
//   equalize_hist_color  | u8          | 3, 4     | Luma: cvtColor(BGR2YCrCb), equalize Y,  | =
//                        |             |          |       cvtColor(YCrCb2BGR); alpha copied |
//                        |             |          | PerChannel: split, equalizeHist, merge  | =
//   threshold            | u8, u16, f32| 1, 3, 4  | cv::threshold (5 types)                 | =
//   threshold + Otsu     | u8, u16     | 1        | cv::threshold(... | THRESH_OTSU)        | =
//   threshold + Triangle | u8          | 1        | cv::threshold(... | THRESH_TRIANGLE)    | =
//   Clahe::apply         | u8, u16     | 1        | cv::createCLAHE(clip, grid)->apply      | see Clahe
//
// The operations that follow scikit-image (0.19) instead of OpenCV, which has none of them; their rules are
// stated where they are declared, below "contrast stretch, histogram matching, multi-level Otsu":
//
//   operation            | sample type | channels | scikit-image reference                  | exactness
//   ---------------------+-------------+----------+-----------------------------------------+----------
//   stretch_contrast     | u8, u16     | 1..4     | exposure.rescale_intensity(img, in_range| = (u8, u16)
//                        |             |          |   = np.percentile(img, (low, 100-high)))|
//                        |             |          | PerChannel: per channel; Luma: see below|
//   match_histograms     | u8, u16     | 1..4     | exposure.match_histograms (per channel) | rounded, see
//   match_to_histogram   | u8, u16     | 1..4     |   (a given target histogram)            | match_table
//   threshold_multiotsu  | u8, u16*    | 1        | filters.threshold_multiotsu(img, k) and | = thresholds
//                        |             |          |   np.digitize, scaled to the full range |
//   apply_table          | u8, u16     | 1..4     | (a table per channel)                   |
//   (* u16: when the image spans at most 4096 levels, max - min < 4096)
//
// Views: host or device (the location of src and dst must agree), any pitch, any ROI offset; src and dst
// must have the same size and type; dst may be src itself (in-place) but must not partially overlap it.
// dst views describe writable memory even though ImageView::data is a const pointer.
//
// Backends and asynchrony:
//   - Device views always run on CUDA. The work is enqueued on FilterOptions::stream and the call returns
//     without waiting (histogram -> table -> apply all stay on the device; nothing is copied to the host
//     and no stream or device is synchronised). Exception: threshold() with an automatic threshold and
//     no `computed` output, which must wait for the value it returns (it waits for the image's histogram
//     only; the pass that writes dst completes in stream order); likewise threshold_multiotsu, and the
//     level-table operations on u16 images (see their section below).
//   - Host views run on the backend chosen by FilterOptions::backend (Auto: the way measured faster for
//     calls like it, see Backend in histogram.hpp; for equalization and the Otsu and Triangle thresholds
//     one way is to count on the device, with CPU threads counting part of a large image beside it, and
//     to apply the table on the CPU).
//     On CUDA the image is streamed through pinned staging buffers in chunks, so that host copies overlap
//     the PCIe transfers (host images that are already page-locked are copied directly, without staging);
//     the call returns when dst is written. On the CPU the work is split over threads.
//   - Temporary storage lives in one workspace per (device, stream) pair, shared by the calls on that stream
//     (host views without a stream take a private one) and reused: steady-state calls allocate nothing.
//     Work enqueued on different streams never shares temporaries.
//
// Errors: imghist::Error (InvalidArgument for bad shapes or parameters, Unsupported for types a filter
// does not serve, NoDevice / Cuda / OutOfMemory from the CUDA backend).
#pragma once

#include "imghist/export.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "imghist/histogram.hpp"
#include "imghist/image.hpp"

namespace imghist {

/// A 256-entry table for 8-bit samples.
using Lut8 = std::array<std::uint8_t, 256>;

// ---- tables and thresholds from host histograms (exactly OpenCV's rules) ---------------------------------

/// cv::equalizeHist's table for a 256-bin histogram. When one bin holds every count the table maps every
/// value to that bin's index (equalization of a constant image gives the image back). An empty histogram
/// gives an all-zero table.
IMGHIST_API Lut8 equalize_table(const std::uint64_t* hist256);

/// Otsu's threshold as cv::threshold(THRESH_OTSU) computes it, for bins = 256 (u8) or 65536 (u16).
/// Returns 0 for an empty histogram or when no split has both classes non-empty.
IMGHIST_API int otsu_threshold(const std::uint64_t* hist, int bins = 256);

/// The Triangle threshold as cv::threshold(THRESH_TRIANGLE) computes it (256 bins).
IMGHIST_API int triangle_threshold(const std::uint64_t* hist256);

enum class ThresholdType : std::uint8_t { Binary, BinaryInv, Trunc, ToZero, ToZeroInv };
enum class AutoThreshold : std::uint8_t { None, Otsu, Triangle };
enum class ColorEqualize : std::uint8_t { Luma, PerChannel };

/// The 8-bit output table of cv::threshold for a given threshold (after automatic selection), maxval and
/// type: lut[v] is what cv::threshold writes for the sample v.
IMGHIST_API Lut8 threshold_table(double thresh, double maxval, ThresholdType type);

struct FilterOptions {
    Backend backend = Backend::Auto;  ///< for host views; device views always use CUDA
    int device = -1;                  ///< CUDA device ordinal; -1 = the calling thread's current device
    int cpu_threads = 0;              ///< CPU worker threads; 0 = all hardware threads
    Stream stream = nullptr;          ///< CUDA stream (nullptr = legacy default stream for device views,
                                      ///< an internal stream for host views)
};

// ---- operations ------------------------------------------------------------------------------------------

/// cv::equalizeHist on an 8-bit, 1-channel image.
IMGHIST_API void equalize_hist(const ImageView& src, const ImageView& dst, const FilterOptions& options = {});

/// Equalization of an 8-bit BGR (3 channels) or BGRA (4 channels) image; see the table above.
IMGHIST_API void equalize_hist_color(const ImageView& src, const ImageView& dst, ColorEqualize mode,
                         const FilterOptions& options = {});

/// Applies one 256-entry table per channel (`luts[c]` for channel c) to an 8-bit image.
IMGHIST_API
void apply_lut(const ImageView& src, const ImageView& dst, const Lut8* luts, const FilterOptions& options = {});

/// cv::threshold. With AutoThreshold::None `thresh` is used as given; otherwise it is ignored and computed
/// from the image. Returns the threshold used, as cv::threshold does (integer-valued for u8 and u16).
/// Device views with an automatic threshold: when `computed` is non-null the computed threshold is
/// written there as an int (device memory, or pinned host memory the device can write) on the stream,
/// and the call returns NaN at once (histogram, level and pass stay on the device). When it is null the
/// call returns the value: the histogram is counted on the stream and comes to the host (the call waits
/// for it alone), the level is computed on the host, and the pass that writes dst is enqueued on the
/// stream without waiting — synchronise the stream (or order later work on it) before reading dst.
IMGHIST_API
double threshold(const ImageView& src, const ImageView& dst, double thresh, double maxval, ThresholdType type,
                 AutoThreshold automatic = AutoThreshold::None, const FilterOptions& options = {},
                 int* computed = nullptr);

/// Contrast-limited adaptive histogram equalization, as cv::CLAHE, for u8 and u16 1-channel images.
/// Tile histograms, clipping, redistribution and tables are computed exactly as OpenCV does (including its
/// BORDER_REFLECT_101 padding when the image is not a multiple of the grid); the bilinear interpolation is
/// OpenCV's float formula, evaluated without FMA contraction, so outputs match cv::CLAHE on the vast
/// majority of pixels and are never more than 1 grey level away.
class IMGHIST_API Clahe {
public:
    explicit Clahe(double clip_limit = 40.0, int tiles_x = 8, int tiles_y = 8);
    ~Clahe();
    Clahe(Clahe&&) noexcept;
    Clahe& operator=(Clahe&&) noexcept;

    void set_clip_limit(double clip_limit) noexcept { clip_limit_ = clip_limit; }
    double clip_limit() const noexcept { return clip_limit_; }
    /// Throws Error(InvalidArgument) unless both counts are positive.
    void set_tiles(int tiles_x, int tiles_y);
    int tiles_x() const noexcept { return tiles_x_; }
    int tiles_y() const noexcept { return tiles_y_; }

    /// src and dst: same size, u8 or u16, 1 channel; dst may be src itself but must not partially overlap it.
    /// When src is a ROI of a larger image, `extra_right` / `extra_bottom` say how many pixels of that image
    /// lie beyond its right / bottom edges (readable at src's pitch). cv::CLAHE on a cv::Mat ROI pads the
    /// tile grid with those pixels before reflecting (cv::copyMakeBorder without BORDER_ISOLATED); passing
    /// them reproduces that. With 0 (the default) the ROI is treated as an isolated image.
    void apply(const ImageView& src, const ImageView& dst, const FilterOptions& options = {}, int extra_right = 0,
               int extra_bottom = 0) const;

private:
    double clip_limit_;
    int tiles_x_, tiles_y_;
};

// ---- contrast stretch, histogram matching, multi-level Otsu (scikit-image's rules) -------------------------
//
// These operations take a histogram over every level of the sample type (256 bins for u8, 65536 for u16),
// compute a table or thresholds from it, then run one table pass over the image. Host views: the histogram
// is taken on the chosen backend, the table computed on the host, and the table pass runs on the backend.
// Luma histograms of host views are always taken on the CPU.
// Device views of u8 samples (fewer than 2^32 pixels): everything stays on the device — one launch that
// counts, derives the tables and applies them (images up to PolicyOverrides::one_launch_max_bytes, 4 MiB
// unless overridden), or the histogram kernel, then one
// apply kernel whose blocks derive the tables from the counts — and stretch_contrast,
// match_histograms (device reference) and match_to_histogram return without waiting. threshold_multiotsu
// runs the threshold search on the device too and waits once, for the search that yields the thresholds
// it returns (the label pass behind it completes in stream order). Device views of u16 samples: the
// histogram is copied to the host (one wait on the stream), the table computed there and the table pass
// enqueued without waiting.

/// A table over every level of a sample type: 256 entries (u8) or 65536 (u16); entry v is the output level
/// for the input level v.
using LevelTable = std::vector<std::uint16_t>;

/// The `percent` percentile (0..100) of the samples counted in `hist` (`bins` levels), by NumPy's default
/// rule (np.percentile, method "linear"): with n samples sorted ascending as x[0..n-1], q = percent / 100
/// and h = (n - 1) * q, both in double precision, the result is x[n-1] when h >= n - 1; otherwise, with
/// i = floor(h), g = h - i, a = x[i] and d = x[i+1] - a, it is a + d * g when g < 0.5 and x[i+1] - d * (1 - g)
/// when g >= 0.5 (NumPy's two-sided form of the same interpolation). x[k] is read from the cumulative
/// counts: the smallest level whose cumulative count exceeds k. Throws InvalidArgument for an empty
/// histogram or a percent outside [0, 100].
IMGHIST_API double histogram_percentile(const std::uint64_t* hist, int bins, double percent);

/// The contrast-stretch table of skimage.exposure.rescale_intensity(img, in_range=(lo, hi)) with
/// lo = histogram_percentile(hist, low_percent) and hi = histogram_percentile(hist, 100 - high_percent)
/// (100 - high_percent computed in double precision), out_range the full range [0, bins - 1]:
///   lo != hi:  table[v] = trunc((min(max(v, lo), hi) - lo) / (hi - lo) * (bins - 1))   (double precision,
///              that order of operations; trunc is NumPy's conversion back to the integer type)
///   lo == hi:  table[v] = trunc(lo)
/// `low_percent` of the samples (at most, as np.percentile places it) become 0, `high_percent` become the
/// maximum. ImageMagick's -normalize is 2 / 1, -auto-level 0 / 0. Both percents in [0, 100], sum <= 100.
IMGHIST_API LevelTable stretch_table(const std::uint64_t* hist, int bins, double low_percent, double high_percent);

/// The histogram-matching table of skimage.exposure.match_histograms for one channel, rounded:
/// with n = the source's total count and m = the target's, the source quantile of level v is
/// cumsum(source)[v] / n, the target's quantiles are cumsum(target)[u] / m at the levels u the target holds
/// (non-zero bins), and table[v] = round_half_even(np.interp(source quantile, target quantiles, those
/// levels)) — np.interp's arithmetic exactly: below / at the first point its level, otherwise, for the last
/// point xp[j] <= x, the level fp[j] when x == xp[j], else slope * (x - xp[j]) + fp[j] with
/// slope = (fp[j+1] - fp[j]) / (xp[j+1] - xp[j]) (double precision, no fused multiply-add).
/// scikit-image returns the unrounded value for one channel (float64) and truncates it for several
/// (uint8 / uint16 output array); this table is within 0.5 of the former and 1 of the latter.
/// Throws InvalidArgument when either histogram is empty.
IMGHIST_API LevelTable match_table(const std::uint64_t* source_hist, const std::uint64_t* target_hist, int bins);

/// The thresholds of skimage.filters.threshold_multiotsu(image, classes) for the image whose histogram is
/// `hist` (`bins` = 256, or 65536 when the image spans at most 4096 levels), ascending, `classes` - 1 of them
/// (classes 2..5). Same answer, bit for bit: scikit-image works on the histogram trimmed to [min, max]
/// (L bins), probabilities p = float32(count / total), cumulative float32 moments P[i] = P[i-1] + p[i] and
/// S[i] = S[i-1] + i * p[i] with P[0] = S[0] = p[0], class variances H(i, j) = (S' * S') / P' (float32; S', P'
/// the differences over [i, j]; 0 when P' <= 0; H(0, 0) = 0) and picks, over all threshold indices
/// t0 < ... < t(k-2) <= L - 2 in lexicographic order, the first maximum of the float32 sum
/// ((H(0, t0) + H(t(k-2) + 1, L-1)) + H(t0 + 1, t1)) + ...; thresholds are min + t. An image with exactly
/// `classes` levels gets its lowest classes - 1 levels; fewer levels throw InvalidArgument, as skimage's
/// ValueError. The search is not exhaustive but gives the exhaustive search's answer: a dynamic program over
/// float32 sums bounds the best completion of every prefix (prefixes summed in double precision), the
/// combination it finds gives a lower bound of the maximum, and only prefixes whose bound, widened by a
/// relative 1e-6 (more than float32 rounding of the sums can add), reaches that lower bound are walked, in
/// skimage's order and arithmetic; everything skipped is provably below the maximum (multiotsu.cpp states
/// the argument).
IMGHIST_API std::vector<int> multiotsu_thresholds(const std::uint64_t* hist, int bins, int classes);

/// The same search on given float32 probabilities, as scikit-image runs it on threshold_multiotsu's `prob`
/// (which need not sum to 1: with hist= it is the histogram as given): `levels` entries (at most 4096),
/// no trimming; returns the classes - 1 threshold indices into `probabilities`, ascending.
IMGHIST_API std::vector<int> multiotsu_threshold_indices(const float* probabilities, int levels, int classes);

/// The label table of np.digitize(v, thresholds) — the number of thresholds <= v — scaled to the full
/// range: table[v] = (label * (bins - 1) + (k - 1) / 2) / (k - 1) in integers (k = thresholds + 1 classes;
/// 3 classes: 0, 128, 255; 4: 0, 85, 170, 255; 5: 0, 64, 128, 191, 255 for u8).
IMGHIST_API LevelTable multiotsu_label_table(const std::vector<int>& thresholds, int bins);

/// Applies `tables[c]` to channel c of a u8 or u16 image (tables of 256 or 65536 entries).
IMGHIST_API void apply_table(const ImageView& src, const ImageView& dst, const LevelTable* tables,
                 const FilterOptions& options = {});

enum class StretchMode : std::uint8_t { Luma, PerChannel };

/// Contrast stretch by percentiles (stretch_table). PerChannel: one histogram and table per channel.
/// Luma (3 or 4 channels, BGR order): the percentiles come from the histogram of the luma
/// Y = (1868 B + 9617 G + 4899 R + 8192) >> 14 (the Y of cv::cvtColor(BGR2YCrCb) for 8-bit samples, as in
/// equalize_hist_color; 16-bit samples use the same integers) and the one table is
/// applied to B, G and R alike (hue is kept, as ImageMagick's channel-synchronised -contrast-stretch);
/// alpha is copied. 1- and 2-channel images ignore the mode (every channel on its own).
IMGHIST_API void stretch_contrast(const ImageView& src, const ImageView& dst, double low_percent, double high_percent,
                      StretchMode mode = StretchMode::Luma, const FilterOptions& options = {});

/// Histogram matching (match_table), channel c of src against channel c of reference; reference has the
/// same sample type and channel count as src and any size (it may live on the host or the device).
IMGHIST_API void match_histograms(const ImageView& src, const ImageView& reference, const ImageView& dst,
                      const FilterOptions& options = {});

/// Histogram matching against given target histograms: `target` holds 256 (u8) or 65536 (u16) bins and
/// either one channel (used for every channel of src) or src.channels channels. u8 device views: the
/// target's interpolation points are kept on the device per stream, so a call with the same target as the
/// previous one on its stream (normalising a batch to one reference) launches without them.
IMGHIST_API void match_to_histogram(const ImageView& src, const ImageView& dst, const Histogram& target,
                     const FilterOptions& options = {});

/// Multi-level Otsu of a 1-channel u8 / u16 image: returns multiotsu_thresholds() and writes the label
/// image (multiotsu_label_table) to dst. Device views: the call waits for the thresholds (u8: searched on
/// the device, the label pass already enqueued behind the search; u16: searched on the host after the
/// histogram's copy, the label pass enqueued afterwards).
IMGHIST_API std::vector<int> threshold_multiotsu(const ImageView& src, const ImageView& dst, int classes = 3,
                                     const FilterOptions& options = {});

}  // namespace imghist
