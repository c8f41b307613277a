// The GPU batch encoder's arithmetic (jobs/gpu/jpeg_blocks.hpp) run on the host: a JPEG assembled from its
// blocks must be byte for byte the file encode_jpeg_planes (libjpeg-turbo) writes from the same visible
// samples, at every sampling nvJPEG decodes, odd sizes, several qualities and contents; and coding the MCUs
// in separate runs (as the GPU's threads do) must give the same bits as one run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu/jpeg_blocks.hpp"
#include "io/codecs/codec_jpeg.hpp"

namespace {

namespace jb = cli::jpeg_blocks;

/// Planes laid out as decode_jpeg_planes lays them out (whole MCUs), visible samples from `fill`, the padding
/// random: the encoders must not read it.
template <class Fill>
cli::JpegPlanes make_planes(int w, int h, int hs, int vs, std::mt19937& rng, Fill fill) {
    cli::JpegPlanes p;
    p.width = w;
    p.height = h;
    p.ycbcr = true;
    p.max_v_samp = vs;
    const int mcus_x = (w + 8 * hs - 1) / (8 * hs), mcus_y = (h + 8 * vs - 1) / (8 * vs);
    for (int c = 0; c < 3; ++c) {
        cli::JpegPlane pl;
        pl.h_samp = c == 0 ? hs : 1;
        pl.v_samp = c == 0 ? vs : 1;
        pl.width = c == 0 ? w : (w + hs - 1) / hs;
        pl.height = c == 0 ? h : (h + vs - 1) / vs;
        pl.stride = mcus_x * pl.h_samp * 8;
        pl.rows = mcus_y * pl.v_samp * 8;
        pl.data.resize(static_cast<std::size_t>(pl.stride) * static_cast<std::size_t>(pl.rows));
        for (int y = 0; y < pl.rows; ++y)
            for (int x = 0; x < pl.stride; ++x)
                pl.data[static_cast<std::size_t>(y) * static_cast<std::size_t>(pl.stride) + static_cast<std::size_t>(x)] =
                    x < pl.width && y < pl.height ? fill(c, x, y) : static_cast<std::uint8_t>(rng() & 255);
        p.planes.push_back(std::move(pl));
    }
    return p;
}

/// Collects bits most significant first; ends the segment as libjpeg does (1 bits to a byte boundary, 0xFF
/// followed by a stuffed zero).
struct BitString {
    std::vector<bool> bits;
    void operator()(unsigned value, int n) {
        for (int i = n - 1; i >= 0; --i) bits.push_back(((value >> i) & 1u) != 0);
    }
    std::vector<std::uint8_t> segment() const {
        std::vector<bool> b = bits;
        while (b.size() % 8) b.push_back(true);
        std::vector<std::uint8_t> out;
        for (std::size_t i = 0; i < b.size(); i += 8) {
            unsigned byte = 0;
            for (std::size_t k = 0; k < 8; ++k) byte = byte << 1 | (b[i + k] ? 1u : 0u);
            out.push_back(static_cast<std::uint8_t>(byte));
            if (byte == 0xFF) out.push_back(0);
        }
        return out;
    }
};

struct Coded {
    cli::Bytes file;
    std::vector<bool> bits_in_runs;  // the MCUs coded in several runs, concatenated
    std::vector<bool> bits_at_once;
    std::vector<std::uint8_t> segment_as_kernels;  // made the way jpeg_kernels.cu makes it, on the host
};

/// The GPU's passes for one image, run on the host thread by thread: sizes of `threads` runs of MCUs, their
/// exclusive scan, each run's codes OR-ed into zeroed words from its first bit (the last run padding), the
/// words stuffed in `threads` shares at the offsets their 0xFF counts give.
std::vector<std::uint8_t> segment_as_kernels(const jb::Frame& f, const jb::CodeTables& t, const std::vector<std::int16_t>& coef,
                                             const std::vector<std::uint64_t>& nonzero, const std::vector<std::uint32_t>& ac_bits,
                                             unsigned threads) {
    std::vector<std::uint64_t> start(threads + 1, 0);
    for (unsigned k = 0; k < threads; ++k) {
        const auto m0 = static_cast<std::uint32_t>(jb::share_start(f.mcus, k, threads));
        const auto m1 = static_cast<std::uint32_t>(jb::share_start(f.mcus, k + 1, threads));
        start[k + 1] = start[k] + jb::mcu_bits(f, t, coef.data(), ac_bits.data(), m0, m1);
    }
    const std::uint64_t bits = start[threads], bytes = (bits + 7) / 8, words = (bits + 31) / 32;
    std::vector<std::uint32_t> w(words, 0);
    auto or_word = [&w](std::uint64_t i, std::uint32_t v) { w.at(i) |= v; };
    for (unsigned k = 0; k < threads; ++k) {
        const auto m0 = static_cast<std::uint32_t>(jb::share_start(f.mcus, k, threads));
        const auto m1 = static_cast<std::uint32_t>(jb::share_start(f.mcus, k + 1, threads));
        jb::WordWriter<decltype(or_word)> writer(or_word, start[k]);
        jb::code_mcus(f, t, coef.data(), nonzero.data(), m0, m1, writer);
        writer.finish(k == threads - 1);
    }
    std::vector<std::uint64_t> ff(threads + 1, 0);
    for (unsigned k = 0; k < threads; ++k)
        ff[k + 1] = ff[k] + jb::count_ff(w.data(), jb::share_start(words, k, threads), jb::share_start(words, k + 1, threads), bytes);
    std::vector<std::uint8_t> out(bytes + ff[threads]);
    for (unsigned k = 0; k < threads; ++k) {
        const std::uint64_t from = jb::share_start(words, k, threads);
        jb::stuff_words(w.data(), from, jb::share_start(words, k + 1, threads), bytes, out.data() + from * 4 + ff[k]);
    }
    return out;
}

Coded code_with_blocks(const cli::JpegPlanes& p, int quality) {
    const jb::CodeTables tables = jb::code_tables();
    const jb::QuantTables quant = jb::quant_tables(quality);
    jb::Frame f = jb::make_frame(p.width, p.height, p.planes[0].h_samp, p.planes[0].v_samp);
    for (int c = 0; c < 3; ++c) {
        f.plane[c] = p.planes[static_cast<std::size_t>(c)].data.data();
        f.pitch[c] = static_cast<std::uint32_t>(p.planes[static_cast<std::size_t>(c)].stride);
    }
    const std::uint32_t blocks = f.mcus * static_cast<std::uint32_t>(f.blocks_per_mcu);
    std::vector<std::int16_t> coef(static_cast<std::size_t>(blocks) * 64);
    std::vector<std::uint64_t> nonzero(blocks);
    std::vector<std::uint32_t> ac_bits(blocks);
    for (std::uint32_t b = 0; b < blocks; ++b) {
        const jb::BlockSummary s = jb::transform_block(f, quant, tables, b, coef.data() + std::size_t{b} * 64);
        nonzero[b] = s.nonzero;
        ac_bits[b] = s.ac_bits;
    }
    Coded out;
    BitString once;
    jb::code_mcus(f, tables, coef.data(), nonzero.data(), 0, f.mcus, once);
    CHECK(jb::mcu_bits(f, tables, coef.data(), ac_bits.data(), 0, f.mcus) == once.bits.size());
    out.bits_at_once = once.bits;
    BitString runs;
    for (std::uint32_t m0 = 0; m0 < f.mcus;) {  // uneven runs, some empty, each counted as coded
        const std::uint32_t m1 = std::min(f.mcus, m0 + 1 + (m0 * 7) % 5);
        jb::code_mcus(f, tables, coef.data(), nonzero.data(), m0, m0, runs);
        const std::size_t before = runs.bits.size();
        jb::code_mcus(f, tables, coef.data(), nonzero.data(), m0, m1, runs);
        CHECK(jb::mcu_bits(f, tables, coef.data(), ac_bits.data(), m0, m1) == runs.bits.size() - before);
        m0 = m1;
    }
    out.bits_in_runs = runs.bits;
    out.segment_as_kernels = segment_as_kernels(f, tables, coef, nonzero, ac_bits, 512);
    const std::vector<std::uint8_t> segment = once.segment();
    CHECK(out.segment_as_kernels == segment);
    CHECK(segment_as_kernels(f, tables, coef, nonzero, ac_bits, 3) == segment);
    const int hs[3] = {f.h, 1, 1}, vs[3] = {f.v, 1, 1};
    const cli::Bytes bare = cli::baseline_jpeg(p.width, p.height, hs, vs, quality, segment.data(), segment.size());
    out.file = cli::jpeg_with_metadata(bare, p.meta, "blocks.jpg");
    return out;
}

struct Sampling {
    int h, v;
};
const Sampling kSamplings[] = {{1, 1}, {2, 1}, {2, 2}, {1, 2}, {4, 1}, {4, 2}};

}  // namespace

