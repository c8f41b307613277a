// imghist filters — CPU backend: the same arithmetic as the CUDA kernels (filter_math.hpp), split over
// threads by rows (or by byte ranges when the images are single runs of bytes).
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/policy/policy.hpp"
#include "filters/cpu/clahe_blend.hpp"
#include "filters/internal.hpp"
#include "filters/cpu/lut8.hpp"

namespace imghist::detail {
namespace {

std::uint8_t* mutable_row(const ImageView& v, int y) {
    return const_cast<std::uint8_t*>(v.row(y));
}

// Calls fn(src_ptr, dst_ptr, count, first_byte_offset_in_row) over the image, split across threads. When
// both images are contiguous the whole image is one run, cut into pieces aligned to the pixel size.
template <class Fn>
void for_each_run(const ImageView& src, const ImageView& dst, int threads, Fn fn) {
    const std::size_t row = src.row_bytes();
    if (src.contiguous() && dst.contiguous()) {
        const std::size_t total = row * static_cast<std::size_t>(src.height);
        const std::size_t px = src.pixel_bytes();
        const std::size_t piece = std::max<std::size_t>(((std::size_t(1) << 18) / px) * px, px);
        const int n = static_cast<int>((total + piece - 1) / piece);
        const auto* s = static_cast<const std::uint8_t*>(src.data);
        auto* d = const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(dst.data));
        parallel_for(n, threads, [&](int b, int e) {
            const std::size_t begin = static_cast<std::size_t>(b) * piece;
            const std::size_t end = std::min(total, static_cast<std::size_t>(e) * piece);
            fn(s + begin, d + begin, end - begin);
        });
        return;
    }
    parallel_for(src.height, threads, [&](int b, int e) {
        for (int y = b; y < e; ++y) fn(src.row(y), mutable_row(dst, y), row);
    });
}

}  // namespace

namespace {
/// Large images are written with non-temporal stores (lut8.hpp).
Lut8Store lut8_store_for(const ImageView& dst) {
    const std::size_t bytes = dst.row_bytes() * static_cast<std::size_t>(dst.height);
    return bytes >= policy::lut_stream_min_bytes() ? Lut8Store::Streaming : Lut8Store::Cached;
}
}  // namespace

void cpu_apply_lut(const ImageView& src, const ImageView& dst, const Lut8* luts, int threads) {
    // Runs always start at a pixel boundary (rows, or pieces cut at multiples of the pixel size).
    const Lut8Store store = lut8_store_for(dst);
    for_each_run(src, dst, threads, [&](const std::uint8_t* s, std::uint8_t* d, std::size_t n) {
        lut8_run(s, d, n, luts, src.channels, store);
    });
}

void cpu_threshold(const ImageView& src, const ImageView& dst, const ThresholdParams& p, int threads) {
    switch (src.type) {
        case SampleType::U8: {
            const Lut8 lut = threshold_lut(p);
            const Lut8Store store = lut8_store_for(dst);
            for_each_run(src, dst, threads, [&](const std::uint8_t* s, std::uint8_t* d, std::size_t n) {
                lut8_run(s, d, n, &lut, 1, store);  // every channel alike
            });
            return;
        }
        case SampleType::U16: {
            const auto m = static_cast<std::uint16_t>(p.imaxval);
            for_each_run(src, dst, threads, [&](const std::uint8_t* s8, std::uint8_t* d8, std::size_t n) {
                const std::size_t count = n / 2;
                for (std::size_t i = 0; i < count; ++i) {
                    std::uint16_t x, r;
                    std::memcpy(&x, s8 + 2 * i, 2);
                    r = fmath::threshold_value<std::uint16_t>(x, p.ithresh, m, p.op, 65535);
                    std::memcpy(d8 + 2 * i, &r, 2);
                }
            });
            return;
        }
        case SampleType::F32: {
            for_each_run(src, dst, threads, [&](const std::uint8_t* s8, std::uint8_t* d8, std::size_t n) {
                const std::size_t count = n / 4;
                for (std::size_t i = 0; i < count; ++i) {
                    float x, r;
                    std::memcpy(&x, s8 + 4 * i, 4);
                    r = fmath::threshold_value_f32(x, p.fthresh, p.fmaxval, p.op);
                    std::memcpy(d8 + 4 * i, &r, 4);
                }
            });
            return;
        }
        default:
            throw Error(ErrorCode::Unsupported, "threshold: unsupported sample type");
    }
}

