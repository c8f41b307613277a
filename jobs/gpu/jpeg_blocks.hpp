// imghist_jobs — baseline JPEG encoding block by block, with libjpeg-turbo's arithmetic: its integer DCT
// (jfdctint.c), its reciprocal quantiser (jcdctmgr.c), the blocks it adds to fill the last MCUs (jccoefct.c)
// and its Huffman coding (jchuff.c). The GPU's batch encoder (jpeg_kernels.cu) runs these functions in its
// kernels; tests run them on the host against libjpeg-turbo.
// Given the same visible samples, a segment coded with them is byte for byte the one encode_jpeg_planes
// writes (io/codecs/codec_jpeg.hpp).
//
// An image is a YCbCr frame of three components coded in one interleaved scan: each MCU holds h x v blocks
// of Y (row by row) and one block each of Cb and Cr, the sampling nvJPEG's decoders produce (4:4:4, 4:2:2,
// 4:2:0, 4:4:0, 4:1:1, 4:1:0). Blocks past a component's samples read its edge samples; blocks that only fill
// an MCU (past the component's last block column or row) are "dummy" blocks: zero AC and the DC libjpeg gives
// them.
#pragma once

#include <cstdint>

#include "io/codecs/jpeg_order.hpp"


namespace cli::jpeg_blocks {

/// libjpeg-turbo's quantiser for one coefficient and quantisation value q: (|x| + corr) * recip >> shift, with
/// the sign restored — x / 8q rounded half away from zero without a division (equal to the rounded quotient
/// for every 16-bit x: test_jpeg_blocks checks all of them).
struct Divisor {
    std::uint16_t recip = 0, corr = 0;
    std::uint16_t shift = 0;
};
/// For quantisation value q (1-255) of the integer DCT, whose outputs are scaled by 8.
Divisor make_divisor(unsigned q);

IMGHIST_JPEG_HD inline int quantize(int x, Divisor d) {
    const unsigned a = static_cast<unsigned>(x < 0 ? -x : x);
    const int r = static_cast<int>(((a + d.corr) * static_cast<unsigned>(d.recip)) >> d.shift);
    return x < 0 ? -r : r;
}

/// A quality's two quantisation tables (luma, chroma), in zig-zag order.
struct QuantTables {
    Divisor div[2][64];
};

/// One Huffman table: code and length of each symbol.
struct HuffCodes {
    std::uint16_t code[256];
    std::uint8_t size[256];
};

/// What every image of a batch shares: the standard Huffman tables ([0] luma, [1] chroma).
struct CodeTables {
    HuffCodes dc[2], ac[2];
};

/// Where one image's samples are and how its scan is laid out.
struct Frame {
    const std::uint8_t* plane[3] = {};
    std::uint32_t pitch[3] = {};
    std::int32_t width[3] = {}, height[3] = {};  ///< visible samples of each component
    std::int32_t wib[3] = {}, hib[3] = {};       ///< block columns and rows holding samples
    std::int32_t h = 1, v = 1;                   ///< Y's sampling (Cb and Cr: 1 x 1)
    std::int32_t mcus_x = 0;                     ///< MCUs per row
    std::uint32_t mcus = 0;                      ///< MCUs in all
    std::int32_t blocks_per_mcu = 0;             ///< h * v + 2
    std::int32_t quant = 0;                      ///< index of its QuantTables
    std::uint64_t first_block = 0;               ///< its first block among the batch's coefficients
};

/// The frame of a width x height image whose Y is sampled h x v (chroma planes ceil(width / h) x
/// ceil(height / v)); planes and quant left for the caller.
Frame make_frame(int width, int height, int h, int v);

/// Block b of a frame (in scan order): its component and block column and row, and its MCU's column and row.
struct BlockAt {
    int c, bx, by, mx, my;
};
IMGHIST_JPEG_HD inline BlockAt block_at(const Frame& f, std::uint32_t b) {
    const std::uint32_t m = b / static_cast<std::uint32_t>(f.blocks_per_mcu);
    const int r = static_cast<int>(b - m * static_cast<std::uint32_t>(f.blocks_per_mcu));
    BlockAt a;
    a.mx = static_cast<int>(m % static_cast<std::uint32_t>(f.mcus_x));
    a.my = static_cast<int>(m / static_cast<std::uint32_t>(f.mcus_x));
    if (r < f.h * f.v) {
        a.c = 0;
        a.bx = a.mx * f.h + r % f.h;
        a.by = a.my * f.v + r / f.h;
    } else {
        a.c = r - f.h * f.v + 1;
        a.bx = a.mx;
        a.by = a.my;
    }
    return a;
}

/// (x + 2^(n-1)) >> n: libjpeg's DESCALE.
IMGHIST_JPEG_HD inline int descale(int x, int n) { return (x + (1 << (n - 1))) >> n; }

/// The integer DCT of 64 samples (each minus 128, row-major), in place: libjpeg-turbo's "islow" (the LL&M
/// algorithm, 13-bit constants, 2 extra bits between the passes), outputs scaled by 8.
IMGHIST_JPEG_HD inline void forward_dct(int* d) {
    constexpr int kConst = 13, kPass1 = 2;
    constexpr int c0_298 = 2446, c0_390 = 3196, c0_541 = 4433, c0_765 = 6270, c0_899 = 7373, c1_175 = 9633,
                  c1_501 = 12299, c1_847 = 15137, c1_961 = 16069, c2_053 = 16819, c2_562 = 20995, c3_072 = 25172;
    for (int pass = 0; pass < 2; ++pass) {
        const int step = pass == 0 ? 1 : 8;  // along a row, then along a column
        const int next = pass == 0 ? 8 : 1;  // to the next row, then to the next column
        const int odd = pass == 0 ? kConst - kPass1 : kConst + kPass1;  // descaling of all but outputs 0 and 4
        for (int i = 0; i < 8; ++i) {
            int* p = d + i * next;
            const int t0 = p[0] + p[7 * step], t7 = p[0] - p[7 * step];
            const int t1 = p[1 * step] + p[6 * step], t6 = p[1 * step] - p[6 * step];
            const int t2 = p[2 * step] + p[5 * step], t5 = p[2 * step] - p[5 * step];
            const int t3 = p[3 * step] + p[4 * step], t4 = p[3 * step] - p[4 * step];
            const int t10 = t0 + t3, t13 = t0 - t3, t11 = t1 + t2, t12 = t1 - t2;
            // Outputs 0 and 4: scaled up by the pass-1 bits in the first pass, down by them in the second.
            p[0] = pass == 0 ? (t10 + t11) * (1 << kPass1) : descale(t10 + t11, kPass1);
            p[4 * step] = pass == 0 ? (t10 - t11) * (1 << kPass1) : descale(t10 - t11, kPass1);
            const int z1 = (t12 + t13) * c0_541;
            p[2 * step] = descale(z1 + t13 * c0_765, odd);
            p[6 * step] = descale(z1 - t12 * c1_847, odd);
            const int z5 = (t4 + t5 + t6 + t7) * c1_175;
            const int y1 = -(t4 + t7) * c0_899, y2 = -(t5 + t6) * c2_562;
            const int y3 = -(t4 + t6) * c1_961 + z5, y4 = -(t5 + t7) * c0_390 + z5;
            p[7 * step] = descale(t4 * c0_298 + y1 + y3, odd);
            p[5 * step] = descale(t5 * c2_053 + y2 + y4, odd);
            p[3 * step] = descale(t6 * c3_072 + y2 + y3, odd);
            p[1 * step] = descale(t7 * c1_501 + y1 + y4, odd);
        }
    }
}

/// Sample (x, y) of component c, at the nearest edge sample past its width or height.
IMGHIST_JPEG_HD inline int sample(const Frame& f, int c, int x, int y) {
    x = x < f.width[c] ? x : f.width[c] - 1;
    y = y < f.height[c] ? y : f.height[c] - 1;
    return f.plane[c][static_cast<std::size_t>(y) * f.pitch[c] + static_cast<std::size_t>(x)];
}

/// Bits needed for |x| (0 for 0).
IMGHIST_JPEG_HD inline int magnitude_bits(unsigned x) {
    int n = 0;
    while (x) {
        ++n;
        x >>= 1;
    }
    return n;
}

/// A block's coded form, besides its coefficients: which AC coefficients are not zero (bit k for the k-th in
/// zig-zag order) and the bits of its AC codes (the DC's depend on the block before it).
struct BlockSummary {
    std::uint64_t nonzero = 0;
    std::uint32_t ac_bits = 0;
};

/// The quantised coefficients of block b of a frame, in zig-zag order, as libjpeg-turbo's encoder makes them,
/// and their summary. A dummy block gets zero AC and the DC libjpeg copies into it: right of the last block
/// column, the DC of the row's last block; below the last block row, the DC of the last block of the MCU's
/// block column above it (itself taken from the last column when that is past it).
IMGHIST_JPEG_HD inline BlockSummary transform_block(const Frame& f, const QuantTables& q, const CodeTables& t, std::uint32_t b,
                                     std::int16_t* zz) {
    const BlockAt a = block_at(f, b);
    const Divisor* div = q.div[a.c == 0 ? 0 : 1];
    const int hc = a.c == 0 ? f.h : 1;
    BlockSummary s;
    if (a.bx < f.wib[a.c] && a.by < f.hib[a.c]) {
        int d[64];
        for (int y = 0; y < 8; ++y)
            for (int x = 0; x < 8; ++x) d[y * 8 + x] = sample(f, a.c, a.bx * 8 + x, a.by * 8 + y) - 128;
        forward_dct(d);
        zz[0] = static_cast<std::int16_t>(quantize(d[0], div[0]));
        int run = 0;
        const HuffCodes& ac = t.ac[a.c == 0 ? 0 : 1];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
        for (int k = 1; k < 64; ++k) {
            const int x = quantize(d[jpeg_natural_order(k)], div[k]);
            zz[k] = static_cast<std::int16_t>(x);
            if (x == 0) {
                ++run;
                continue;
            }
            const int n = magnitude_bits(static_cast<unsigned>(x < 0 ? -x : x));
            s.ac_bits += static_cast<std::uint32_t>((run >> 4) * ac.size[0xF0] + ac.size[((run & 15) << 4) | n] + n);
            s.nonzero |= std::uint64_t{1} << k;
            run = 0;
        }
        if (run > 0) s.ac_bits += ac.size[0x00];
        return s;
    }
    int sx = f.wib[a.c] - 1, sy = a.by;
    if (a.by >= f.hib[a.c]) {
        sx = a.mx * hc + hc - 1 < sx ? a.mx * hc + hc - 1 : sx;
        sy = f.hib[a.c] - 1;
    }
    // The DC of the integer DCT is the sum of the 64 centred samples exactly.
    int sum = 0;
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 8; ++x) sum += sample(f, a.c, sx * 8 + x, sy * 8 + y) - 128;
    zz[0] = static_cast<std::int16_t>(quantize(sum, div[0]));
    for (int k = 1; k < 64; ++k) zz[k] = 0;
    s.ac_bits = t.ac[a.c == 0 ? 0 : 1].size[0x00];  // end of block
    return s;
}

