// CLAHE's CPU passes against plain loops written here. The blend (filters/src/clahe_blend.cpp, compiled into
// this test): both 8-bit implementations and the 16-bit one against the rule — each of the four table
// entries as a float, weighted by the column's (a, 1 - a) and the row's (ya, 1 - ya) in OpenCV's order,
// rounded half to even, saturated — over every run length to 300 (the vector implementation's whole blocks
// and masked tails), sources 0, 1, 13 and 63 bytes past a 64-byte boundary, in place and not, with nothing
// past the run touched. The tables' redistribution of clipped counts (fmath::ClaheRedistribution, bins in
// order, and fmath::clahe_redistributed, any bin) against OpenCV's loop.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "filters/cpu/clahe_blend.hpp"
#include "support.hpp"

namespace {

using imghist::detail::ClaheQuad;

template <class T>
T plain_blend(int l11, int l12, int l21, int l22, float a, float a1, float ya, float ya1, int max_value) {
    const float top = static_cast<float>(l11) * a1 + static_cast<float>(l12) * a;
    const float bottom = static_cast<float>(l21) * a1 + static_cast<float>(l22) * a;
    const float res = top * ya1 + bottom * ya;
    const long r = std::lrint(res);
    return static_cast<T>(r < 0 ? 0 : (r > max_value ? max_value : r));
}

/// Weights as the pass gets them: a in [0, 1), a1 = 1 - a in float; some exact halves and zeros, where
/// rounding half to even decides.
void random_weights(std::mt19937& rng, std::vector<float>& a, std::vector<float>& a1) {
    std::uniform_real_distribution<float> u(0.f, 1.f);
    for (std::size_t i = 0; i < a.size(); ++i) {
        a[i] = i % 7 == 0 ? 0.5f : i % 11 == 0 ? 0.f : u(rng);
        a1[i] = 1.f - a[i];
    }
}

/// impl(src, dst, n, quad, a, a1, ya, ya1) on T samples with `levels` table entries.
template <class T, class Impl>
void check_impl(int levels, Impl&& impl) {
    std::mt19937 rng(91);
    std::vector<std::vector<T>> tables(4, std::vector<T>(levels));
    for (auto& t : tables)
        for (auto& e : t) e = static_cast<T>(rng() % levels);
    const ClaheQuad<T> q{tables[0].data(), tables[1].data(), tables[2].data(), tables[3].data()};
    const int max_value = levels - 1;
    for (float ya : {0.f, 0.25f, 0.5f, 0.8125f, 0.3333f})
        for (int n = 0; n <= 300; ++n)
            for (std::size_t offset : {std::size_t(0), std::size_t(1), std::size_t(13), std::size_t(63)}) {
                const float ya1 = 1.f - ya;
                const std::size_t bytes = (static_cast<std::size_t>(n) + 64) * sizeof(T);
                imghist_test::HostBuffer sbuf(bytes, offset * sizeof(T)), dbuf(bytes, (offset * 7 % 64) * sizeof(T));
                T* src = reinterpret_cast<T*>(sbuf.ptr);
                T* dst = reinterpret_cast<T*>(dbuf.ptr);
                std::vector<float> a(n), a1(n);
                random_weights(rng, a, a1);
                for (int i = 0; i < n + 64; ++i) src[i] = static_cast<T>(rng() % levels);
                for (int i = 0; i < n + 64; ++i) dst[i] = static_cast<T>(0xA5);
                std::vector<T> expected(n);
                for (int i = 0; i < n; ++i) {
                    const int v = src[i];
                    expected[i] = plain_blend<T>(q.t11[v], q.t12[v], q.t21[v], q.t22[v], a[i], a1[i], ya, ya1, max_value);
                }
                INFO(n << " samples, offset " << offset << ", ya " << ya);
                impl(src, dst, n, q, a.data(), a1.data(), ya, ya1);
                REQUIRE(std::vector<T>(dst, dst + n) == expected);
                for (int i = n; i < n + 64; ++i) REQUIRE(dst[i] == static_cast<T>(0xA5));  // nothing past the run
                impl(src, src, n, q, a.data(), a1.data(), ya, ya1);  // in place
                REQUIRE(std::vector<T>(src, src + n) == expected);
            }
}

/// The 8-bit tables as floats, as the dispatching entry hands them to the scalar implementation.
struct FloatTables {
    std::vector<float> t[4];
    explicit FloatTables(const ClaheQuad<std::uint8_t>& q) {
        const std::uint8_t* src[4] = {q.t11, q.t12, q.t21, q.t22};
        for (int k = 0; k < 4; ++k) t[k].assign(src[k], src[k] + 256);
    }
    ClaheQuad<float> quad() const { return {t[0].data(), t[1].data(), t[2].data(), t[3].data()}; }
};

}  // namespace

