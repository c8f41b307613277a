// The core's list of cases. Every IMGHIST_BACKEND_CASE runs once on the CPU backend and once on CUDA
// (skipped where there is no device); expected values come from cv::calcHist and an independent loop.
#include <climits>
#include <cstdlib>

#include "core_support.hpp"

#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include <stb/stb_image.h>

using namespace imghist_test;
using imghist::SampleType;

// ---- sizes ------------------------------------------------------------------------------------------------

IMGHIST_BACKEND_CASE("odd sizes, gray 8-bit, 256 and 64 bins", "[core][sizes]") {
    const std::vector<std::pair<int, int>> sizes = {{0, 0}, {0, 5}, {5, 0}, {1, 1}, {1000, 1}, {1, 1000}, {4097, 3},
                                                    {15, 7}, {17, 9}, {31, 31}, {33, 5}, {100, 37}, {1023, 11}, {640, 480}};
    std::uint64_t seed = 1;
    for (auto [w, h] : sizes) {
        TestImage img(w, h, SampleType::U8, 1);
        fill_dist<std::uint8_t>(img, Dist::Uniform, seed++, 255);
        check_against_references(backend, img.view, BinSpec::u8());
        check_against_references(backend, img.view, BinSpec::u8_64());
    }
}

IMGHIST_BACKEND_CASE("odd sizes, every sample type and channel count", "[core][sizes]") {
    const std::vector<std::pair<int, int>> sizes = {{0, 0}, {1, 1}, {1, 77}, {77, 1}, {4097, 3}, {13, 13}, {250, 9}};
    std::uint64_t seed = 100;
    for (int C : {1, 2, 3, 4})
        for (auto [w, h] : sizes) {
            TestImage a(w, h, SampleType::U8, C);
            fill_dist<std::uint8_t>(a, Dist::Uniform, seed++, 255);
            check_against_references(backend, a.view, BinSpec::u8());
            TestImage b(w, h, SampleType::U16, C);
            fill_dist<std::uint16_t>(b, Dist::Uniform, seed++, 65535);
            check_against_references(backend, b.view, BinSpec::even(1024, 0, 65536));
            TestImage c(w, h, SampleType::I32, C);
            fill_dist<std::int32_t>(c, Dist::Uniform, seed++, 1100);
            check_against_references(backend, c.view, BinSpec::bits(10, 1024));
            TestImage d(w, h, SampleType::F32, C);
            std::mt19937_64 rng(seed++);
            d.fill<float>([&](int, int, int) { return std::uniform_real_distribution<float>(-0.1f, 1.1f)(rng); });
            check_against_references(backend, d.view, BinSpec::even(256, 0.0, 1.0));
        }
}

// ---- ROI x-offsets in pitched buffers -----------------------------------------------------------------------

IMGHIST_BACKEND_CASE("ROI x-offsets 0..15, pitched buffers", "[core][roi]") {
    std::uint64_t seed = 7;
    for (std::size_t pitch_extra : {0u, 16u, 1u, 7u}) {  // pitches that are and are not multiples of 16
        for (int C : {1, 3, 4}) {
            const int W = 301, H = 23;
            const std::size_t pitch = static_cast<std::size_t>(W) * C + pitch_extra + 64;
            TestImage img(W, H, SampleType::U8, C, pitch);
            fill_dist<std::uint8_t>(img, Dist::Uniform, seed++, 255);
            for (int x = 0; x <= 15; ++x) {
                const ImageView roi = img.view.roi(x, 1, W - x - 3, H - 2);
                check_against_references(backend, roi, BinSpec::u8());
                if (C == 1) check_against_references(backend, roi, BinSpec::u8_64());
            }
        }
    }
    // 16-bit and float samples: offsets in samples.
    for (std::size_t pitch : {2 * 200 + 32u, 2 * 200 + 6u}) {
        TestImage img(200, 9, SampleType::U16, 1, pitch);
        fill_dist<std::uint16_t>(img, Dist::Normal, seed++, 4095);
        for (int x = 0; x <= 15; ++x)
            check_against_references(backend, img.view.roi(x, 0, 200 - x, 9), BinSpec::even(4096, 0, 4096));
    }
    for (std::size_t pitch : {4 * 3 * 100 + 64u, 4 * 3 * 100 + 4u}) {
        TestImage img(100, 5, SampleType::F32, 3, pitch);
        std::mt19937_64 rng(seed++);
        img.fill<float>([&](int, int, int) { return std::normal_distribution<float>(0.f, 1.f)(rng); });
        for (int x = 0; x <= 15; ++x)
            check_against_references(backend, img.view.roi(x, 1, 100 - x, 4), BinSpec::even(100, -3.0, 3.0));
    }
}