/// Puts Huffman symbol s of table h followed by the value's low (s & 15) bits (negative values as
/// value - 1, JPEG's one's-complement form); returns the bits put.
template <class Put>
IMGHIST_JPEG_HD inline std::uint32_t put_symbol(const HuffCodes& h, int s, int value, Put& put) {
    const int n = s & 15;
    const unsigned bits = n ? static_cast<unsigned>(value < 0 ? value - 1 : value) & ((1u << n) - 1) : 0;
    put((static_cast<unsigned>(h.code[s]) << n) | bits, h.size[s] + n);
    return static_cast<std::uint32_t>(h.size[s] + n);
}

/// The lowest set bit of a non-zero mask.
IMGHIST_JPEG_HD inline int lowest_bit(std::uint64_t m) {
#if defined(__CUDA_ARCH__)
    return __ffsll(static_cast<long long>(m)) - 1;
#else
    return __builtin_ctzll(m);
#endif
}

/// Bits of a DC difference's code.
IMGHIST_JPEG_HD inline std::uint32_t dc_bits(int diff, const HuffCodes& dc) {
    const int n = magnitude_bits(static_cast<unsigned>(diff < 0 ? -diff : diff));
    return static_cast<std::uint32_t>(dc.size[n] + n);
}

/// Codes a block (zig-zag coefficients, its non-zero AC coefficients' mask; `pred` the DC before it in its
/// component): `put(bits, n)` receives each code with its value bits appended (n <= 27), most significant first.
template <class Put>
IMGHIST_JPEG_HD inline void code_block(const std::int16_t* zz, std::uint64_t nonzero, int pred, const HuffCodes& dc,
                        const HuffCodes& ac, Put& put) {
    const int diff = zz[0] - pred;
    put_symbol(dc, magnitude_bits(static_cast<unsigned>(diff < 0 ? -diff : diff)), diff, put);
    int last = 0;
    for (std::uint64_t m = nonzero; m; m &= m - 1) {
        const int k = lowest_bit(m);
        int run = k - last - 1;
        for (; run > 15; run -= 16) put_symbol(ac, 0xF0, 0, put);
        const int x = zz[k];
        put_symbol(ac, (run << 4) | magnitude_bits(static_cast<unsigned>(x < 0 ? -x : x)), x, put);
        last = k;
    }
    if (last < 63) put_symbol(ac, 0x00, 0, put);
}

