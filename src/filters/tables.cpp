// imghist filters — tables and thresholds computed from host histograms, and parameter normalisation.
// Compiled with -ffp-contract=off: the double and float expressions must round exactly as OpenCV's do.
#include <climits>
#include <cmath>
#include <string>
#include <vector>

#include "core/checks.hpp"
#include "filters/internal.hpp"

namespace imghist {

Lut8 equalize_table(const std::uint64_t* hist) {
    Lut8 lut{};
    int i0 = 0;
    unsigned long long total = 0;
    for (int i = 0; i < 256; ++i) total += hist[i];
    if (total == 0) return lut;
    while (hist[i0] == 0) ++i0;
    if (hist[i0] == total) {
        lut.fill(static_cast<std::uint8_t>(i0));
        return lut;
    }
    const float scale = fmath::equalize_scale(total, hist[i0]);
    unsigned long long sum = 0;
    for (int i = i0 + 1; i < 256; ++i) {
        sum += hist[i];
        lut[i] = fmath::equalize_entry(sum, scale);
    }
    return lut;
}

int otsu_threshold(const std::uint64_t* hist, int bins) {
    if (bins != 256 && bins != 65536)
        throw Error(ErrorCode::InvalidArgument, "otsu_threshold: bins must be 256 or 65536, got " + std::to_string(bins));
    unsigned long long total = 0, moment = 0;
    for (int i = 0; i < bins; ++i) {
        total += hist[i];
        moment += static_cast<unsigned long long>(i) * hist[i];
    }
    if (total == 0) return 0;
    const double scale = 1.0 / static_cast<double>(total);
    // The running double sum of i*h[i] in OpenCV is exact (integers below 2^53), so the integer moment
    // converted once is the same number.
    return fmath::otsu_scan(hist, bins, scale, static_cast<double>(moment) * scale);
}

int triangle_threshold(const std::uint64_t* hist) {
    return fmath::triangle_from([hist](int i) { return static_cast<long long>(hist[i]); });
}

namespace detail {

namespace {
int floor_int(double v) {
    if (!(v > static_cast<double>(INT_MIN))) return INT_MIN;
    if (v >= static_cast<double>(INT_MAX)) return INT_MAX;
    return static_cast<int>(std::floor(v));
}
int round_int(double v) {
    if (!(v > static_cast<double>(INT_MIN))) return INT_MIN;
    if (v >= static_cast<double>(INT_MAX)) return INT_MAX;
    return static_cast<int>(std::lrint(v));
}
}  // namespace

ThresholdParams threshold_params(SampleType type, double thresh, double maxval, ThresholdType op) {
    ThresholdParams p;
    p.op = static_cast<int>(op);
    if (type == SampleType::F32) {
        p.fthresh = static_cast<float>(thresh);
        p.fmaxval = static_cast<float>(maxval);
        p.used = thresh;
        return p;
    }
    if (type != SampleType::U8 && type != SampleType::U16)
        throw Error(ErrorCode::Unsupported, std::string("threshold: unsupported sample type ") + to_string(type) +
                                                " (u8, u16 and f32 are supported)");
    const int type_max = type == SampleType::U8 ? 255 : 65535;
    p.ithresh = floor_int(thresh);
    int imax = op == ThresholdType::Trunc ? p.ithresh : round_int(maxval);
    p.imaxval = fmath::clamp_int(imax, 0, type_max);
    p.used = static_cast<double>(p.ithresh);
    return p;
}

void check_view(const ImageView& v, const char* op, const char* role) {
    if (v.empty()) throw Error(ErrorCode::InvalidArgument, std::string(op) + ": " + role + " is empty");
    try {
        validate_image(v, ArgName(role));
    } catch (const Error& e) {  // the core's message, prefixed with the operation
        throw Error(e.code(), std::string(op) + ": " + e.what());
    }
}

void check_same_shape(const ImageView& src, const ImageView& dst) {
    if (src.width != dst.width || src.height != dst.height)
        throw Error(ErrorCode::InvalidArgument, "source and destination sizes differ (" + std::to_string(src.width) +
                                                    "x" + std::to_string(src.height) + " vs " +
                                                    std::to_string(dst.width) + "x" + std::to_string(dst.height) + ")");
    if (src.type != dst.type || src.channels != dst.channels)
        throw Error(ErrorCode::InvalidArgument, "source and destination types differ");
    if (src.location != dst.location)
        throw Error(ErrorCode::InvalidArgument, "source and destination must both be host or both be device views");
}

Lut8 threshold_lut(const ThresholdParams& p) {
    Lut8 lut{};
    for (int v = 0; v < 256; ++v)
        lut[v] = fmath::threshold_value<std::uint8_t>(static_cast<std::uint8_t>(v), p.ithresh,
                                                      static_cast<std::uint8_t>(p.imaxval), p.op, 255);
    return lut;
}

}  // namespace detail

Lut8 threshold_table(double thresh, double maxval, ThresholdType type) {
    return detail::threshold_lut(detail::threshold_params(SampleType::U8, thresh, maxval, type));
}

}  // namespace imghist
