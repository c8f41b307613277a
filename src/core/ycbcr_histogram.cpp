// calc_hist_ycbcr_batch: histograms of the RGB image that a YCbCr JPEG's planes decode to (ycbcr_rgb.hpp holds
// the arithmetic), counted per RGB value on the CPU or, for device planes, by one CUDA launch
// (cuda/kernels/ycbcr_histogram.cu); the value counts are then binned by the 8-bit binning rule.
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/dispatch.hpp"
#include "core/parallel_for.hpp"
#include "core/ycbcr_rgb.hpp"

namespace imghist {
namespace {

// Messages are built only on failure: a batch may hold thousands of images.
[[noreturn]] void bad_planes(std::size_t i, const std::string& why) {
    throw Error(ErrorCode::InvalidArgument, "calc_hist_ycbcr_batch: image " + std::to_string(i) + ": " + why);
}

detail::YccPlanesView checked(const YCbCrPlanes& p, std::size_t i, Location where) {
    const ImageView* planes[3] = {&p.y, &p.cb, &p.cr};
    for (const ImageView* v : planes) {
        detail::validate_image(*v, detail::ArgName{"YCbCr plane of image", i});
        if (v->type != SampleType::U8 || v->channels != 1) bad_planes(i, "planes must be 8-bit with one channel");
        if (v->location != where) bad_planes(i, "planes must all be on the host or all on the device as image 0's");
    }
    const bool sampling_ok = (p.chroma_x == 1 && p.chroma_y == 1) || (p.chroma_x == 2 && p.chroma_y == 1) ||
                             (p.chroma_x == 2 && p.chroma_y == 2);
    if (!sampling_ok) bad_planes(i, "chroma subsampling must be 1x1, 2x1 or 2x2");
    const int cw = (p.y.width + p.chroma_x - 1) / p.chroma_x, ch = (p.y.height + p.chroma_y - 1) / p.chroma_y;
    if (p.cb.width != cw || p.cb.height != ch || p.cr.width != cw || p.cr.height != ch)
        bad_planes(i, "chroma planes must be " + std::to_string(cw) + "x" + std::to_string(ch) + " for a " +
                          std::to_string(p.y.width) + "x" + std::to_string(p.y.height) + " image at this subsampling");
    detail::YccPlanesView v;
    v.y = static_cast<const std::uint8_t*>(p.y.data);
    v.cb = static_cast<const std::uint8_t*>(p.cb.data);
    v.cr = static_cast<const std::uint8_t*>(p.cr.data);
    v.y_pitch = p.y.pitch;
    v.cb_pitch = p.cb.pitch;
    v.cr_pitch = p.cr.pitch;
    v.width = p.y.width;
    v.height = p.y.height;
    v.chroma_x = p.chroma_x;
    v.chroma_y = p.chroma_y;
    v.chroma_w = cw;
    v.chroma_h = ch;
    return v;
}

// R, G, B value counts of one image on the CPU, rows spread over the threads (each range counts into its own
// table, added to the image's under a lock).
void cpu_value_counts(const detail::YccPlanesView& p, std::uint64_t* counts, int threads) {
    std::mutex m;
    detail::parallel_for(p.height, threads, [&](int y0, int y1) {
        std::vector<std::uint64_t> c(3 * 256, 0);
        for (int y = y0; y < y1; ++y)
            for (int x = 0; x < p.width; ++x) {
                int r = 0, g = 0, b = 0;
                detail::ycc_rgb_at(p, x, y, r, g, b);
                ++c[static_cast<std::size_t>(r)];
                ++c[static_cast<std::size_t>(256 + g)];
                ++c[static_cast<std::size_t>(512 + b)];
            }
        std::lock_guard<std::mutex> l(m);
        for (std::size_t i = 0; i < c.size(); ++i) counts[i] += c[i];
    });
}

}  // namespace

std::vector<Histogram> calc_hist_ycbcr_batch(const std::vector<YCbCrPlanes>& images, const BinSpec& spec,
                                          const Options& options) {
    if (options.mask) throw Error(ErrorCode::InvalidArgument, "calc_hist_ycbcr_batch takes no mask");
    if (options.channel != -1)
        throw Error(ErrorCode::InvalidArgument, "calc_hist_ycbcr_batch counts R, G and B: Options::channel must be -1");
    std::vector<Histogram> out;
    if (images.empty()) return out;
    const Location where = images.front().y.location;
    std::vector<detail::YccPlanesView> views;
    views.reserve(images.size());
    for (std::size_t i = 0; i < images.size(); ++i) views.push_back(checked(images[i], i, where));
    const detail::BinParams bp = detail::make_bin_params(spec, SampleType::U8);
    std::int16_t lut[256];
    detail::make_lut8(bp, lut);
    const Backend b = detail::resolve_backend(where == Location::Device ? Backend::Cuda : Backend::Cpu, images.front().y);
    if (options.backend != Backend::Auto && options.backend != b)
        throw Error(ErrorCode::InvalidArgument, std::string("calc_hist_ycbcr_batch: ") +
                                                    (where == Location::Device ? "device planes run on CUDA"
                                                                               : "host planes run on the CPU"));
    std::vector<std::uint64_t> values;
    if (b == Backend::Cuda) {
        values = detail::cuda_ycbcr_value_counts(views, options.device, options.stream);
    } else {
        values.assign(images.size() * 3 * 256, 0);
        for (std::size_t i = 0; i < images.size(); ++i) cpu_value_counts(views[i], values.data() + i * 3 * 256, options.cpu_threads);
    }
    out.reserve(images.size());
    for (std::size_t i = 0; i < images.size(); ++i) {
        Histogram h = Histogram::zeros(spec, 3);
        for (int c = 0; c < 3; ++c)
            for (int v = 0; v < 256; ++v) {
                const std::uint64_t n = values[i * 3 * 256 + static_cast<std::size_t>(c) * 256 + static_cast<std::size_t>(v)];
                if (lut[v] < 0)
                    h.out_of_range[static_cast<std::size_t>(c)] += n;
                else
                    h.channel(c)[lut[v]] += n;
            }
        h.backend = b;
        out.push_back(std::move(h));
    }
    return out;
}

}  // namespace imghist
