// imghist filters — CLAHE's interpolation pass on the CPU: each output pixel blends the tables of the four
// tiles around it (fmath::clahe_blend). Along a row the four tables change only where the pixel passes a
// tile centre, so a row is cut into runs with fixed tables and per-column weights, and each run is one call
// here.
#pragma once

#include <cstdint>

#include "filters/filter_math.hpp"

namespace imghist::detail {

/// The four tile tables of a run: t11, t12 from the tile row above the pixel (left and right tile), t21,
/// t22 from the one below; each is indexed by the source value.
template <class T>
struct ClaheQuad {
    const T* t11;
    const T* t12;
    const T* t21;
    const T* t22;
};

/// dst[i] = fmath::clahe_blend(t11[s], t12[s], t21[s], t22[s], x weights (a[i], a1[i]), y weights (ya, ya1))
/// with s = src[i], for i < n. src may equal dst (in place). The tables may hold the entries as they are or
/// as floats (the same values: the blend converts each entry to float first).
template <class T, class L>
inline void clahe_blend_run_portable(const T* src, T* dst, int n, const ClaheQuad<L>& q, const float* a,
                                     const float* a1, float ya, float ya1, int max_value) noexcept {
    const fmath::ClaheAxis ay{0, 0, ya, ya1};
    for (int i = 0; i < n; ++i) {
        const int v = src[i];
        const fmath::ClaheAxis ax{0, 0, a[i], a1[i]};
        dst[i] = static_cast<T>(fmath::clahe_blend(q.t11[v], q.t12[v], q.t21[v], q.t22[v], ax, ay, max_value));
    }
}

/// Whether this build has the AVX-512 VBMI implementation and this CPU (and its OS) runs it.
bool clahe_blend_vbmi_supported() noexcept;
/// AVX-512 VBMI, 8-bit: each table in four registers, 64 lookups per two byte-permutes, the blend in 16
/// float lanes with the same operations in the same order (no contraction); only if supported.
void clahe_blend_run_vbmi(const std::uint8_t* src, std::uint8_t* dst, int n, const ClaheQuad<std::uint8_t>& q,
                          const float* a, const float* a1, float ya, float ya1) noexcept;

/// The 8-bit run with the fastest implementation this CPU runs (checked once): the vector one reads the byte
/// tables, the scalar one the same tables as floats (no conversion per lookup).
inline void clahe_blend_run(const std::uint8_t* src, std::uint8_t* dst, int n, const ClaheQuad<std::uint8_t>& bytes,
                            const ClaheQuad<float>& floats, const float* a, const float* a1, float ya,
                            float ya1) noexcept {
    if (clahe_blend_vbmi_supported()) clahe_blend_run_vbmi(src, dst, n, bytes, a, a1, ya, ya1);
    else clahe_blend_run_portable(src, dst, n, floats, a, a1, ya, ya1, 255);
}

}  // namespace imghist::detail
