// imghist CLI — image codecs.
//
//   format | read                                   | write                          | library
//   -------+----------------------------------------+--------------------------------+--------------------------
//   PNG    | 1/2/4/8/16-bit gray, GA, RGB, RGBA,    | 8/16-bit, 1-4 channels         | libspng (read); parallel
//          | palette (expanded to RGB/RGBA)         |                                | zlib writer (codec_png)
//   JPEG   | 8-bit gray, YCbCr/RGB                  | 8-bit gray, RGB (alpha refused)| libjpeg-turbo
//   BMP    | 8-bit, 1-4 channels                    | 8-bit gray, RGB, RGBA          | stb_image(_write)
//   TGA    | 8-bit, 1-4 channels                    | 8-bit, 1-4 channels            | stb_image(_write)
//   PNM    | P1-P6, 8 and 16-bit                    | P5/P6, 8 and 16-bit            | own (codec.cpp)
//
// (stb_image 2.27's PNM reader returns 16-bit samples big-endian and accepts truncated files, hence our own.)
// The format is read from the content (magic bytes), never from the name; the output format comes from
// the output's extension. The pixel limit is checked against the header before any pixel memory is
// allocated. Every error names the file.
#pragma once

#include <cstdint>
#include <string>

#include "fileio.hpp"
#include "image.hpp"

namespace cli {

enum class Format : std::uint8_t { Unknown, Png, Jpeg, Bmp, Tga, Pnm };

const char* format_name(Format f) noexcept;
/// From an extension (png, jpg, jpeg, bmp, tga, pnm, pgm, ppm); Unknown otherwise.
Format format_from_extension(const std::string& ext) noexcept;
/// From the first bytes of a file; TGA has no signature and is recognised only through `name_hint`'s
/// extension.
Format sniff_format(const Bytes& data, const std::string& name_hint);

struct DecodeOptions {
    std::uint64_t max_pixels = std::uint64_t(1) << 28;
};

struct EncodeOptions {
    int jpeg_quality = 90;
    int png_level = 1;          ///< zlib level 0-9
    int threads = 0;            ///< 0: all hardware threads (the PNG writer compresses in parallel)
};

/// Throws Error naming `name` when the header's size is above the limit.
void check_pixel_limit(std::uint64_t width, std::uint64_t height, const DecodeOptions& opt, const std::string& name);

Image decode_image(const Bytes& data, const std::string& name, const DecodeOptions& opt);
/// Throws Error(Unsupported) naming `name` when `format` cannot hold an image of this depth / channels.
void check_encodable(Format format, int depth, int channels, const std::string& name);
Bytes encode_image(const Image& img, Format format, const EncodeOptions& opt, const std::string& name);
/// Encodes and writes atomically (temporary file, then rename).
void write_image(const std::string& path, const Image& img, Format format, const EncodeOptions& opt);

// Per-format entry points (codec_*.cpp).
Image decode_png(const Bytes& data, const std::string& name, const DecodeOptions& opt);
Bytes encode_png(const Image& img, const EncodeOptions& opt);
Image decode_jpeg(const Bytes& data, const std::string& name, const DecodeOptions& opt);
Bytes encode_jpeg(const Image& img, const EncodeOptions& opt, const std::string& name);
Image decode_stb(const Bytes& data, Format format, const std::string& name, const DecodeOptions& opt);
Bytes encode_stb(const Image& img, Format format, const std::string& name);
Image decode_pnm(const Bytes& data, const std::string& name, const DecodeOptions& opt);
Bytes encode_pnm(const Image& img);

}  // namespace cli
