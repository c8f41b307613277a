// libFuzzer target: the TIFF decoder (libtiff from memory, strips and tiles, metadata tags), and the TIFF
// writer: whatever decodes must survive a round trip through encode_tiff with its pixels and metadata.
#include <cstring>

#include "fuzz_decoder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    cli::Image img = fuzz::decode(data, size, cli::Format::Tiff, "fuzz.tif");
    if (img.empty()) return 0;
    cli::EncodeOptions eo;
    static const char* const compressions[] = {"deflate", "lzw", "packbits", "none"};
    eo.tiff_compression = compressions[size % 4];
    const cli::Bytes tif = cli::encode_tiff(img, eo, "round trip");
    const cli::Image back = cli::decode_tiff(tif, "round trip", fuzz::options());
    if (back.width() != img.width() || back.height() != img.height() || back.channels() != img.channels() ||
        back.depth() != img.depth() || std::memcmp(back.data(), img.data(), img.bytes()) != 0)
        std::abort();
    if (back.meta.icc != img.meta.icc || back.meta.xmp != img.meta.xmp ||
        cli::exif_orientation(back.meta.exif) != cli::exif_orientation(img.meta.exif))
        std::abort();
    return 0;
}
