// imghist filters — the samples of an 8-bit CLAHE tile as the batch's tile-histogram kernel reads them
// (cuda/batch_clahe.cu). A block counts one band of a tile's rows (the tile cut into `splits` bands). In each row
// the tile's columns that lie inside the readable extent are one run of bytes read in place, 16 at a time from
// aligned addresses (the unaligned head and a short tail byte by byte); the columns beyond the extent (cv::CLAHE's
// padding, BORDER_REFLECT_101) are read one by one, mirrored. The band's work is a list of units — per row the
// head and then the run's 16-byte vectors, after all rows the mirrored samples — that the block's threads share.
// Host and device code: the host side is tested against a plain loop of the rule (tests/filters/test_batch.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "filters/filter_math.hpp"

namespace imghist::detail {

/// A band of a tile and its units.
struct ClaheBand {
    int r0, r1;         ///< the band's rows of the tile, [r0, r1)
    int row0;           ///< the tile's first row in the padded image
    int x0;             ///< the tile's first column
    int direct;         ///< columns x0 .. x0 + direct - 1 lie inside the readable extent (read in place)
    int mirrored;       ///< the tile's other columns (beyond the extent)
    int run_units;      ///< units per row of the in-place run: its head, then ceil(direct / 16) vectors (0: none)
    long long units;    ///< all units: rows x run_units, then one per mirrored sample
};

/// Band `split` of `splits` of tile `tile` (row-major over the tiles_x x tiles_y grid) of an image of geometry g.
IMGHIST_HD ClaheBand clahe_band_of(const fmath::ClaheGeometry& g, int tile, int split, int splits) {
    ClaheBand b;
    const int tx = tile % g.tiles_x, ty = tile / g.tiles_x;
    b.r0 = static_cast<int>(static_cast<long long>(g.tile_h) * split / splits);
    b.r1 = static_cast<int>(static_cast<long long>(g.tile_h) * (split + 1) / splits);
    b.row0 = ty * g.tile_h;
    b.x0 = tx * g.tile_w;
    const int inside = g.ext_w - b.x0;
    b.direct = inside <= 0 ? 0 : (inside < g.tile_w ? inside : g.tile_w);
    b.mirrored = g.tile_w - b.direct;
    b.run_units = b.direct > 0 ? 1 + (b.direct + 15) / 16 : 0;
    const long long rows = b.r1 - b.r0;
    b.units = rows * b.run_units + rows * b.mirrored;
    return b;
}

/// The 16 bytes at `p` (16-byte aligned) as four little-endian words.
IMGHIST_HD void load16(const std::uint8_t* p, std::uint32_t w[4]) {
#if defined(__CUDA_ARCH__)
    const uint4 q = __ldg(reinterpret_cast<const uint4*>(p));
    w[0] = q.x;
    w[1] = q.y;
    w[2] = q.z;
    w[3] = q.w;
#else
    std::memcpy(w, p, 16);
#endif
}

/// Counts the samples of unit k (0 <= k < b.units) of band b of an 8-bit image at `src` (`pitch` bytes between
/// rows): count(v) once for every sample v of the unit.
template <class Count>
IMGHIST_HD void clahe_count_unit(const fmath::ClaheGeometry& g, const ClaheBand& b, const std::uint8_t* src,
                                 std::size_t pitch, long long k, Count&& count) {
    const long long in_runs = static_cast<long long>(b.r1 - b.r0) * b.run_units;
    if (k >= in_runs) {
        const long long m = k - in_runs;
        const int r = static_cast<int>(m / b.mirrored);
        const int c = static_cast<int>(m - static_cast<long long>(r) * b.mirrored);
        const int sy = fmath::reflect101(b.row0 + b.r0 + r, g.ext_h);
        const int sx = fmath::reflect101(b.x0 + b.direct + c, g.ext_w);
        count(static_cast<unsigned int>(src[static_cast<std::size_t>(sy) * pitch + static_cast<std::size_t>(sx)]));
        return;
    }
    // 32-bit division where it suffices (one per 16 samples): a band of fewer than 2^32 units.
    const int r = in_runs <= 0xFFFFFFFFll
                      ? static_cast<int>(static_cast<std::uint32_t>(k) / static_cast<std::uint32_t>(b.run_units))
                      : static_cast<int>(k / b.run_units);
    const int s = static_cast<int>(k - static_cast<long long>(r) * b.run_units);
    const int sy = fmath::reflect101(b.row0 + b.r0 + r, g.ext_h);
    const std::uint8_t* run = src + static_cast<std::size_t>(sy) * pitch + static_cast<std::size_t>(b.x0);
    const int to_aligned = static_cast<int>((16u - (reinterpret_cast<std::uintptr_t>(run) & 15u)) & 15u);
    const int head = to_aligned < b.direct ? to_aligned : b.direct;
    if (s == 0) {
        for (int j = 0; j < head; ++j) count(static_cast<unsigned int>(run[j]));
        return;
    }
    const int start = head + 16 * (s - 1);
    if (start >= b.direct) return;
    if (b.direct - start < 16) {
        for (int j = start; j < b.direct; ++j) count(static_cast<unsigned int>(run[j]));
        return;
    }
    std::uint32_t w[4];
    load16(run + start, w);
    for (int q = 0; q < 4; ++q)
        for (int j = 0; j < 4; ++j) count((w[q] >> (8 * j)) & 0xFFu);
}

}  // namespace imghist::detail
