// libFuzzer target: the PNG decoder (fast path and libspng path), and the PNG writer: whatever decodes must
// survive a round trip through encode_png unchanged.
#include <cstring>

#include "fuzz_decoder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    cli::Image img = fuzz::decode(data, size, cli::Format::Png, "fuzz.png");
    if (img.empty()) return 0;
    cli::EncodeOptions eo;
    eo.threads = 1;
    eo.png_level = size % 10;
    const cli::Bytes png = cli::encode_png(img, eo);
    const cli::Image back = cli::decode_png(png, "round trip", fuzz::options());
    if (back.width() != img.width() || back.height() != img.height() || back.channels() != img.channels() ||
        back.depth() != img.depth() || std::memcmp(back.data(), img.data(), img.bytes()) != 0)
        std::abort();
    return 0;
}
