#include "commands/ops.hpp"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "io/errors.hpp"
#include "imghist/filters.hpp"
#include "imghist/opencv.hpp"
#include "io/limits.hpp"

namespace cli {

imghist::BinSpec HistParams::spec_for(int depth) const {
    if (range_set) return imghist::BinSpec::even(bins, low, high);
    return imghist::BinSpec::full(depth == 16 ? imghist::SampleType::U16 : imghist::SampleType::U8, bins);
}

namespace {
cv::Mat mat_of(const Image& img) { return imghist::as_mat(img.view()); }
}  // namespace

Image to_gray(const Image& img) {
    if (img.channels() == 1) {
        Image out(img.width(), img.height(), 1, img.depth());
        std::memcpy(out.data(), img.data(), img.bytes());
        return out;
    }
    Image out(img.width(), img.height(), 1, img.depth());
    cv::Mat dst = mat_of(out);
    if (img.channels() == 2) {
        cv::extractChannel(mat_of(img), dst, 0);
    } else {
        cv::cvtColor(mat_of(img), dst, img.channels() == 3 ? cv::COLOR_RGB2GRAY : cv::COLOR_RGBA2GRAY);
    }
    return out;
}

HistResult image_histogram(const Image& img, const HistParams& p, const Device& dev) {
    const imghist::BinSpec spec = p.spec_for(img.depth());
    HistResult r;
    if (p.mode == HistMode::Gray && img.channels() > 1) {
        Image g = to_gray(img);
        r = HistResult::from(imghist::calc_hist(g.view(), spec, dev.options()), {"gray"});
    } else {
        std::vector<std::string> names;
        for (int c = 0; c < img.channels(); ++c) names.push_back(channel_name(img.channels(), c));
        r = HistResult::from(imghist::calc_hist(img.view(), spec, dev.options()), names);
    }
    r.width = img.width();
    r.height = img.height();
    r.dtype = img.depth() == 16 ? "u16" : "u8";
    return r;
}

namespace {

imghist::FilterOptions filter_options(const Device& dev) {
    imghist::FilterOptions o;
    o.backend = dev.backend;
    o.device = dev.ordinal;
    o.cpu_threads = dev.cpu_threads;
    return o;
}

[[noreturn]] void unsupported_depth(const char* what) {
    throw Error(ErrorCode::Unsupported, std::string("unsupported sample depth: ") + what);
}

// RGB(A) <-> BGR(A) in place: the filters library follows OpenCV's BGR order, our images are RGB.
void swap_red_blue(Image& img) {
    cv::Mat m = mat_of(img);
    cv::cvtColor(m, m, img.channels() == 3 ? cv::COLOR_RGB2BGR : cv::COLOR_RGBA2BGRA);
}

// 16-bit equalization (OpenCV has none): cv::equalizeHist's rule with 65536 levels — the first non-empty
// level maps to 0, the others to round(cumulative count after it * 65535 / (total - its count)).
/// 16-bit equalization of the first `n` channels of a 16-bit image, in place: one histogram pass over all
/// channels, then each channel through its own table.
void equalize16(Image& img, int n, const Device& dev) {
    const imghist::Histogram h =
        imghist::calc_hist(img.view(), imghist::BinSpec::full(imghist::SampleType::U16, 65536), dev.options());
    auto* samples = reinterpret_cast<std::uint16_t*>(img.data());
    const std::size_t stride = static_cast<std::size_t>(img.channels()), pixels = img.pixels();
    std::vector<std::uint16_t> lut(65536);
    for (int ch = 0; ch < n; ++ch) {
        const std::uint64_t* c = h.channel(ch);
        const std::uint64_t total = h.total(ch);
        int i0 = 0;
        while (i0 < 65535 && c[i0] == 0) ++i0;
        std::fill(lut.begin(), lut.end(), static_cast<std::uint16_t>(i0));
        if (c[i0] != total) {
            const double scale = 65535.0 / static_cast<double>(total - c[i0]);
            std::uint64_t sum = 0;
            lut[static_cast<std::size_t>(i0)] = 0;
            for (int i = i0 + 1; i < 65536; ++i) {
                sum += c[i];
                double v = std::nearbyint(static_cast<double>(sum) * scale);
                lut[static_cast<std::size_t>(i)] = static_cast<std::uint16_t>(v > 65535 ? 65535 : v);
            }
        }
        std::uint16_t* plane = samples + ch;
        for (std::size_t i = 0; i < pixels; ++i) plane[i * stride] = lut[plane[i * stride]];
    }
}

// Y'CbCr round trip for luma operations on colour images (cv::COLOR_RGB2YCrCb; alpha kept aside).
template <class Fn>
void on_luma(Image& img, Fn&& fn) {
    cv::Mat m = mat_of(img);
    cv::Mat rgb = m, alpha;
    if (img.channels() == 4) {
        cv::extractChannel(m, alpha, 3);
        cv::cvtColor(m, rgb, cv::COLOR_RGBA2RGB);
    }
    cv::Mat ycc;
    cv::cvtColor(rgb, ycc, cv::COLOR_RGB2YCrCb);
    cv::Mat y;
    cv::extractChannel(ycc, y, 0);
    fn(y);
    cv::insertChannel(y, ycc, 0);
    if (img.channels() == 4) {
        cv::Mat out3;
        cv::cvtColor(ycc, out3, cv::COLOR_YCrCb2RGB);
        cv::Mat parts[] = {out3, alpha};
        int from_to[] = {0, 0, 1, 1, 2, 2, 3, 3};
        cv::mixChannels(parts, 2, &m, 1, from_to, 4);
    } else {
        cv::cvtColor(ycc, m, cv::COLOR_YCrCb2RGB);
    }
}

}  // namespace

void equalize(Image& img, EqualizeMode mode, const Device& dev) {
    const imghist::FilterOptions fo = filter_options(dev);
    if (img.depth() == 16) {
        // gray, each colour channel (per-channel), or the luma of colour
        if (img.channels() <= 2) {
            equalize16(img, 1, dev);
        } else if (mode == EqualizeMode::PerChannel) {
            equalize16(img, 3, dev);
        } else {
            on_luma(img, [&](cv::Mat& y) {
                Image yi(y.cols, y.rows, 1, 16);
                std::memcpy(yi.data(), y.data, yi.bytes());
                equalize16(yi, 1, dev);
                std::memcpy(y.data, yi.data(), yi.bytes());
            });
        }
        return;
    }
    switch (img.channels()) {
        case 1: imghist::equalize_hist(img.view(), img.view(), fo); return;
        case 2: {  // gray + alpha: the gray only
            cv::Mat g;
            cv::extractChannel(mat_of(img), g, 0);
            imghist::equalize_hist(imghist::view_of(g), imghist::view_of(g), fo);
            cv::Mat m = mat_of(img);
            cv::insertChannel(g, m, 0);
            return;
        }
        default:
            if (mode == EqualizeMode::PerChannel) {
                // One table per colour channel, the identity for alpha: one histogram pass, one apply pass.
                imghist::Options o = dev.options();
                imghist::Histogram h = imghist::calc_hist(img.view(), imghist::BinSpec::u8(), o);
                imghist::Lut8 luts[4];
                for (int c = 0; c < img.channels(); ++c) {
                    if (c < 3) {
                        luts[c] = imghist::equalize_table(h.channel(c));
                    } else {
                        for (int v = 0; v < 256; ++v) luts[c][static_cast<std::size_t>(v)] = static_cast<std::uint8_t>(v);
                    }
                }
                imghist::apply_lut(img.view(), img.view(), luts, fo);
                return;
            }
            swap_red_blue(img);
            imghist::equalize_hist_color(img.view(), img.view(), imghist::ColorEqualize::Luma, fo);
            swap_red_blue(img);
            return;
    }
}

void equalize_luma_planes(JpegPlanes& planes, const Device& dev) {
    JpegPlane& y = planes.planes.at(0);
    imghist::ImageView full = imghist::ImageView::host(y.data.data(), y.stride, y.rows, imghist::SampleType::U8, 1,
                                                       static_cast<std::size_t>(y.stride));
    const imghist::Options o = dev.options();
    // The histogram covers the visible samples only; the table then applies to the whole padded plane.
    imghist::Histogram h = imghist::calc_hist(full.roi(0, 0, y.width, y.height), imghist::BinSpec::u8(), o);
    imghist::Lut8 lut = imghist::equalize_table(h.channel(0));
    imghist::apply_lut(full, full, &lut, filter_options(dev));
}

double threshold(const Image& img, const ThresholdParams& p, const Device& dev, Image& out) {
    out = to_gray(img);
    const double maxval = img.depth() == 16 ? 65535.0 : 255.0;
    imghist::AutoThreshold a = p.method == ThresholdMethod::Otsu       ? imghist::AutoThreshold::Otsu
                               : p.method == ThresholdMethod::Triangle ? imghist::AutoThreshold::Triangle
                                                                       : imghist::AutoThreshold::None;
    if (a == imghist::AutoThreshold::Triangle && img.depth() == 16)
        unsupported_depth("the Triangle method takes 8-bit images (use --method otsu or value for 16-bit)");
    return imghist::threshold(out.view(), out.view(), p.value, maxval,
                              p.invert ? imghist::ThresholdType::BinaryInv : imghist::ThresholdType::Binary, a,
                              filter_options(dev));
}

void clahe(Image& img, const ClaheParams& p, const Device& dev) {
    const std::string grid = std::to_string(p.tiles_x) + "x" + std::to_string(p.tiles_y);
    if (p.tiles_x > img.width() || p.tiles_y > img.height())
        throw imghist::Error(imghist::ErrorCode::InvalidArgument,
                             "--tiles " + grid + " is finer than the " + std::to_string(img.width()) + "x" +
                                 std::to_string(img.height()) + " image (at most one tile per pixel: --tiles " +
                                 std::to_string(std::min(p.tiles_x, img.width())) + "x" +
                                 std::to_string(std::min(p.tiles_y, img.height())) + ")");
    const std::uint64_t tables = static_cast<std::uint64_t>(p.tiles_x) * static_cast<std::uint64_t>(p.tiles_y) *
                                 (img.depth() == 16 ? 65536 * 2 : 256);
    if (tables + in_flight_bytes(img.bytes(), 0) > p.max_memory)
        throw imghist::Error(imghist::ErrorCode::OutOfMemory,
                             "--tiles " + grid + " needs " + format_bytes(tables) + " of tile tables, more than the " +
                                 "memory budget of " + format_bytes(p.max_memory) +
                                 " leaves beside the image (use fewer tiles, or raise --max-memory)");
    imghist::Clahe c(p.clip, p.tiles_x, p.tiles_y);
    const imghist::FilterOptions fo = filter_options(dev);
    if (img.channels() == 1) {
        c.apply(img.view(), img.view(), fo);
    } else if (img.channels() == 2) {
        cv::Mat g;
        cv::extractChannel(mat_of(img), g, 0);
        c.apply(imghist::view_of(g), imghist::view_of(g), fo);
        cv::Mat m = mat_of(img);
        cv::insertChannel(g, m, 0);
    } else {
        on_luma(img, [&](cv::Mat& y) { c.apply(imghist::view_of(y), imghist::view_of(y), fo); });
    }
}

namespace {

imghist::BinSpec level_spec(int depth) {
    return depth == 16 ? imghist::BinSpec::full(imghist::SampleType::U16, 65536) : imghist::BinSpec::u8();
}

/// Colour channels of an image: gray (+ alpha) 1, RGB(A) 3.
int colour_channels(const Image& img) { return img.channels() >= 3 ? 3 : 1; }

/// Tables for the colour channels, the identity for alpha; applied in one pass.
void apply_colour_tables(Image& img, const imghist::LevelTable* colour, const Device& dev) {
    const int levels = img.depth() == 16 ? 65536 : 256;
    imghist::LevelTable tables[4];
    for (int c = 0; c < img.channels(); ++c) {
        if (c < colour_channels(img)) {
            tables[c] = colour[c];
        } else {
            tables[c].resize(static_cast<std::size_t>(levels));
            for (int v = 0; v < levels; ++v) tables[c][static_cast<std::size_t>(v)] = static_cast<std::uint16_t>(v);
        }
    }
    imghist::apply_table(img.view(), img.view(), tables, filter_options(dev));
}

}  // namespace

void stretch(Image& img, const StretchParams& p, const Device& dev) {
    const int levels = img.depth() == 16 ? 65536 : 256;
    imghist::LevelTable colour[3];
    if (p.mode == StretchMode::Luma && colour_channels(img) == 3) {
        // The library's luma (BGR order): the Y of Y'CbCr, as equalize's luma mode uses.
        swap_red_blue(img);
        imghist::stretch_contrast(img.view(), img.view(), p.low, p.high, imghist::StretchMode::Luma,
                                  filter_options(dev));
        swap_red_blue(img);
        return;
    }
    if (img.channels() == 1) {
        // Gray: the library's operation on the image itself (no copy; one histogram, one table pass).
        imghist::stretch_contrast(img.view(), img.view(), p.low, p.high, imghist::StretchMode::PerChannel,
                                  filter_options(dev));
        return;
    }
    if (colour_channels(img) == 1) {
        const Image gray = to_gray(img);
        const imghist::Histogram h = imghist::calc_hist(gray.view(), level_spec(img.depth()), dev.options());
        colour[0] = imghist::stretch_table(h.channel(0), levels, p.low, p.high);
        colour[1] = colour[2] = colour[0];
    } else {
        const imghist::Histogram h = imghist::calc_hist(img.view(), level_spec(img.depth()), dev.options());
        for (int c = 0; c < 3; ++c) colour[c] = imghist::stretch_table(h.channel(c), levels, p.low, p.high);
    }
    apply_colour_tables(img, colour, dev);
}

void stretch_luma_planes(JpegPlanes& planes, const StretchParams& p, const Device& dev) {
    JpegPlane& y = planes.planes.at(0);
    const imghist::ImageView full = imghist::ImageView::host(y.data.data(), y.stride, y.rows, imghist::SampleType::U8,
                                                             1, static_cast<std::size_t>(y.stride));
    const imghist::FilterOptions fo = filter_options(dev);
    // The histogram covers the visible samples only; the tables then apply to the whole padded planes.
    const imghist::Histogram h = imghist::calc_hist(full.roi(0, 0, y.width, y.height), imghist::BinSpec::u8(), dev.options());
    const imghist::LevelTable t = imghist::stretch_table(h.channel(0), 256, p.low, p.high);
    imghist::Lut8 lut;
    for (int v = 0; v < 256; ++v) lut[static_cast<std::size_t>(v)] = static_cast<std::uint8_t>(t[static_cast<std::size_t>(v)]);
    imghist::apply_lut(full, full, &lut, fo);
    if (!planes.ycbcr || planes.planes.size() < 3) return;
    // The same two percentiles stretch_table takes (100 - high formed the same way).
    const double lo = imghist::histogram_percentile(h.channel(0), 256, p.low);
    const double hi = imghist::histogram_percentile(h.channel(0), 256, 100.0 - p.high);
    const double slope = lo == hi ? 0.0 : 255.0 / (hi - lo);
    imghist::Lut8 chroma;
    for (int v = 0; v < 256; ++v) {
        const double c = std::nearbyint(128.0 + (v - 128) * slope);
        chroma[static_cast<std::size_t>(v)] = static_cast<std::uint8_t>(std::min(255.0, std::max(0.0, c)));
    }
    for (int k = 1; k < 3; ++k) {
        JpegPlane& c = planes.planes[static_cast<std::size_t>(k)];
        const imghist::ImageView v = imghist::ImageView::host(c.data.data(), c.stride, c.rows, imghist::SampleType::U8,
                                                              1, static_cast<std::size_t>(c.stride));
        imghist::apply_lut(v, v, &chroma, fo);
    }
}

MatchTarget match_target(const Image& reference, const Device& dev) {
    const imghist::Histogram h = imghist::calc_hist(reference.view(), level_spec(reference.depth()), dev.options());
    const int levels = h.bins();
    MatchTarget t;
    t.depth = reference.depth();
    for (int c = 0; c < colour_channels(reference); ++c) t.channels.emplace_back(h.channel(c), h.channel(c) + levels);
    if (colour_channels(reference) == 3) {
        const Image gray = to_gray(reference);
        const imghist::Histogram g = imghist::calc_hist(gray.view(), level_spec(reference.depth()), dev.options());
        t.gray.assign(g.channel(0), g.channel(0) + levels);
    }
    return t;
}

MatchTarget match_target(const HistResult& hist, const std::string& source) {
    MatchTarget t;
    if (hist.bins == 256 && hist.low == 0 && hist.high == 256) t.depth = 8;
    else if (hist.bins == 65536 && hist.low == 0 && hist.high == 65536) t.depth = 16;
    else
        throw Error(ErrorCode::InvalidArgument,
                    source + ": a target histogram needs a bin per level: 256 bins over [0, 256) (8-bit) or 65536 "
                             "over [0, 65536) (16-bit)");
    std::vector<const HistResult::Channel*> picked;
    for (const char* name : {"r", "g", "b"})
        for (const auto& ch : hist.channels)
            if (ch.name == name) picked.push_back(&ch);
    if (picked.size() != 3) {
        picked.clear();
        for (const auto& ch : hist.channels)
            if (ch.name == "gray") picked.push_back(&ch);
        if (picked.empty() && hist.channels.size() == 1) picked.push_back(&hist.channels[0]);
    }
    if (picked.empty())
        throw Error(ErrorCode::InvalidArgument, source + ": expected channels r, g, b or one gray channel");
    for (const auto* ch : picked) t.channels.push_back(ch->counts);
    for (const auto& ch : hist.channels)
        if (ch.name == "gray" && picked.size() == 3) t.gray = ch.counts;
    return t;
}

void match(Image& img, const MatchTarget& target, const Device& dev) {
    if (target.depth != img.depth())
        throw Error(ErrorCode::InvalidArgument, "the reference is " + std::to_string(target.depth) +
                                                    "-bit, the image " + std::to_string(img.depth()) + "-bit");
    const int levels = img.depth() == 16 ? 65536 : 256;
    const int n = colour_channels(img);
    const imghist::Histogram h = imghist::calc_hist(img.view(), level_spec(img.depth()), dev.options());
    imghist::LevelTable colour[3];
    if (n == 1 && target.channels.size() == 3) {
        if (target.gray.empty())
            throw Error(ErrorCode::InvalidArgument, "a gray image needs a gray reference histogram (this one has r, g, b)");
        colour[0] = imghist::match_table(h.channel(0), target.gray.data(), levels);
    } else {
        for (int c = 0; c < n; ++c) {
            const auto& tc = target.channels[target.channels.size() == 1 ? 0 : static_cast<std::size_t>(c)];
            colour[c] = imghist::match_table(h.channel(c), tc.data(), levels);
        }
    }
    apply_colour_tables(img, colour, dev);
}

std::vector<int> threshold_multiotsu(const Image& img, int classes, const Device& dev, Image& out) {
    out = to_gray(img);
    return imghist::threshold_multiotsu(out.view(), out.view(), classes, filter_options(dev));
}

}  // namespace cli