IMGHIST_BACKEND_CASE("views whose start is misaligned inside a tightly packed buffer", "[core][roi]") {
    // A contiguous run that starts at every offset within a 16-byte line (the linear fast path's head).
    for (std::size_t off = 0; off < 16; ++off) {
        TestImage img(777, 5, SampleType::U8, 1, 0, off);
        fill_dist<std::uint8_t>(img, Dist::Uniform, 40 + off, 255);
        check_against_references(backend, img.view, BinSpec::u8());
        TestImage c4(129, 3, SampleType::U8, 4, 0, off);
        fill_dist<std::uint8_t>(c4, Dist::Normal, 90 + off, 255);
        check_against_references(backend, c4.view, BinSpec::u8());
    }
}

// ---- data distributions -----------------------------------------------------------------------------------

IMGHIST_BACKEND_CASE("constant images", "[core][data]") {
    for (int value : {0, 1, 127, 128, 255}) {
        TestImage img(1920, 1080, SampleType::U8, 1);
        img.fill<std::uint8_t>([&](int, int, int) { return value; });
        check_against_references(backend, img.view, BinSpec::u8());
        check_against_references(backend, img.view, BinSpec::u8_64());
    }
    TestImage rgb(333, 211, SampleType::U8, 3);
    rgb.fill<std::uint8_t>([](int, int, int c) { return 50 * c + 3; });
    check_against_references(backend, rgb.view, BinSpec::u8());
    TestImage w16(1000, 100, SampleType::U16, 1);
    w16.fill<std::uint16_t>([](int, int, int) { return 65535; });
    check_against_references(backend, w16.view, BinSpec::even(65536, 0, 65536));
}

/// A flat image (value v) with textured spots: one sample on a diagonal every 101 columns and short runs on
/// every 37th row, so that vectors of equal samples alternate with broken ones at every alignment.
template <class T>
void fill_mostly_flat(TestImage& img, int v, int noise_max) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(v) * 7919 + static_cast<std::uint64_t>(img.view.width));
    std::uniform_int_distribution<int> noise(0, noise_max);
    img.fill<T>([&](int x, int y, int) {
        const bool spot = x % 101 == y % 101 || (y % 37 == 5 && x % 53 < 3);
        return spot ? noise(rng) : v;
    });
}

