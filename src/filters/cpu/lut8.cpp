// imghist filters — 8-bit tables on the CPU (lut8.hpp).
//
// Why two implementations: a scalar byte lookup costs a load per byte, which bounds the pass at a few GB/s,
// and in the CLI's folder jobs that pass can be a tenth of the whole run (decode and encode included). With
// AVX-512 VBMI (vbmi.hpp) 64 bytes are looked up per two byte-permutes, so the pass runs at memory speed.
// Both give the same bytes: they are the same table lookup. The instructions are chosen at run time, so the
// library is built for the baseline x86-64 and still uses them where the CPU has them.
#include "filters/cpu/lut8.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "filters/cpu/vbmi.hpp"

namespace imghist::detail {

void lut8_run_portable(const std::uint8_t* src, std::uint8_t* dst, std::size_t n, const Lut8* luts,
                       int channels) noexcept {
    // Local copies: the stores to dst cannot alias them, so lookups need not wait for earlier stores.
    std::uint8_t t[4][256];
    for (int c = 0; c < channels; ++c) std::memcpy(t[c], luts[c].data(), 256);
    std::size_t i = 0;
    if (channels == 1) {
        // Eight loads before eight stores: in place, every byte is read before it is written.
        for (; i + 8 <= n; i += 8) {
            const std::uint8_t a0 = t[0][src[i]], a1 = t[0][src[i + 1]], a2 = t[0][src[i + 2]], a3 = t[0][src[i + 3]];
            const std::uint8_t a4 = t[0][src[i + 4]], a5 = t[0][src[i + 5]], a6 = t[0][src[i + 6]], a7 = t[0][src[i + 7]];
            dst[i] = a0, dst[i + 1] = a1, dst[i + 2] = a2, dst[i + 3] = a3;
            dst[i + 4] = a4, dst[i + 5] = a5, dst[i + 6] = a6, dst[i + 7] = a7;
        }
        for (; i < n; ++i) dst[i] = t[0][src[i]];
        return;
    }
    const auto C = static_cast<std::size_t>(channels);
    for (; i + C <= n; i += C)
        for (std::size_t c = 0; c < C; ++c) dst[i + c] = t[c][src[i + c]];
    for (std::size_t c = 0; i < n; ++i, ++c) dst[i] = t[c][src[i]];  // a partial pixel (runs hold whole ones)
}

#ifdef IMGHIST_HAVE_VBMI
namespace {

using vbmi::look;
using vbmi::Table512;

/// Byte j of a 64-byte block that starts at byte i of a run belongs to channel (i + j) % channels; blocks of a
/// 3-channel run start at three phases. kChannelMasks[channels - 1][p][c]: the bytes of channel c in a block
/// of phase p (computed at compile time: the pass runs once per row of a non-contiguous image).
struct ChannelMasks {
    std::uint64_t m[4][4][4] = {};
    constexpr ChannelMasks() {
        for (unsigned C = 1; C <= 4; ++C)
            for (unsigned p = 0; p < C; ++p)
                for (unsigned j = 0; j < 64; ++j) m[C - 1][p][(p + j) % C] |= std::uint64_t{1} << j;
    }
};
constexpr ChannelMasks kChannelMaskTable{};
constexpr const auto& kChannelMasks = kChannelMaskTable.m;

/// 64 interleaved samples: channel c's table where `mask[c]` has the byte's bit.
IMGHIST_VBMI inline __m512i look_channels(const Table512* t, const std::uint64_t* mask, unsigned channels, __m512i x) {
    __m512i r = look(t[0], x);
    for (unsigned c = 1; c < channels; ++c) r = _mm512_mask_blend_epi8(mask[c], r, look(t[c], x));
    return r;
}

}  // namespace

bool lut8_vbmi_supported() noexcept { return vbmi::supported(); }

IMGHIST_VBMI void lut8_run_vbmi(const std::uint8_t* src, std::uint8_t* dst, std::size_t n, const Lut8* luts,
                                int channels, Lut8Store store) noexcept {
    Table512 t[4];
    for (int c = 0; c < channels; ++c) t[c] = vbmi::load_table(luts[c].data());
    const auto C = static_cast<unsigned>(channels);
    const auto& mask = kChannelMasks[C - 1];
    unsigned phase = 0;
    std::size_t i = 0;
    if (store == Lut8Store::Streaming) {
        // Non-temporal stores need 64-byte aligned destinations: the bytes before the first boundary go through
        // one masked store, then whole lines are streamed; the fence orders them before the caller's next stores
        // (and the parallel-for's completion) like ordinary ones.
        const std::size_t head = std::min<std::size_t>(n, (64 - reinterpret_cast<std::uintptr_t>(dst) % 64) % 64);
        if (head > 0) {
            const __mmask64 m = ~__mmask64{0} >> (64 - head);
            _mm512_mask_storeu_epi8(dst, m, look_channels(t, mask[0], C, _mm512_maskz_loadu_epi8(m, src)));
            i = head;
            phase = static_cast<unsigned>(head % C);
        }
        for (; i + 64 <= n; i += 64) {
            _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i),
                                look_channels(t, mask[phase], C, _mm512_loadu_si512(src + i)));
            phase = (phase + 64) % C;
        }
        _mm_sfence();
    } else if (C == 1) {  // the common case, without the channel blends
        for (; i + 64 <= n; i += 64) _mm512_storeu_si512(dst + i, look(t[0], _mm512_loadu_si512(src + i)));
    } else {
        for (; i + 64 <= n; i += 64) {
            _mm512_storeu_si512(dst + i, look_channels(t, mask[phase], C, _mm512_loadu_si512(src + i)));
            phase = (phase + 64) % C;
        }
    }
    if (i < n) {  // the last bytes, through masked loads and stores (nothing past n is touched)
        const __mmask64 m = ~__mmask64{0} >> (64 - (n - i));
        _mm512_mask_storeu_epi8(dst + i, m, look_channels(t, mask[phase], C, _mm512_maskz_loadu_epi8(m, src + i)));
    }
}

#else
bool lut8_vbmi_supported() noexcept { return false; }
void lut8_run_vbmi(const std::uint8_t* src, std::uint8_t* dst, std::size_t n, const Lut8* luts, int channels,
                   Lut8Store) noexcept {
    lut8_run_portable(src, dst, n, luts, channels);
}
#endif

void lut8_run(const std::uint8_t* src, std::uint8_t* dst, std::size_t n, const Lut8* luts, int channels,
              Lut8Store store) noexcept {
    if (lut8_vbmi_supported()) lut8_run_vbmi(src, dst, n, luts, channels, store);
    else lut8_run_portable(src, dst, n, luts, channels);
}

}  // namespace imghist::detail