void cpu_equalize_luma(const ImageView& src, const ImageView& dst, int threads) {
    const int C = src.channels;
    const int H = src.height, W = src.width;
    // Histogram of Y, one partial histogram per range of rows.
    const int parts = std::max(1, std::min(H, 64));
    std::vector<std::uint64_t> partial(static_cast<std::size_t>(parts) * 256, 0);
    parallel_for(parts, threads, [&](int pb, int pe) {
        for (int p = pb; p < pe; ++p) {
            std::uint64_t* h = partial.data() + static_cast<std::size_t>(p) * 256;
            const int y0 = static_cast<int>(static_cast<long long>(H) * p / parts);
            const int y1 = static_cast<int>(static_cast<long long>(H) * (p + 1) / parts);
            for (int y = y0; y < y1; ++y) {
                const std::uint8_t* s = src.row(y);
                for (int x = 0; x < W; ++x, s += C) {
                    int Y, cr, cb;
                    fmath::bgr_to_ycrcb(s[0], s[1], s[2], Y, cr, cb);
                    ++h[Y];
                }
            }
        }
    });
    std::uint64_t hist[256] = {};
    for (int p = 0; p < parts; ++p)
        for (int i = 0; i < 256; ++i) hist[i] += partial[static_cast<std::size_t>(p) * 256 + i];
    const Lut8 lut = equalize_table(hist);
    parallel_for(H, threads, [&](int b, int e) {
        for (int y = b; y < e; ++y) {
            const std::uint8_t* s = src.row(y);
            std::uint8_t* d = mutable_row(dst, y);
            for (int x = 0; x < W; ++x, s += C, d += C) fmath::equalize_luma_pixel(s, d, C, lut.data());
        }
    });
}

namespace {

// ---- CLAHE: tile tables, then the blend of four of them per pixel -------------------------------------------

/// Adds n 8-bit samples into four interleaved sub-histograms (sub[k * 256 + v]), so that runs of equal values
/// (common in photographs) do not wait on one counter's previous increment; a byte load and an increment per
/// sample (as the core's CPU histogram counts).
void count_u8_interleaved(const std::uint8_t* p, int n, std::uint32_t* sub) {
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        ++sub[p[i]];
        ++sub[256 + p[i + 1]];
        ++sub[512 + p[i + 2]];
        ++sub[768 + p[i + 3]];
    }
    for (; i < n; ++i) ++sub[p[i]];
}

