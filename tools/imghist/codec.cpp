#include "codec.hpp"

#include <cstring>

#include "errors.hpp"

namespace cli {

const char* format_name(Format f) noexcept {
    switch (f) {
        case Format::Png: return "PNG";
        case Format::Jpeg: return "JPEG";
        case Format::Bmp: return "BMP";
        case Format::Tga: return "TGA";
        case Format::Pnm: return "PNM";
        default: return "unknown";
    }
}

Format format_from_extension(const std::string& ext) noexcept {
    if (ext == "png") return Format::Png;
    if (ext == "jpg" || ext == "jpeg" || ext == "jpe" || ext == "jfif") return Format::Jpeg;
    if (ext == "bmp") return Format::Bmp;
    if (ext == "tga") return Format::Tga;
    if (ext == "pnm" || ext == "pgm" || ext == "ppm" || ext == "pbm") return Format::Pnm;
    return Format::Unknown;
}

Format sniff_format(const Bytes& d, const std::string& name_hint) {
    auto starts = [&](const char* sig, std::size_t n) { return d.size() >= n && std::memcmp(d.data(), sig, n) == 0; };
    if (starts("\x89PNG\r\n\x1a\n", 8)) return Format::Png;
    if (starts("\xff\xd8\xff", 3)) return Format::Jpeg;
    if (starts("BM", 2)) return Format::Bmp;
    if (d.size() >= 3 && d[0] == 'P' && d[1] >= '1' && d[1] <= '6' &&
        (d[2] == ' ' || d[2] == '\n' || d[2] == '\r' || d[2] == '\t'))
        return Format::Pnm;
    if (format_from_extension(extension_of(name_hint)) == Format::Tga) return Format::Tga;
    return Format::Unknown;
}

void check_pixel_limit(std::uint64_t width, std::uint64_t height, const DecodeOptions& opt, const std::string& name) {
    if (width == 0 || height == 0) fail(ErrorCode::InvalidArgument, name, "image header gives an empty size (" +
                                                                         std::to_string(width) + "x" + std::to_string(height) + ")");
    if (width > 0x7fffffffu || height > 0x7fffffffu || width * height > opt.max_pixels)
        fail(ErrorCode::Unsupported, name,
             "image is " + std::to_string(width) + "x" + std::to_string(height) + " = " +
                 std::to_string(width * height) + " pixels, above the limit of " + std::to_string(opt.max_pixels) +
                 " (raise it with --max-pixels)");
}

Image decode_image(const Bytes& data, const std::string& name, const DecodeOptions& opt) {
    if (data.empty()) fail(ErrorCode::InvalidArgument, name, "empty file");
    Format f = sniff_format(data, name);
    switch (f) {
        case Format::Png: return decode_png(data, name, opt);
        case Format::Jpeg: return decode_jpeg(data, name, opt);
        case Format::Bmp:
        case Format::Tga:
        case Format::Pnm: return decode_stb(data, f, name, opt);
        default: break;
    }
    std::string ext = extension_of(name);
    Format claimed = format_from_extension(ext);
    if (claimed != Format::Unknown)
        fail(ErrorCode::InvalidArgument, name,
             std::string("not a ") + format_name(claimed) + " file (its content has no " + format_name(claimed) +
                 " signature; unrecognised image format)");
    fail(ErrorCode::InvalidArgument, name, "unrecognised image format (imghist reads PNG, JPEG, BMP, TGA, PNM)");
}

void check_encodable(Format format, int depth, int channels, const std::string& name) {
    switch (format) {
        case Format::Png: return;
        case Format::Jpeg:
            if (depth != 8) fail(ErrorCode::Unsupported, name, "JPEG cannot hold 16-bit samples (write .png or .pgm/.ppm)");
            if (channels == 2 || channels == 4)
                fail(ErrorCode::Unsupported, name, "JPEG cannot hold an alpha channel (write .png or .tga)");
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
                 "cannot tell the output format from the extension (use .png, .jpg, .bmp, .tga, .pgm, .ppm or .pnm)");
    }
}

Bytes encode_image(const Image& img, Format format, const EncodeOptions& opt, const std::string& name) {
    check_encodable(format, img.depth(), img.channels(), name);
    switch (format) {
        case Format::Png: return encode_png(img, opt);
        case Format::Jpeg: return encode_jpeg(img, opt, name);
        case Format::Pnm: return encode_pnm(img);
        default: return encode_stb(img, format, name);
    }
}

void write_image(const std::string& path, const Image& img, Format format, const EncodeOptions& opt) {
    Bytes bytes = encode_image(img, format, opt, display_name(path, true));
    write_file_atomic(path, bytes.data(), bytes.size());
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
