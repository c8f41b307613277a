// imghist_io — whole-image conversions applied between decoding and encoding: EXIF orientation
// (--auto-orient), alpha compositing (--flatten) and 16 -> 8 bit (--depth 8). Each returns a new image that
// keeps the source's metadata.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "io/image.hpp"

namespace cli {

/// The pixels as a viewer shows an image with this EXIF orientation (1-8), i.e. the rotation/mirroring
/// applied; 5-8 swap width and height. Orientation 1 (or anything outside 1-8) returns a copy.
Image apply_orientation(const Image& src, int orientation);

/// --auto-orient: applies img.meta's EXIF orientation to the pixels and sets the tag to 1.
void auto_orient(Image& img);

using Rgb = std::array<std::uint8_t, 3>;
/// "#rrggbb", "rrggbb", "white" or "black"; UsageError otherwise.
Rgb parse_colour(const std::string& s);

/// Composites over `background` and drops the alpha channel (2 -> 1, 4 -> 3 channels); images without
/// alpha come back unchanged. Per sample, with M the sample maximum (255 or 65535) and the background
/// scaled to it (x 257 at 16 bits): out = (c * a + bg * (M - a) + M / 2) / M, integer division (the
/// rounded blend). Gray images take the background's luma, (299 R + 587 G + 114 B + 500) / 1000.
Image flatten(const Image& src, const Rgb& background);

/// 16-bit samples to 8-bit: out = (v * 255 + 32767) / 65535, integer division (v * 255 / 65535 rounded
/// to the nearest integer, i.e. round(v / 257)). 8-bit images come back unchanged.
Image to_depth8(const Image& src);

}  // namespace cli