IMGHIST_BACKEND_CASE("flat and mostly flat images, 8- and 16-bit", "[core][data]") {
    // Flat data is where every increment of a warp meets one counter, and where the 8-bit small-image kernel counts
    // sixteen equal bytes with one addition (its warps whose first vectors are mostly flat). 640x480 views (a
    // 16-byte multiple pitch: the small-image kernel) at every ROI x-offset of 0-15 bytes (the even ones for 16-bit
    // samples), odd pitches and single rows or columns at some; flat values below, inside and above the bin range;
    // the shift and the arithmetic binning rules; wholly and mostly flat images; batches.
    struct Shape {
        int w, h;
        std::vector<int> offsets;  // bytes
    };
    const std::vector<Shape> shapes = {{640, 480, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
                                       {333, 7, {0, 1, 2, 3, 7, 8, 15}},
                                       {1, 999, {0, 4}}, {999, 1, {0, 6}}, {0, 0, {0}}};
    for (const Shape& sh : shapes) {
        for (int off_bytes : sh.offsets) {
            for (SampleType t : {SampleType::U8, SampleType::U16}) {
                const int ss = static_cast<int>(imghist::sample_size(t));
                if (off_bytes % ss != 0) continue;
                const std::vector<int> values = t == SampleType::U8 ? std::vector<int>{0, 200, 255}
                                                                    : std::vector<int>{2, 1000, 5000, 65535};
                const std::vector<BinSpec> specs =
                    t == SampleType::U8
                        ? std::vector<BinSpec>{BinSpec::u8(), BinSpec::even(10, 5, 250)}
                        : std::vector<BinSpec>{BinSpec::even(4096, 0, 65536), BinSpec::even(1024, 0, 65536),
                                               BinSpec::even(4096, 0, 4096), BinSpec::even(1000, 3, 1003.5)};
                for (int v : values) {
                    for (bool textured : {false, true}) {
                        // The view starts off_bytes into a wider parent row: the ROI's alignment.
                        const int off = off_bytes / ss;
                        TestImage parent(sh.w + 16, sh.h, t, 1);
                        if (t == SampleType::U8) {
                            if (textured) fill_mostly_flat<std::uint8_t>(parent, v, 255);
                            else parent.fill<std::uint8_t>([&](int, int, int) { return v; });
                        } else {
                            if (textured) fill_mostly_flat<std::uint16_t>(parent, v, 65535);
                            else parent.fill<std::uint16_t>([&](int, int, int) { return v; });
                        }
                        ImageView view = parent.view;
                        view.width = sh.w;
                        if (sh.w > 0 && sh.h > 0) view.data = static_cast<const unsigned char*>(view.data) + off * ss;
                        CAPTURE(sh.w, sh.h, off_bytes, imghist::to_string(t), v, textured);
                        for (const BinSpec& s : specs) check_against_references(backend, view, s);
                    }
                }
            }
        }
    }
    // Batches of flat and mostly flat frames (the batch kernel's counting loop).
    std::vector<TestImage> imgs;
    for (int i = 0; i < 4; ++i) {
        imgs.emplace_back(640, 480, SampleType::U16, 1);
        if (i % 2) fill_mostly_flat<std::uint16_t>(imgs.back(), 3000 + i, 65535);
        else imgs.back().fill<std::uint16_t>([i](int, int, int) { return 3000 + i; });
    }
    for (int i = 0; i < 4; ++i) {
        imgs.emplace_back(640, 480, SampleType::U8, 1);
        if (i % 2) fill_mostly_flat<std::uint8_t>(imgs.back(), 17 * i, 255);
        else imgs.back().fill<std::uint8_t>([i](int, int, int) { return 17 * i; });
    }
    std::vector<DeviceCopy> dev;
    if (backend == Backend::Cuda)
        for (auto& img : imgs) dev.emplace_back(img.view);
    imghist::Options opt;
    opt.backend = backend;
    for (int first : {0, 4}) {
        std::vector<ImageView> views;
        for (int i = first; i < first + 4; ++i) views.push_back(backend == Backend::Cuda ? dev[i].view : imgs[i].view);
        const BinSpec s = first == 0 ? BinSpec::even(4096, 0, 65536) : BinSpec::u8();
        const auto hs = imghist::calc_hist_batch(views, s, opt);
        REQUIRE(hs.size() == 4);
        for (int i = 0; i < 4; ++i) {
            CAPTURE(first + i);
            const Histogram ref = plain_reference(imgs[first + i].view, s);
            REQUIRE(hs[i].counts == ref.counts);
            REQUIRE(hs[i].out_of_range == ref.out_of_range);
        }
    }
}

IMGHIST_BACKEND_CASE("the five test distributions", "[core][data]") {
    std::uint64_t seed = 1000;
    for (Dist d : {Dist::Uniform, Dist::Normal, Dist::Binomial, Dist::Poisson, Dist::Exponential}) {
        INFO(dist_name(d));
        TestImage g(1531, 257, SampleType::U8, 1);
        fill_dist<std::uint8_t>(g, d, seed++, 255);
        check_against_references(backend, g.view, BinSpec::u8());
        check_against_references(backend, g.view, BinSpec::u8_64());
        check_against_references(backend, g.view, BinSpec::even(100, 10, 200));  // general table path
        TestImage rgba(401, 99, SampleType::U8, 4);
        fill_dist<std::uint8_t>(rgba, d, seed++, 255);
        check_against_references(backend, rgba.view, BinSpec::u8());
        TestImage w(523, 101, SampleType::U16, 1);
        fill_dist<std::uint16_t>(w, d, seed++, 1023);
        check_against_references(backend, w.view, BinSpec::even(1024, 0, 1024));
        check_against_references(backend, w.view, BinSpec::even(1000, 3, 1003.5));  // arithmetic path
    }
}

// ---- bin counts and ranges ----------------------------------------------------------------------------------

IMGHIST_BACKEND_CASE("8-bit with any bin count and range", "[core][bins]") {
    TestImage img(517, 63, SampleType::U8, 1);
    fill_dist<std::uint8_t>(img, Dist::Uniform, 5, 255);
    for (BinSpec s : {BinSpec::even(1, 0, 256), BinSpec::even(2, 0, 256), BinSpec::even(7, 0, 256),
                      BinSpec::even(255, 0, 256), BinSpec::even(256, 0, 255), BinSpec::even(16, 32, 64),
                      BinSpec::even(30, 0.5, 200.25), BinSpec::even(256, 0, 512), BinSpec::even(3, -10, 10),
                      BinSpec::even(50, 200, 1000)})
        check_against_references(backend, img.view, s);
}

IMGHIST_BACKEND_CASE("uint16 with 1024, 4096 and 65536 bins", "[core][bins][u16]") {
    TestImage img(1000, 131, SampleType::U16, 1);
    fill_dist<std::uint16_t>(img, Dist::Uniform, 11, 65535);
    check_against_references(backend, img.view, BinSpec::even(1024, 0, 65536));
    check_against_references(backend, img.view, BinSpec::even(4096, 0, 65536));
    check_against_references(backend, img.view, BinSpec::even(65536, 0, 65536));
    check_against_references(backend, img.view, BinSpec::even(65536, 0, 65535));  // non-power-of-two range
    check_against_references(backend, img.view, BinSpec::even(1024, 100, 60000));
    TestImage rgb(300, 40, SampleType::U16, 3);
    fill_dist<std::uint16_t>(rgb, Dist::Normal, 12, 65535);
    check_against_references(backend, rgb.view, BinSpec::even(65536, 0, 65536));
    check_against_references(backend, rgb.view, BinSpec::even(4096, 0, 65536));
}

IMGHIST_BACKEND_CASE("int32 10-bit samples with out-of-range values", "[core][bins][i32]") {
    TestImage img(1024 + 7, 33, SampleType::I32, 1);
    std::mt19937_64 rng(3);
    const int specials[] = {-1, 1024, INT_MAX, INT_MIN, 0, 1023, 1025, -1024};
    img.fill<std::int32_t>([&](int x, int, int) {
        if (x % 97 == 0) return specials[(x / 97) % 8];
        return static_cast<int>(rng() % 1024);
    });
    for (BinSpec s : {BinSpec::bits(10, 1024), BinSpec::bits(10, 256), BinSpec::even(1000, 0, 1024),
                      BinSpec::even(1024, -512, 512)}) {
        check_against_references(backend, img.view, s);
        if (s == BinSpec::bits(10, 1024)) {
            const Histogram h = run_backend(backend, img.view, s);
            // -1, 1024, INT_MAX, INT_MIN, 1025, -1024 are dropped and counted: 6 of every 8 specials.
            std::uint64_t specials_out = 0;
            for (int x = 0; x < img.view.width; x += 97) {
                const int v = specials[(x / 97) % 8];
                specials_out += (v < 0 || v >= 1024) ? 1 : 0;
            }
            REQUIRE(h.out_of_range[0] == specials_out * 33);
            REQUIRE(h.total(0) + h.out_of_range[0] == img.view.pixels());
        }
    }
}

IMGHIST_BACKEND_CASE("float32 with NaN and infinities dropped", "[core][bins][f32]") {
    TestImage img(611, 17, SampleType::F32, 1);
    std::mt19937_64 rng(9);
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    std::uint64_t expected_oor = 0;  // counted as the samples are made: NaN, +-inf and anything outside [0, 1)
    img.fill<float>([&](int x, int, int) {
        float v;
        switch (x % 50) {
            case 0: v = nan; break;
            case 1: v = inf; break;
            case 2: v = -inf; break;
            case 3: v = 1.0f; break;   // == high: out of range
            case 4: v = 0.0f; break;   // == low: bin 0
            case 5: v = -0.0f; break;  // == low
            default: v = std::uniform_real_distribution<float>(-0.2f, 1.2f)(rng);
        }
        expected_oor += (v >= 0.0f && v < 1.0f) ? 0 : 1;
        return v;
    });
    const BinSpec s = BinSpec::even(256, 0.0, 1.0);
    check_against_references(backend, img.view, s, nullptr, /*with_opencv=*/false);  // OpenCV bins NaN
    const Histogram h = run_backend(backend, img.view, s);
    REQUIRE(expected_oor > 4 * 17);  // the four special values of every row at least
    REQUIRE(h.out_of_range[0] == expected_oor);
    REQUIRE(h.total(0) + h.out_of_range[0] == img.view.pixels());
    // Finite data only: also equal to cv::calcHist.
    TestImage fin(611, 17, SampleType::F32, 3);
    fin.fill<float>([&](int, int, int) { return std::uniform_real_distribution<float>(-10.f, 300.f)(rng); });
    check_against_references(backend, fin.view, BinSpec::even(256, 0, 256));
    check_against_references(backend, fin.view, BinSpec::even(37, -5.5, 99.25));
}

// ---- masks --------------------------------------------------------------------------------------------------

IMGHIST_BACKEND_CASE("masks", "[core][mask]") {
    std::uint64_t seed = 77;
    for (int C : {1, 3, 4}) {
        for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {333, 71}, {64, 64}, {4097, 3}}) {
            TestImage img(w, h, SampleType::U8, C, static_cast<std::size_t>(w) * C + 5);
            fill_dist<std::uint8_t>(img, Dist::Uniform, seed++, 255);
            TestImage mask(w, h, SampleType::U8, 1, static_cast<std::size_t>(w) + 3, 1);
            std::mt19937_64 rng(seed++);
            mask.fill<std::uint8_t>([&](int, int, int) { return (rng() % 3 == 0) ? 0 : static_cast<int>(rng() % 255) + 1; });
            check_against_references(backend, img.view, BinSpec::u8(), &mask.view);
            check_against_references(backend, img.view.roi(w > 5 ? 3 : 0, 0, w > 5 ? w - 5 : w, h),
                                     BinSpec::u8_64(), nullptr);
            TestImage zero(w, h, SampleType::U8, 1);
            zero.fill<std::uint8_t>([](int, int, int) { return 0; });
            const Histogram hz = run_backend(backend, img.view, BinSpec::u8(), &zero.view);
            for (int c = 0; c < C; ++c) REQUIRE(hz.total(c) == 0);
        }
    }
    TestImage w16(200, 50, SampleType::U16, 1);
    fill_dist<std::uint16_t>(w16, Dist::Normal, 5, 65535);
    TestImage m(200, 50, SampleType::U8, 1);
    m.fill<std::uint8_t>([](int x, int y, int) { return (x + y) % 2 ? 255 : 0; });
    check_against_references(backend, w16.view, BinSpec::even(65536, 0, 65536), &m.view);
    check_against_references(backend, w16.view, BinSpec::even(300, 1000, 50000), &m.view);
}

