// BMP, TGA and PNM through stb_image (Debian's libstb), BMP and TGA writing through stb_image_write.
#include <stb_image.h>
#include <stb_image_write.h>

#include "codec.hpp"
#include "errors.hpp"

namespace cli {

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
    check_pixel_limit(static_cast<std::uint64_t>(w), static_cast<std::uint64_t>(h), opt, name);
    bool sixteen = stbi_is_16_bit_from_memory(buf, len) != 0;
    int cw = 0, ch = 0, cc = 0;
    std::uint8_t* pixels = sixteen ? reinterpret_cast<std::uint8_t*>(stbi_load_16_from_memory(buf, len, &cw, &ch, &cc, 0))
                                   : stbi_load_from_memory(buf, len, &cw, &ch, &cc, 0);
    if (!pixels) {
        const char* why = stbi_failure_reason();
        fail(ErrorCode::InvalidArgument, name, std::string("truncated or corrupt ") + format_name(format) + " file (" +
                                                   (why ? why : "decoding failed") + ")");
    }
    if (cc < 1 || cc > 4) {
        stbi_image_free(pixels);
        fail(ErrorCode::Unsupported, name, "unsupported channel count " + std::to_string(cc));
    }
    return Image::adopt(pixels, cw, ch, cc, sixteen ? 16 : 8);
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
