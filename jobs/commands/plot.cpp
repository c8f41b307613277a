#include "commands/plot.hpp"

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

// ---- text -------------------------------------------------------------------------------------------------
// stb_easy_font draws printable ASCII only (and indexes its tables with any other byte: never hand it one).
// Raster plots therefore draw a UTF-8 string as: ASCII as is; Latin-1 letters as their base letter (é as e,
// Ø as O, ß as s); every other character, and bytes that are not UTF-8, as an outlined box, one per
// character. SVG plots carry the text itself.

constexpr int kFallbackGlyph = -1;
constexpr int kFallbackAdvance = 6;  // font units, like a digit

/// Decodes UTF-8; a byte that does not start a valid sequence becomes U+FFFD and decoding resumes after it.
std::vector<std::uint32_t> code_points(const std::string& s) {
    std::vector<std::uint32_t> out;
    for (std::size_t i = 0; i < s.size();) {
        const auto b = static_cast<unsigned char>(s[i]);
        int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
        std::uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1fu) : n == 3 ? (b & 0x0fu) : (b & 0x07u);
        bool ok = n > 0 && i + static_cast<std::size_t>(n) <= s.size();
        for (int k = 1; ok && k < n; ++k) {
            const auto c = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
            ok = (c >> 6) == 2;
            cp = (cp << 6) | (c & 0x3fu);
        }
        static const std::uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (!ok || cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
            out.push_back(0xfffd);
            ++i;
            continue;
        }
        out.push_back(cp);
        i += static_cast<std::size_t>(n);
    }
    return out;
}

/// What the raster font draws for each character: an ASCII code or kFallbackGlyph.
std::vector<int> glyphs(const std::string& s) {
    static const char latin1[] = "AAAAAAACEEEEIIIIDNOOOOOxOUUUUYTsaaaaaaaceeeeiiiidnooooo/ouuuuyty";  // U+00C0..U+00FF
    std::vector<int> out;
    for (std::uint32_t cp : code_points(s)) {
        if (cp >= 32 && cp < 127) out.push_back(static_cast<int>(cp));
        else if (cp >= 0xc0 && cp <= 0xff) out.push_back(latin1[cp - 0xc0]);
        else out.push_back(kFallbackGlyph);
    }
    return out;
}

/// What the plot is drawn with: a raster canvas (PNG and the other image formats) or an SVG document.
/// Coordinates are pixels from the top-left corner; text is measured and placed with the raster font's
/// metrics (14 pixels high) in both, so the two layouts agree.
class Painter {
public:
    virtual ~Painter() = default;
    virtual int width() const = 0;
    virtual int height() const = 0;
    /// [x0, x1) x [y0, y1)
    virtual void rect(int x0, int y0, int x1, int y1, Rgb c, float alpha = 1.f) = 0;
    /// Text with its top-left corner at (x, y).
    virtual void text(int x, int y, const std::string& s, Rgb c) = 0;
    virtual int text_width(const std::string& s) const = 0;
    /// One channel: column x0 + i reaches up to ys[i] from the baseline, filled translucently and outlined.
    virtual void area(int x0, int baseline, const std::vector<int>& ys, Rgb c, float fill_alpha) = 0;
};

class Canvas final : public Painter {
public:
    explicit Canvas(int w, int h) : img_(w, h, 3, 8) { std::memset(img_.data(), 255, img_.bytes()); }
    Image take() { return std::move(img_); }
    int width() const override { return img_.width(); }
    int height() const override { return img_.height(); }
    void text(int x, int y, const std::string& s, Rgb c) override { text(x, y, s, c, 2); }
    int text_width(const std::string& s) const override { return text_width(s, 2); }
    void rect(int x0, int y0, int x1, int y1, Rgb c, float alpha) override { fill(x0, y0, x1, y1, c, alpha); }
    void area(int x0, int baseline, const std::vector<int>& ys, Rgb c, float fill_alpha) override {
        for (std::size_t i = 0; i < ys.size(); ++i) {
            const int x = x0 + static_cast<int>(i);
            fill(x, ys[i], x + 1, baseline, c, fill_alpha);
            if (i > 0) line(x - 1, ys[i - 1], x, ys[i], c);
        }
    }

