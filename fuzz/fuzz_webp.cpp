// libFuzzer target: the WebP decoder (libwebp, and libwebpmux for the metadata chunks), the lossy quality
// estimate's reading of the VP8 frame header (on every input, decodable or not), and the lossless writer:
// whatever decodes must come back unchanged, pixels and EXIF/ICC/XMP, from encode_webp. (libwebp stores no
// alpha channel when every pixel is opaque: such an image comes back as RGB with the same colours.)
#include <cstring>

#include "fuzz_decoder.hpp"
#include "io/codecs/webp_quality.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const int quality = cli::webp_lossy_quality(data, size);
    if (quality < 0 || quality > 100) std::abort();
    cli::Image img = fuzz::decode(data, size, cli::Format::Webp, "fuzz.webp");
    if (img.empty()) return 0;
    img.meta.webp_quality = 0;  // a lossy input would be written lossy: the round trip is of the lossless writer
    const cli::Bytes webp = cli::encode_webp(img, cli::EncodeOptions{}, "round trip");  // lossless, exact
    const cli::Image back = cli::decode_webp(webp, "round trip", fuzz::options());
    bool opaque = img.channels() == 4;
    for (std::size_t i = 3; opaque && i < img.bytes(); i += 4) opaque = img.data()[i] == 255;
    const int channels = opaque ? 3 : img.channels();
    if (back.width() != img.width() || back.height() != img.height() || back.channels() != channels) std::abort();
    for (std::size_t p = 0; p < img.pixels(); ++p)
        if (std::memcmp(back.data() + p * channels, img.data() + p * img.channels(), static_cast<std::size_t>(channels)) != 0)
            std::abort();
    if (back.meta.exif != img.meta.exif || back.meta.icc != img.meta.icc || back.meta.xmp != img.meta.xmp)
        std::abort();
    return 0;
}
