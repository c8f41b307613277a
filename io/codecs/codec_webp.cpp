// WebP through libwebp (decode, encode) and libwebpmux (the ICCP, EXIF and XMP chunks of the extended
// format). Still images only: an animation is refused. WebP has no gray: gray images are written as RGB
// (and read back as RGB), and libwebp stores no alpha channel when every pixel is opaque (read back as RGB
// too). Lossless output keeps every RGB value, those under transparent pixels included
// (libwebp's `exact`). A lossy input (a lossy WebP, whose quality webp_quality.hpp estimates, or a JPEG)
// gives lossy output at its estimated quality, as ImageMagick and vips keep a lossy input lossy; --quality
// selects lossy output at that quality.
#include <webp/decode.h>
#include <webp/encode.h>
#include <webp/mux.h>

#include <cstring>
#include <memory>

#include "io/codecs/codec.hpp"
#include "io/errors.hpp"
#include "io/codecs/webp_quality.hpp"

namespace cli {
namespace {

struct Mux {
    WebPMux* mux = nullptr;
    ~Mux() { WebPMuxDelete(mux); }
};

void read_chunk(WebPMux* mux, const char* id, Blob& out) {
    WebPData d{};
    if (WebPMuxGetChunk(mux, id, &d) == WEBP_MUX_OK && d.bytes && d.size)
        out.assign(d.bytes, d.bytes + d.size);
}

const char* vp8_error(WebPEncodingError e) {
    switch (e) {
        case VP8_ENC_ERROR_OUT_OF_MEMORY: return "out of memory";
        case VP8_ENC_ERROR_BAD_DIMENSION: return "image larger than WebP's 16383 x 16383";
        default: return "encoder error";
    }
}

}  // namespace

Image decode_webp(const Bytes& data, const std::string& name, const DecodeOptions& opt) {
    WebPBitstreamFeatures feat{};
    if (WebPGetFeatures(data.data(), data.size(), &feat) != VP8_STATUS_OK)
        fail(ErrorCode::InvalidArgument, name, "truncated or corrupt WebP (unreadable header)");
    if (feat.has_animation) fail(ErrorCode::Unsupported, name, "animated WebP is not supported (imghist reads still images)");
    const int channels = feat.has_alpha ? 4 : 3;
    // Lossless WebP spends no bits at all on a pixel whose prefix codes have one symbol each (a 28-byte file
    // can claim 16383 x 16383 pixels), and lossy WebP little more: only the user's ratio limit bounds them.
    // libwebp's lossless decoder holds a 32-bit copy of the image besides ours.
    check_decoded_ratio(static_cast<std::uint64_t>(feat.width) * static_cast<std::uint64_t>(feat.height) * channels,
                        data.size(), opt.limits, name, feat.format == 2 ? "lossless WebP" : "WebP");
    checked_image_bytes(static_cast<std::uint64_t>(feat.width), static_cast<std::uint64_t>(feat.height), channels, 8, opt, name);
    Image img(feat.width, feat.height, channels, 8);
    const int stride = static_cast<int>(img.row_bytes());
    const std::uint8_t* ok = feat.has_alpha
        ? WebPDecodeRGBAInto(data.data(), data.size(), img.data(), img.bytes(), stride)
        : WebPDecodeRGBInto(data.data(), data.size(), img.data(), img.bytes(), stride);
    if (!ok) fail(ErrorCode::InvalidArgument, name, "truncated or corrupt WebP (image data damaged)");
    img.meta.webp_quality = webp_lossy_quality(data.data(), data.size());
    const WebPData whole{data.data(), data.size()};
    Mux m;
    m.mux = WebPMuxCreate(&whole, 0);
    if (m.mux) {
        Blob exif;
        read_chunk(m.mux, "EXIF", exif);
        if (!exif.empty()) img.meta.exif = normalize_exif(exif.data(), exif.size());
        read_chunk(m.mux, "ICCP", img.meta.icc);
        Blob xmp;
        read_chunk(m.mux, "XMP ", xmp);
        img.meta.xmp.assign(xmp.begin(), xmp.end());
    }
    return img;
}

Bytes encode_webp(const Image& img, const EncodeOptions& opt, const std::string& name) {
    // WebP holds RGB(A): gray and gray+alpha are expanded.
    const int ch = img.channels();
    const bool alpha = ch == 2 || ch == 4;
    Bytes rgb;
    const std::uint8_t* src = img.data();
    int stride = static_cast<int>(img.row_bytes());
    if (ch <= 2) {
        const int out_ch = alpha ? 4 : 3;
        rgb.resize(img.pixels() * static_cast<std::size_t>(out_ch));
        const std::uint8_t* s = img.data();
        std::uint8_t* d = rgb.data();
        for (std::size_t i = 0; i < img.pixels(); ++i, s += ch, d += out_ch) {
            d[0] = d[1] = d[2] = s[0];
            if (alpha) d[3] = s[1];
        }
        src = rgb.data();
        stride = img.width() * out_ch;
    }
    WebPConfig config;
    if (!WebPConfigInit(&config)) fail(ErrorCode::Io, name, "cannot initialise the WebP encoder");
    const int quality = opt.jpeg_quality > 0 ? opt.jpeg_quality : lossy_input_quality(img.meta);
    if (quality > 0) {
        config.quality = static_cast<float>(quality);
    } else {
        config.lossless = 1;
        config.exact = 1;
    }
    WebPPicture pic;
    if (!WebPPictureInit(&pic)) fail(ErrorCode::Io, name, "cannot initialise the WebP encoder");
    std::unique_ptr<WebPPicture, void (*)(WebPPicture*)> pic_guard(&pic, WebPPictureFree);
    pic.use_argb = config.lossless;
    pic.width = img.width();
    pic.height = img.height();
    if (!(alpha ? WebPPictureImportRGBA(&pic, src, stride) : WebPPictureImportRGB(&pic, src, stride)))
        fail(ErrorCode::OutOfMemory, name, "cannot encode WebP (out of memory)");
    WebPMemoryWriter writer;
    WebPMemoryWriterInit(&writer);
    std::unique_ptr<WebPMemoryWriter, void (*)(WebPMemoryWriter*)> writer_guard(&writer, WebPMemoryWriterClear);
    pic.writer = WebPMemoryWrite;
    pic.custom_ptr = &writer;
    if (!WebPEncode(&config, &pic)) fail(ErrorCode::Io, name, std::string("cannot encode WebP (") + vp8_error(pic.error_code) + ")");

    const Metadata& m = img.meta;
    if (m.exif.empty() && m.icc.empty() && m.xmp.empty()) return Bytes(writer.mem, writer.mem + writer.size);
    const WebPData bitstream{writer.mem, writer.size};
    Mux mux;
    mux.mux = WebPMuxCreate(&bitstream, 0);
    if (!mux.mux) fail(ErrorCode::Io, name, "cannot add metadata to the WebP");
    auto set = [&](const char* id, const std::uint8_t* p, std::size_t n) {
        if (!n) return;
        const WebPData d{p, n};
        if (WebPMuxSetChunk(mux.mux, id, &d, 1) != WEBP_MUX_OK) fail(ErrorCode::Io, name, std::string("cannot add the WebP ") + id + " chunk");
    };
    set("EXIF", m.exif.data(), m.exif.size());
    set("ICCP", m.icc.data(), m.icc.size());
    set("XMP ", reinterpret_cast<const std::uint8_t*>(m.xmp.data()), m.xmp.size());
    WebPData assembled{};
    if (WebPMuxAssemble(mux.mux, &assembled) != WEBP_MUX_OK) fail(ErrorCode::Io, name, "cannot assemble the WebP file");
    Bytes out(assembled.bytes, assembled.bytes + assembled.size);
    WebPDataClear(&assembled);
    return out;
}

}  // namespace cli
