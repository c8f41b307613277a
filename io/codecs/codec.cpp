#include "io/codecs/codec.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "io/errors.hpp"
#include "io/limits.hpp"

namespace cli {

const char* format_name(Format f) noexcept {
    switch (f) {
        case Format::Png: return "PNG";
        case Format::Jpeg: return "JPEG";
        case Format::Bmp: return "BMP";
        case Format::Tga: return "TGA";
        case Format::Pnm: return "PNM";
        case Format::Tiff: return "TIFF";
        case Format::Webp: return "WebP";
        default: return "unknown";
    }
}

Format format_from_extension(const std::string& ext) noexcept {
    if (ext == "png") return Format::Png;
    if (ext == "jpg" || ext == "jpeg" || ext == "jpe" || ext == "jfif") return Format::Jpeg;
    if (ext == "bmp") return Format::Bmp;
    if (ext == "tga") return Format::Tga;
    if (ext == "pnm" || ext == "pgm" || ext == "ppm" || ext == "pbm") return Format::Pnm;
    if (ext == "tif" || ext == "tiff") return Format::Tiff;
    if (ext == "webp") return Format::Webp;
    return Format::Unknown;
}

Format sniff_format(const Bytes& d, const std::string& name_hint) {
    auto starts = [&](const char* sig, std::size_t n) { return d.size() >= n && std::memcmp(d.data(), sig, n) == 0; };
    if (starts("\x89PNG\r\n\x1a\n", 8)) return Format::Png;
    if (starts("\xff\xd8\xff", 3)) return Format::Jpeg;
    if (starts("BM", 2)) return Format::Bmp;
    if (starts("II*\0", 4) || starts("MM\0*", 4) || starts("II+\0", 4) || starts("MM\0+", 4)) return Format::Tiff;
    if (d.size() >= 12 && std::memcmp(d.data(), "RIFF", 4) == 0 && std::memcmp(d.data() + 8, "WEBP", 4) == 0)
        return Format::Webp;
    if (d.size() >= 3 && d[0] == 'P' && d[1] >= '1' && d[1] <= '6' &&
        (d[2] == ' ' || d[2] == '\n' || d[2] == '\r' || d[2] == '\t' || d[2] == '\v' || d[2] == '\f' || d[2] == '#'))
        return Format::Pnm;
    if (format_from_extension(extension_of(name_hint)) == Format::Tga) return Format::Tga;
    return Format::Unknown;
}

std::size_t checked_image_bytes(std::uint64_t width, std::uint64_t height, int channels, int depth,
                                const DecodeOptions& opt, const std::string& name) {
    const std::string size = std::to_string(width) + "x" + std::to_string(height);
    if (width == 0 || height == 0) fail(ErrorCode::InvalidArgument, name, "image header gives an empty size (" + size + ")");
    if (width > 0x7fffffffu || height > 0x7fffffffu)
        fail(ErrorCode::Unsupported, name, "image is " + size + ", wider or taller than the limit of 2147483647");
    // Both factors are below 2^31, so the pixel count cannot overflow; the byte count can.
    const std::uint64_t pixels = width * height;
    if (pixels > opt.limits.max_pixels)
        fail(ErrorCode::Unsupported, name,
             "image is " + size + " = " + std::to_string(pixels) + " pixels, above the limit of " +
                 std::to_string(opt.limits.max_pixels) + " (raise it with --max-pixels)");
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(pixels, static_cast<std::uint64_t>(channels) * static_cast<std::uint64_t>(depth / 8), &bytes) ||
        bytes > static_cast<std::uint64_t>(PTRDIFF_MAX))
        fail(ErrorCode::Unsupported, name,
             "image is " + size + " with " + std::to_string(channels) + " channel(s) of " + std::to_string(depth) +
                 " bits: its size in bytes does not fit in memory's address range");
    if (opt.output != Format::Unknown) check_output_size(opt.output, width, height, channels, opt.output_name);
    const std::uint64_t in_flight = in_flight_bytes(bytes, opt.input_bytes);
    MemoryBudget::check_fits(in_flight, opt.limits.max_memory, name);
    if (opt.memory) opt.memory->ensure(in_flight, name);
    return static_cast<std::size_t>(bytes);
}

