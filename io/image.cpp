#include "io/image.hpp"

#include "io/errors.hpp"
#include "io/memory.hpp"

namespace cli {

Image::Image(int width, int height, int channels, int depth)
    : width_(width), height_(height), channels_(channels), depth_(depth) {
    if (width <= 0 || height <= 0 || channels < 1 || channels > 4 || (depth != 8 && depth != 16))
        throw imghist::Error(imghist::ErrorCode::InvalidArgument, "invalid image shape");
    // Decoders check their headers first (checked_image_bytes); this keeps every other caller safe too.
    std::size_t n = 0;
    if (__builtin_mul_overflow(static_cast<std::size_t>(width) * static_cast<std::size_t>(height),
                               static_cast<std::size_t>(channels) * sample_bytes(), &n))
        throw imghist::Error(imghist::ErrorCode::OutOfMemory, "image of " + std::to_string(width) + "x" +
                                                                  std::to_string(height) + " pixels is too large");
    data_.reset(static_cast<std::uint8_t*>(big_malloc(n)));
    if (!data_) throw imghist::Error(imghist::ErrorCode::OutOfMemory, "out of memory allocating " +
                                                                          std::to_string(n) + " bytes");
}

Image Image::adopt(std::uint8_t* data, int width, int height, int channels, int depth) {
    Image img;
    img.data_.reset(data);
    img.width_ = width;
    img.height_ = height;
    img.channels_ = channels;
    img.depth_ = depth;
    return img;
}

imghist::ImageView Image::view() const noexcept {
    return imghist::ImageView::host(data_.get(), width_, height_,
                                    depth_ == 16 ? imghist::SampleType::U16 : imghist::SampleType::U8, channels_,
                                    row_bytes());
}

const char* channel_name(int channels, int c) noexcept {
    static const char* gray[] = {"gray", "a"};
    static const char* rgba[] = {"r", "g", "b", "a"};
    if (channels <= 2) return c < 2 ? gray[c] : "?";
    return c < 4 ? rgba[c] : "?";
}

}  // namespace cli
