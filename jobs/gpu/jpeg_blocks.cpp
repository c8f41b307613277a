#include "gpu/jpeg_blocks.hpp"

#include "io/codecs/codec_jpeg.hpp"

namespace cli::jpeg_blocks {

Divisor make_divisor(unsigned q) {
    // jcdctmgr.c's compute_reciprocal for divisor 8q with 16-bit DCT elements: r = 16 + floor(log2(8q)),
    // recip = 2^r / 8q rounded by the fraction's size, corr = 4q (+1 when the fraction is below one half).
    const std::uint32_t d = q << 3;
    int b = 0;
    while ((d >> (b + 1)) != 0) ++b;
    int r = 16 + b;
    std::uint32_t recip = (std::uint32_t{1} << r) / d;
    const std::uint32_t rest = (std::uint32_t{1} << r) % d;
    std::uint32_t corr = d / 2;
    if (rest == 0) {  // a power of two: the reciprocal has one bit too many
        recip >>= 1;
        --r;
    } else if (rest <= d / 2) {
        ++corr;
    } else {
        ++recip;
    }
    Divisor div;
    div.recip = static_cast<std::uint16_t>(recip);
    div.corr = static_cast<std::uint16_t>(corr);
    div.shift = static_cast<std::uint16_t>(r);
    return div;
}

Frame make_frame(int width, int height, int h, int v) {
    Frame f;
    f.h = h;
    f.v = v;
    for (int c = 0; c < 3; ++c) {
        f.width[c] = c == 0 ? width : (width + h - 1) / h;
        f.height[c] = c == 0 ? height : (height + v - 1) / v;
        f.wib[c] = (f.width[c] + 7) / 8;
        f.hib[c] = (f.height[c] + 7) / 8;
    }
    f.mcus_x = (width + 8 * h - 1) / (8 * h);
    const std::uint32_t mcus_y = static_cast<std::uint32_t>((height + 8 * v - 1) / (8 * v));
    f.mcus = static_cast<std::uint32_t>(f.mcus_x) * mcus_y;
    f.blocks_per_mcu = h * v + 2;
    return f;
}

namespace {

/// Each symbol's code from a DHT segment's counts and symbols (the canonical codes of JPEG's Annex C).
HuffCodes codes_of(const JpegEncodingTables::Huffman& t) {
    HuffCodes h{};
    std::size_t k = 0;
    unsigned code = 0;
    for (int len = 1; len <= 16; ++len) {
        for (int i = 0; i < t.bits[static_cast<std::size_t>(len)] && k < t.values.size(); ++i, ++k) {
            h.code[t.values[k]] = static_cast<std::uint16_t>(code++);
            h.size[t.values[k]] = static_cast<std::uint8_t>(len);
        }
        code <<= 1;
    }
    return h;
}

}  // namespace

CodeTables code_tables() {
    const JpegEncodingTables t = jpeg_encoding_tables(90);  // the Huffman tables do not depend on the quality
    CodeTables c{};
    for (int k = 0; k < 2; ++k) {
        c.dc[k] = codes_of(t.dc[static_cast<std::size_t>(k)]);
        c.ac[k] = codes_of(t.ac[static_cast<std::size_t>(k)]);
    }
    return c;
}

QuantTables quant_tables(int quality) {
    const JpegEncodingTables t = jpeg_encoding_tables(quality);
    QuantTables q{};
    for (int table = 0; table < 2; ++table)
        for (int k = 0; k < 64; ++k)
            q.div[table][k] = make_divisor(t.quant[static_cast<std::size_t>(table)][static_cast<std::size_t>(jpeg_natural_order(k))]);
    return q;
}

}  // namespace cli::jpeg_blocks