// ---- one channel of a multi-channel image (Options::channel) -----------------------------------------------

namespace {
/// Channel c of a full-image reference, as a one-channel histogram.
Histogram channel_of(const Histogram& all, int c) {
    Histogram h = Histogram::zeros(all.spec, 1);
    std::copy(all.channel(c), all.channel(c) + all.spec.bins, h.counts.begin());
    h.out_of_range[0] = all.out_of_range[c];
    return h;
}
}  // namespace

IMGHIST_BACKEND_CASE("one channel of a multi-channel image: sample types, ROI offsets, masks", "[core][channel]") {
    std::uint64_t seed = 2100;
    struct Kind {
        SampleType type;
        BinSpec spec;
        double maxv;
    };
    const std::vector<Kind> kinds{{SampleType::U8, BinSpec::u8(), 255},
                                  {SampleType::U8, BinSpec::even(10, 20, 200), 255},
                                  {SampleType::U16, BinSpec::even(1024, 0, 65536), 65535},
                                  {SampleType::U16, BinSpec::even(77, 100.5, 60000), 65535},
                                  {SampleType::I32, BinSpec::bits(10, 1024), 1100},
                                  {SampleType::F32, BinSpec::even(100, 0.25, 200), 255}};
    for (const Kind& k : kinds)
        for (int C : {2, 3, 4})
            for (int x0 : {0, 1, 3, 7, 15}) {
                const int W = 97, H = 13;
                TestImage img(W + 16, H, k.type, C, (W + 16) * C * imghist::sample_size(k.type) + 8);
                switch (k.type) {
                    case SampleType::U8: fill_dist<std::uint8_t>(img, Dist::Normal, seed++, k.maxv); break;
                    case SampleType::U16: fill_dist<std::uint16_t>(img, Dist::Uniform, seed++, k.maxv); break;
                    case SampleType::I32: fill_dist<std::int32_t>(img, Dist::Uniform, seed++, k.maxv); break;
                    case SampleType::F32: {
                        std::mt19937_64 rng(seed++);
                        img.fill<float>([&](int, int, int) { return std::uniform_real_distribution<float>(-5.f, 260.f)(rng); });
                        break;
                    }
                }
                TestImage mask(W, H, SampleType::U8, 1);
                mask.fill<std::uint8_t>([&](int x, int y, int) { return (x * 3 + y * 5 + x0) % 4 ? 255 : 0; });
                const ImageView roi = img.view.roi(x0, 0, W, H);
                for (bool masked : {false, true}) {
                    const ImageView* m = masked ? &mask.view : nullptr;
                    const Histogram all = plain_reference(roi, k.spec, m);
                    for (int c = 0; c < C; ++c) {
                        CAPTURE(imghist::to_string(k.type), k.spec.bins, C, x0, masked, c);
                        imghist::Options opt;
                        opt.backend = backend;
                        opt.channel = c;
                        std::optional<DeviceCopy> di, dm;
                        if (backend == Backend::Cuda) {
                            di.emplace(roi);
                            if (m) dm.emplace(*m);
                        }
                        if (m) opt.mask = backend == Backend::Cuda ? dm->view : *m;
                        const Histogram got = imghist::calc_hist(backend == Backend::Cuda ? di->view : roi, k.spec, opt);
                        const Histogram want = channel_of(all, c);
                        REQUIRE(got.channels == 1);
                        REQUIRE(got.counts == want.counts);
                        REQUIRE(got.out_of_range == want.out_of_range);
                        // accumulateHist adds into a one-channel histogram.
                        Histogram twice = got;
                        imghist::accumulate_hist(backend == Backend::Cuda ? di->view : roi, twice, opt);
                        for (int b = 0; b < k.spec.bins; ++b) REQUIRE(twice.counts[b] == 2 * want.counts[b]);
                    }
                }
            }
}

