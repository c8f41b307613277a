// imghist — non-owning image views.
//
// An ImageView describes samples that live somewhere else: on the host or on a CUDA device. It never
// allocates and never frees. Rows are `pitch` bytes apart (pitch >= width * channels * sample size);
// channels are interleaved (1 = gray, 3 = e.g. BGR/RGB, 4 = BGRA/RGBA). roi() returns a view of a
// sub-rectangle: its data pointer may be unaligned, which every backend handles.
#pragma once

#include "imghist/export.hpp"

#include <cstddef>
#include <cstdint>

namespace imghist {

enum class SampleType : std::uint8_t { U8, U16, I32, F32 };

/// Bytes per sample: 1, 2, 4, 4.
IMGHIST_API std::size_t sample_size(SampleType t) noexcept;
/// "u8", "u16", "i32", "f32".
IMGHIST_API const char* to_string(SampleType t) noexcept;

enum class Location : std::uint8_t { Host, Device };

struct IMGHIST_API ImageView {
    const void* data = nullptr;
    int width = 0;
    int height = 0;
    std::size_t pitch = 0;  ///< bytes between the starts of two rows
    int channels = 1;
    SampleType type = SampleType::U8;
    Location location = Location::Host;

    /// pitch == 0 means tightly packed rows.
    static ImageView host(const void* data, int width, int height, SampleType type = SampleType::U8,
                          int channels = 1, std::size_t pitch = 0) noexcept;
    static ImageView device(const void* data, int width, int height, SampleType type = SampleType::U8,
                            int channels = 1, std::size_t pitch = 0) noexcept;

    std::size_t sample_bytes() const noexcept { return sample_size(type); }
    std::size_t pixel_bytes() const noexcept { return sample_size(type) * static_cast<std::size_t>(channels); }
    std::size_t row_bytes() const noexcept { return pixel_bytes() * static_cast<std::size_t>(width); }
    std::size_t pixels() const noexcept {
        return static_cast<std::size_t>(width) * static_cast<std::size_t>(height);
    }
    bool empty() const noexcept { return width == 0 || height == 0; }
    /// Rows follow each other without padding (then the image is one linear run of bytes).
    bool contiguous() const noexcept { return height <= 1 || pitch == row_bytes(); }
    const std::uint8_t* row(int y) const noexcept {
        return static_cast<const std::uint8_t*>(data) + static_cast<std::size_t>(y) * pitch;
    }
    /// Sub-rectangle view; throws imghist::Error(InvalidArgument) when it does not lie inside the image.
    ImageView roi(int x, int y, int w, int h) const;
};

}  // namespace imghist