void check_encoded_size(std::uint64_t min_bytes, std::uint64_t available, const std::string& name, const char* format) {
    if (min_bytes > available)
        fail(ErrorCode::InvalidArgument, name,
             std::string("truncated or corrupt ") + format + " file (the header promises an image that needs at least " +
                 std::to_string(min_bytes) + " bytes of data; the file holds " + std::to_string(available) + ")");
}

void check_output_size(Format format, std::uint64_t width, std::uint64_t height, int channels, const std::string& name) {
    const std::string size = std::to_string(width) + "x" + std::to_string(height);
    auto side_limit = [&](std::uint64_t limit) {
        if (width > limit || height > limit)
            fail(ErrorCode::Unsupported, name, std::string(format_name(format)) + " cannot hold a " + size +
                                                   " image (at most " + std::to_string(limit) +
                                                   " pixels per side; write .png or .pgm/.ppm)");
    };
    switch (format) {
        case Format::Jpeg: side_limit(65500); return;  // libjpeg's JPEG_MAX_DIMENSION
        case Format::Tga: side_limit(65535); return;   // 16-bit header fields
        case Format::Webp: side_limit(16383); return;  // 14-bit header fields
        case Format::Bmp: {
            // The writer stores 24-bit (32-bit with alpha) pixels and computes the file size in an int.
            const std::uint64_t row = (width * (channels == 4 ? 4u : 3u) + 3) / 4 * 4;
            if (width > 0x7fffffffu || height > 0x7fffffffu || row * height > 0x7fff0000u)
                fail(ErrorCode::Unsupported, name, "BMP cannot hold a " + size + " image (2 GiB of pixel data at most; write .png)");
            return;
        }
        default: return;
    }
}

namespace {

[[noreturn]] void fail_unrecognised(const std::string& name) {
    const Format claimed = format_from_extension(extension_of(name));
    if (claimed != Format::Unknown)
        fail(ErrorCode::InvalidArgument, name,
             std::string("not a ") + format_name(claimed) + " file (its content has no " + format_name(claimed) +
                 " signature; unrecognised image format)");
    fail(ErrorCode::InvalidArgument, name, "unrecognised image format (imghist reads PNG, JPEG, TIFF, WebP, BMP, TGA, PNM)");
}

/// The most bytes sniff_format looks at.
constexpr std::size_t kSignatureBytes = 12;

}  // namespace

Bytes read_image_file(const std::string& path, const Limits& limits) {
    const std::string name = display_name(path);
    return read_file(path, limits.max_input, kSignatureBytes, [&](const std::uint8_t* head, std::size_t n) {
        if (n == 0) fail(ErrorCode::InvalidArgument, name, "empty file");
        if (sniff_format(Bytes(head, head + n), path) == Format::Unknown) fail_unrecognised(name);
    });
}

Image decode_image(const Bytes& data, const std::string& name, const DecodeOptions& options) {
    if (data.empty()) fail(ErrorCode::InvalidArgument, name, "empty file");
    DecodeOptions opt = options;
    opt.input_bytes = data.size();
    Format f = sniff_format(data, name);
    switch (f) {
        case Format::Png: return decode_png(data, name, opt);
        case Format::Jpeg: return decode_jpeg(data, name, opt);
        case Format::Pnm: return decode_pnm(data, name, opt);
        case Format::Tiff: return decode_tiff(data, name, opt);
        case Format::Webp: return decode_webp(data, name, opt);
        case Format::Bmp:
        case Format::Tga: return decode_stb(data, f, name, opt);
        default: break;
    }
    fail_unrecognised(name);
}

void check_encodable(Format format, int depth, int channels, const std::string& name) {
    switch (format) {
        case Format::Png: return;
        case Format::Tiff: return;
        case Format::Jpeg:
        case Format::Webp:
            if (depth != 8)
                fail(ErrorCode::Unsupported, name, std::string(format_name(format)) +
                     " cannot hold 16-bit samples (convert with --depth 8, or write .png, .tif or .pgm/.ppm)");
            if (format == Format::Jpeg && (channels == 2 || channels == 4))
                fail(ErrorCode::Unsupported, name,
                     "JPEG cannot hold an alpha channel (composite it with --flatten, or write .png, .tif, .webp or .tga)");
            return;
        case Format::Bmp:
        case Format::Tga:
            if (depth != 8)
                fail(ErrorCode::Unsupported, name, std::string(format_name(format)) +
                                                       " output is 8-bit only (write .png or .pgm/.ppm for 16-bit)");
            if (format == Format::Bmp && channels == 2)
                fail(ErrorCode::Unsupported, name, "BMP cannot hold gray+alpha (write .png or .tga)");
            return;
        case Format::Pnm:
            if (channels == 2 || channels == 4)
                fail(ErrorCode::Unsupported, name, "PNM cannot hold an alpha channel (write .png)");
            return;
        default:
            fail(ErrorCode::InvalidArgument, name,
                 "cannot tell the output format from the extension (use .png, .jpg, .tif, .webp, .bmp, .tga, .pgm, .ppm or .pnm)");
    }
}