TEST_CASE("CLAHE blend, portable implementation, equals a plain loop (8 and 16 bits)", "[filters][clahe][cpu]") {
    check_impl<std::uint8_t>(256, [](const std::uint8_t* s, std::uint8_t* d, int n, const ClaheQuad<std::uint8_t>& q,
                                     const float* a, const float* a1, float ya, float ya1) {
        imghist::detail::clahe_blend_run_portable(s, d, n, q, a, a1, ya, ya1, 255);
    });
    check_impl<std::uint8_t>(256, [](const std::uint8_t* s, std::uint8_t* d, int n, const ClaheQuad<std::uint8_t>& q,
                                     const float* a, const float* a1, float ya, float ya1) {
        const FloatTables f(q);
        imghist::detail::clahe_blend_run_portable(s, d, n, f.quad(), a, a1, ya, ya1, 255);
    });
    check_impl<std::uint16_t>(65536, [](const std::uint16_t* s, std::uint16_t* d, int n,
                                        const ClaheQuad<std::uint16_t>& q, const float* a, const float* a1, float ya,
                                        float ya1) { imghist::detail::clahe_blend_run_portable(s, d, n, q, a, a1, ya, ya1, 65535); });
}

TEST_CASE("CLAHE blend, AVX-512 VBMI implementation, equals a plain loop", "[filters][clahe][cpu]") {
    if (!imghist::detail::clahe_blend_vbmi_supported()) {
        std::printf("%s: this CPU has no AVX-512 VBMI (or this build no x86-64 vector code), case skipped\n",
                    imghist_test::kSkipMarker);
        return;
    }
    check_impl<std::uint8_t>(256, [](const std::uint8_t* s, std::uint8_t* d, int n, const ClaheQuad<std::uint8_t>& q,
                                     const float* a, const float* a1, float ya, float ya1) {
        imghist::detail::clahe_blend_run_vbmi(s, d, n, q, a, a1, ya, ya1);
    });
}

TEST_CASE("CLAHE blend, the dispatching entry, equals a plain loop", "[filters][clahe][cpu]") {
    check_impl<std::uint8_t>(256, [](const std::uint8_t* s, std::uint8_t* d, int n, const ClaheQuad<std::uint8_t>& q,
                                     const float* a, const float* a1, float ya, float ya1) {
        const FloatTables f(q);
        imghist::detail::clahe_blend_run(s, d, n, q, f.quad(), a, a1, ya, ya1);
    });
}

TEST_CASE("CLAHE's redistribution of clipped counts equals OpenCV's loop", "[filters][clahe][cpu]") {
    std::mt19937 rng(5);
    for (int bins : {1, 2, 3, 7, 256, 4096, 65536})
        for (int round = 0; round < 40; ++round) {
            std::vector<unsigned int> hist(bins);
            for (auto& h : hist) h = rng() % (round % 4 == 0 ? 3 : 700);
            const int clip = round % 5 == 0 ? 0 : 1 + static_cast<int>(rng() % 300);
            long long clipped = 0;
            if (clip > 0)
                for (unsigned int h : hist)
                    if (h > static_cast<unsigned int>(clip)) clipped += h - clip;
            // cv::CLAHE (clahe.cpp, CLAHE_CalcLut_Body): clip, then spread `clipped` evenly and the remainder
            // one each from bin 0 at a fixed step.
            std::vector<long long> expected(hist.begin(), hist.end());
            if (clip > 0) {
                for (auto& e : expected) e = std::min<long long>(e, clip);
                const long long batch = clipped / bins;
                long long residual = clipped - batch * bins;
                for (auto& e : expected) e += batch;
                if (residual != 0) {
                    const long long step = std::max<long long>(bins / residual, 1);
                    for (long long i = 0; i < bins && residual > 0; i += step, --residual) ++expected[i];
                }
            }
            INFO(bins << " bins, clip " << clip << ", clipped " << clipped);
            imghist::fmath::ClaheRedistribution in_order(clip, bins, clipped);
            for (int b = 0; b < bins; ++b) {
                REQUIRE(in_order.next(hist[b]) == expected[b]);
                REQUIRE(imghist::fmath::clahe_redistributed(hist[b], b, clip, bins, clipped) == expected[b]);
            }
        }
}
