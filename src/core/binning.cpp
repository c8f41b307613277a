#include "core/binning.hpp"

#include <limits>
#include <string>

#include "imghist/error.hpp"

namespace imghist {

int max_bins(SampleType type) noexcept { return type == SampleType::U8 ? 256 : 65536; }

BinSpec BinSpec::full(SampleType type, int bins) {
    switch (type) {
        case SampleType::U8: return BinSpec{bins, 0.0, 256.0};
        case SampleType::U16: return BinSpec{bins, 0.0, 65536.0};
        default:
            throw Error(ErrorCode::InvalidArgument,
                        std::string("BinSpec::full: ") + to_string(type) + " samples have no natural range; give low and high");
    }
}

BinSpec BinSpec::bits(int bits, int bins) {
    if (bits < 1 || bits > 31) throw Error(ErrorCode::InvalidArgument, "BinSpec::bits: bits must be in 1..31");
    return BinSpec{bins, 0.0, static_cast<double>(std::uint64_t(1) << bits)};
}

namespace detail {

namespace {
int log2_exact(double v) {  // k when v == 2^k (k in 0..31), else -1
    for (int k = 0; k <= 31; ++k)
        if (v == static_cast<double>(std::uint64_t(1) << k)) return k;
    return -1;
}
}  // namespace

BinParams make_bin_params(const BinSpec& spec, SampleType type) {
    if (spec.bins < 1 || spec.bins > max_bins(type))
        throw Error(ErrorCode::InvalidArgument, "bin count " + std::to_string(spec.bins) + " is outside 1.." +
                                                    std::to_string(max_bins(type)) + " for " + to_string(type) +
                                                    " samples");
    if (!std::isfinite(spec.low) || !std::isfinite(spec.high))
        throw Error(ErrorCode::InvalidArgument, "histogram range bounds must be finite");
    if (!(spec.low < spec.high))
        throw Error(ErrorCode::InvalidArgument, "histogram range needs low < high (got [" + std::to_string(spec.low) +
                                                    ", " + std::to_string(spec.high) + "))");
    // high - low overflows for ranges such as [-1e308, 1e308]: a would be 0 and every value fall in bin 0.
    if (!std::isfinite(spec.high - spec.low))
        throw Error(ErrorCode::InvalidArgument, "histogram range is too wide: high - low overflows a double");
    BinParams p;
    p.bins = spec.bins;
    p.low = spec.low;
    p.high = spec.high;
    p.a = static_cast<double>(spec.bins) / (spec.high - spec.low);
    p.b = -p.a * spec.low;
    if (!std::isfinite(p.a) || !std::isfinite(p.b) || !(p.a > 0))
        throw Error(ErrorCode::InvalidArgument, "histogram range is too narrow or too wide for its bin count");

    if (type == SampleType::U8) p.mode = BinMode::Lut8;
    if (type != SampleType::F32 && spec.low == 0.0) {
        const int k = log2_exact(spec.high);
        const int m = log2_exact(static_cast<double>(spec.bins));
        const int type_bits = type == SampleType::U8 ? 8 : type == SampleType::U16 ? 16 : 31;
        if (k >= 0 && m >= 0 && m <= k) {
            p.mode = BinMode::Shift;
            p.shift = k - m;
            // No range check is needed when every value of the type is below 2^k (unsigned types only).
            p.limit = (k >= type_bits && type != SampleType::I32) ? 0u : static_cast<std::uint32_t>(std::uint64_t(1) << k);
            if (type == SampleType::I32 && k == 31) p.limit = 0x80000000u;
        }
    }
    if (type == SampleType::F32 && spec.low == 0.0 && spec.bins <= (1 << 24)) {
        // a = 2^j exactly (j may be negative), and high = bins / a representable in float.
        int j = 0;
        const double m = std::frexp(p.a, &j);  // a = m * 2^j, m in [0.5, 1)
        const float hf = static_cast<float>(spec.high);
        if (m == 0.5 && j - 1 >= -100 && j - 1 <= 100 && static_cast<double>(hf) == spec.high) {
            p.mode = BinMode::ScaleF32;
            p.scale = static_cast<float>(p.a);
            p.high_f = hf;
        }
    }
    return p;
}

void make_lut8(const BinParams& p, std::int16_t lut[256]) {
    // Shift is the rule's own answer (see binning.hpp) without a floor() per value, which the baseline x86-64
    // build calls out of line: the table is built on every 8-bit call.
    if (p.mode == BinMode::Shift) {
        for (int v = 0; v < 256; ++v) {
            const unsigned int s = shift_slot(static_cast<std::uint32_t>(v), p.shift, p.bins);
            lut[v] = static_cast<std::int16_t>(s == static_cast<unsigned int>(p.bins) ? -1 : static_cast<int>(s));
        }
        return;
    }
    for (int v = 0; v < 256; ++v) lut[v] = static_cast<std::int16_t>(bin_of(static_cast<double>(v), p));
}

}  // namespace detail
}  // namespace imghist
