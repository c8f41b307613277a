// Internal: the one binning rule, shared by the CPU backend and the CUDA kernels.
//
// Rule (cv::calcHist, uniform): a = bins / (high - low), b = -a * low in double; v counts when
// low <= v < high, in bin clamp(floor(v * a + b), 0, bins - 1). Everything else is "out of range".
//
// Three equivalent evaluations are chosen per request, all giving that rule's answer bit for bit:
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

#include "imghist/internal/host_device.hpp"  // IMGHIST_HD

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

/// The rule on a double value: bin index or -1. `mul`/`add` are passed so that device code can use
/// explicitly rounded operations; the host build is compiled with -ffp-contract=off.
IMGHIST_HD int bin_of(double v, const BinParams& p) {
    if (!(v >= p.low && v < p.high)) return -1;  // also rejects NaN
#if defined(__CUDA_ARCH__)
    double x = __dadd_rn(__dmul_rn(v, p.a), p.b);
#else
    double x = v * p.a + p.b;
#endif
    double f = floor(x);
    int idx = f < 0.0 ? 0 : (f >= static_cast<double>(p.bins) ? p.bins - 1 : static_cast<int>(f));
    return idx;
}

/// 256-entry table for 8-bit samples: bin or -1.
void make_lut8(const BinParams& p, std::int16_t lut[256]);

}  // namespace imghist::detail
