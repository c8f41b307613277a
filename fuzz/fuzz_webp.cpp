// libFuzzer target: the WebP decoder (libwebp, and libwebpmux for the metadata chunks), and the lossless
// writer: whatever decodes must come back unchanged, pixels and EXIF/ICC/XMP, from encode_webp.
#include <cstring>

#include "fuzz_decoder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    cli::Image img = fuzz::decode(data, size, cli::Format::Webp, "fuzz.webp");
    if (img.empty()) return 0;
    const cli::Bytes webp = cli::encode_webp(img, cli::EncodeOptions{}, "round trip");  // lossless, exact
    const cli::Image back = cli::decode_webp(webp, "round trip", fuzz::options());
    if (back.width() != img.width() || back.height() != img.height() || back.channels() != img.channels() ||
        std::memcmp(back.data(), img.data(), img.bytes()) != 0)
        std::abort();
    if (back.meta.exif != img.meta.exif || back.meta.icc != img.meta.icc || back.meta.xmp != img.meta.xmp)
        std::abort();
    return 0;
}
