// imghist filters — validation and backend choice for every operation; the arithmetic lives in
// filter_math.hpp, the loops in cpu_filters.cpp and cuda/filters_cuda.cu.
#include <cmath>
#include <limits>
#include <string>

#include "core/policy/backend_choice.hpp"
#include "core/checks.hpp"
#include "filters/internal.hpp"
#include "filters/level_table.hpp"
#include "cuda/runtime/workspace.hpp"  // pinned_int: the value of a staged automatic threshold

namespace imghist {

namespace detail {
void check_pair(const ImageView& src, const ImageView& dst, const char* op) {
    check_view(src, op, "source");
    check_view(dst, op, "destination");
    check_same_shape(src, dst);
    // Exact aliasing (in place) is fine: every operation reads a pixel before it writes that pixel, and
    // tables are complete before any pixel is written. Partial overlap is not.
    const auto* sb = static_cast<const std::uint8_t*>(src.data);
    const auto* db = static_cast<const std::uint8_t*>(dst.data);
    const std::size_t span_s = src.pitch * static_cast<std::size_t>(src.height - 1) + src.row_bytes();
    const std::size_t span_d = dst.pitch * static_cast<std::size_t>(dst.height - 1) + dst.row_bytes();
    const bool same = sb == db && src.pitch == dst.pitch;
    if (!(same || db + span_d <= sb || sb + span_s <= db))
        throw Error(ErrorCode::InvalidArgument,
                    std::string(op) + ": source and destination overlap without being the same image");
}
}  // namespace detail

namespace {

using detail::check_pair;
using detail::check_same_shape;
using detail::check_view;

/// Runs cpu() or cuda() on the backend for this call: the requested one, and for Auto on a host image the one
/// measured faster for calls like it (core/policy/backend_choice.hpp).
template <class Cpu, class Cuda>
void on_backend(const ImageView& src, const FilterOptions& o, detail::HostWork work, Cpu&& cpu, Cuda&& cuda) {
    detail::run_on_chosen_backend(o.backend, src, work, o.cpu_threads, [&](Backend b) {
        if (b == Backend::Cpu) cpu();
        else cuda();
    });
}

/// For filters whose table comes from the image's histogram: finish(histogram) on the CPU after counting on
/// the CPU, or after counting on the device (the counting route of backend_choice.hpp, taken only by Auto
/// calls on host images), or device() for the whole filter on the device.
template <class Finish, class Device>
void on_histogram_route(const ImageView& src, const BinSpec& spec, const FilterOptions& o, Finish&& finish,
                        Device&& device) {
    detail::run_on_chosen_route(o.backend, src, detail::HostWork::HistogramFilter, o.cpu_threads, true,
                                [&](detail::HostRoute r) {
                                    if (r == detail::HostRoute::Cuda) {
                                        device();
                                        return;
                                    }
                                    Options ho;
                                    ho.backend = r == detail::HostRoute::Cpu ? Backend::Cpu : Backend::Cuda;
                                    ho.cpu_threads = o.cpu_threads;
                                    ho.device = o.device;
                                    ho.stream = o.stream;
                                    if (r == detail::HostRoute::Cpu) {
                                        finish(calc_hist(src, spec, ho));
                                        return;
                                    }
                                    Histogram h = Histogram::zeros(spec, src.channels);
                                    detail::count_route_histogram(src, h, ho);
                                    finish(h);
                                });
}

void require(bool ok, ErrorCode code, const std::string& msg) {
    if (!ok) throw Error(code, msg);
}

/// Runs op(src, dst, device, stream) on device views directly, and on host views through the staging
/// pipeline (which runs it on device copies of each chunk, on its own device and stream: device -1).
template <class Op>
void run_cuda(const ImageView& src, const ImageView& dst, const FilterOptions& o, Op&& op) {
    if (src.location == Location::Device) {
        op(src, dst, o.device, o.stream);
        return;
    }
    detail::cuda_staged(src, dst, o.device, o.stream,
                        [&](const ImageView& s, const ImageView& d, Stream st) { op(s, d, -1, st); });
}

/// The CUDA backend's threshold, on a device view or on a host view through the staging pipeline. An automatic
/// level is computed on the device (thresholdAsync: it goes to `computed` on the stream) except for a device
/// view whose level is returned (computed == nullptr): the call waits for it anyway, so the histogram comes to
/// the host in the core's blocking call (which returns as soon as the kernel's last block has written it) and
/// `level_of(histogram)` sets p from the level the host computes — its recurrence is sequential, and a host
/// core runs it several times faster than one GPU thread; the pass that writes dst is enqueued without
/// waiting for it.
template <class LevelOf>
double cuda_threshold_any(const ImageView& src, const ImageView& dst, detail::ThresholdParams& p, const BinSpec& spec,
                          AutoThreshold automatic, const FilterOptions& o, int* computed, LevelOf&& level_of) {
    if (src.location == Location::Device) {
        if (automatic != AutoThreshold::None && computed == nullptr) {
            Options ho;
            ho.backend = Backend::Cuda;
            ho.device = o.device;
            ho.stream = o.stream;
            level_of(calc_hist(src, spec, ho));
            automatic = AutoThreshold::None;
        }
        detail::cuda_threshold(src, dst, p, automatic, computed, o.device, o.stream);
        return automatic == AutoThreshold::None ? p.used : std::numeric_limits<double>::quiet_NaN();
    }
    if (automatic == AutoThreshold::None) {
        detail::cuda_staged(src, dst, o.device, o.stream, [&](const ImageView& s, const ImageView& d, Stream st) {
            detail::cuda_threshold(s, d, p, automatic, nullptr, -1, st);
        });
        return p.used;
    }
    // The staged run synchronises its stream before returning, so the pinned value is final afterwards.
    int* value = detail::pinned_int(o.device);
    detail::cuda_staged(src, dst, o.device, o.stream, [&](const ImageView& s, const ImageView& d, Stream st) {
        detail::cuda_threshold(s, d, p, automatic, value, -1, st);
    });
    if (computed) *computed = *value;
    return static_cast<double>(*value);
}

}  // namespace

void equalize_hist(const ImageView& src, const ImageView& dst, const FilterOptions& o) {
    check_pair(src, dst, "equalize_hist");
    require(src.type == SampleType::U8, ErrorCode::Unsupported, "equalize_hist: 8-bit images only");
    require(src.channels == 1, ErrorCode::Unsupported,
            "equalize_hist: 1-channel images only (use equalize_hist_color for 3 or 4 channels)");
    on_histogram_route(
        src, BinSpec::u8(), o,
        [&](const Histogram& h) {
            const Lut8 lut = equalize_table(h.channel(0));
            detail::cpu_apply_lut(src, dst, &lut, o.cpu_threads);
        },
        [&] { run_cuda(src, dst, o, detail::cuda_equalize); });
}

void equalize_hist_color(const ImageView& src, const ImageView& dst, ColorEqualize mode, const FilterOptions& o) {
    check_pair(src, dst, "equalize_hist_color");
    require(src.type == SampleType::U8, ErrorCode::Unsupported, "equalize_hist_color: 8-bit images only");
    require(src.channels == 3 || src.channels == 4, ErrorCode::Unsupported,
            "equalize_hist_color: 3- or 4-channel images only");
    auto device = [&] {
        run_cuda(src, dst, o, [&](const ImageView& s, const ImageView& d, int device, Stream st) {
            detail::cuda_equalize_color(s, d, mode, device, st);
        });
    };
    if (mode == ColorEqualize::Luma) {
        on_backend(src, o, detail::HostWork::PointFilter, [&] { detail::cpu_equalize_luma(src, dst, o.cpu_threads); },
                   device);
        return;
    }
    on_histogram_route(
        src, BinSpec::u8(), o,
        [&](const Histogram& h) {
            Lut8 luts[4];
            for (int c = 0; c < src.channels; ++c) luts[c] = equalize_table(h.channel(c));
            detail::cpu_apply_lut(src, dst, luts, o.cpu_threads);
        },
        device);
}

void apply_lut(const ImageView& src, const ImageView& dst, const Lut8* luts, const FilterOptions& o) {
    check_pair(src, dst, "apply_lut");
    require(luts != nullptr, ErrorCode::InvalidArgument, "apply_lut: no tables");
    require(src.type == SampleType::U8, ErrorCode::Unsupported, "apply_lut: 8-bit images only");
    on_backend(
        src, o, detail::HostWork::PointFilter, [&] { detail::cpu_apply_lut(src, dst, luts, o.cpu_threads); },
        [&] {
            run_cuda(src, dst, o, [&](const ImageView& s, const ImageView& d, int device, Stream st) {
                detail::cuda_apply_lut(s, d, luts, device, st);
            });
        });
}

double threshold(const ImageView& src, const ImageView& dst, double thresh, double maxval, ThresholdType type,
                 AutoThreshold automatic, const FilterOptions& o, int* computed) {
    check_pair(src, dst, "threshold");
    require(static_cast<int>(type) <= 4, ErrorCode::InvalidArgument,
            "threshold: unknown threshold type");
    if (automatic == AutoThreshold::Otsu)
        require(src.channels == 1 && (src.type == SampleType::U8 || src.type == SampleType::U16),
                ErrorCode::Unsupported, "threshold: Otsu needs a 1-channel u8 or u16 image");
    if (automatic == AutoThreshold::Triangle)
        require(src.channels == 1 && src.type == SampleType::U8, ErrorCode::Unsupported,
                "threshold: Triangle needs a 1-channel u8 image");
    // Validates the type (u8, u16, f32) and normalises the parameters; for automatic modes the threshold
    // is replaced below (on the host) or inside the kernels (on the device).
    detail::ThresholdParams p = detail::threshold_params(src.type, thresh, maxval, type);

    double result = p.used;
    const BinSpec spec = src.type == SampleType::U8 ? BinSpec::u8() : BinSpec::full(SampleType::U16, 65536);
    // The level of a histogram (the host's arithmetic, the CPU backend's), and the parameters it gives.
    auto level_params = [&](const Histogram& h) {
        const int t = automatic == AutoThreshold::Otsu ? otsu_threshold(h.channel(0), spec.bins)
                                                       : triangle_threshold(h.channel(0));
        if (computed) *computed = t;
        p = detail::threshold_params(src.type, t, maxval, type);
        result = p.used;
    };
    auto device = [&] { result = cuda_threshold_any(src, dst, p, spec, automatic, o, computed, level_params); };
    if (automatic == AutoThreshold::None) {
        on_backend(src, o, detail::HostWork::PointFilter, [&] { detail::cpu_threshold(src, dst, p, o.cpu_threads); },
                   device);
        return result;
    }
    on_histogram_route(
        src, spec, o,
        [&](const Histogram& h) {
            level_params(h);
            detail::cpu_threshold(src, dst, p, o.cpu_threads);
        },
        device);
    return result;
}

Clahe::Clahe(double clip_limit, int tiles_x, int tiles_y) : clip_limit_(clip_limit), tiles_x_(1), tiles_y_(1) {
    set_tiles(tiles_x, tiles_y);
}
Clahe::~Clahe() = default;
Clahe::Clahe(Clahe&&) noexcept = default;
Clahe& Clahe::operator=(Clahe&&) noexcept = default;

void Clahe::set_tiles(int tiles_x, int tiles_y) {
    if (tiles_x <= 0 || tiles_y <= 0)
        throw Error(ErrorCode::InvalidArgument, "CLAHE: the tile grid must be at least 1x1, got " +
                                                    std::to_string(tiles_x) + "x" + std::to_string(tiles_y));
    tiles_x_ = tiles_x;
    tiles_y_ = tiles_y;
}

void Clahe::apply(const ImageView& src, const ImageView& dst, const FilterOptions& o, int extra_right,
                  int extra_bottom) const {
    check_pair(src, dst, "CLAHE");
    require(src.channels == 1 && (src.type == SampleType::U8 || src.type == SampleType::U16), ErrorCode::Unsupported,
            "CLAHE: 1-channel u8 or u16 images only");
    const int bins = src.type == SampleType::U8 ? 256 : 65536;
    require(extra_right >= 0 && extra_bottom >= 0, ErrorCode::InvalidArgument, "CLAHE: negative extra border");
    const fmath::ClaheGeometry g = fmath::clahe_geometry(src.width, src.height, tiles_x_, tiles_y_, bins, clip_limit_,
                                                         extra_right, extra_bottom);
    on_backend(
        src, o, detail::HostWork::Clahe, [&] { detail::cpu_clahe(src, dst, g, o.cpu_threads); },
        [&] {
            if (src.location == Location::Device) {
                detail::cuda_clahe(src, dst, g, o.device, o.stream);
                return;
            }
            // The readable extension travels with the image; the op sees it as a wider device image and
            // works on the ROI of the original size inside it.
            ImageView ext = src;
            ext.width = g.ext_w;
            ext.height = g.ext_h;
            detail::cuda_staged(ext, dst, o.device, o.stream, [&](const ImageView& s, const ImageView& d, Stream st) {
                detail::cuda_clahe(s.roi(0, 0, src.width, src.height), d, g, -1, st);
            });
        });
}


}  // namespace imghist
