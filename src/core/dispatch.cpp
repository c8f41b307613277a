// Entry points of the host API: validate once, choose the backend, run it.
#include "core/policy/backend_choice.hpp"
#include "core/dispatch.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/cpu/histogram_cpu.hpp"
#include "cuda/runtime/workspace.hpp"  // release_workspaces
#include "imghist/error.hpp"

namespace imghist {

const char* to_string(Backend b) noexcept {
    switch (b) {
        case Backend::Auto: return "auto";
        case Backend::Cpu: return "cpu";
        case Backend::Cuda: return "cuda";
    }
    return "?";
}

Backend parse_backend(const std::string& name) {
    if (name == "auto") return Backend::Auto;
    if (name == "cpu") return Backend::Cpu;
    if (name == "cuda") return Backend::Cuda;
    throw Error(ErrorCode::InvalidArgument, "unknown backend '" + name + "' (expected auto, cpu or cuda)");
}

std::uint64_t Histogram::total(int c) const noexcept {
    const std::uint64_t* p = channel(c);
    return std::accumulate(p, p + spec.bins, std::uint64_t(0));
}

Histogram Histogram::zeros(const BinSpec& spec, int channels) {
    Histogram h;
    h.spec = spec;
    h.channels = channels;
    h.counts.assign(static_cast<std::size_t>(channels) * static_cast<std::size_t>(std::max(spec.bins, 0)), 0);
    h.out_of_range.assign(channels, 0);
    return h;
}

namespace detail {

std::string ArgName::str() const {
    return index == static_cast<std::size_t>(-1) ? std::string(what) : std::string(what) + " " + std::to_string(index);
}

void validate_image(const ImageView& img, const ArgName& name) {
    auto w = [&name] { return name.str(); };
    if (img.channels < 1 || img.channels > 4)
        throw Error(ErrorCode::InvalidArgument,
                    w() + " has " + std::to_string(img.channels) + " channels; 1 to 4 interleaved channels are supported");
    if (img.width < 0 || img.height < 0)
        throw Error(ErrorCode::InvalidArgument, w() + " has a negative size");
    if (img.empty()) return;
    if (img.data == nullptr) throw Error(ErrorCode::InvalidArgument, w() + " data pointer is null");
    if (img.height > 1 && img.pitch < img.row_bytes())
        throw Error(ErrorCode::InvalidArgument, w() + " pitch " + std::to_string(img.pitch) +
                                                    " is smaller than a row (" + std::to_string(img.row_bytes()) +
                                                    " bytes)");
    const std::size_t ss = img.sample_bytes();
    if (reinterpret_cast<std::uintptr_t>(img.data) % ss != 0 || (img.height > 1 && img.pitch % ss != 0))
        throw Error(ErrorCode::InvalidArgument,
                    w() + " data and pitch must be multiples of the sample size (" + std::to_string(ss) + " bytes)");
}

void validate_mask(const ImageView& mask, const ImageView& img) {
    validate_image(mask, "mask");
    if (mask.type != SampleType::U8 || mask.channels != 1)
        throw Error(ErrorCode::InvalidArgument, "mask must be 8-bit with 1 channel");
    if (mask.width != img.width || mask.height != img.height)
        throw Error(ErrorCode::InvalidArgument,
                    "mask size " + std::to_string(mask.width) + "x" + std::to_string(mask.height) +
                        " does not match the image size " + std::to_string(img.width) + "x" + std::to_string(img.height));
    if (mask.location != img.location)
        throw Error(ErrorCode::InvalidArgument, "mask and image must both be on the host or both on the device");
}

void validate_channel(int channel, const ImageView& img) {
    if (channel < -1 || channel >= img.channels)
        throw Error(ErrorCode::InvalidArgument, "Options::channel " + std::to_string(channel) + " of an image with " +
                                                    std::to_string(img.channels) + " channel(s) (-1: every channel)");
}

Backend resolve_backend(Backend requested, const ImageView& img) {
    if (requested == Backend::Cpu) {
        if (img.location == Location::Device)
            throw Error(ErrorCode::InvalidArgument, "the CPU backend cannot read a device image; use Backend::Cuda or Auto");
        return Backend::Cpu;
    }
    if (requested == Backend::Cuda || img.location == Location::Device) {
        if (!cuda_available())
            throw Error(ErrorCode::NoDevice,
                        std::string(img.location == Location::Device
                                        ? "a device image was given but no CUDA device is available"
                                        : "the CUDA backend was requested but no CUDA device is available") +
                            (built_with_cuda() ? "" : " (this build of imghist has no CUDA backend: IMGHIST_WITH_CUDA=OFF)"));
        return Backend::Cuda;
    }
    return cuda_available() ? Backend::Cuda : Backend::Cpu;
}

}  // namespace detail

namespace detail {
void count_route_histogram(const ImageView& image, Histogram& hist, const Options& options) {
    const ImageView* mask = options.mask ? &*options.mask : nullptr;
    if (split_count_eligible(image, mask))
        split_histogram_to_host(image, hist.spec, hist.counts.data(), hist.out_of_range.data(), options.device,
                                options.stream, options.cpu_threads);
    else
        cuda_histogram_to_host(image, mask, hist.spec, hist.counts.data(), hist.out_of_range.data(), options.device,
                               options.stream);
    hist.backend = Backend::Cuda;  // the device took part (with CPU threads beside it on large images)
}
}  // namespace detail

namespace {
/// Runs count(h) on `hist` itself, or, when one channel is selected, on a histogram of every channel whose
/// selected channel is then added to `hist`: the CUDA routes count every channel of what they read.
template <class Count>
void count_selected(const ImageView& image, int channel, Histogram& hist, Count&& count) {
    if (channel < 0) {
        count(hist);
        return;
    }
    Histogram all = Histogram::zeros(hist.spec, image.channels);
    count(all);
    const std::uint64_t* c = all.channel(channel);
    for (int b = 0; b < hist.spec.bins; ++b) hist.counts[b] += c[b];
    hist.out_of_range[0] += all.out_of_range[channel];
    hist.backend = all.backend;
}

/// Adds the histogram of an already validated image into `hist` (whose shape matches), on the chosen route
/// (for Auto on a host image: the one measured faster for calls like this; backend_choice.hpp).
void accumulate_validated(const ImageView& image, const detail::BinParams& bp, Histogram& hist, const Options& options) {
    const ImageView* mask = nullptr;
    if (options.mask) {
        detail::validate_mask(*options.mask, image);
        mask = &*options.mask;
    }
    // Large pageable images may be counted by the device and CPU threads at once: a third route to measure.
    const bool count_route = options.backend == Backend::Auto && detail::split_count_eligible(image, mask);
    const detail::HostWork work = options.channel >= 0 && image.channels > 1 ? detail::HostWork::ChannelHistogram
                                                                             : detail::HostWork::Histogram;
    detail::run_on_chosen_route(options.backend, image, work, options.cpu_threads, count_route,
                                [&](detail::HostRoute r) {
                                    if (r == detail::HostRoute::Cpu) {
                                        detail::cpu_histogram(image, mask, bp, hist.counts.data(),
                                                              hist.out_of_range.data(), options.cpu_threads,
                                                              options.channel);
                                        hist.backend = Backend::Cpu;
                                    } else if (r == detail::HostRoute::CudaCount) {
                                        count_selected(image, options.channel, hist, [&](Histogram& h) {
                                            detail::count_route_histogram(image, h, options);
                                        });
                                    } else {
                                        count_selected(image, options.channel, hist, [&](Histogram& h) {
                                            detail::cuda_histogram_to_host(image, mask, h.spec, h.counts.data(),
                                                                           h.out_of_range.data(), options.device,
                                                                           options.stream);
                                            h.backend = Backend::Cuda;
                                        });
                                    }
                                });
}
}  // namespace

void accumulate_hist(const ImageView& image, Histogram& hist, const Options& options) {
    detail::validate_image(image);
    const detail::BinParams bp = detail::make_bin_params(hist.spec, image.type);
    detail::validate_channel(options.channel, image);
    const int counted = options.channel >= 0 ? 1 : image.channels;
    if (hist.channels != counted)
        throw Error(ErrorCode::InvalidArgument,
                    "histogram has " + std::to_string(hist.channels) + " channels but the image has " +
                        std::to_string(image.channels) + (options.channel >= 0 ? " (one is selected)" : ""));
    if (hist.counts.size() != static_cast<std::size_t>(hist.channels) * hist.spec.bins ||
        hist.out_of_range.size() != static_cast<std::size_t>(hist.channels))
        throw Error(ErrorCode::InvalidArgument, "histogram storage does not match its spec (use Histogram::zeros)");
    accumulate_validated(image, bp, hist, options);
}

Histogram calc_hist(const ImageView& image, const BinSpec& spec, const Options& options) {
    detail::validate_image(image);
    const detail::BinParams bp = detail::make_bin_params(spec, image.type);  // validated before allocating
    detail::validate_channel(options.channel, image);
    Histogram h = Histogram::zeros(spec, options.channel >= 0 ? 1 : image.channels);
    accumulate_validated(image, bp, h, options);
    return h;
}

std::vector<Histogram> calc_hist_batch(const std::vector<ImageView>& images, const BinSpec& spec, const Options& options,
                                     const std::vector<ImageView>& masks) {
    if (options.mask)
        throw Error(ErrorCode::InvalidArgument, "calc_hist_batch takes per-image masks in `masks`, not Options::mask");
    if (!masks.empty() && masks.size() != images.size())
        throw Error(ErrorCode::InvalidArgument, "calc_hist_batch: " + std::to_string(masks.size()) + " masks for " +
                                                    std::to_string(images.size()) + " images");
    std::vector<Histogram> out;
    if (images.empty()) return out;
    const ImageView& first = images.front();
    for (std::size_t i = 0; i < images.size(); ++i) {
        // Messages are built only on failure: a batch may hold thousands of images.
        const detail::ArgName name{"batch image", i};
        detail::validate_image(images[i], name);
        if (images[i].type != first.type || images[i].channels != first.channels)
            throw Error(ErrorCode::InvalidArgument, name.str() + " differs in sample type or channel count from image 0");
        if (images[i].location != first.location)
            throw Error(ErrorCode::InvalidArgument, name.str() + " is not in the same memory (host/device) as image 0");
        if (!masks.empty()) detail::validate_mask(masks[i], images[i]);
    }
    const detail::BinParams bp = detail::make_bin_params(spec, first.type);
    detail::validate_channel(options.channel, first);
    out.reserve(images.size());
    for (std::size_t i = 0; i < images.size(); ++i)
        out.push_back(Histogram::zeros(spec, options.channel >= 0 ? 1 : first.channels));
    const Backend b = detail::resolve_backend(options.backend, first);
    if (b == Backend::Cpu) {
        for (std::size_t i = 0; i < images.size(); ++i)
            detail::cpu_histogram(images[i], masks.empty() ? nullptr : &masks[i], bp, out[i].counts.data(),
                                  out[i].out_of_range.data(), options.cpu_threads, options.channel);
    } else if (options.channel < 0) {
        detail::cuda_batch_to_host(images, masks, spec, out, options.device, options.stream);
    } else {
        std::vector<Histogram> all;
        all.reserve(images.size());
        for (std::size_t i = 0; i < images.size(); ++i) all.push_back(Histogram::zeros(spec, first.channels));
        detail::cuda_batch_to_host(images, masks, spec, all, options.device, options.stream);
        for (std::size_t i = 0; i < images.size(); ++i) {
            const std::uint64_t* c = all[i].channel(options.channel);
            std::copy(c, c + spec.bins, out[i].counts.begin());
            out[i].out_of_range[0] = all[i].out_of_range[options.channel];
        }
    }
    for (auto& h : out) h.backend = b;
    return out;
}

void release_workspaces() { detail::release_workspaces(); }

}  // namespace imghist
