// imghist filters — arithmetic shared by the CPU backend and the CUDA kernels.
//
// Every formula that must reproduce OpenCV to the last bit lives here once, as inline functions compiled
// both for the host and for the device. Both sides are compiled without floating-point contraction
// (-ffp-contract=off on the host, --fmad=false on the device), so a*b+c is two rounded operations
// everywhere, as in OpenCV's own (non-FMA) build of these routines.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>

#include "core/host_device.hpp"  // IMGHIST_HD

#if !defined(__CUDA_ARCH__) && defined(__x86_64__)
#include <xmmintrin.h>  // _mm_cvtss_si32 (SSE, part of every x86-64 CPU)
#endif

namespace imghist {
namespace fmath {

/// float -> int, rounding half to even (what cvRound / saturate_cast do for float in the default FP mode).
/// On x86-64 hosts the conversion instruction itself, which is what lrintf runs (and cvRound inlines): the
/// compiler calls lrintf out of line otherwise, once per pixel in CLAHE's blend.
IMGHIST_HD int round_even(float v) {
#if defined(__CUDA_ARCH__)
    return __float2int_rn(v);
#elif defined(__x86_64__)
    return _mm_cvtss_si32(_mm_set_ss(v));
#else
    return static_cast<int>(std::lrintf(v));
#endif
}

/// int -> float with round-to-nearest (the implicit conversion of C++).
IMGHIST_HD float to_float(long long v) {
#if defined(__CUDA_ARCH__)
    return __ll2float_rn(v);
#else
    return static_cast<float>(v);
#endif
}

IMGHIST_HD int floor_to_int(float v) {
#if defined(__CUDA_ARCH__)
    return __float2int_rd(v);
#else
    return static_cast<int>(std::floor(v));
#endif
}

IMGHIST_HD int clamp_int(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// ---- equalizeHist ------------------------------------------------------------------------------------------
// cv::equalizeHist: i0 = first non-empty bin. When it holds every pixel the output is the constant i0.
// Otherwise scale = 255 / (total - h[i0]) in single precision; entry i (i > i0) is the float product
// (float)(h[i0+1] + ... + h[i]) * scale, rounded half to even and saturated; entries up to i0 are 0.

IMGHIST_HD float equalize_scale(unsigned long long total, unsigned long long first_count) {
    return 255.0f / to_float(static_cast<long long>(total - first_count));
}

/// `sum_after_first` = h[i0+1] + ... + h[i].
IMGHIST_HD std::uint8_t equalize_entry(unsigned long long sum_after_first, float scale) {
    return static_cast<std::uint8_t>(
        clamp_int(round_even(to_float(static_cast<long long>(sum_after_first)) * scale), 0, 255));
}

// ---- Otsu --------------------------------------------------------------------------------------------------
// cv::threshold(THRESH_OTSU), double precision over the normalised histogram. The recurrence for the
// class-1 mean is sequential and is kept exactly, including its quirk: mu1 is multiplied by the previous
// q1 even on the iterations that are then skipped.

struct OtsuState {
    double mu1 = 0.0;
    double q1 = 0.0;
};

/// Advances the recurrence by bin i (count h, scale = 1/total). Returns false when the bin is skipped
/// (a class weight below FLT_EPSILON or above 1 - FLT_EPSILON); then q1/mu1 must not be used for i.
IMGHIST_HD bool otsu_step(OtsuState& s, int i, unsigned long long h, double scale) {
    const double p_i = static_cast<double>(h) * scale;
    s.mu1 *= s.q1;
    s.q1 += p_i;
    const double q2 = 1.0 - s.q1;
    const double lo = s.q1 < q2 ? s.q1 : q2;
    const double hi = s.q1 > q2 ? s.q1 : q2;
    if (lo < static_cast<double>(FLT_EPSILON) || hi > 1.0 - static_cast<double>(FLT_EPSILON)) return false;
    s.mu1 = (s.mu1 + static_cast<double>(i) * p_i) / s.q1;
    return true;
}

/// Between-class variance of a non-skipped bin, given the global mean mu (already scaled).
IMGHIST_HD double otsu_sigma(double q1, double mu1, double mu) {
    const double q2 = 1.0 - q1;
    const double mu2 = (mu - q1 * mu1) / q2;
    return q1 * q2 * (mu1 - mu2) * (mu1 - mu2);
}

/// The whole sequential scan over `bins` counts (scale = 1/total, mu = the scaled global mean): the first bin
/// of the largest between-class variance, 0 when none is above 0. One thread; the host and the device
/// kernel for any bin count run this same loop.
template <class Count>
IMGHIST_HD int otsu_scan(const Count* counts, int bins, double scale, double mu) {
    OtsuState s;
    double max_sigma = 0.0;
    int level = 0;
    for (int i = 0; i < bins; ++i) {
        if (!otsu_step(s, i, counts[i], scale)) continue;
        const double sigma = otsu_sigma(s.q1, s.mu1, mu);
        if (sigma > max_sigma) {
            max_sigma = sigma;
            level = i;
        }
    }
    return level;
}

// ---- Triangle ----------------------------------------------------------------------------------------------
// cv::threshold(THRESH_TRIANGLE) on a 256-bin histogram (integer part; the distance uses doubles).
template <class Get>
IMGHIST_HD int triangle_from(Get h) {
    const int N = 256;
    int left = 0, right = 0, max_ind = 0;
    long long max = 0;
    for (int i = 0; i < N; ++i)
        if (h(i) > 0) { left = i; break; }
    if (left > 0) --left;
    for (int i = N - 1; i > 0; --i)
        if (h(i) > 0) { right = i; break; }
    if (right < N - 1) ++right;
    for (int i = 0; i < N; ++i)
        if (static_cast<long long>(h(i)) > max) { max = static_cast<long long>(h(i)); max_ind = i; }
    bool flipped = false;
    if (max_ind - left < right - max_ind) {
        flipped = true;
        left = N - 1 - right;
        max_ind = N - 1 - max_ind;
    }
    // In the flipped case bin i of the mirrored histogram is h(N-1-i).
    double thresh = left;
    double dist = 0.0;
    const double a = static_cast<double>(max);
    const double b = static_cast<double>(left - max_ind);
    for (int i = left + 1; i <= max_ind; ++i) {
        const double hi = static_cast<double>(flipped ? h(N - 1 - i) : h(i));
        const double d = a * i + b * hi;
        if (d > dist) { dist = d; thresh = i; }
    }
    thresh -= 1.0;
    if (flipped) thresh = N - 1 - thresh;
    return static_cast<int>(thresh);
}

// ---- threshold apply ---------------------------------------------------------------------------------------
// cv::threshold on integer samples: ithresh = floor(thresh), imaxval = round(maxval) (TRUNC: ithresh), both
// saturated to the type. With t clamped to [-1, max] every type reduces to the comparison x > t, which
// reproduces OpenCV's special cases for thresholds outside the type's range (constant or copied output).

enum ThresholdOp : int { kBinary = 0, kBinaryInv = 1, kTrunc = 2, kToZero = 3, kToZeroInv = 4 };

template <class T>
IMGHIST_HD T threshold_value(T x, int t, T maxval, int op, int type_max) {
    const bool gt = t < 0 ? true : (t >= type_max ? false : static_cast<int>(x) > t);
    switch (op) {
        case kBinary: return gt ? maxval : T(0);
        case kBinaryInv: return gt ? T(0) : maxval;
        case kTrunc: return gt ? static_cast<T>(t < 0 ? 0 : t) : x;
        case kToZero: return gt ? x : T(0);
        default: return gt ? T(0) : x;
    }
}

IMGHIST_HD float threshold_value_f32(float x, float t, float maxval, int op) {
    const bool gt = x > t;
    switch (op) {
        case kBinary: return gt ? maxval : 0.0f;
        case kBinaryInv: return gt ? 0.0f : maxval;
        case kTrunc: return gt ? t : x;
        case kToZero: return gt ? x : 0.0f;
        default: return gt ? 0.0f : x;
    }
}

// ---- YCrCb (8-bit, OpenCV's 14-bit fixed point) ------------------------------------------------------------
constexpr int kYuvShift = 14;
IMGHIST_HD int descale(int x) { return (x + (1 << (kYuvShift - 1))) >> kYuvShift; }
IMGHIST_HD std::uint8_t sat_u8(int v) { return static_cast<std::uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v)); }

/// The Y of cv::cvtColor(COLOR_BGR2YCrCb) on CV_8U, unsaturated (also the luma of contrast stretch, where
/// 16-bit samples use the same integers; no overflow below 2^17).
IMGHIST_HD int ycrcb_luma(int b, int g, int r) { return descale(b * 1868 + g * 9617 + r * 4899); }

/// BGR -> (Y, Cr, Cb) as cv::cvtColor(COLOR_BGR2YCrCb) on CV_8U.
IMGHIST_HD void bgr_to_ycrcb(int b, int g, int r, int& y, int& cr, int& cb) {
    const int Y = ycrcb_luma(b, g, r);
    y = sat_u8(Y);
    cr = sat_u8(descale((r - Y) * 11682 + (128 << kYuvShift)));
    cb = sat_u8(descale((b - Y) * 9241 + (128 << kYuvShift)));
}

/// (Y, Cr, Cb) -> BGR as cv::cvtColor(COLOR_YCrCb2BGR) on CV_8U.
IMGHIST_HD void ycrcb_to_bgr(int y, int cr, int cb, std::uint8_t& b, std::uint8_t& g, std::uint8_t& r) {
    b = sat_u8(y + descale((cb - 128) * 29049));
    g = sat_u8(y + descale((cb - 128) * -5636 + (cr - 128) * -11698));
    r = sat_u8(y + descale((cr - 128) * 22987));
}

/// One pixel of the luma equalization: BGR(A) `p` -> Y'CrCb, Y through `table`, back to BGR into `q`; the
/// alpha of a 4-channel pixel is copied.
IMGHIST_HD void equalize_luma_pixel(const std::uint8_t* p, std::uint8_t* q, int channels, const std::uint8_t* table) {
    int y, cr, cb;
    bgr_to_ycrcb(p[0], p[1], p[2], y, cr, cb);
    const std::uint8_t alpha = channels == 4 ? p[3] : 0;
    ycrcb_to_bgr(table[y], cr, cb, q[0], q[1], q[2]);
    if (channels == 4) q[3] = alpha;
}

// ---- CLAHE -------------------------------------------------------------------------------------------------
// Geometry of cv::CLAHE: when the image is not a multiple of the grid in both directions it is padded on the
// right and bottom with BORDER_REFLECT_101 by (tiles - size % tiles) in *each* direction (a full extra
// tile row/column of padding where that direction was already a multiple), and tiles are cut from the
// padded image. LUT entries are round((float)cumsum * lutScale); interpolation is bilinear in float.

struct ClaheGeometry {
    int width = 0, height = 0;     ///< source image
    int ext_w = 0, ext_h = 0;      ///< readable extent for tile histograms (>= width / height; see below)
    int tiles_x = 8, tiles_y = 8;
    int tile_w = 0, tile_h = 0;    ///< tile size in the (possibly padded) image
    int hist_size = 256;
    int clip = 0;                  ///< integer clip limit per bin (0 = no clipping)
    float lut_scale = 0.0f;
    float inv_tw = 0.0f, inv_th = 0.0f;
};

/// extra_right / extra_bottom: pixels of a larger image that lie beyond the source's right and bottom edges.
/// cv::copyMakeBorder (without BORDER_ISOLATED) takes as much of the padding as it can from them, and
/// reflects about the edge of that extended region for the rest; cv::CLAHE on a ROI inherits this.
inline ClaheGeometry clahe_geometry(int width, int height, int tiles_x, int tiles_y, int hist_size,
                                    double clip_limit, int extra_right = 0, int extra_bottom = 0) {
    ClaheGeometry g;
    g.width = width;
    g.height = height;
    g.tiles_x = tiles_x;
    g.tiles_y = tiles_y;
    g.hist_size = hist_size;
    int pw = width, ph = height;
    if (!(width % tiles_x == 0 && height % tiles_y == 0)) {
        pw = width + (tiles_x - width % tiles_x);
        ph = height + (tiles_y - height % tiles_y);
    }
    g.tile_w = pw / tiles_x;
    g.tile_h = ph / tiles_y;
    g.ext_w = width + (extra_right < pw - width ? extra_right : pw - width);
    g.ext_h = height + (extra_bottom < ph - height ? extra_bottom : ph - height);
    const int total = g.tile_w * g.tile_h;
    g.lut_scale = static_cast<float>(hist_size - 1) / static_cast<float>(total);
    if (clip_limit > 0.0) {
        const int c = static_cast<int>(clip_limit * total / hist_size);
        g.clip = c < 1 ? 1 : c;
    }
    g.inv_tw = 1.0f / static_cast<float>(g.tile_w);
    g.inv_th = 1.0f / static_cast<float>(g.tile_h);
    return g;
}

/// cv::borderInterpolate for BORDER_REFLECT_101.
IMGHIST_HD int reflect101(int p, int len) {
    if (len == 1) return 0;
    while (static_cast<unsigned>(p) >= static_cast<unsigned>(len)) {
        if (p < 0) p = -p;
        else p = 2 * len - 2 - p;
    }
    return p;
}

/// After clipping at `clip`, `clipped` counts are spread: every bin gets clipped / bins, and the
/// remainder goes one each to bins 0, step, 2*step, ... (step = max(bins / remainder, 1)).
IMGHIST_HD unsigned int clahe_redistributed(unsigned int count, int bin, int clip, int bins, long long clipped) {
    if (clip <= 0) return count;
    unsigned int c = count > static_cast<unsigned int>(clip) ? static_cast<unsigned int>(clip) : count;
    const long long batch = clipped / bins;
    const long long residual = clipped - batch * bins;
    c += static_cast<unsigned int>(batch);
    if (residual != 0) {
        long long step = bins / residual;
        if (step < 1) step = 1;
        if (bin % step == 0 && bin / step < residual) c += 1;
    }
    return c;
}

/// clahe_redistributed for the bins taken in order 0, 1, 2, ... (a tile's table on the CPU): the same counts,
/// with the two divisions done once per tile instead of per bin.
class ClaheRedistribution {
public:
    IMGHIST_HD ClaheRedistribution(int clip, int bins, long long clipped) : clip_(clip) {
        if (clip <= 0) return;
        batch_ = static_cast<unsigned int>(clipped / bins);
        residual_ = clipped - static_cast<long long>(batch_) * bins;
        if (residual_ != 0) {
            step_ = bins / residual_;
            if (step_ < 1) step_ = 1;
        }
    }
    /// The redistributed count of the next bin.
    IMGHIST_HD unsigned int next(unsigned int count) {
        const int bin = bin_++;
        if (clip_ <= 0) return count;
        unsigned int c = (count > static_cast<unsigned int>(clip_) ? static_cast<unsigned int>(clip_) : count) + batch_;
        if (bin == next_bonus_ && residual_ > 0) {  // bins 0, step, 2 * step, ... while the remainder lasts
            ++c;
            --residual_;
            next_bonus_ += step_;
        }
        return c;
    }

private:
    int clip_;
    unsigned int batch_ = 0;
    long long residual_ = 0, step_ = 1, next_bonus_ = 0;
    int bin_ = 0;
};

IMGHIST_HD int clahe_lut_entry(long long cumsum, float lut_scale, int max_value) {
    return clamp_int(round_even(to_float(cumsum) * lut_scale), 0, max_value);
}

/// Horizontal (or vertical) interpolation coordinates of position x.
struct ClaheAxis {
    int t1, t2;
    float a, a1;
};
IMGHIST_HD ClaheAxis clahe_axis(int x, float inv, int tiles) {
    const float tf = static_cast<float>(x) * inv - 0.5f;
    int t1 = floor_to_int(tf);
    ClaheAxis r;
    r.a = tf - static_cast<float>(t1);
    r.a1 = 1.0f - r.a;
    r.t2 = t1 + 1;
    r.t1 = t1 < 0 ? 0 : t1;
    if (r.t2 > tiles - 1) r.t2 = tiles - 1;
    return r;
}

/// Bilinear blend of the four tile LUT values, as float, then rounded half to even and saturated.
IMGHIST_HD int clahe_blend(float l11, float l12, float l21, float l22, const ClaheAxis& ax, const ClaheAxis& ay,
                           int max_value) {
    const float res = (l11 * ax.a1 + l12 * ax.a) * ay.a1 + (l21 * ax.a1 + l22 * ax.a) * ay.a;
    return clamp_int(round_even(res), 0, max_value);
}
IMGHIST_HD int clahe_blend(int l11, int l12, int l21, int l22, const ClaheAxis& ax, const ClaheAxis& ay,
                           int max_value) {
    return clahe_blend(static_cast<float>(l11), static_cast<float>(l12), static_cast<float>(l21),
                       static_cast<float>(l22), ax, ay, max_value);
}

/// np.interp(x, xp, fp) over histogram matching's target points (xp strictly increasing, points >= 1), as
/// scikit-image's match_histograms calls it: the last point xp[j] <= x by binary search, then NumPy's slope
/// form. The host's match_table and the device's table kernels both use this one function.
IMGHIST_HD double match_interp(double x, const double* xp, const int* fp, int points) {
    const int last = points - 1;
    if (x <= xp[0]) return fp[0];
    if (x >= xp[last]) return fp[last];
    int lo = 0, hi = last;  // xp[lo] <= x < xp[hi]
    while (hi - lo > 1) {
        const int mid = (lo + hi) >> 1;
        if (xp[mid] <= x) lo = mid;
        else hi = mid;
    }
    if (xp[lo] == x) return fp[lo];
    const double slope = static_cast<double>(fp[lo + 1] - fp[lo]) / (xp[lo + 1] - xp[lo]);
    return slope * (x - xp[lo]) + static_cast<double>(fp[lo]);
}

}  // namespace fmath
}  // namespace imghist
