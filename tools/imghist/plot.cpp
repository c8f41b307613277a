#include "plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif
#include <stb_easy_font.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace cli {
namespace {

struct Rgb {
    std::uint8_t r, g, b;
};

class Canvas {
public:
    explicit Canvas(int w, int h) : img_(w, h, 3, 8) { std::memset(img_.data(), 255, img_.bytes()); }
    Image take() { return std::move(img_); }
    int width() const { return img_.width(); }
    int height() const { return img_.height(); }

    void blend(int x, int y, Rgb c, float alpha) {
        if (x < 0 || y < 0 || x >= img_.width() || y >= img_.height()) return;
        std::uint8_t* p = img_.row(y) + 3 * x;
        p[0] = static_cast<std::uint8_t>(std::lround(p[0] * (1 - alpha) + c.r * alpha));
        p[1] = static_cast<std::uint8_t>(std::lround(p[1] * (1 - alpha) + c.g * alpha));
        p[2] = static_cast<std::uint8_t>(std::lround(p[2] * (1 - alpha) + c.b * alpha));
    }
    void rect(int x0, int y0, int x1, int y1, Rgb c, float alpha = 1.f) {  // [x0, x1) x [y0, y1)
        for (int y = std::max(0, y0); y < std::min(y1, height()); ++y)
            for (int x = std::max(0, x0); x < std::min(x1, width()); ++x) blend(x, y, c, alpha);
    }
    void line(int x0, int y0, int x1, int y1, Rgb c) {  // Bresenham
        int dx = std::abs(x1 - x0), sx = x0 < x1 ? 1 : -1, dy = -std::abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
        int err = dx + dy;
        for (;;) {
            blend(x0, y0, c, 1.f);
            if (x0 == x1 && y0 == y1) return;
            int e2 = 2 * err;
            if (e2 >= dy) err += dy, x0 += sx;
            if (e2 <= dx) err += dx, y0 += sy;
        }
    }
    /// Text with its top-left corner at (x, y); `scale` multiplies the font's 7-pixel cell.
    void text(int x, int y, const std::string& s, Rgb c, int scale = 2) {
        std::vector<char> buf(s.size() * 1024 + 256);  // up to 16 quads of 64 bytes per glyph
        std::vector<char> str(s.begin(), s.end());
        str.push_back('\0');
        int quads = stb_easy_font_print(0, 0, str.data(), nullptr, buf.data(), static_cast<int>(buf.size()));
        for (int q = 0; q < quads; ++q) {
            const float* v0 = reinterpret_cast<const float*>(buf.data() + q * 64);
            const float* v2 = reinterpret_cast<const float*>(buf.data() + q * 64 + 32);
            rect(x + static_cast<int>(v0[0] * scale), y + static_cast<int>(v0[1] * scale),
                 x + static_cast<int>(v2[0] * scale), y + static_cast<int>(v2[1] * scale), c);
        }
    }
    static int text_width(const std::string& s, int scale = 2) {
        std::vector<char> str(s.begin(), s.end());
        str.push_back('\0');
        return stb_easy_font_width(str.data()) * scale;
    }

private:
    Image img_;
};

Rgb colour_of(const std::string& name) {
    if (name == "r") return {214, 39, 40};
    if (name == "g") return {44, 160, 44};
    if (name == "b") return {31, 119, 180};
    if (name == "a") return {148, 103, 189};
    return {64, 64, 64};
}

std::string fmt(double v) {
    char buf[32];
    if (std::fabs(v) >= 1e6 || (v != 0 && std::fabs(v) < 1e-3))
        std::snprintf(buf, sizeof buf, "%.3g", v);
    else
        std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

/// About `target` "nice" tick positions (1, 2, 5 times a power of ten) covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int target) {
    std::vector<double> t;
    if (!(hi > lo)) return {lo};
    double raw = (hi - lo) / target;
    double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (raw <= m * mag) {
            step = m * mag;
            break;
        }
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
    return t;
}

}  // namespace