    void blend(int x, int y, Rgb c, float alpha) {
        if (x < 0 || y < 0 || x >= img_.width() || y >= img_.height()) return;
        std::uint8_t* p = img_.row(y) + 3 * x;
        p[0] = static_cast<std::uint8_t>(std::lround(p[0] * (1 - alpha) + c.r * alpha));
        p[1] = static_cast<std::uint8_t>(std::lround(p[1] * (1 - alpha) + c.g * alpha));
        p[2] = static_cast<std::uint8_t>(std::lround(p[2] * (1 - alpha) + c.b * alpha));
    }
    void fill(int x0, int y0, int x1, int y1, Rgb c, float alpha = 1.f) {  // [x0, x1) x [y0, y1)
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
    /// Text with its top-left corner at (x, y); `scale` multiplies the font's 7-pixel cell. UTF-8: see glyphs().
    void text(int x, int y, const std::string& s, Rgb c, int scale) {
        std::vector<char> buf(1024);  // one glyph: up to 16 quads of 64 bytes
        int pen = 0;                   // in font units
        for (int g : glyphs(s)) {
            if (g == kFallbackGlyph) {  // an outlined box where the font has no glyph
                const int x0 = x + (pen + 0) * scale, x1 = x + (pen + 5) * scale, y0 = y, y1 = y + 7 * scale;
                fill(x0, y0, x1, y0 + 1, c);
                fill(x0, y1 - 1, x1, y1, c);
                fill(x0, y0, x0 + 1, y1, c);
                fill(x1 - 1, y0, x1, y1, c);
                pen += kFallbackAdvance;
                continue;
            }
            char one[2] = {static_cast<char>(g), '\0'};
            int quads = stb_easy_font_print(0, 0, one, nullptr, buf.data(), static_cast<int>(buf.size()));
            for (int q = 0; q < quads; ++q) {
                const float* v0 = reinterpret_cast<const float*>(buf.data() + q * 64);
                const float* v2 = reinterpret_cast<const float*>(buf.data() + q * 64 + 32);
                fill(x + (pen + static_cast<int>(v0[0])) * scale, y + static_cast<int>(v0[1] * scale),
                     x + (pen + static_cast<int>(v2[0])) * scale, y + static_cast<int>(v2[1] * scale), c);
            }
            pen += stb_easy_font_width(one);
        }
    }
    static int text_width(const std::string& s, int scale) {
        int w = 0;
        for (int g : glyphs(s)) {
            char one[2] = {static_cast<char>(g), '\0'};
            w += g == kFallbackGlyph ? kFallbackAdvance : stb_easy_font_width(one);
        }
        return w * scale;
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

namespace {

void draw_plot(const HistResult& r, const PlotOptions& opt, Painter& cv) {
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
        cv.text(x0 - 10 - cv.text_width(s), y - 6, s, ink);
    }
    // x ticks over the value range.
    for (double v : nice_ticks(r.low, r.high, 8)) {
        int x = x0 + static_cast<int>(std::lround((v - r.low) / (r.high - r.low) * pw));
        if (x > x0 + pw) continue;
        cv.rect(x, y0 + 1, x + 1, y0 + 7, ink);
        std::string s = fmt(v);
        cv.text(x - cv.text_width(s) / 2, y0 + 12, s, ink);
    }

    // Channels: translucent fill plus a solid outline, so overlapping channels stay readable.
    const float fill_alpha = r.channels.size() > 1 ? 0.30f : 0.75f;
    for (auto& c : r.channels) {
        std::vector<int> ys(static_cast<std::size_t>(pw));
        for (int px = 0; px < pw; ++px) {
            // Bins falling on this pixel column: show the largest (keeps narrow peaks visible).
            int b0 = static_cast<int>(static_cast<long long>(px) * r.bins / pw);
            int b1 = std::max(b0 + 1, static_cast<int>(static_cast<long long>(px + 1) * r.bins / pw));
            std::uint64_t v = 0;
            for (int b = b0; b < b1 && b < r.bins; ++b) v = std::max(v, c.counts[static_cast<std::size_t>(b)]);
            ys[static_cast<std::size_t>(px)] = yof(static_cast<double>(v));
        }
        cv.area(x0, y0, ys, colour_of(c.name), fill_alpha);
    }

    // Axes, labels, title, legend.
    cv.rect(x0, top, x0 + 1, y0 + 1, ink);
    cv.rect(x0, y0, x0 + pw, y0 + 1, ink);
    std::string xl = "value (" + std::to_string(r.bins) + " bins over [" + fmt(r.low) + ", " + fmt(r.high) + "))";
    cv.text(x0 + pw / 2 - cv.text_width(xl) / 2, y0 + 36, xl, ink);
    cv.text(8, top - 22, opt.log ? "count (log scale)" : "count", ink);
    std::string title = opt.title;
    if (title.empty())
        title = r.file.empty() ? "total of " + std::to_string(r.images) + " images"
                               : r.file + "  " + std::to_string(r.width) + "x" + std::to_string(r.height);
    cv.text(x0 + pw / 2 - cv.text_width(title) / 2, 10, title, ink);
    int lx = x0 + pw - 10;
    for (auto it = r.channels.rbegin(); it != r.channels.rend(); ++it) {
        int w = cv.text_width(it->name);
        lx -= w;
        cv.text(lx, top + 6, it->name, ink);
        lx -= 18;
        cv.rect(lx, top + 6, lx + 12, top + 18, colour_of(it->name));
        lx -= 14;
    }
}

// ---- SVG ----------------------------------------------------------------------------------------------------

std::string hex(Rgb c) {
    char b[8];
    std::snprintf(b, sizeof b, "#%02x%02x%02x", c.r, c.g, c.b);
    return b;
}

/// Text for XML: markup characters escaped, control characters dropped, invalid UTF-8 as U+FFFD.
std::string xml_text(const std::string& s) {
    std::string out;
    for (std::uint32_t cp : code_points(s)) {
        if (cp == '&') out += "&amp;";
        else if (cp == '<') out += "&lt;";
        else if (cp == '>') out += "&gt;";
        else if (cp == '"') out += "&quot;";
        else if (cp < 32 || cp == 0x7f || cp == 0xfffe || cp == 0xffff) continue;
        else if (cp < 0x80) out += static_cast<char>(cp);
        else {
            char b[5] = {};
            if (cp < 0x800) { b[0] = char(0xc0 | (cp >> 6)); b[1] = char(0x80 | (cp & 63)); }
            else if (cp < 0x10000) { b[0] = char(0xe0 | (cp >> 12)); b[1] = char(0x80 | ((cp >> 6) & 63)); b[2] = char(0x80 | (cp & 63)); }
            else { b[0] = char(0xf0 | (cp >> 18)); b[1] = char(0x80 | ((cp >> 12) & 63)); b[2] = char(0x80 | ((cp >> 6) & 63)); b[3] = char(0x80 | (cp & 63)); }
            out += b;
        }
    }
    return out;
}

class Svg final : public Painter {
public:
    Svg(int w, int h) : w_(w), h_(h) {}
    int width() const override { return w_; }
    int height() const override { return h_; }
    void rect(int x0, int y0, int x1, int y1, Rgb c, float alpha) override {
        if (x1 <= x0 || y1 <= y0) return;
        body_ += "<rect x=\"" + std::to_string(x0) + "\" y=\"" + std::to_string(y0) + "\" width=\"" + std::to_string(x1 - x0) +
                 "\" height=\"" + std::to_string(y1 - y0) + "\" fill=\"" + hex(c) + "\"" + opacity(alpha) + "/>\n";
    }
    void text(int x, int y, const std::string& s, Rgb c) override {
        // The raster font's cell is 14 pixels high with its baseline near 12.
        body_ += "<text x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y + 12) + "\" fill=\"" + hex(c) + "\">" +
                 xml_text(s) + "</text>\n";
    }
    int text_width(const std::string& s) const override { return Canvas::text_width(s, 2); }
    void area(int x0, int baseline, const std::vector<int>& ys, Rgb c, float fill_alpha) override {
        if (ys.empty()) return;
        std::string pts;
        for (std::size_t i = 0; i < ys.size(); ++i)
            pts += std::to_string(x0 + static_cast<int>(i)) + "," + std::to_string(ys[i]) + " ";
        const std::string ends = std::to_string(x0 + static_cast<int>(ys.size()) - 1) + "," + std::to_string(baseline) + " " +
                                 std::to_string(x0) + "," + std::to_string(baseline);
        body_ += "<polygon points=\"" + pts + ends + "\" fill=\"" + hex(c) + "\"" + opacity(fill_alpha) + "/>\n";
        body_ += "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"" + hex(c) + "\" stroke-width=\"1\"/>\n";
    }
    std::string document() const {
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
               std::to_string(w_) + "\" height=\"" + std::to_string(h_) + "\" viewBox=\"0 0 " + std::to_string(w_) + " " +
               std::to_string(h_) + "\" font-family=\"DejaVu Sans Mono, monospace\" font-size=\"13\">\n" +
               "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n" + body_ + "</svg>\n";
    }

private:
    static std::string opacity(float a) {
        if (a >= 1.f) return "";
        char b[32];
        std::snprintf(b, sizeof b, " fill-opacity=\"%.2f\"", a);
        return b;
    }
    int w_, h_;
    std::string body_;
};

}  // namespace

Image render_plot(const HistResult& r, const PlotOptions& opt) {
    Canvas cv(std::max(opt.width, 320), std::max(opt.height, 200));
    draw_plot(r, opt, cv);
    return cv.take();
}

std::string render_plot_svg(const HistResult& r, const PlotOptions& opt) {
    Svg svg(std::max(opt.width, 320), std::max(opt.height, 200));
    draw_plot(r, opt, svg);
    return svg.document();
}

}  // namespace cli
