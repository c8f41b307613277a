// imghist filters — 256-entry byte tables looked up 64 bytes at a time with AVX-512 VBMI, for the CPU passes
// that choose these instructions at run time (the library is built for the baseline x86-64).
//
// _mm512_permutex2var_epi8 looks 64 bytes up in a 128-entry table held in two registers; two of them and a
// blend on each index's top bit cover 256 entries.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define IMGHIST_HAVE_VBMI 1
#include <immintrin.h>

#include <cstdint>

#define IMGHIST_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))

namespace imghist::detail::vbmi {

/// Whether this CPU (and its OS) runs the AVX-512 VBMI instructions (checked once).
inline bool supported() noexcept {
    // GCC's and Clang's checks include the OS's support for the AVX-512 register state.
    static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                            __builtin_cpu_supports("avx512vbmi");
    return yes;
}

struct Table512 {
    __m512i q[4];  // entries 0-63, 64-127, 128-191, 192-255
};

IMGHIST_VBMI inline Table512 load_table(const std::uint8_t* table256) {
    Table512 t;
    for (int k = 0; k < 4; ++k) t.q[k] = _mm512_loadu_si512(table256 + 64 * k);
    return t;
}

IMGHIST_VBMI inline __m512i look(const Table512& t, __m512i x) {
    const __m512i low = _mm512_permutex2var_epi8(t.q[0], x, t.q[1]);   // by the index's low 7 bits
    const __m512i high = _mm512_permutex2var_epi8(t.q[2], x, t.q[3]);
    return _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), low, high);  // the top bit picks the half
}

}  // namespace imghist::detail::vbmi
#endif
