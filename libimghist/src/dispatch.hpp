// Internal: validation shared by every entry point, and the CUDA backend's host-facing calls (implemented
// in cuda/histogram_cuda.cu, or by no_cuda.cpp in a build without CUDA).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "binning.hpp"
#include "imghist/histogram.hpp"

namespace imghist::detail {

/// The name of an argument in error messages ("image", "batch image 7"), turned into a string only when
/// an error is thrown: per-image checks of a batch of thousands build no strings.
struct ArgName {
    const char* what;
    std::size_t index = static_cast<std::size_t>(-1);
    ArgName(const char* w) : what(w) {}  // NOLINT: implicit, so that plain names read naturally
    ArgName(const char* w, std::size_t i) : what(w), index(i) {}
    std::string str() const;
};

/// Throws Error(InvalidArgument) with a precise message when the view cannot be read.
void validate_image(const ImageView& img, const ArgName& name = "image");
/// The backend a call on `img` could run on: the requested one (Auto: CUDA when a device exists, which
/// run_on_chosen_backend in backend_choice.hpp narrows for host images); device images always run on CUDA. Throws for the CPU backend on a device image and for CUDA without a device.
Backend resolve_backend(Backend requested, const ImageView& img);
/// Throws Error(InvalidArgument) unless (width, height, channels) is a shape a DeviceImage can take; shared by
/// the CUDA build's DeviceImage and the CPU-only build's stand-in, so both refuse the same shapes alike.
void validate_device_image_shape(int width, int height, int channels);
/// Validates a mask against its image.
void validate_mask(const ImageView& mask, const ImageView& img);

/// CUDA backend, host results: adds the histogram of `image` (host or device view) into counts / oor.
void cuda_histogram_to_host(const ImageView& image, const ImageView* mask, const BinSpec& spec,
                            std::uint64_t* counts, std::uint64_t* oor, int device, Stream stream);
/// CUDA backend, host results for a batch (one launch): adds into hists[i].
void cuda_batch_to_host(const std::vector<ImageView>& images, const std::vector<ImageView>& masks,
                        const BinSpec& spec, std::vector<Histogram>& hists, int device, Stream stream);

}  // namespace imghist::detail
