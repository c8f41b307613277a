// imghist_jobs — the image operations behind the commands, on a chosen device. Histograms come from the
// core library (libimghist); equalization tables, thresholds, CLAHE and lookup tables from the filters
// library; colour conversions from OpenCV (so luma and gray match cv::cvtColor exactly).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/codecs/codec_jpeg.hpp"
#include "pipeline/device.hpp"
#include "io/histio.hpp"
#include "io/image.hpp"

namespace cli {

/// Gray: one histogram of the luma; Channels: one per channel (gray images have one either way).
enum class HistMode { Gray, Channels };

struct HistParams {
    int bins = 256;
    bool range_set = false;
    double low = 0, high = 256;
    HistMode mode = HistMode::Channels;
    /// Bin spec for an image of this depth: the range defaults to the depth's value range.
    imghist::BinSpec spec_for(int depth) const;
};

/// Gray (8- or 16-bit, 1 channel) of an image: cv::COLOR_RGB(A)2GRAY weights; gray+alpha drops alpha.
Image to_gray(const Image& img);
HistResult image_histogram(const Image& img, const HistParams& p, const Device& dev);

enum class EqualizeMode { Luma, PerChannel };
/// Gray: plain equalization (bit-exact with cv::equalizeHist for 8-bit). Colour: the Y of Y'CbCr
/// (cv::COLOR_RGB2YCrCb) equalized, or each colour channel on its own. Alpha is kept as it is.
void equalize(Image& img, EqualizeMode mode, const Device& dev);
/// Luma equalization of a JPEG's planes: the Y plane only (its visible part decides the histogram).
void equalize_luma_planes(JpegPlanes& planes, const Device& dev);

enum class ThresholdMethod { Otsu, Triangle, Value };
struct ThresholdParams {
    ThresholdMethod method = ThresholdMethod::Otsu;
    double value = 128;
    bool invert = false;
};
/// Binary image (0 / max value) of the gray of `img`: pixel > T; returns T.
double threshold(const Image& img, const ThresholdParams& p, const Device& dev, Image& out);

struct ClaheParams {
    double clip = 2.0;
    int tiles_x = 8, tiles_y = 8;
    /// The run's memory budget (Limits::max_memory), which the tile tables must fit besides the image.
    std::uint64_t max_memory = std::uint64_t(1) << 30;
};
/// CLAHE of gray images; colour images get it on their luma (as equalize's luma mode). The tile grid is
/// refused before any work when it is finer than the image (a tile of less than one pixel) or when its
/// tables (a table of 256 or 65536 levels per tile) do not fit the memory budget.
void clahe(Image& img, const ClaheParams& p, const Device& dev);

enum class StretchMode { Luma, PerChannel };
struct StretchParams {
    double low = 2, high = 1;  ///< percent of the samples that go to black / to white
    StretchMode mode = StretchMode::Luma;
};
/// Contrast stretch (imghist::stretch_table: scikit-image's rescale_intensity between np.percentile's low and
/// 100 - high). Luma: one table from the histogram of the luma (imghist::stretch_contrast's: the Y of
/// cv::COLOR_RGB2YCrCb) for R, G and B alike; PerChannel: a table per colour channel. Alpha is kept as it is.
void stretch(Image& img, const StretchParams& p, const Device& dev);
/// Luma stretch of a JPEG's planes (the JPEG-to-JPEG path of luma mode, as equalize's): the stretch table
/// of the Y plane's histogram (its visible samples) applied to Y; Cb and Cr scaled about 128 by the table's
/// slope 255 / (hi - lo), rounded and saturated (0 when lo == hi). Applying one table to R, G and B scales
/// the chroma by that slope, so this is the RGB route's result wherever no channel clips (up to JPEG's
/// rounding); where one does, the RGB route clips it on its own and the planar route clips after decoding.
void stretch_luma_planes(JpegPlanes& planes, const StretchParams& p, const Device& dev);

/// The histograms an image is matched to: one (used for every colour channel) or one per colour channel,
/// each over every level of `depth` (256 or 65536 bins); with three, `gray` (when known) serves gray images.
struct MatchTarget {
    int depth = 8;
    std::vector<std::vector<std::uint64_t>> channels;
    std::vector<std::uint64_t> gray;
};
/// The colour channels' histograms of a reference image (alpha left out), and its gray's (cv::COLOR_RGB2GRAY).
MatchTarget match_target(const Image& reference, const Device& dev);
/// A histogram JSON of `imghist hist --format json` (bins covering every level: 256 over [0, 256) for 8-bit,
/// 65536 over [0, 65536) for 16-bit); errors name `source`.
MatchTarget match_target(const HistResult& hist, const std::string& source);
/// Histogram matching of the colour channels (imghist::match_table); alpha kept. A one-histogram target
/// applies to every channel; a gray image takes a colour target's gray histogram.
void match(Image& img, const MatchTarget& target, const Device& dev);

/// Multi-level Otsu on the gray of `img` (imghist::threshold_multiotsu): returns the thresholds and writes the
/// label image (np.digitize scaled to the full range) to `out`.
std::vector<int> threshold_multiotsu(const Image& img, int classes, const Device& dev, Image& out);

}  // namespace cli
