// imghist filters — CPU backend: the same arithmetic as the CUDA kernels (filter_math.hpp), split over
// threads by rows (or by byte ranges when the images are single runs of bytes).
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/policy/policy.hpp"
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
            for (int x = 0; x < W; ++x, s += C, d += C) {
                int Y, cr, cb;
                fmath::bgr_to_ycrcb(s[0], s[1], s[2], Y, cr, cb);
                const std::uint8_t a = C == 4 ? s[3] : 0;
                fmath::ycrcb_to_bgr(lut[Y], cr, cb, d[0], d[1], d[2]);
                if (C == 4) d[3] = a;
            }
        }
    });
}

namespace {

template <class T>
void clahe_impl(const ImageView& src, const ImageView& dst, const fmath::ClaheGeometry& g, int threads) {
    const int bins = g.hist_size;
    const int max_value = bins - 1;
    const int tiles = g.tiles_x * g.tiles_y;
    std::vector<T> luts(static_cast<std::size_t>(tiles) * bins);
    // Tile tables; tiles are cut from the padded image, whose pixels outside the source are reflected.
    parallel_for(tiles, threads, [&](int tb, int te) {
        std::vector<unsigned int> hist(bins);
        std::vector<int> xs(g.tile_w);
        for (int t = tb; t < te; ++t) {
            const int tx = t % g.tiles_x, ty = t / g.tiles_x;
            std::fill(hist.begin(), hist.end(), 0u);
            for (int i = 0; i < g.tile_w; ++i) xs[i] = fmath::reflect101(tx * g.tile_w + i, g.ext_w);
            for (int j = 0; j < g.tile_h; ++j) {
                const int sy = fmath::reflect101(ty * g.tile_h + j, g.ext_h);
                const T* row = reinterpret_cast<const T*>(src.row(sy));
                for (int i = 0; i < g.tile_w; ++i) ++hist[row[xs[i]]];
            }
            long long clipped = 0;
            if (g.clip > 0)
                for (int b = 0; b < bins; ++b)
                    if (hist[b] > static_cast<unsigned int>(g.clip)) clipped += hist[b] - g.clip;
            T* lut = luts.data() + static_cast<std::size_t>(t) * bins;
            long long sum = 0;
            for (int b = 0; b < bins; ++b) {
                sum += fmath::clahe_redistributed(hist[b], b, g.clip, bins, clipped);
                lut[b] = static_cast<T>(fmath::clahe_lut_entry(sum, g.lut_scale, max_value));
            }
        }
    });
    std::vector<fmath::ClaheAxis> ax(g.width);
    for (int x = 0; x < g.width; ++x) ax[x] = fmath::clahe_axis(x, g.inv_tw, g.tiles_x);
    parallel_for(g.height, threads, [&](int b, int e) {
        for (int y = b; y < e; ++y) {
            const fmath::ClaheAxis ay = fmath::clahe_axis(y, g.inv_th, g.tiles_y);
            const T* p1 = luts.data() + static_cast<std::size_t>(ay.t1) * g.tiles_x * bins;
            const T* p2 = luts.data() + static_cast<std::size_t>(ay.t2) * g.tiles_x * bins;
            const T* s = reinterpret_cast<const T*>(src.row(y));
            T* d = reinterpret_cast<T*>(mutable_row(dst, y));
            for (int x = 0; x < g.width; ++x) {
                const int v = s[x];
                const std::size_t i1 = static_cast<std::size_t>(ax[x].t1) * bins + v;
                const std::size_t i2 = static_cast<std::size_t>(ax[x].t2) * bins + v;
                d[x] = static_cast<T>(fmath::clahe_blend(p1[i1], p1[i2], p2[i1], p2[i2], ax[x], ay, max_value));
            }
        }
    });
}

}  // namespace

void cpu_clahe(const ImageView& src, const ImageView& dst, const fmath::ClaheGeometry& g, int threads) {
    if (src.type == SampleType::U8) clahe_impl<std::uint8_t>(src, dst, g, threads);
    else clahe_impl<std::uint16_t>(src, dst, g, threads);
}

}  // namespace imghist::detail