Bytes encode_image(const Image& img, Format format, const EncodeOptions& opt, const std::string& name) {
    check_encodable(format, img.depth(), img.channels(), name);
    check_output_size(format, static_cast<std::uint64_t>(img.width()), static_cast<std::uint64_t>(img.height()),
                      img.channels(), name);
    switch (format) {
        case Format::Png: return encode_png(img, opt);
        case Format::Jpeg: return encode_jpeg(img, opt, name);
        case Format::Pnm: return encode_pnm(img);
        case Format::Tiff: return encode_tiff(img, opt, name);
        case Format::Webp: return encode_webp(img, opt, name);
        default: return encode_stb(img, format, name);
    }
}

int lossy_input_quality(const Metadata& m) noexcept { return m.jpeg_quality > 0 ? m.jpeg_quality : m.webp_quality; }

int jpeg_quality_for(const EncodeOptions& opt, const Metadata& m) {
    if (opt.jpeg_quality > 0) return opt.jpeg_quality;
    const int input = lossy_input_quality(m);
    return input > 0 ? input : 90;
}

void write_image(const std::string& path, const Image& img, Format format, const EncodeOptions& opt) {
    Bytes bytes = encode_image(img, format, opt, display_name(path, true));
    write_file_atomic(path, bytes.data(), bytes.size());
}

namespace {

// PNM header fields: whitespace-separated decimal numbers, '#' comments up to the end of the line.
struct PnmReader {
    const Bytes& d;
    std::size_t pos = 2;
    const std::string& name;
    void skip_space() {
        while (pos < d.size()) {
            if (d[pos] == '#') {
                while (pos < d.size() && d[pos] != '\n') ++pos;
            } else if (std::isspace(d[pos])) {
                ++pos;
            } else {
                break;
            }
        }
    }
    std::uint64_t number(const char* what) {
        skip_space();
        if (pos >= d.size() || !std::isdigit(d[pos]))
            fail(ErrorCode::InvalidArgument, name, std::string("truncated or corrupt PNM file (expected the ") + what + ")");
        std::uint64_t v = 0;
        while (pos < d.size() && std::isdigit(d[pos])) {
            v = v * 10 + static_cast<std::uint64_t>(d[pos++] - '0');
            if (v > 0xffffffffull) fail(ErrorCode::InvalidArgument, name, std::string("corrupt PNM file (") + what + " too large)");
        }
        return v;
    }
};

}  // namespace