/// The DCs before MCU m in each component's coding order (0 at the frame's start): those of the last
/// Y, Cb and Cr blocks of MCU m - 1, read from the frame's coefficients (64 per block).
IMGHIST_JPEG_HD inline void dc_before(const Frame& f, const std::int16_t* coef, std::uint32_t m, int pred[3]) {
    pred[0] = pred[1] = pred[2] = 0;
    if (m == 0) return;
    const std::uint64_t base = (static_cast<std::uint64_t>(m - 1) * static_cast<std::uint32_t>(f.blocks_per_mcu)) * 64;
    const int ys = f.h * f.v;
    pred[0] = coef[base + static_cast<std::uint64_t>(ys - 1) * 64];
    pred[1] = coef[base + static_cast<std::uint64_t>(ys) * 64];
    pred[2] = coef[base + static_cast<std::uint64_t>(ys + 1) * 64];
}

/// The bits of MCUs [m0, m1) of a frame (its coefficients: 64 per block, in scan order; its blocks' AC bits).
IMGHIST_JPEG_HD inline std::uint64_t mcu_bits(const Frame& f, const CodeTables& t, const std::int16_t* coef, const std::uint32_t* ac_bits,
                               std::uint32_t m0, std::uint32_t m1) {
    int pred[3];
    dc_before(f, coef, m0, pred);
    std::uint64_t bits = 0;
    const int ys = f.h * f.v;
    for (std::uint32_t m = m0; m < m1; ++m)
        for (int k = 0; k < f.blocks_per_mcu; ++k) {
            const int c = k < ys ? 0 : k - ys + 1;
            const std::uint64_t b = static_cast<std::uint64_t>(m) * static_cast<std::uint32_t>(f.blocks_per_mcu) + static_cast<std::uint32_t>(k);
            const int dc = coef[b * 64];
            bits += dc_bits(dc - pred[c], t.dc[c == 0 ? 0 : 1]) + ac_bits[b];
            pred[c] = dc;
        }
    return bits;
}