IMGHIST_BACKEND_CASE("one channel of 8-bit frames: gray, BGR and BGRA at frame sizes, odd widths", "[core][channel]") {
    std::uint64_t seed = 2300;
    for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {3, 2}, {7, 5}, {641, 19}, {1920, 1080}})
        for (int C : {1, 3, 4}) {
            TestImage img(w, h, SampleType::U8, C);
            fill_dist<std::uint8_t>(img, seed % 2 ? Dist::Uniform : Dist::Constant, seed, 255);
            ++seed;
            const Histogram all = plain_reference(img.view, BinSpec::u8());
            for (int c = 0; c < C; ++c) {
                CAPTURE(w, h, C, c);
                imghist::Options opt;
                opt.backend = backend;
                opt.channel = c;
                std::optional<DeviceCopy> di;
                if (backend == Backend::Cuda) di.emplace(img.view);
                const Histogram got = imghist::calc_hist(backend == Backend::Cuda ? di->view : img.view, BinSpec::u8_64(), opt);
                REQUIRE(got.counts == channel_of(plain_reference(img.view, BinSpec::u8_64()), c).counts);
                const Histogram got256 = imghist::calc_hist(backend == Backend::Cuda ? di->view : img.view, BinSpec::u8(), opt);
                REQUIRE(got256.counts == channel_of(all, c).counts);
            }
        }
}