/// Histograms of tiles [tx0, tx1) of tile row ty (tile tx's at hists[(tx - tx0) * bins], zeroed here). Tiles
/// are cut from the padded image, whose pixels outside the readable extent are reflected: xs[x] is the column
/// read for padded column x, and the rows are reflected likewise. The band is read row by row across its
/// tiles: a tile at a time would jump to the next image row every tile_w pixels and wait for memory at each
/// jump. 8-bit rows go into four interleaved sub-histograms per tile (`sub`, 4 * 256 per tile).
template <class T>
void clahe_band_histograms(const ImageView& src, const fmath::ClaheGeometry& g, int ty, int tx0, int tx1,
                           const int* xs, unsigned int* hists, std::uint32_t* sub) {
    const int bins = g.hist_size;
    const int n = tx1 - tx0;
    // Sub-histograms pay for their zeroing and merging (4 KiB per tile) on tiles of a few thousand pixels
    // and more.
    const bool interleaved = std::is_same_v<T, std::uint8_t> && g.tile_w * g.tile_h >= 4096;
    std::fill(hists, hists + static_cast<std::size_t>(n) * bins, 0u);
    if (interleaved) std::fill(sub, sub + static_cast<std::size_t>(n) * 4 * 256, 0u);
    for (int j = 0; j < g.tile_h; ++j) {
        const T* row = reinterpret_cast<const T*>(src.row(fmath::reflect101(ty * g.tile_h + j, g.ext_h)));
        for (int k = 0; k < n; ++k) {
            const int x0 = (tx0 + k) * g.tile_w;
            unsigned int* hist = hists + static_cast<std::size_t>(k) * bins;
            if (x0 + g.tile_w > g.ext_w) {  // reaches into the reflected padding
                for (int i = 0; i < g.tile_w; ++i) ++hist[row[xs[x0 + i]]];
            } else if (interleaved) {
                count_u8_interleaved(reinterpret_cast<const std::uint8_t*>(row + x0), g.tile_w,  // 8-bit rows only
                                     sub + static_cast<std::size_t>(k) * 4 * 256);
            } else {
                for (int i = 0; i < g.tile_w; ++i) ++hist[row[x0 + i]];
            }
        }
    }
    if (interleaved)
        for (int k = 0; k < n; ++k) {
            const std::uint32_t* s = sub + static_cast<std::size_t>(k) * 4 * 256;
            for (int b = 0; b < 256; ++b) hists[k * 256 + b] += s[b] + s[256 + b] + s[512 + b] + s[768 + b];
        }
}

/// The tables of every tile (tile t at luts[t * bins]): clipped, redistributed, cumulated and scaled.
template <class T>
std::vector<T> clahe_tables(const ImageView& src, const fmath::ClaheGeometry& g, int threads) {
    const int bins = g.hist_size;
    const int max_value = bins - 1;
    std::vector<T> luts(static_cast<std::size_t>(g.tiles_x) * g.tiles_y * bins);
    std::vector<int> xs(static_cast<std::size_t>(g.tiles_x) * g.tile_w);
    for (std::size_t x = 0; x < xs.size(); ++x) xs[x] = fmath::reflect101(static_cast<int>(x), g.ext_w);
    // Work items: tile rows, cut into groups of tile columns where there are few rows (at least 8 items).
    const int groups = std::min(g.tiles_x, (8 + g.tiles_y - 1) / g.tiles_y);
    parallel_for(g.tiles_y * groups, threads, [&](int ib, int ie) {
        const int most = (g.tiles_x + groups - 1) / groups;  // tiles in a group
        std::vector<unsigned int> hists(static_cast<std::size_t>(most) * bins);
        std::vector<std::uint32_t> sub(std::is_same_v<T, std::uint8_t> ? static_cast<std::size_t>(most) * 4 * 256 : 0);
        for (int item = ib; item < ie; ++item) {
            const int ty = item / groups, group = item % groups;
            const int tx0 = g.tiles_x * group / groups, tx1 = g.tiles_x * (group + 1) / groups;
            clahe_band_histograms<T>(src, g, ty, tx0, tx1, xs.data(), hists.data(), sub.data());
            for (int tx = tx0; tx < tx1; ++tx) {
                const unsigned int* hist = hists.data() + static_cast<std::size_t>(tx - tx0) * bins;
                long long clipped = 0;
                if (g.clip > 0)
                    for (int b = 0; b < bins; ++b)
                        if (hist[b] > static_cast<unsigned int>(g.clip)) clipped += hist[b] - g.clip;
                T* lut = luts.data() + (static_cast<std::size_t>(ty) * g.tiles_x + tx) * bins;
                long long sum = 0;
                fmath::ClaheRedistribution redistributed(g.clip, bins, clipped);
                for (int b = 0; b < bins; ++b) {
                    sum += redistributed.next(hist[b]);
                    lut[b] = static_cast<T>(fmath::clahe_lut_entry(sum, g.lut_scale, max_value));
                }
            }
        }
    });
    return luts;
}

/// Output columns [x0, x1) blend the same two tile columns t1, t2.
struct ClaheRun {
    int x0, x1, t1, t2;
};

