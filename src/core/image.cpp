#include "imghist/image.hpp"

#include <string>

#include "imghist/error.hpp"
#include "core/dispatch.hpp"

namespace imghist {

std::size_t sample_size(SampleType t) noexcept {
    switch (t) {
        case SampleType::U8: return 1;
        case SampleType::U16: return 2;
        case SampleType::I32: return 4;
        case SampleType::F32: return 4;
    }
    return 1;
}

const char* to_string(SampleType t) noexcept {
    switch (t) {
        case SampleType::U8: return "u8";
        case SampleType::U16: return "u16";
        case SampleType::I32: return "i32";
        case SampleType::F32: return "f32";
    }
    return "?";
}

namespace {
ImageView make_view(const void* data, int width, int height, SampleType type, int channels, std::size_t pitch,
                    Location where) noexcept {
    ImageView v;
    v.data = data;
    v.width = width;
    v.height = height;
    v.type = type;
    v.channels = channels;
    v.location = where;
    v.pitch = pitch != 0 ? pitch : v.row_bytes();
    return v;
}
}  // namespace

ImageView ImageView::host(const void* data, int width, int height, SampleType type, int channels,
                          std::size_t pitch) noexcept {
    return make_view(data, width, height, type, channels, pitch, Location::Host);
}

ImageView ImageView::device(const void* data, int width, int height, SampleType type, int channels,
                            std::size_t pitch) noexcept {
    return make_view(data, width, height, type, channels, pitch, Location::Device);
}

ImageView ImageView::roi(int x, int y, int w, int h) const {
    if (x < 0 || y < 0 || w < 0 || h < 0 || x > width - w || y > height - h)
        throw Error(ErrorCode::InvalidArgument,
                    "ROI (" + std::to_string(x) + "," + std::to_string(y) + " " + std::to_string(w) + "x" +
                        std::to_string(h) + ") does not lie inside the " + std::to_string(width) + "x" +
                        std::to_string(height) + " image");
    ImageView v = *this;
    v.width = w;
    v.height = h;
    if (data != nullptr)
        v.data = static_cast<const std::uint8_t*>(data) + static_cast<std::size_t>(y) * pitch +
                 static_cast<std::size_t>(x) * pixel_bytes();
    return v;
}

void detail::validate_device_image_shape(int width, int height, int channels) {
    if (width < 0 || height < 0 || channels < 1 || channels > 4)
        throw Error(ErrorCode::InvalidArgument, "DeviceImage: invalid shape (size >= 0, 1..4 channels)");
}

}  // namespace imghist