IMGHIST_BACKEND_CASE("one channel in a batch; channels outside the image are refused", "[core][channel]") {
    std::vector<TestImage> imgs;
    for (int i = 0; i < 4; ++i) {
        imgs.emplace_back(40 + 17 * i, 3 + i, SampleType::U8, 3);
        fill_dist<std::uint8_t>(imgs.back(), Dist::Uniform, 2400 + i, 255);
    }
    std::vector<DeviceCopy> dev;
    std::vector<ImageView> views;
    for (auto& i : imgs)
        if (backend == Backend::Cuda) dev.emplace_back(i.view);
    for (std::size_t i = 0; i < imgs.size(); ++i) views.push_back(backend == Backend::Cuda ? dev[i].view : imgs[i].view);
    imghist::Options opt;
    opt.backend = backend;
    opt.channel = 2;
    const auto hs = imghist::calc_hist_batch(views, BinSpec::u8_64(), opt);
    for (std::size_t i = 0; i < imgs.size(); ++i) {
        REQUIRE(hs[i].channels == 1);
        REQUIRE(hs[i].counts == channel_of(plain_reference(imgs[i].view, BinSpec::u8_64()), 2).counts);
    }
    for (int bad : {-2, 3, 4}) {
        opt.channel = bad;
        CAPTURE(bad);
        REQUIRE_THROWS_AS(imghist::calc_hist(views[0], BinSpec::u8(), opt), imghist::Error);
        REQUIRE_THROWS_AS(imghist::calc_hist_batch(views, BinSpec::u8(), opt), imghist::Error);
    }
    opt.channel = 1;
    Histogram three = Histogram::zeros(BinSpec::u8(), 3);  // a selected channel adds into one channel only
    REQUIRE_THROWS_AS(imghist::accumulate_hist(views[0], three, opt), imghist::Error);
}

// ---- batches ------------------------------------------------------------------------------------------------

