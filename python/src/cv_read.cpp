// imghist._imghist — cv2.imread's answer from imghist_io's decoders.
//
// cv2.imread (OpenCV 4.6) asks each format's decoder for a depth and a channel count, and the decoders convert
// by rules of their own. Measured against cv2.imread on files of every kind (python/tests/test_io.py), these
// are the rules followed here:
//
//   format | to 8 bits (16-bit files)        | colour to gray                                       | orientation
//   -------+---------------------------------+------------------------------------------------------+-------------
//   JPEG   | -                               | the Y component, as libjpeg decodes it for gray output | unless -1/128
//   PNG    | v >> 8 (libpng's strip_16),      | libpng's rgb_to_gray, before stripping: 8-bit        | unless -1/128
//          | after the gray conversion       | (9797 R + 19234 G + 3737 B) >> 15, 16-bit the same   |
//          |                                 | + 16384 (rounded)                                    |
//   TIFF   | gray: v >> 8; colour: rounded   | after the depth: (4899 R + 9617 G + 1868 B + 8192)   | always (the
//          | v * 255 / 65535                 | >> 14 (OpenCV's own, also at 16 bits)                | decoder's own)
//   PNM    | v >> 8                          | as TIFF                                              | -
//   BMP    | -                               | as TIFF; 8-bit files with a gray palette are gray,   | -
//          |                                 | 32-bit BI_RGB files have no alpha                    |
//   WebP   | -                               | (9798 R + 19235 G + 3735 B + 16384) >> 15            | never
//   TGA    | (cv2 has no TGA reader: OpenCV's generic rules)                                         | -
//
// Gray + alpha is colour to OpenCV (its decoders expand it to BGRA): IMREAD_UNCHANGED gives BGRA,
// IMREAD_ANYCOLOR BGR. 8-bit RGBA TIFFs whose alpha is unassociated (ExtraSamples = 2, as PIL, GIMP and
// imghist write them) go through libtiff's RGBA interface in OpenCV, which premultiplies: (v * a + 127) / 255.
#include "cv_read.hpp"

#include <opencv2/imgproc.hpp>

#include <cstring>

#include "arrays.hpp"
#include "io/codecs/codec.hpp"
#include "io/codecs/codec_jpeg.hpp"
#include "io/convert.hpp"
#include "io/fileio.hpp"

