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
// Views: host or device (the location of src and dst must agree), any pitch, any ROI offset; src and dst
// must have the same size and type; dst may be src itself (in-place) but must not partially overlap it.
// dst views describe writable memory even though ImageView::data is a const pointer.
//
// Backends and asynchrony:
//   - Device views always run on CUDA. The work is enqueued on FilterOptions::stream and the call returns
//     without waiting (histogram -> table -> apply all stay on the device; nothing is copied to the host
//     and no stream or device is synchronised). Exception: threshold() with an automatic threshold and
//     no `computed` output, which must wait for the value it returns (it waits on its stream only).
//   - Host views run on the backend chosen by FilterOptions::backend (Auto: CUDA when a device exists).
//     On CUDA the image is streamed through pinned staging buffers in chunks, so that host copies overlap
//     the PCIe transfers (host images that are already page-locked are copied directly, without staging);
//     the call returns when dst is written. On the CPU the work is split over threads.
//   - Temporary storage lives in a per-thread workspace for each (device, stream) pair and is reused:
//     steady-state calls allocate nothing. Work enqueued on different streams never shares temporaries.
//
// Errors: imghist::Error (InvalidArgument for bad shapes or parameters, Unsupported for types a filter
// does not serve, NoDevice / Cuda / OutOfMemory from the CUDA backend).
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "imghist/histogram.hpp"
#include "imghist/image.hpp"

namespace imghist {

/// A 256-entry table for 8-bit samples.
using Lut8 = std::array<std::uint8_t, 256>;

// ---- tables and thresholds from host histograms (exactly OpenCV's rules) ---------------------------------

/// cv::equalizeHist's table for a 256-bin histogram. When one bin holds every count the table maps every
/// value to that bin's index (equalization of a constant image gives the image back). An empty histogram
/// gives an all-zero table.
Lut8 equalize_table(const std::uint64_t* hist256);

/// Otsu's threshold as cv::threshold(THRESH_OTSU) computes it, for bins = 256 (u8) or 65536 (u16).
/// Returns 0 for an empty histogram or when no split has both classes non-empty.
int otsu_threshold(const std::uint64_t* hist, int bins = 256);

/// The Triangle threshold as cv::threshold(THRESH_TRIANGLE) computes it (256 bins).
int triangle_threshold(const std::uint64_t* hist256);

enum class ThresholdType : std::uint8_t { Binary, BinaryInv, Trunc, ToZero, ToZeroInv };
enum class AutoThreshold : std::uint8_t { None, Otsu, Triangle };
enum class ColorEqualize : std::uint8_t { Luma, PerChannel };

/// The 8-bit output table of cv::threshold for a given threshold (after automatic selection), maxval and
/// type: lut[v] is what cv::threshold writes for the sample v.
Lut8 threshold_table(double thresh, double maxval, ThresholdType type);

struct FilterOptions {
    Backend backend = Backend::Auto;  ///< for host views; device views always use CUDA
    int device = -1;                  ///< CUDA device ordinal; -1 = the calling thread's current device
    int cpu_threads = 0;              ///< CPU worker threads; 0 = all hardware threads
    Stream stream = nullptr;          ///< CUDA stream (nullptr = legacy default stream for device views,
                                      ///< an internal stream for host views)
};

// ---- operations ------------------------------------------------------------------------------------------

/// cv::equalizeHist on an 8-bit, 1-channel image.
void equalize_hist(const ImageView& src, const ImageView& dst, const FilterOptions& options = {});

/// Equalization of an 8-bit BGR (3 channels) or BGRA (4 channels) image; see the table above.
void equalize_hist_color(const ImageView& src, const ImageView& dst, ColorEqualize mode,
                         const FilterOptions& options = {});

/// Applies one 256-entry table per channel (`luts[c]` for channel c) to an 8-bit image.
void apply_lut(const ImageView& src, const ImageView& dst, const Lut8* luts, const FilterOptions& options = {});

/// cv::threshold. With AutoThreshold::None `thresh` is used as given; otherwise it is ignored and computed
/// from the image. Returns the threshold used, as cv::threshold does (integer-valued for u8 and u16).
/// Device views with an automatic threshold: when `computed` is non-null the computed threshold is
/// written there as an int (device memory, or pinned host memory the device can write) on the stream,
/// and the call returns NaN at once; when it is null the call waits for the value on its stream.
double threshold(const ImageView& src, const ImageView& dst, double thresh, double maxval, ThresholdType type,
                 AutoThreshold automatic = AutoThreshold::None, const FilterOptions& options = {},
                 int* computed = nullptr);

/// Contrast-limited adaptive histogram equalization, as cv::CLAHE, for u8 and u16 1-channel images.
/// Tile histograms, clipping, redistribution and tables are computed exactly as OpenCV does (including its
/// BORDER_REFLECT_101 padding when the image is not a multiple of the grid); the bilinear interpolation is
/// OpenCV's float formula, evaluated without FMA contraction, so outputs match cv::CLAHE on the vast
/// majority of pixels and are never more than 1 grey level away.
class Clahe {
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

/// Frees the calling thread's cached workspaces (device temporaries, pinned staging buffers, streams).
/// Work already enqueued that uses them must have completed.
void release_filter_workspaces();

}  // namespace imghist