/// Codes MCUs [m0, m1) of a frame (its coefficients and its blocks' non-zero masks, in scan order).
template <class Put>
IMGHIST_JPEG_HD inline void code_mcus(const Frame& f, const CodeTables& t, const std::int16_t* coef, const std::uint64_t* nonzero,
                       std::uint32_t m0, std::uint32_t m1, Put& put) {
    int pred[3];
    dc_before(f, coef, m0, pred);
    const int ys = f.h * f.v;
    for (std::uint32_t m = m0; m < m1; ++m)
        for (int k = 0; k < f.blocks_per_mcu; ++k) {
            const int c = k < ys ? 0 : k - ys + 1;
            const std::uint64_t b = static_cast<std::uint64_t>(m) * static_cast<std::uint32_t>(f.blocks_per_mcu) + static_cast<std::uint32_t>(k);
            const std::int16_t* zz = coef + b * 64;
            const int table = c == 0 ? 0 : 1;
            code_block(zz, nonzero[b], pred[c], t.dc[table], t.ac[table], put);
            pred[c] = zz[0];
        }
}

/// Where thread t's share of n items begins when `threads` threads split them in order (thread t takes
/// [share_start(t), share_start(t + 1))): an image's MCUs in the coding passes, its words in the stuffing.
IMGHIST_JPEG_HD inline std::uint64_t share_start(std::uint64_t n, unsigned t, unsigned threads) { return n * t / threads; }

