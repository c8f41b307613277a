// Internal: the one binning rule, shared by the CPU backend and the CUDA kernels.
//
// Rule (cv::calcHist, uniform): a = bins / (high - low), b = -a * low in double; v counts when
// low <= v < high, in bin clamp(floor(v * a + b), 0, bins - 1). Everything else is "out of range".
//
// Four equivalent evaluations are chosen per request, all giving that rule's answer bit for bit (the slot
// functions below are their one definition, compiled for the host and the device):
//   Shift — integer samples, low = 0, high = 2^k, bins = 2^m (m <= k): bin = v >> (k - m) for
//           0 <= v < 2^k. Here a = 2^(m-k) is exact, v * a is exact and floor(v * a) is the shift.
//   Lut8  — 8-bit samples: the rule evaluated once per value into a 256-entry table (as OpenCV does).
//   Arith — the rule itself, per sample, in double precision without FMA contraction.
//   ScaleF32 — float samples, low = 0 and a = 2^j: v * a is exact in float (a power-of-two scaling), b is
//           zero, so floorf(v * a) is the rule's floor; the range test is done on the float itself
//           (high = bins / a is exactly representable).
#pragma once

#include <cmath>
#include <cstdint>

#include "imghist/histogram.hpp"

#include "core/host_device.hpp"  // IMGHIST_HD

namespace imghist::detail {

enum class BinMode : std::uint8_t { Shift, Lut8, Arith, ScaleF32 };

struct BinParams {
    int bins = 256;
    double low = 0, high = 256;
    double a = 1, b = 0;
    BinMode mode = BinMode::Arith;
    int shift = 0;             ///< Shift: v >> shift
    std::uint32_t limit = 0;   ///< Shift: counted when (unsigned)v < limit (2^k); 0 = no check needed
    float scale = 1.0f;        ///< ScaleF32: a as a float (exact)
    float high_f = 0.0f;       ///< ScaleF32: high as a float (exact)
};

/// Validates the spec for the sample type (throws Error) and picks the evaluation.
BinParams make_bin_params(const BinSpec& spec, SampleType type);

// ---- The rule's evaluations, one definition for the CPU backend and the CUDA kernels ----------------------
// Each returns the sample's slot: its bin, or `bins` when the value is out of range (so a kernel can count
// out-of-range samples in slot `bins` without a branch). Device code uses explicitly rounded operations;
// the host build is compiled with -ffp-contract=off, so both round every product and sum alone.

/// Arith: the rule itself in double precision.
IMGHIST_HD unsigned int arith_slot(double v, double low, double high, double a, double b, int bins) {
    if (!(v >= low && v < high)) return static_cast<unsigned int>(bins);  // also rejects NaN
#if defined(__CUDA_ARCH__)
    const double f = floor(__dadd_rn(__dmul_rn(v, a), b));
#else
    const double f = floor(v * a + b);
#endif
    if (f < 0.0) return 0u;
    return f >= static_cast<double>(bins) ? static_cast<unsigned int>(bins - 1) : static_cast<unsigned int>(f);
}

/// Shift with the range test: limit = 2^k = bins << shift, so every u >= limit (negative int32 samples
/// included, as unsigned) shifts to >= bins and one min() gives the slot. Also right when no value of the
/// type can reach the limit (BinParams::limit == 0).
IMGHIST_HD unsigned int shift_slot(std::uint32_t u, int shift, int bins) {
    const std::uint32_t s = u >> shift;
    return s < static_cast<std::uint32_t>(bins) ? s : static_cast<unsigned int>(bins);
}

/// Shift without the range test (BinParams::limit == 0 for an unsigned type: every value is in range).
IMGHIST_HD unsigned int shift_full_slot(std::uint32_t u, int shift) { return u >> shift; }

/// ScaleF32: v * a is exact in float (a = scale is a power of two) and b is zero, so floor(v * a) is the
/// rule's floor; the range test is done on the float itself (high_f = high, exactly representable).
IMGHIST_HD unsigned int scale_f32_slot(float v, float scale, float high_f, int bins) {
    if (!(v >= 0.0f && v < high_f)) return static_cast<unsigned int>(bins);  // also rejects NaN
#if defined(__CUDA_ARCH__)
    return static_cast<unsigned int>(__float2int_rd(__fmul_rn(v, scale)));
#else
    return static_cast<unsigned int>(std::floor(v * scale));
#endif
}

/// The rule on a double value (Arith): bin index or -1.
IMGHIST_HD int bin_of(double v, const BinParams& p) {
    const unsigned int s = arith_slot(v, p.low, p.high, p.a, p.b, p.bins);
    return s == static_cast<unsigned int>(p.bins) ? -1 : static_cast<int>(s);
}

/// 256-entry table for 8-bit samples: bin or -1.
void make_lut8(const BinParams& p, std::int16_t lut[256]);

}  // namespace imghist::detail
