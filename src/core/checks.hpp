// Internal: argument checks shared by every entry point of the core and of the filters, so that both refuse
// the same inputs with the same messages, and the backend choice (cpu | cuda) for a call.
#pragma once

#include <cstddef>
#include <string>

#include "imghist/histogram.hpp"
#include "imghist/image.hpp"

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
/// The backend a call on `img` runs on: the requested one (Auto: CUDA when a device exists); device images
/// always run on CUDA. Throws for the CPU backend on a device image and for CUDA without a device.
Backend resolve_backend(Backend requested, const ImageView& img);
/// Throws Error(InvalidArgument) unless (width, height, channels) is a shape a DeviceImage can take; shared by
/// the CUDA build's DeviceImage and the CPU-only build's stand-in, so both refuse the same shapes alike.
void validate_device_image_shape(int width, int height, int channels);
/// Validates a mask against its image.
void validate_mask(const ImageView& mask, const ImageView& img);
/// Validates Options::channel against the image: -1 (every channel) or one of its channels.
void validate_channel(int channel, const ImageView& img);

}  // namespace imghist::detail