/// Puts codes from a bit position of an array of 32-bit words on (most significant bit first) by OR-ing whole
/// words into it with `or_word(index, bits)` (the array starts zeroed): a word a run shares with the runs
/// beside it gets each side's bits.
template <class OrWord>
class WordWriter {
public:
    IMGHIST_JPEG_HD inline WordWriter(OrWord or_word, std::uint64_t bit)
        : or_word_(or_word), word_(bit / 32), held_(static_cast<int>(bit % 32)) {}
    IMGHIST_JPEG_HD inline void operator()(unsigned value, int n) {
        acc_ = (acc_ << n) | value;
        held_ += n;
        if (held_ >= 32) {
            held_ -= 32;
            or_word_(word_++, static_cast<std::uint32_t>(acc_ >> held_));
        }
    }
    /// With `pad` (the image's last run), fills the last byte with 1 bits; then writes what is held.
    IMGHIST_JPEG_HD inline void finish(bool pad) {
        if (pad && held_ % 8) (*this)((1u << (8 - held_ % 8)) - 1, 8 - held_ % 8);
        if (held_ > 0) or_word_(word_, static_cast<std::uint32_t>(acc_ << (32 - held_)));
    }

private:
    OrWord or_word_;
    std::uint64_t word_;
    int held_;               // bits of acc_ not written yet: its lowest (the first ones zero padding)
    std::uint64_t acc_ = 0;
};

/// Byte k (0-3) of a coded word, most significant first.
IMGHIST_JPEG_HD inline std::uint8_t word_byte(std::uint32_t w, unsigned k) { return static_cast<std::uint8_t>(w >> (24 - 8 * k)); }

/// The 0xFF bytes among an image's coded bytes (`bytes` of them) in its words [from, to).
IMGHIST_JPEG_HD inline std::uint64_t count_ff(const std::uint32_t* words, std::uint64_t from, std::uint64_t to, std::uint64_t bytes) {
    std::uint64_t ff = 0;
    for (std::uint64_t w = from; w < to; ++w)
        for (unsigned k = 0; k < 4 && w * 4 + k < bytes; ++k) ff += word_byte(words[w], k) == 0xFF;
    return ff;
}

/// Writes an image's coded bytes of words [from, to) to `out` with a zero after each 0xFF (JPEG's stuffing).
IMGHIST_JPEG_HD inline void stuff_words(const std::uint32_t* words, std::uint64_t from, std::uint64_t to, std::uint64_t bytes,
                         std::uint8_t* out) {
    for (std::uint64_t w = from; w < to; ++w)
        for (unsigned k = 0; k < 4 && w * 4 + k < bytes; ++k) {
            const std::uint8_t byte = word_byte(words[w], k);
            *out++ = byte;
            if (byte == 0xFF) *out++ = 0;
        }
}

}  // namespace cli::jpeg_blocks

namespace cli::jpeg_blocks {

/// The Huffman tables of encode_jpeg_planes (jpeg_encoding_tables), as codes.
CodeTables code_tables();
/// Quality q's quantisation tables (1-100; Error(InvalidArgument) otherwise) as divisors in zig-zag order.
QuantTables quant_tables(int quality);

}  // namespace cli::jpeg_blocks