/// One row of the blend: each run with its four tables.
inline void clahe_blend_row(const std::uint8_t* s, std::uint8_t* d, const std::vector<ClaheRun>& runs,
                            const std::uint8_t* p1, const std::uint8_t* p2, const float* p1f, const float* p2f,
                            const float* a, const float* a1, const fmath::ClaheAxis& ay) {
    for (const ClaheRun& r : runs) {
        const int o1 = r.t1 * 256, o2 = r.t2 * 256;
        const ClaheQuad<std::uint8_t> bytes{p1 + o1, p1 + o2, p2 + o1, p2 + o2};
        const ClaheQuad<float> floats = p1f ? ClaheQuad<float>{p1f + o1, p1f + o2, p2f + o1, p2f + o2} : ClaheQuad<float>{};
        clahe_blend_run(s + r.x0, d + r.x0, r.x1 - r.x0, bytes, floats, a + r.x0, a1 + r.x0, ay.a, ay.a1);
    }
}

inline void clahe_blend_row(const std::uint16_t* s, std::uint16_t* d, const std::vector<ClaheRun>& runs,
                            const std::uint16_t* p1, const std::uint16_t* p2, const float*, const float*,
                            const float* a, const float* a1, const fmath::ClaheAxis& ay) {
    for (const ClaheRun& r : runs) {
        const std::size_t o1 = static_cast<std::size_t>(r.t1) * 65536, o2 = static_cast<std::size_t>(r.t2) * 65536;
        const ClaheQuad<std::uint16_t> q{p1 + o1, p1 + o2, p2 + o1, p2 + o2};
        clahe_blend_run_portable(s + r.x0, d + r.x0, r.x1 - r.x0, q, a + r.x0, a1 + r.x0, ay.a, ay.a1, 65535);
    }
}

template <class T>
void clahe_impl(const ImageView& src, const ImageView& dst, const fmath::ClaheGeometry& g, int threads) {
    const int bins = g.hist_size;
    const std::vector<T> luts = clahe_tables<T>(src, g, threads);
    // The scalar 8-bit blend reads the tables as floats.
    std::vector<float> lutsf;
    if (std::is_same_v<T, std::uint8_t> && !clahe_blend_vbmi_supported()) lutsf.assign(luts.begin(), luts.end());
    // Per column: its weights, and the runs of columns between tile centres.
    std::vector<float> a(g.width), a1(g.width);
    std::vector<ClaheRun> runs;
    for (int x = 0; x < g.width; ++x) {
        const fmath::ClaheAxis ax = fmath::clahe_axis(x, g.inv_tw, g.tiles_x);
        a[x] = ax.a;
        a1[x] = ax.a1;
        if (runs.empty() || runs.back().t1 != ax.t1 || runs.back().t2 != ax.t2) runs.push_back({x, x, ax.t1, ax.t2});
        runs.back().x1 = x + 1;
    }
    parallel_for(g.height, threads, [&](int b, int e) {
        for (int y = b; y < e; ++y) {
            const fmath::ClaheAxis ay = fmath::clahe_axis(y, g.inv_th, g.tiles_y);
            const std::size_t row1 = static_cast<std::size_t>(ay.t1) * g.tiles_x * bins;
            const std::size_t row2 = static_cast<std::size_t>(ay.t2) * g.tiles_x * bins;
            const float* p1f = lutsf.empty() ? nullptr : lutsf.data() + row1;
            const float* p2f = lutsf.empty() ? nullptr : lutsf.data() + row2;
            clahe_blend_row(reinterpret_cast<const T*>(src.row(y)), reinterpret_cast<T*>(mutable_row(dst, y)), runs,
                            luts.data() + row1, luts.data() + row2, p1f, p2f, a.data(), a1.data(), ay);
        }
    });
}

}  // namespace

void cpu_clahe(const ImageView& src, const ImageView& dst, const fmath::ClaheGeometry& g, int threads) {
    if (src.type == SampleType::U8) clahe_impl<std::uint8_t>(src, dst, g, threads);
    else clahe_impl<std::uint16_t>(src, dst, g, threads);
}

}  // namespace imghist::detail
