// imghist_io — image codecs.
//
//   format | read                                   | write                          | library
//   -------+----------------------------------------+--------------------------------+--------------------------
//   PNG    | 1/2/4/8/16-bit gray, GA, RGB, RGBA,    | 8/16-bit, 1-4 channels         | libspng (read); parallel
//          | palette (expanded to RGB/RGBA)         |                                | zlib writer (codec_png)
//   JPEG   | 8-bit gray, YCbCr/RGB                  | 8-bit gray, RGB (alpha refused)| libjpeg-turbo
//   TIFF   | 8/16-bit gray, GA, RGB, RGBA; strips   | 8/16-bit, 1-4 channels; strips,| libtiff (codec_tiff)
//          | or tiles; every compression libtiff    | Deflate (default), LZW,        |
//          | decodes; first page only               | PackBits or none               |
//   WebP   | lossless and lossy, RGB / RGBA (gray   | 8-bit, 1-4 channels (gray is   | libwebp, libwebpmux
//          | WebP does not exist); still images     | stored as RGB); lossy at the   | (codec_webp)
//          |                                        | lossy input's quality or       |
//          |                                        | --quality, else lossless       |
//   BMP    | 8-bit, 1-4 channels                    | 8-bit gray, RGB, RGBA          | stb_image(_write)
//   TGA    | 8-bit, 1-4 channels                    | 8-bit, 1-4 channels            | stb_image(_write)
//   PNM    | P1-P6, 8 and 16-bit                    | P5/P6, 8 and 16-bit            | own (codec.cpp)
//
// Metadata (EXIF, ICC, XMP, comments, resolution) is read into Image::meta and written back by PNG, JPEG,
// TIFF and WebP (see metadata.hpp for what each container holds); BMP, TGA and PNM carry none.
// (stb_image 2.27's PNM reader returns 16-bit samples big-endian and accepts truncated files, hence our own;
// only stb's BMP and TGA readers are compiled in, so no file reaches another of its readers.)
// The format is read from the content (magic bytes), never from the name (TGA, which has no signature,
// is the one exception: tried last, and only for a .tga name); the output format comes from the output's
// extension.
//
// Hostile files: every decoder passes its header through checked_image_bytes (the pixel limit, the output
// format's size limits, the decoded byte count without overflow, the memory budget) before any pixel memory
// is allocated, and through check_encoded_size (the file must be long enough for what the header claims:
// exactly for uncompressed data, by the format's largest compression ratio otherwise) or, for codings whose
// format sets no such ratio, check_decoded_ratio (the user's limit), so decoding time and memory are bounded
// by the file's size. Metadata, JPEG scans and the bytes read are bounded too (limits.hpp). Truncated data is
// an error, never zero-filled pixels. Every error names the file.
#pragma once

#include <cstdint>
#include <string>

#include "io/fileio.hpp"
#include "io/image.hpp"
#include "io/limits.hpp"
#include "io/memory.hpp"

namespace cli {

enum class Format : std::uint8_t { Unknown, Png, Jpeg, Bmp, Tga, Pnm, Tiff, Webp };

const char* format_name(Format f) noexcept;
/// From an extension (png, jpg, jpeg, tif, tiff, webp, bmp, tga, pnm, pgm, ppm); Unknown otherwise.
Format format_from_extension(const std::string& ext) noexcept;
/// From the first bytes of a file; TGA has no signature and is recognised only through `name_hint`'s
/// extension.
Format sniff_format(const Bytes& data, const std::string& name_hint);

struct DecodeOptions {
    /// What one input may cost (limits.hpp).
    Limits limits;
    /// Where the decoded image will be written, when known: its size limits are checked with the header, so
    /// an image that cannot be written is refused before it is decoded and processed.
    Format output = Format::Unknown;
    std::string output_name;
    /// This input's share of the run's memory budget (--max-memory), taken by checked_image_bytes; none when
    /// null (the image is then only held to fit the budget alone).
    MemoryReservation* memory = nullptr;
    /// The size of the file being decoded (set by decode_image), part of what it holds in memory.
    std::uint64_t input_bytes = 0;
};

struct EncodeOptions {
    /// 1-100 (--quality); 0: a lossy output takes the lossy input's estimated quality (a JPEG's or a lossy
    /// WebP's): a JPEG output that, else 90; a WebP output is lossy at that, else lossless (a lossless
    /// input stays lossless). A quality given makes WebP lossy at that quality.
    int jpeg_quality = 0;
    int png_level = 1;          ///< zlib level 0-9
    int threads = 0;            ///< 0: all hardware threads (the PNG writer compresses in parallel)
    std::string tiff_compression = "deflate";  ///< deflate, lzw, packbits or none
};

/// The estimated quality of a lossy input (its JPEG's, else its lossy WebP's); 0 for a lossless one.
int lossy_input_quality(const Metadata& m) noexcept;
/// The JPEG quality an output gets: the option, else the lossy input's estimate, else 90.
int jpeg_quality_for(const EncodeOptions& opt, const Metadata& m);

/// The one check of an image header, before any pixel memory is allocated: width and height non-zero and at
/// most 2^31-1, width x height at most the pixel limit, the size within what opt.output can hold, the decoded
/// byte count width x height x channels x bytes-per-sample computed without overflow, and that image within
/// the memory budget (held in opt.memory when given: this may wait for other inputs of the run to finish).
/// Returns that byte count; throws Error naming `name` (or the output) and the limit.
std::size_t checked_image_bytes(std::uint64_t width, std::uint64_t height, int channels, int depth,
                                const DecodeOptions& opt, const std::string& name);
/// Refuses a header that promises more than the file holds: `min_bytes` is the fewest bytes any valid
/// encoding of the claimed image occupies, `available` what the file has for it.
void check_encoded_size(std::uint64_t min_bytes, std::uint64_t available, const std::string& name, const char* format);
/// Reads an input for decoding (read_file with Limits::max_input), refusing content that is no image format
/// imghist reads from its first bytes, before the rest of the file is read.
Bytes read_image_file(const std::string& path, const Limits& limits);
/// Throws Error(Unsupported) naming `name` when `format` cannot hold a width x height image (JPEG: 65500,
/// TGA: 65535, WebP: 16383 per side; BMP: 2 GiB of pixel data).
void check_output_size(Format format, std::uint64_t width, std::uint64_t height, int channels, const std::string& name);

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
Image decode_tiff(const Bytes& data, const std::string& name, const DecodeOptions& opt);
Bytes encode_tiff(const Image& img, const EncodeOptions& opt, const std::string& name);
Image decode_webp(const Bytes& data, const std::string& name, const DecodeOptions& opt);
Bytes encode_webp(const Image& img, const EncodeOptions& opt, const std::string& name);

}  // namespace cli