Image render_plot(const HistResult& r, const PlotOptions& opt) {
    Canvas cv(std::max(opt.width, 320), std::max(opt.height, 200));
    const Rgb ink{30, 30, 30}, grid{225, 225, 225};
    const int left = 90, right = 24, top = 48, bottom = 64;
    const int pw = cv.width() - left - right, ph = cv.height() - top - bottom;
    const int x0 = left, y0 = top + ph;  // plot origin (bottom-left)

    std::uint64_t maxc = 1;
    for (auto& c : r.channels)
        for (auto v : c.counts) maxc = std::max(maxc, v);
    // 5% headroom above the tallest bin, so peaks do not touch the frame.
    const double ymax = 1.05 * (opt.log ? std::log10(static_cast<double>(maxc) + 1.0) : static_cast<double>(maxc));
    auto yof = [&](double count) {
        double v = opt.log ? std::log10(count + 1.0) : count;
        return y0 - static_cast<int>(std::lround(v / ymax * ph));
    };

    // Grid and y ticks.
    std::vector<double> yt;
    if (opt.log) {
        for (double d = 1; d <= maxc * 1.0000001; d *= 10) yt.push_back(d);
    } else {
        yt = nice_ticks(0, static_cast<double>(maxc), 6);
    }
    for (double v : yt) {
        int y = yof(v);
        if (y < top) continue;
        cv.rect(x0 + 1, y, x0 + pw, y + 1, grid);
        cv.rect(x0 - 6, y, x0, y + 1, ink);
        std::string s = fmt(v);
        cv.text(x0 - 10 - Canvas::text_width(s), y - 6, s, ink);
    }
    // x ticks over the value range.
    for (double v : nice_ticks(r.low, r.high, 8)) {
        int x = x0 + static_cast<int>(std::lround((v - r.low) / (r.high - r.low) * pw));
        if (x > x0 + pw) continue;
        cv.rect(x, y0 + 1, x + 1, y0 + 7, ink);
        std::string s = fmt(v);
        cv.text(x - Canvas::text_width(s) / 2, y0 + 12, s, ink);
    }

    // Channels: translucent fill plus a solid outline, so overlapping channels stay readable.
    const float fill_alpha = r.channels.size() > 1 ? 0.30f : 0.75f;
    for (auto& c : r.channels) {
        Rgb col = colour_of(c.name);
        int prev_y = -1;
        for (int px = 0; px < pw; ++px) {
            // Bins falling on this pixel column: show the largest (keeps narrow peaks visible).
            int b0 = static_cast<int>(static_cast<long long>(px) * r.bins / pw);
            int b1 = std::max(b0 + 1, static_cast<int>(static_cast<long long>(px + 1) * r.bins / pw));
            std::uint64_t v = 0;
            for (int b = b0; b < b1 && b < r.bins; ++b) v = std::max(v, c.counts[static_cast<std::size_t>(b)]);
            int y = yof(static_cast<double>(v));
            cv.rect(x0 + px, y, x0 + px + 1, y0, col, fill_alpha);
            if (prev_y >= 0) cv.line(x0 + px - 1, prev_y, x0 + px, y, col);
            prev_y = y;
        }
    }

    // Axes, labels, title, legend.
    cv.rect(x0, top, x0 + 1, y0 + 1, ink);
    cv.rect(x0, y0, x0 + pw, y0 + 1, ink);
    std::string xl = "value (" + std::to_string(r.bins) + " bins over [" + fmt(r.low) + ", " + fmt(r.high) + "))";
    cv.text(x0 + pw / 2 - Canvas::text_width(xl) / 2, y0 + 36, xl, ink);
    cv.text(8, top - 22, opt.log ? "count (log scale)" : "count", ink);
    std::string title = opt.title;
    if (title.empty())
        title = r.file.empty() ? "total of " + std::to_string(r.images) + " images"
                               : r.file + "  " + std::to_string(r.width) + "x" + std::to_string(r.height);
    cv.text(x0 + pw / 2 - Canvas::text_width(title) / 2, 10, title, ink);
    int lx = x0 + pw - 10;
    for (auto it = r.channels.rbegin(); it != r.channels.rend(); ++it) {
        int w = Canvas::text_width(it->name);
        lx -= w;
        cv.text(lx, top + 6, it->name, ink);
        lx -= 18;
        cv.rect(lx, top + 6, lx + 12, top + 18, colour_of(it->name));
        lx -= 14;
    }
    return cv.take();
}

}  // namespace cli
