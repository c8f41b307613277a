// imghist_io — an owning host image: 8- or 16-bit samples, 1 to 4 interleaved channels, packed rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "imghist/image.hpp"
#include "io/metadata.hpp"

namespace cli {

/// Images hold 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA) interleaved channels, in that order.
struct FreeDeleter {
    void operator()(std::uint8_t* p) const noexcept { std::free(p); }
};

class Image {
public:
    Image() = default;
    /// Allocates without initialising the samples (large images are written once by a decoder).
    Image(int width, int height, int channels, int depth);
    /// Takes ownership of a malloc'ed buffer of packed samples (as returned by stb_image).
    static Image adopt(std::uint8_t* data, int width, int height, int channels, int depth);

    int width() const noexcept { return width_; }
    int height() const noexcept { return height_; }
    int channels() const noexcept { return channels_; }
    int depth() const noexcept { return depth_; }  ///< bits per sample: 8 or 16
    std::size_t sample_bytes() const noexcept { return depth_ / 8; }
    std::size_t row_bytes() const noexcept {
        return static_cast<std::size_t>(width_) * channels_ * sample_bytes();
    }
    std::size_t bytes() const noexcept { return row_bytes() * static_cast<std::size_t>(height_); }
    std::size_t pixels() const noexcept { return static_cast<std::size_t>(width_) * height_; }
    bool empty() const noexcept { return !data_; }

    std::uint8_t* data() noexcept { return data_.get(); }
    const std::uint8_t* data() const noexcept { return data_.get(); }
    std::uint8_t* row(int y) noexcept { return data_.get() + row_bytes() * static_cast<std::size_t>(y); }
    const std::uint8_t* row(int y) const noexcept {
        return data_.get() + row_bytes() * static_cast<std::size_t>(y);
    }
    imghist::ImageView view() const noexcept;

    /// What the file carried besides pixels (EXIF, ICC, XMP, comments, resolution); decoders fill it,
    /// encoders write it.
    Metadata meta;

private:
    std::unique_ptr<std::uint8_t, FreeDeleter> data_;
    int width_ = 0, height_ = 0, channels_ = 0, depth_ = 8;
};

/// Name of channel c of an image with `channels` channels, as used in histogram output: gray, a, r, g, b.
const char* channel_name(int channels, int c) noexcept;

}  // namespace cli