TEST_CASE("jpeg_blocks: a JPEG from the blocks is the file libjpeg-turbo writes", "[cpu]") {
    std::mt19937 rng(7);
    struct Size {
        int w, h;
    };
    const Size sizes[] = {{1, 1}, {7, 5}, {16, 16}, {17, 9}, {33, 47}, {64, 1}, {1, 64}, {250, 131}};
    const int qualities[] = {1, 50, 90, 100};
    int checked = 0;
    for (const Sampling s : kSamplings)
        for (const Size z : sizes)
            for (int content = 0; content < 3; ++content) {
                const int q = qualities[(checked + content) % 4];
                std::uniform_int_distribution<int> any(0, 255);
                auto fill = [&](int c, int x, int y) -> std::uint8_t {
                    switch (content) {
                        case 0: return static_cast<std::uint8_t>(any(rng));                    // noise: long codes
                        case 1: return static_cast<std::uint8_t>((x * 7 + y * 3 + c * 50) & 255); // gradients
                        default: return static_cast<std::uint8_t>(c == 0 ? 255 : 0);            // constant, 0xFF runs
                    }
                };
                cli::JpegPlanes planes = make_planes(z.w, z.h, s.h, s.v, rng, fill);
                const Coded blocks = code_with_blocks(planes, q);
                cli::EncodeOptions opt;
                opt.jpeg_quality = q;
                const cli::Bytes reference = cli::encode_jpeg_planes(planes, opt, "reference.jpg");
                INFO(z.w << "x" << z.h << " sampling " << s.h << "x" << s.v << " content " << content << " quality " << q);
                CHECK(blocks.file.size() == reference.size());
                CHECK(blocks.file == reference);
                CHECK(blocks.bits_in_runs == blocks.bits_at_once);
                ++checked;
            }
}

