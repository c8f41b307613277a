// libFuzzer target: the PNG decoder (fast path and libspng path), and the PNG writer: whatever decodes must
// survive a round trip through encode_png unchanged.
//
// Mutations almost never keep a chunk's CRC right, and a wrong CRC is refused at the chunk walk, so a
// fuzzer left alone spends nearly all its time there. Inputs of even length have every chunk's CRC
// recomputed first, so that mutated chunk bodies (metadata, palettes, IHDR fields, image data) reach the
// decoders; inputs of odd length are decoded as they are, CRC errors included.
#include <cstring>

#include "fuzz_decoder.hpp"

namespace {

struct CrcTable {
    std::uint32_t v[256];
    CrcTable() {
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
            v[i] = c;
        }
    }
};

std::uint32_t crc32(const std::uint8_t* p, std::size_t n) {
    static const CrcTable table;
    std::uint32_t c = 0xffffffffu;
    for (std::size_t i = 0; i < n; ++i) c = table.v[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return ~c;
}

std::uint32_t be32(const std::uint8_t* p) {
    return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) | p[3];
}

/// Rewrites the CRC of every whole chunk after the signature.
void fix_crcs(cli::Bytes& d) {
    for (std::size_t pos = 8; pos + 12 <= d.size();) {
        const std::uint32_t len = be32(&d[pos]);
        if (len > d.size() - pos - 12) return;
        const std::uint32_t c = crc32(&d[pos + 4], 4 + std::size_t(len));
        for (int k = 0; k < 4; ++k) d[pos + 8 + len + k] = static_cast<std::uint8_t>(c >> (24 - 8 * k));
        pos += 12 + std::size_t(len);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    cli::Bytes input(data, data + size);
    if (size % 2 == 0) fix_crcs(input);
    cli::Image img = fuzz::decode(input.data(), input.size(), cli::Format::Png, "fuzz.png");
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