IMGHIST_BACKEND_CASE("batch of differently sized images", "[core][batch]") {
    std::vector<TestImage> imgs;
    std::vector<std::pair<int, int>> sizes = {{640, 480}, {1, 1}, {0, 0}, {17, 3}, {4097, 3}, {100, 100}, {3, 999}, {0, 4}};
    std::uint64_t seed = 500;
    for (auto [w, h] : sizes) {
        imgs.emplace_back(w, h, SampleType::U8, 1, static_cast<std::size_t>(w) + (seed % 2 ? 9 : 0));
        fill_dist<std::uint8_t>(imgs.back(), static_cast<Dist>(seed % 5), seed, 255);
        ++seed;
    }
    std::vector<DeviceCopy> dev;
    std::vector<ImageView> views;
    for (auto& i : imgs) {
        if (backend == Backend::Cuda) {
            dev.emplace_back(i.view);
        }
    }
    for (std::size_t i = 0; i < imgs.size(); ++i) views.push_back(backend == Backend::Cuda ? dev[i].view : imgs[i].view);
    imghist::Options opt;
    opt.backend = backend;
    for (BinSpec s : {BinSpec::u8(), BinSpec::u8_64(), BinSpec::even(10, 5, 250)}) {
        const auto hs = imghist::calc_hist_batch(views, s, opt);
        REQUIRE(hs.size() == imgs.size());
        for (std::size_t i = 0; i < imgs.size(); ++i) {
            CAPTURE(i);
            const Histogram ref = plain_reference(imgs[i].view, s);
            REQUIRE(hs[i].counts == ref.counts);
            REQUIRE(hs[i].out_of_range == ref.out_of_range);
            REQUIRE(hs[i].backend == backend);
        }
    }
    // Batch with masks, 3 channels, 16-bit.
    std::vector<TestImage> c3, masks;
    std::vector<ImageView> v3, vm;
    std::vector<DeviceCopy> d3, dm;
    for (int i = 0; i < 5; ++i) {
        c3.emplace_back(50 + 31 * i, 7 + i, SampleType::U16, 3);
        fill_dist<std::uint16_t>(c3.back(), Dist::Normal, 900 + i, 4095);
        masks.emplace_back(50 + 31 * i, 7 + i, SampleType::U8, 1);
        masks.back().fill<std::uint8_t>([i](int x, int y, int) { return (x * 7 + y + i) % 5 ? 1 : 0; });
    }
    for (int i = 0; i < 5; ++i) {
        if (backend == Backend::Cuda) {
            d3.emplace_back(c3[i].view);
            dm.emplace_back(masks[i].view);
        }
    }
    for (int i = 0; i < 5; ++i) {
        v3.push_back(backend == Backend::Cuda ? d3[i].view : c3[i].view);
        vm.push_back(backend == Backend::Cuda ? dm[i].view : masks[i].view);
    }
    const BinSpec s = BinSpec::bits(12, 4096);
    const auto hs = imghist::calc_hist_batch(v3, s, opt, vm);
    for (int i = 0; i < 5; ++i) {
        const Histogram ref = plain_reference(c3[i].view, s, &masks[i].view);
        REQUIRE(hs[i].counts == ref.counts);
    }
}

// ---- 64-bit counts -------------------------------------------------------------------------------------------

IMGHIST_BACKEND_CASE("accumulating into 64-bit counts past 2^32", "[core][u64]") {
    TestImage img(1000, 100, SampleType::U8, 1);
    img.fill<std::uint8_t>([](int x, int, int) { return x % 2 ? 200 : 7; });
    Histogram h = Histogram::zeros(BinSpec::u8(), 1);
    const std::uint64_t start = 0xFFFFFFFFull - 10;  // one more image pushes bin 200 past 2^32
    h.counts[200] = start;
    imghist::Options opt;
    opt.backend = backend;
    std::optional<DeviceCopy> d;
    if (backend == Backend::Cuda) d.emplace(img.view);
    imghist::accumulate_hist(backend == Backend::Cuda ? d->view : img.view, h, opt);
    REQUIRE(h.counts[200] == start + 50000);
    REQUIRE(h.counts[7] == 50000);
    REQUIRE(h.counts[200] > 0xFFFFFFFFull);
}

// ---- real photographs -----------------------------------------------------------------------------------------

namespace {
struct Photo {
    std::vector<unsigned char> pixels;
    int w = 0, h = 0, c = 0;
};
Photo load_photo(const std::string& name) {
    Photo p;
    const std::string path = source_dir() + "/samples/images/" + name;
    unsigned char* data = stbi_load(path.c_str(), &p.w, &p.h, &p.c, 0);
    if (!data) FAIL("cannot load " << path << ": " << stbi_failure_reason());
    p.pixels.assign(data, data + static_cast<std::size_t>(p.w) * p.h * p.c);
    stbi_image_free(data);
    return p;
}
}  // namespace

