#include "io/convert.hpp"

#include <cstring>

#include "io/errors.hpp"

namespace cli {

Image apply_orientation(const Image& src, int o) {
    const int w = src.width(), h = src.height();
    const bool swap = o >= 5 && o <= 8;
    Image out(swap ? h : w, swap ? w : h, src.channels(), src.depth());
    out.meta = src.meta;
    const std::size_t px = static_cast<std::size_t>(src.channels()) * src.sample_bytes();
    for (int y = 0; y < out.height(); ++y) {
        std::uint8_t* dst = out.row(y);
        for (int x = 0; x < out.width(); ++x, dst += px) {
            int xi = x, yi = y;  // the source pixel shown at (x, y)
            switch (o) {
                case 2: xi = w - 1 - x; break;                    // mirrored left-right
                case 3: xi = w - 1 - x; yi = h - 1 - y; break;    // rotated 180
                case 4: yi = h - 1 - y; break;                    // mirrored top-bottom
                case 5: xi = y; yi = x; break;                    // transposed
                case 6: xi = y; yi = h - 1 - x; break;            // rotated 90 clockwise
                case 7: xi = w - 1 - y; yi = h - 1 - x; break;    // transversed
                case 8: xi = w - 1 - y; yi = x; break;            // rotated 90 counter-clockwise
                default: break;
            }
            std::memcpy(dst, src.row(yi) + static_cast<std::size_t>(xi) * px, px);
        }
    }
    return out;
}

void auto_orient(Image& img) {
    const int o = exif_orientation(img.meta.exif);
    if (o == 1) return;
    img = apply_orientation(img, o);
    set_exif_orientation(img.meta.exif, 1);
}

Rgb parse_colour(const std::string& s) {
    if (s == "white") return {255, 255, 255};
    if (s == "black") return {0, 0, 0};
    std::string hex = !s.empty() && s[0] == '#' ? s.substr(1) : s;
    Rgb c{};
    bool ok = hex.size() == 6;
    for (int i = 0; ok && i < 3; ++i) {
        unsigned v = 0;
        for (int k = 0; k < 2; ++k) {
            const char ch = hex[static_cast<std::size_t>(2 * i + k)];
            const int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                        : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
            if (d < 0) ok = false;
            v = v * 16 + static_cast<unsigned>(d < 0 ? 0 : d);
        }
        c[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v);
    }
    if (!ok) fail_usage("--background: expected #RRGGBB, white or black, got '" + s + "'");
    return c;
}

namespace {

template <class T>
void blend(const Image& src, Image& out, const Rgb& bg) {
    const std::uint32_t M = src.depth() == 16 ? 65535u : 255u, scale = src.depth() == 16 ? 257u : 1u;
    const int cin = src.channels(), cout = out.channels();
    std::uint32_t b[3];
    if (cout == 1) b[0] = (299u * bg[0] + 587u * bg[1] + 114u * bg[2] + 500u) / 1000u * scale;
    else for (int c = 0; c < 3; ++c) b[c] = bg[static_cast<std::size_t>(c)] * scale;
    for (int y = 0; y < src.height(); ++y) {
        const T* s = reinterpret_cast<const T*>(src.row(y));
        T* d = reinterpret_cast<T*>(out.row(y));
        for (int x = 0; x < src.width(); ++x, s += cin, d += cout) {
            const std::uint64_t a = s[cin - 1];
            for (int c = 0; c < cout; ++c)
                d[c] = static_cast<T>((s[c] * a + b[c] * (M - a) + M / 2) / M);
        }
    }
}

}  // namespace

Image flatten(const Image& src, const Rgb& background) {
    if (src.channels() != 2 && src.channels() != 4) return apply_orientation(src, 1);
    Image out(src.width(), src.height(), src.channels() - 1, src.depth());
    out.meta = src.meta;
    if (src.depth() == 16) blend<std::uint16_t>(src, out, background);
    else blend<std::uint8_t>(src, out, background);
    return out;
}

Image to_depth8(const Image& src) {
    if (src.depth() != 16) return apply_orientation(src, 1);
    Image out(src.width(), src.height(), src.channels(), 8);
    out.meta = src.meta;
    const std::size_t n = src.pixels() * static_cast<std::size_t>(src.channels());
    const auto* s = reinterpret_cast<const std::uint16_t*>(src.data());
    std::uint8_t* d = out.data();
    for (std::size_t i = 0; i < n; ++i) d[i] = static_cast<std::uint8_t>((s[i] * 255u + 32767u) / 65535u);
    return out;
}

}  // namespace cli
