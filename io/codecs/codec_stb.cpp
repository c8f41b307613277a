// BMP and TGA: reading through stb_image compiled here with only those two readers (so no file ever reaches
// its PNM, PSD or other readers), writing through Debian's stb_image_write.
//
// stb_image zero-fills pixels past the end of the data, so a truncated file would decode "successfully";
// the headers are therefore checked here first: uncompressed data must be all there, and an RLE TGA's packets
// are walked (without decoding) to check that they cover every pixel.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_BMP
#define STBI_ONLY_TGA
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#include <stb_image.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#include <stb_image_write.h>

#include <cstdlib>

#include "io/codecs/codec.hpp"
#include "io/errors.hpp"

namespace cli {
namespace {

std::uint32_t le16(const std::uint8_t* p) { return p[0] | (std::uint32_t(p[1]) << 8); }
std::uint32_t le32(const std::uint8_t* p) { return le16(p) | (le16(p + 2) << 16); }

/// The fewest bytes an uncompressed BMP of this header needs: the pixel data offset plus every padded row.
/// RLE BMPs (compression 1, 2) are left to stb_image, which refuses them. Every other value is checked: stb
/// reads the field as a signed int and decodes a "negative" compression as uncompressed (found by fuzz_bmp).
void check_bmp_length(const Bytes& d, const std::string& name) {
    if (d.size() < 14 + 12) check_encoded_size(14 + 12, d.size(), name, "BMP");
    const std::uint32_t offset = le32(&d[10]), header = le32(&d[14]);
    std::uint64_t width = 0, height = 0, bpp = 0, compression = 0;
    if (header == 12) {  // OS/2 1.x
        width = le16(&d[18]);
        height = le16(&d[20]);
        bpp = le16(&d[24]);
    } else {
        if (d.size() < 14 + 40) check_encoded_size(14 + 40, d.size(), name, "BMP");
        const auto w = static_cast<std::int32_t>(le32(&d[18])), h = static_cast<std::int32_t>(le32(&d[22]));
        width = static_cast<std::uint64_t>(w < 0 ? -static_cast<std::int64_t>(w) : w);
        height = static_cast<std::uint64_t>(h < 0 ? -static_cast<std::int64_t>(h) : h);  // negative: top-down
        bpp = le16(&d[28]);
        compression = le32(&d[30]);
    }
    if (compression == 1 || compression == 2) return;
    const std::uint64_t row = (width * bpp + 31) / 32 * 4;                  // < 2^53: both below 2^32 and 2^16
    const std::uint64_t start = std::max<std::uint64_t>(offset, 14 + std::uint64_t(header));
    check_encoded_size(start + row * height, d.size(), name, "BMP");
}

/// TGA: uncompressed pixel data must be all there; RLE packets (a header byte, then one pixel repeated or n
/// literal pixels) are walked to the last pixel.
void check_tga_length(const Bytes& d, const std::string& name) {
    if (d.size() < 18) check_encoded_size(18, d.size(), name, "TGA");
    const std::uint32_t id_len = d[0], type = d[2], width = le16(&d[12]), height = le16(&d[14]), bpp = d[16];
    const bool indexed = type == 1 || type == 9;
    const std::uint64_t palette = indexed ? le16(&d[3]) + std::uint64_t(le16(&d[5])) * ((d[7] + 7) / 8) : 0;
    const std::uint64_t pixel_bytes = (bpp + 7) / 8, pixels = std::uint64_t(width) * height;
    const std::uint64_t start = 18 + id_len + palette;
    if (pixel_bytes == 0) return;  // stb refuses it
    if (type >= 1 && type <= 3) {
        check_encoded_size(start + pixels * pixel_bytes, d.size(), name, "TGA");
    } else if (type >= 9 && type <= 11) {
        std::uint64_t pos = start, covered = 0;
        while (covered < pixels) {
            if (pos >= d.size()) break;
            const std::uint8_t packet = d[pos++];
            const std::uint64_t n = (packet & 127u) + 1;
            pos += packet & 128u ? pixel_bytes : n * pixel_bytes;
            covered += n;
        }
        if (covered < pixels || pos > d.size())
            fail(ErrorCode::InvalidArgument, name,
                 "truncated or corrupt TGA file (its run-length data ends before the " + std::to_string(width) + "x" +
                     std::to_string(height) + " pixels the header promises)");
    }
}

}  // namespace

Image decode_stb(const Bytes& data, Format format, const std::string& name, const DecodeOptions& opt) {
    if (data.size() > 0x7fffffffu) fail(ErrorCode::Unsupported, name, "file larger than 2 GiB");
    const auto* buf = data.data();
    int len = static_cast<int>(data.size());
    int w = 0, h = 0, comp = 0;
    if (!stbi_info_from_memory(buf, len, &w, &h, &comp)) {
        const char* why = stbi_failure_reason();
        fail(ErrorCode::InvalidArgument, name, std::string("corrupt or unsupported ") + format_name(format) +
                                                   " file (" + (why ? why : "unreadable header") + ")");
    }
    // stb reports a top-down BMP's height as it is stored: negative.
    const std::int64_t wa = std::llabs(static_cast<std::int64_t>(w)), ha = std::llabs(static_cast<std::int64_t>(h));
    checked_image_bytes(static_cast<std::uint64_t>(wa), static_cast<std::uint64_t>(ha), comp, 8, opt, name);
    if (format == Format::Bmp) check_bmp_length(data, name);
    else check_tga_length(data, name);
    int cw = 0, ch = 0, cc = 0;
    std::uint8_t* pixels = stbi_load_from_memory(buf, len, &cw, &ch, &cc, 0);
    if (!pixels) {
        const char* why = stbi_failure_reason();
        fail(ErrorCode::InvalidArgument, name, std::string("truncated or corrupt ") + format_name(format) + " file (" +
                                                   (why ? why : "decoding failed") + ")");
    }
    if (cc < 1 || cc > 4 || cw != wa || ch != ha) {
        stbi_image_free(pixels);
        fail(ErrorCode::Unsupported, name, "unsupported " + std::string(format_name(format)) + " layout");
    }
    return Image::adopt(pixels, cw, ch, cc, 8);
}

namespace {
void append(void* ctx, void* data, int size) {
    auto* out = static_cast<Bytes*>(ctx);
    auto* p = static_cast<const std::uint8_t*>(data);
    out->insert(out->end(), p, p + size);
}
}  // namespace

Bytes encode_stb(const Image& img, Format format, const std::string& name) {
    Bytes out;
    out.reserve(img.bytes() + 1024);
    int ok = 0;
    if (format == Format::Bmp)
        ok = stbi_write_bmp_to_func(append, &out, img.width(), img.height(), img.channels(), img.data());
    else if (format == Format::Tga)
        ok = stbi_write_tga_to_func(append, &out, img.width(), img.height(), img.channels(), img.data());
    if (!ok) fail(ErrorCode::Io, name, std::string("cannot encode ") + format_name(format));
    return out;
}

}  // namespace cli
