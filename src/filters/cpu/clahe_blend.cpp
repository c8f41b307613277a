// imghist filters — CLAHE's interpolation pass on the CPU, AVX-512 VBMI implementation (clahe_blend.hpp).
//
// The scalar blend costs four table loads and four conversions per pixel. Here each of the run's four
// tables sits in four registers (vbmi.hpp): 64 pixels are looked up per table with two byte-permutes, then
// blended 16 at a time in float lanes with exactly the scalar's operations — the same products and sums in
// the same order, each rounded alone (this library is compiled with -ffp-contract=off: no fused
// multiply-adds) — and converted with the same rounding (the current mode, half to even by default, as
// lrintf and cvRound), so the bytes equal fmath::clahe_blend's.
#include "filters/cpu/clahe_blend.hpp"

#include "filters/cpu/vbmi.hpp"

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 takes the _mm512_undefined_*() placeholders inside its own intrinsics (conversions, min / max) for
// uninitialised variables (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace imghist::detail {

#ifdef IMGHIST_HAVE_VBMI
namespace {

/// Bytes k*16 .. k*16+15 as floats.
template <int k>
IMGHIST_VBMI inline __m512 quarter_as_float(__m512i bytes) {
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(bytes, k)));
}

/// 16 blended pixels: the bytes k*16 .. k*16+15 of the four looked-up vectors, weights from a / a1.
template <int k>
IMGHIST_VBMI inline __m128i blend16(__m512i l11, __m512i l12, __m512i l21, __m512i l22, __m512 a, __m512 a1,
                                    __m512 ya, __m512 ya1) {
    const __m512 top = _mm512_add_ps(_mm512_mul_ps(quarter_as_float<k>(l11), a1),
                                     _mm512_mul_ps(quarter_as_float<k>(l12), a));
    const __m512 bottom = _mm512_add_ps(_mm512_mul_ps(quarter_as_float<k>(l21), a1),
                                        _mm512_mul_ps(quarter_as_float<k>(l22), a));
    const __m512 res = _mm512_add_ps(_mm512_mul_ps(top, ya1), _mm512_mul_ps(bottom, ya));
    // clamp_int(round_even(res), 0, 255); an out-of-range conversion gives INT_MIN there as here, hence 0.
    __m512i r = _mm512_cvtps_epi32(res);
    r = _mm512_min_epi32(_mm512_max_epi32(r, _mm512_setzero_si512()), _mm512_set1_epi32(255));
    return _mm512_cvtepi32_epi8(r);
}

/// Weights w[16k .. 16k+15] of a block whose pixels are the bits of m (none past the run is read).
IMGHIST_VBMI inline __m512 weights(__mmask64 m, int k, const float* w) {
    return _mm512_maskz_loadu_ps(static_cast<__mmask16>(m >> (16 * k)), w + 16 * k);
}

}  // namespace

bool clahe_blend_vbmi_supported() noexcept { return vbmi::supported(); }

IMGHIST_VBMI void clahe_blend_run_vbmi(const std::uint8_t* src, std::uint8_t* dst, int n,
                                       const ClaheQuad<std::uint8_t>& q, const float* a, const float* a1, float ya,
                                       float ya1) noexcept {
    const vbmi::Table512 t11 = vbmi::load_table(q.t11), t12 = vbmi::load_table(q.t12);
    const vbmi::Table512 t21 = vbmi::load_table(q.t21), t22 = vbmi::load_table(q.t22);
    const __m512 vya = _mm512_set1_ps(ya), vya1 = _mm512_set1_ps(ya1);
    for (int i = 0; i < n; i += 64) {
        // A run's last block is masked: nothing before src / dst or past n is read or written.
        const int left = n - i;
        const __mmask64 m = left >= 64 ? ~__mmask64{0} : ~__mmask64{0} >> (64 - left);
        const __m512i x = _mm512_maskz_loadu_epi8(m, src + i);
        const __m512i l11 = vbmi::look(t11, x), l12 = vbmi::look(t12, x);
        const __m512i l21 = vbmi::look(t21, x), l22 = vbmi::look(t22, x);
        const __m128i r0 = blend16<0>(l11, l12, l21, l22, weights(m, 0, a + i), weights(m, 0, a1 + i), vya, vya1);
        const __m128i r1 = blend16<1>(l11, l12, l21, l22, weights(m, 1, a + i), weights(m, 1, a1 + i), vya, vya1);
        const __m128i r2 = blend16<2>(l11, l12, l21, l22, weights(m, 2, a + i), weights(m, 2, a1 + i), vya, vya1);
        const __m128i r3 = blend16<3>(l11, l12, l21, l22, weights(m, 3, a + i), weights(m, 3, a1 + i), vya, vya1);
        __m512i out = _mm512_castsi128_si512(r0);
        out = _mm512_inserti32x4(out, r1, 1);
        out = _mm512_inserti32x4(out, r2, 2);
        out = _mm512_inserti32x4(out, r3, 3);
        _mm512_mask_storeu_epi8(dst + i, m, out);
    }
}

#else
bool clahe_blend_vbmi_supported() noexcept { return false; }
void clahe_blend_run_vbmi(const std::uint8_t* src, std::uint8_t* dst, int n, const ClaheQuad<std::uint8_t>& q,
                          const float* a, const float* a1, float ya, float ya1) noexcept {
    clahe_blend_run_portable(src, dst, n, q, a, a1, ya, ya1, 255);
}
#endif

}  // namespace imghist::detail