Image decode_pnm(const Bytes& d, const std::string& name, const DecodeOptions& opt) {
    const char kind = static_cast<char>(d[1]);
    const bool bitmap = kind == '1' || kind == '4', ascii = kind <= '3';
    const int channels = (kind == '3' || kind == '6') ? 3 : 1;
    PnmReader r{d, 2, name};
    const std::uint64_t w = r.number("width"), h = r.number("height");
    const std::uint64_t maxval = bitmap ? 1 : r.number("maximum value");
    if (maxval == 0 || maxval > 65535)
        fail(ErrorCode::Unsupported, name, "unsupported sample depth (PNM maximum value " + std::to_string(maxval) + ")");
    const int depth = maxval > 255 ? 16 : 8;
    checked_image_bytes(w, h, channels, depth, opt, name);
    const std::uint64_t samples = w * h * static_cast<std::uint64_t>(channels);  // no overflow: checked above
    auto truncated = [&] { fail(ErrorCode::InvalidArgument, name, "truncated or corrupt PNM file (fewer samples than the header promises)"); };
    auto above_maxval = [&] { fail(ErrorCode::InvalidArgument, name, "corrupt PNM file (a sample above the maximum value " + std::to_string(maxval) + ")"); };
    // Binary data starts after exactly one whitespace byte.
    if (!ascii) {
        if (r.pos >= d.size() || !std::isspace(d[r.pos])) truncated();
        ++r.pos;
    }
    const std::uint64_t avail = d.size() - std::min<std::size_t>(r.pos, d.size());
    // The least data that can hold the claimed image: P1 one character per pixel, P2/P3 a digit and a
    // separator per sample, P4 packed rows, P5/P6 one or two bytes per sample.
    const std::uint64_t need = kind == '1' ? samples
                               : ascii     ? 2 * samples - 1
                               : bitmap    ? (w + 7) / 8 * h
                                           : samples * (maxval > 255 ? 2 : 1);
    check_encoded_size(need, avail, name, "PNM");
    Image img(static_cast<int>(w), static_cast<int>(h), channels, depth);
    // Maximum values other than 255 and 65535 are stretched to the output's full range as PIL does:
    // round(v / maxval * out_max), rounding half to even.
    const std::uint32_t out_max = depth == 16 ? 65535 : 255;
    std::vector<std::uint16_t> scale;
    if (!bitmap && maxval != out_max) {
        scale.resize(maxval + 1);
        for (std::uint32_t v = 0; v <= maxval; ++v)
            scale[v] = static_cast<std::uint16_t>(std::nearbyint(static_cast<double>(v) / static_cast<double>(maxval) * out_max));
    }
    auto store = [&](std::size_t i, std::uint32_t v) {
        if (!scale.empty()) v = scale[v];
        if (depth == 16) reinterpret_cast<std::uint16_t*>(img.data())[i] = static_cast<std::uint16_t>(v);
        else img.data()[i] = static_cast<std::uint8_t>(v);
    };
    if (ascii) {
        for (std::size_t i = 0; i < samples; ++i) {
            r.skip_space();
            if (r.pos >= d.size()) truncated();
            if (bitmap) {  // P1: '0'/'1' characters, possibly without spaces; 1 is black
                const std::uint8_t c = d[r.pos++];
                if (c != '0' && c != '1')
                    fail(ErrorCode::InvalidArgument, name, "corrupt PBM file (a character other than 0, 1, space or a comment in the pixel data)");
                img.data()[i] = c == '1' ? 0 : 255;
            } else {
                const std::uint64_t v = r.number("sample");
                if (v > maxval) above_maxval();
                store(i, static_cast<std::uint32_t>(v));
            }
        }
        return img;
    }
    const std::uint8_t* src = d.data() + r.pos;
    if (bitmap) {  // P4: rows of packed bits, most significant first, 1 is black
        const std::size_t row = (w + 7) / 8;
        for (std::size_t y = 0; y < h; ++y)
            for (std::size_t x = 0; x < w; ++x)
                img.row(static_cast<int>(y))[x] = (src[y * row + x / 8] >> (7 - x % 8)) & 1 ? 0 : 255;
        return img;
    }
    if (depth == 8) {
        if (scale.empty()) {
            std::memcpy(img.data(), src, img.bytes());
        } else {
            for (std::size_t i = 0; i < samples; ++i) {
                if (src[i] > maxval) above_maxval();
                store(i, src[i]);
            }
        }
    } else {  // big-endian in the file
        for (std::size_t i = 0; i < samples; ++i) {
            const std::uint32_t v = (std::uint32_t(src[2 * i]) << 8) | src[2 * i + 1];
            if (v > maxval) above_maxval();
            store(i, v);
        }
    }
    return img;
}

Bytes encode_pnm(const Image& img) {
    std::string header = std::string(img.channels() == 1 ? "P5" : "P6") + "\n" + std::to_string(img.width()) + " " +
                         std::to_string(img.height()) + "\n" + (img.depth() == 16 ? "65535" : "255") + "\n";
    Bytes out(header.size() + img.bytes());
    std::memcpy(out.data(), header.data(), header.size());
    std::uint8_t* dst = out.data() + header.size();
    if (img.depth() == 8) {
        std::memcpy(dst, img.data(), img.bytes());
    } else {  // PNM stores 16-bit samples big-endian
        const std::uint8_t* src = img.data();
        for (std::size_t i = 0; i < img.bytes(); i += 2) {
            dst[i] = src[i + 1];
            dst[i + 1] = src[i];
        }
    }
    return out;
}

}  // namespace cli
