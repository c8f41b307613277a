// Internal: the RGB value of a YCbCr JPEG's pixel, computed from its planes as libjpeg-turbo decodes by
// default — one definition for the CPU backend and the CUDA kernel of calc_hist_ycbcr_batch.
//
// Chroma upsampling (libjpeg-turbo's jdsample.c, "fancy" upsampling; replication when the chroma plane has
// at most two columns, as libjpeg-turbo then does):
//   2x1 (4:2:2), chroma column c = x / 2, neighbours clamped to the plane:
//     x even: (3 in[c] + in[c-1] + 1) >> 2      x odd: (3 in[c] + in[c+1] + 2) >> 2
//   2x2 (4:2:0), chroma row r = y / 2 and its vertical neighbour n (r-1 for even y, r+1 for odd y, clamped);
//     column sums s(k) = 3 in[r][k] + in[n][k]:
//     x even: (3 s(c) + s(c-1) + 8) >> 4        x odd: (3 s(c) + s(c+1) + 7) >> 4
// The clamped neighbours give exactly its first- and last-column special cases, and its context rows repeat
// the first and last rows of the plane. Colour conversion (jdcolor.c), 16-bit fixed point:
//   R = Y + ((91881 (Cr-128) + 32768) >> 16)         B = Y + ((116130 (Cb-128) + 32768) >> 16)
//   G = Y + ((-22554 (Cb-128) + 32768 - 46802 (Cr-128)) >> 16),  each clamped to 0..255.
// libjpeg-turbo's SIMD code gives the same bytes as this C arithmetic; checked against its decoder by
// tests/gpu_jpeg (every sampling, odd sizes down to 1x1).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/host_device.hpp"  // IMGHIST_HD

namespace imghist::detail {

/// One image's planes as the counting loops read them.
struct YccPlanesView {
    const std::uint8_t* y = nullptr;
    const std::uint8_t* cb = nullptr;
    const std::uint8_t* cr = nullptr;
    std::size_t y_pitch = 0, cb_pitch = 0, cr_pitch = 0;
    int width = 0, height = 0;
    int chroma_x = 1, chroma_y = 1;   ///< 1x1, 2x1 or 2x2
    int chroma_w = 0, chroma_h = 0;   ///< the chroma planes' size
};

IMGHIST_HD int ycc_min(int a, int b) { return a < b ? a : b; }
IMGHIST_HD int ycc_max(int a, int b) { return a > b ? a : b; }

/// The upsampled chroma sample of output pixel (x, y) from a chroma plane.
IMGHIST_HD int ycc_chroma(const std::uint8_t* plane, std::size_t pitch, const YccPlanesView& p, int x, int y) {
    auto in = [&](int r, int k) { return static_cast<int>(plane[static_cast<std::size_t>(r) * pitch + static_cast<std::size_t>(k)]); };
    if (p.chroma_x == 1) return in(y, x);  // 1x1 (2x1 and 2x2 have chroma_x 2)
    const int c = x >> 1;
    if (p.chroma_y == 1) {
        if (p.chroma_w <= 2) return in(y, c);
        return (x & 1) == 0 ? (3 * in(y, c) + in(y, ycc_max(c - 1, 0)) + 1) >> 2
                            : (3 * in(y, c) + in(y, ycc_min(c + 1, p.chroma_w - 1)) + 2) >> 2;
    }
    const int r = y >> 1;
    if (p.chroma_w <= 2) return in(r, c);
    const int n = (y & 1) == 0 ? ycc_max(r - 1, 0) : ycc_min(r + 1, p.chroma_h - 1);
    auto s = [&](int k) { return 3 * in(r, k) + in(n, k); };
    return (x & 1) == 0 ? (3 * s(c) + s(ycc_max(c - 1, 0)) + 8) >> 4
                        : (3 * s(c) + s(ycc_min(c + 1, p.chroma_w - 1)) + 7) >> 4;
}

IMGHIST_HD int ycc_clamp255(int v) { return v < 0 ? 0 : v > 255 ? 255 : v; }

/// R, G and B of output pixel (x, y).
IMGHIST_HD void ycc_rgb_at(const YccPlanesView& p, int x, int y, int& r, int& g, int& b) {
    const int luma = p.y[static_cast<std::size_t>(y) * p.y_pitch + static_cast<std::size_t>(x)];
    const int cb = ycc_chroma(p.cb, p.cb_pitch, p, x, y) - 128;
    const int cr = ycc_chroma(p.cr, p.cr_pitch, p, x, y) - 128;
    r = ycc_clamp255(luma + ((91881 * cr + 32768) >> 16));
    g = ycc_clamp255(luma + ((-22554 * cb + 32768 - 46802 * cr) >> 16));
    b = ycc_clamp255(luma + ((116130 * cb + 32768) >> 16));
}

}  // namespace imghist::detail