namespace imghist_py {
namespace {

using cli::Format;

// cv2's flags.
constexpr int kUnchanged = -1, kColor = 1, kAnyDepth = 2, kAnyColor = 4, kIgnoreOrientation = 128;

enum class GrayRule { OpenCv, Libpng, Webp };

/// A JPEG's luma as libjpeg decodes it for a gray output: its Y plane.
cli::Image jpeg_luma(const cli::Bytes& data, const std::string& path, const cli::DecodeOptions& o) {
    const cli::JpegPlanes p = cli::decode_jpeg_planes(data, path, o);
    const cli::JpegPlane& y = p.planes.at(0);
    cli::Image img(p.width, p.height, 1, 8);
    for (int r = 0; r < p.height; ++r)
        std::memcpy(img.row(r), y.data.data() + static_cast<std::size_t>(r) * static_cast<std::size_t>(y.stride),
                    static_cast<std::size_t>(p.width));
    img.meta = p.meta;
    return img;
}

std::uint32_t le(const cli::Bytes& d, std::size_t at, int bytes) {
    std::uint32_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | d[at + static_cast<std::size_t>(i)];
    return v;
}

/// The channels OpenCV's BMP decoder gives a file the decoder here read with `channels`: 1 for an 8-bit (or
/// fewer) file whose palette is gray, 3 for a 32-bit BI_RGB file, else `channels`. (The file was decoded, so
/// its header is whole; the palette is read only where the file holds it.)
int cv_bmp_channels(const cli::Bytes& d, int channels) {
    if (d.size() < 54) return channels;
    const std::uint32_t header = le(d, 14, 4), bpp = le(d, 28, 2), compression = le(d, 30, 4);
    if (bpp == 32 && compression == 0) return 3;
    if (bpp > 8) return channels;
    std::uint32_t colours = le(d, 46, 4);
    if (colours == 0 || colours > (1u << bpp)) colours = 1u << bpp;
    if (header > d.size() - 14) return channels;
    const std::size_t at = 14 + static_cast<std::size_t>(header);
    if ((d.size() - at) / 4 < colours) return channels;
    for (std::uint32_t i = 0; i < colours; ++i) {
        const std::size_t e = at + 4 * static_cast<std::size_t>(i);
        if (d[e] != d[e + 1] || d[e] != d[e + 2]) return channels;
    }
    return 1;
}

/// Whether a TIFF's first image has unassociated alpha: its ExtraSamples tag (338) says 2. Reads the first IFD
/// only, every offset checked against the file's length (false for anything unexpected, BigTIFF included).
bool tiff_unassociated_alpha(const cli::Bytes& d) {
    if (d.size() < 8 || (d[0] != d[1]) || (d[0] != 'I' && d[0] != 'M')) return false;
    const bool big_endian = d[0] == 'M';
    const auto get = [&](std::size_t at, int bytes) {
        std::uint32_t v = 0;
        for (int i = 0; i < bytes; ++i) {
            const std::uint32_t b = d[at + static_cast<std::size_t>(big_endian ? i : bytes - 1 - i)];
            v = (v << 8) | b;
        }
        return v;
    };
    if (get(2, 2) != 42) return false;
    const std::size_t ifd = get(4, 4);
    if (ifd > d.size() - 2) return false;
    const std::size_t entries = get(ifd, 2);
    if (entries > (d.size() - ifd - 2) / 12) return false;
    for (std::size_t i = 0; i < entries; ++i) {
        const std::size_t e = ifd + 2 + 12 * i;
        if (get(e, 2) != 338 || get(e + 2, 2) != 3 || get(e + 4, 4) < 1) continue;  // ExtraSamples, SHORTs
        if (get(e + 4, 4) <= 2) return get(e + 8, 2) == 2;
        const std::size_t at = get(e + 8, 4);
        return at <= d.size() - 2 && get(at, 2) == 2;
    }
    return false;
}

/// libtiff's premultiplication of unassociated alpha (8-bit RGBA): v = (v * a + 127) / 255.
void premultiply(cli::Image& img) {
    std::uint8_t* p = img.data();
    for (std::size_t i = 0, n = img.pixels(); i < n; ++i, p += 4)
        for (int c = 0; c < 3; ++c) p[c] = static_cast<std::uint8_t>((p[c] * p[3] + 127) / 255);
}

/// 16-bit samples to 8: the high byte, or rounded (v * 255 + 32767) / 65535.
cli::Image to_8bit(const cli::Image& img, bool rounded) {
    if (rounded) return cli::to_depth8(img);
    cli::Image e(img.width(), img.height(), img.channels(), 8);
    const auto* s = reinterpret_cast<const std::uint16_t*>(img.data());
    for (std::size_t i = 0, n = img.bytes() / 2; i < n; ++i) e.data()[i] = static_cast<std::uint8_t>(s[i] >> 8);
    e.meta = img.meta;
    return e;
}

template <class T>
void gray_pixels(const cli::Image& img, GrayRule rule, T* out) {
    const auto* s = reinterpret_cast<const T*>(img.data());
    const std::size_t c = static_cast<std::size_t>(img.channels());
    for (std::size_t i = 0, n = img.pixels(); i < n; ++i, s += c) {
        const std::uint64_t r = s[0], g = s[1], b = s[2];
        std::uint64_t v;
        switch (rule) {
            case GrayRule::Libpng: v = (9797 * r + 19234 * g + 3737 * b + (sizeof(T) == 2 ? 16384 : 0)) >> 15; break;
            case GrayRule::Webp: v = (9798 * r + 19235 * g + 3735 * b + 16384) >> 15; break;
            default: v = (4899 * r + 9617 * g + 1868 * b + 8192) >> 14; break;
        }
        out[i] = static_cast<T>(v);
    }
}

/// Gray of an RGB(A) image (the first channel of gray + alpha), by `rule`, at the image's depth.
cli::Image to_gray(const cli::Image& img, GrayRule rule) {
    cli::Image g(img.width(), img.height(), 1, img.depth());
    if (img.channels() <= 2) {
        const std::size_t ss = img.sample_bytes(), step = ss * static_cast<std::size_t>(img.channels());
        for (std::size_t i = 0, n = img.pixels(); i < n; ++i) std::memcpy(g.data() + i * ss, img.data() + i * step, ss);
    } else if (img.depth() == 16) {
        gray_pixels(img, rule, reinterpret_cast<std::uint16_t*>(g.data()));
    } else {
        gray_pixels(img, rule, g.data());
    }
    g.meta = img.meta;
    return g;
}

cv::Mat mat_of(cli::Image& img) {
    return cv::Mat(img.height(), img.width(), CV_MAKETYPE(img.depth() == 16 ? CV_16U : CV_8U, img.channels()),
                   img.data(), img.row_bytes());
}

/// A gray, gray + alpha, RGB or RGBA image as `channels` (3: BGR, 4: BGRA) in cv2's order.
cli::Image to_bgr(cli::Image& img, int channels) {
    cli::Image out(img.width(), img.height(), channels, img.depth());
    cv::Mat s = mat_of(img), d = mat_of(out);
    if (img.channels() == 2) {  // B, G, R from the gray; the alpha when asked for
        const int from_to[] = {0, 0, 0, 1, 0, 2, 1, 3};
        cv::mixChannels(&s, 1, &d, 1, from_to, static_cast<std::size_t>(channels));
    } else {
        static const int to3[5] = {0, cv::COLOR_GRAY2BGR, 0, cv::COLOR_RGB2BGR, cv::COLOR_RGBA2BGR};
        static const int to4[5] = {0, cv::COLOR_GRAY2BGRA, 0, cv::COLOR_RGB2BGRA, cv::COLOR_RGBA2BGRA};
        cv::cvtColor(s, d, channels == 3 ? to3[img.channels()] : to4[img.channels()]);
    }
    return out;
}

/// The channels imread returns: `stored` (OpenCV's decoder's count: gray + alpha counts as BGRA) shaped by flags.
int cv_channels(int stored, int flags) {
    if (stored == 2) stored = 4;
    if (flags == kUnchanged) return stored;
    if (flags & kColor) return 3;
    if (flags & kAnyColor) return stored == 1 ? 1 : 3;
    return 1;
}

}  // namespace

cli::Image cv_read(const std::string& path, int flags, std::uint64_t max_pixels) {
    const bool unchanged = flags == kUnchanged;
    if (!unchanged && (flags < 0 || (flags & ~(kColor | kAnyDepth | kAnyColor | kIgnoreOrientation)) != 0))
        fail(ErrorCode::Unsupported, "unsupported flags " + std::to_string(flags) +
                                         "; supported: IMREAD_UNCHANGED, or IMREAD_GRAYSCALE / IMREAD_COLOR with "
                                         "IMREAD_ANYDEPTH, IMREAD_ANYCOLOR, IMREAD_IGNORE_ORIENTATION");
    cli::DecodeOptions o;
    o.limits.max_pixels = max_pixels;
    const cli::Bytes data = cli::read_image_file(path, o.limits);
    const Format f = cli::sniff_format(data, path);
    const bool jpeg_gray = f == Format::Jpeg && cv_channels(3, flags) == 1 && cli::jpeg_planar_ok(data);
    cli::Image img = jpeg_gray ? jpeg_luma(data, path, o) : cli::decode_image(data, path, o);
    const bool orient = f == Format::Tiff || (!unchanged && !(flags & kIgnoreOrientation) &&
                                              (f == Format::Jpeg || f == Format::Png));
    const int orientation = cli::exif_orientation(img.meta.exif);
    if (orient && orientation != 1) img = cli::apply_orientation(img, orientation);

    // A BMP of gray palette entries is gray (its R = G = B become that value); the alpha OpenCV does not read is
    // dropped by the conversion to BGR below.
    const int stored = f == Format::Bmp ? cv_bmp_channels(data, img.channels()) : img.channels();
    if (stored == 1 && img.channels() > 1) img = to_gray(img, GrayRule::OpenCv);
    const int channels = cv_channels(stored, flags);
    if (f == Format::Tiff && img.depth() == 8 && img.channels() == 4 && tiff_unassociated_alpha(data)) premultiply(img);
    const bool to8 = !unchanged && !(flags & kAnyDepth) && img.depth() == 16;
    const bool rounded = f == Format::Tiff && img.channels() >= 3;
    const GrayRule rule = f == Format::Png ? GrayRule::Libpng : f == Format::Webp ? GrayRule::Webp : GrayRule::OpenCv;
    if (channels == 1 && f == Format::Png) {  // libpng converts to gray, then strips 16 bits
        if (img.channels() > 1) img = to_gray(img, rule);
        return to8 ? to_8bit(img, false) : std::move(img);
    }
    if (to8) img = to_8bit(img, rounded);
    if (channels == 1) return img.channels() == 1 ? std::move(img) : to_gray(img, rule);
    return to_bgr(img, channels);
}

}  // namespace imghist_py