TEST_CASE("jpeg_blocks: a photograph-sized frame at the default quality", "[cpu]") {
    std::mt19937 rng(11);
    // Smooth content with edges and noise: every run length and magnitude class of real photographs.
    std::normal_distribution<double> noise(0.0, 6.0);
    auto fill = [&](int c, int x, int y) -> std::uint8_t {
        const double base = c == 0 ? 128 + 90 * std::sin(x / 37.0) * std::cos(y / 23.0) : 128 + 40 * std::sin((x + y) / 50.0);
        const double v = base + (((x / 64) + (y / 48)) % 2 ? 30 : -30) + noise(rng);
        return static_cast<std::uint8_t>(std::clamp(v, 0.0, 255.0));
    };
    cli::JpegPlanes planes = make_planes(641, 479, 2, 2, rng, fill);
    const Coded blocks = code_with_blocks(planes, 90);
    cli::EncodeOptions opt;
    opt.jpeg_quality = 90;
    CHECK(blocks.file == cli::encode_jpeg_planes(planes, opt, "reference.jpg"));
}

TEST_CASE("jpeg_blocks: the reciprocal quantiser is the rounded quotient for every 16-bit coefficient", "[cpu]") {
    std::size_t differ = 0;
    for (unsigned q = 1; q <= 255; ++q) {
        const jb::Divisor d = jb::make_divisor(q);
        for (int x = -32767; x <= 32767; ++x) {
            const unsigned a = static_cast<unsigned>(x < 0 ? -x : x);
            const int rounded = static_cast<int>((a + 4 * q) / (8 * q));
            differ += jb::quantize(x, d) != (x < 0 ? -rounded : rounded);
        }
    }
    CHECK(differ == 0);
}