IMGHIST_BACKEND_CASE("real photographs equal OpenCV (256, 64 bins, per channel)", "[core][photo]") {
    for (const char* name : {"camera.png", "astronaut.png", "coffee.png"}) {
        INFO(name);
        Photo p = load_photo(name);
        const ImageView v = ImageView::host(p.pixels.data(), p.w, p.h, SampleType::U8, p.c);
        check_against_references(backend, v, BinSpec::u8());
        check_against_references(backend, v, BinSpec::u8_64());
        // A ROI at an unaligned x-offset, and a gray conversion with OpenCV's weights.
        check_against_references(backend, v.roi(13, 7, p.w - 20, p.h - 9), BinSpec::u8());
        if (p.c == 3) {
            cv::Mat rgb(p.h, p.w, CV_8UC3, p.pixels.data()), gray;
            cv::cvtColor(rgb, gray, cv::COLOR_RGB2GRAY);
            check_against_references(backend, ImageView::host(gray.data, gray.cols, gray.rows, SampleType::U8, 1, gray.step),
                                     BinSpec::u8());
        }
    }
}

// ---- wide histograms and exact float boundaries -------------------------------------------------------------

IMGHIST_BACKEND_CASE("wide histograms: 65536 bins with masks, channels, accumulation and batches", "[core][bins][wide]") {
    TestImage w(777, 45, SampleType::U16, 4);
    fill_dist<std::uint16_t>(w, Dist::Uniform, 31, 65535);
    check_against_references(backend, w.view, BinSpec::even(65536, 0, 65536));
    check_against_references(backend, w.view, BinSpec::even(50000, 7, 65000));
    TestImage g(3001, 17, SampleType::U16, 1);
    fill_dist<std::uint16_t>(g, Dist::Normal, 32, 65535);
    TestImage m(3001, 17, SampleType::U8, 1);
    m.fill<std::uint8_t>([](int x, int y, int) { return (x ^ y) & 1; });
    check_against_references(backend, g.view, BinSpec::even(65536, 0, 65536), &m.view);
    TestImage i32(999, 21, SampleType::I32, 1);
    std::mt19937_64 rng(33);
    i32.fill<std::int32_t>([&](int, int, int) { return static_cast<int>(rng() % 70000) - 1000; });
    check_against_references(backend, i32.view, BinSpec::even(65536, 0, 65536));
    check_against_references(backend, i32.view, BinSpec::even(60000, -500, 68000));
    TestImage f(1234, 11, SampleType::F32, 2);
    f.fill<float>([&](int, int, int) { return std::uniform_real_distribution<float>(-1.f, 2.f)(rng); });
    check_against_references(backend, f.view, BinSpec::even(65536, 0.0, 1.0));
    check_against_references(backend, f.view, BinSpec::even(40000, -0.5, 1.5));

    // Accumulate twice into 64-bit counts.
    Histogram h = Histogram::zeros(BinSpec::even(65536, 0, 65536), 1);
    imghist::Options opt;
    opt.backend = backend;
    std::optional<DeviceCopy> d;
    if (backend == Backend::Cuda) d.emplace(g.view);
    const ImageView v = backend == Backend::Cuda ? d->view : g.view;
    imghist::accumulate_hist(v, h, opt);
    imghist::accumulate_hist(v, h, opt);
    const Histogram ref = plain_reference(g.view, BinSpec::even(65536, 0, 65536));
    for (std::size_t i = 0; i < ref.counts.size(); ++i) REQUIRE(h.counts[i] == 2 * ref.counts[i]);

    // A batch of wide histograms.
    const auto hs = imghist::calc_hist_batch({v, v}, BinSpec::even(65536, 0, 65536), opt);
    REQUIRE(hs[0].counts == ref.counts);
    REQUIRE(hs[1].counts == ref.counts);
}

IMGHIST_BACKEND_CASE("float samples at and next to every bin boundary", "[core][bins][f32]") {
    for (BinSpec s : {BinSpec::even(256, 0.0, 1.0), BinSpec::even(100, 0.0, 3.0), BinSpec::even(64, 0.0, 0.25),
                      BinSpec::even(1000, -2.0, 2.0), BinSpec::even(4096, 0.0, 4096.0)}) {
        std::vector<float> vals;
        for (int k = 0; k <= s.bins; ++k) {
            const float t = static_cast<float>(s.low + (s.high - s.low) * k / s.bins);
            vals.push_back(t);
            vals.push_back(std::nextafter(t, -1e30f));
            vals.push_back(std::nextafter(t, 1e30f));
        }
        for (float x : {0.0f, -0.0f, 1e-45f, 1e-38f, -1e-45f, std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest(),
                        std::nextafter(static_cast<float>(s.high), 0.0f), std::numeric_limits<float>::quiet_NaN(),
                        std::numeric_limits<float>::infinity()})
            vals.push_back(x);
        const int n = static_cast<int>(vals.size());
        TestImage img(n, 1, SampleType::F32, 1);
        img.fill<float>([&](int x, int, int) { return vals[x]; });
        check_against_references(backend, img.view, s, nullptr, /*with_opencv=*/false);
    }
}
