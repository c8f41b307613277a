// imghist_io — what one input may cost: the limits of the resource model (README.md, "What one input may
// cost"). Every limit is checked before the memory or work it bounds is spent (from a header, a file's size,
// a marker count), and every refusal names the input, the limit and the option that raises it. The defaults
// are far above what a photograph needs; they are set here and nowhere else (the options of add_common only
// change them).
#pragma once

#include <cstdint>
#include <string>

namespace cli {

/// Half the machine's physical memory (1 GiB when it cannot be read): the default of Limits::max_memory.
std::uint64_t default_max_memory() noexcept;

struct Limits {
    /// --max-pixels: width x height of one image.
    std::uint64_t max_pixels = std::uint64_t(1) << 28;
    /// --max-input: bytes read from one input file or from standard input.
    std::uint64_t max_input = std::uint64_t(4) << 30;
    /// --max-metadata: metadata of one input once decoded (EXIF, ICC profile, XMP, comments; inflated
    /// text included), bytes in total.
    std::uint64_t max_metadata = std::uint64_t(64) << 20;
    /// --max-metadata-items: metadata chunks or markers of one input (PNG text, ICC and EXIF chunks; JPEG
    /// comment and APPn segments).
    std::uint64_t max_metadata_items = 1000;
    /// --max-scans: scans of one JPEG (a progressive decoder walks every block of the image once per scan).
    std::uint64_t max_scans = 100;
    /// --max-ratio: decoded bytes per stored byte, for codecs whose format sets no bound of its own (TIFF's
    /// ZSTD, LZMA, JPEG and other schemes; WebP). Formats with a bound (PNG's and TIFF's Deflate 1032:1, LZW,
    /// PackBits, none; JPEG's one bit per block) are held to that bound instead.
    std::uint64_t max_ratio = 1024;
    /// Decoded images up to this size pass the ratio check whatever their ratio (a flat synthetic image
    /// compresses far beyond any photograph, and is cheap at this size).
    std::uint64_t ratio_exempt_bytes = std::uint64_t(64) << 20;
    /// --max-memory: the budget of a run for the images it holds at once, each counted as in_flight_bytes
    /// says. One image above it is refused; a folder run decodes its next file only when the budget has room.
    std::uint64_t max_memory = default_max_memory();
    /// --threads: at most this many (each pipeline stage starts that many threads).
    int max_threads = 1024;
};

/// What one image of `image_bytes` decoded from a file of `file_bytes` holds against Limits::max_memory: the
/// file, and three times the pixels (the image; the codec's working buffers, such as PNG's inflated rows or
/// a progressive JPEG's coefficients; the encoded output). Measured peaks of one 8000x6000 RGB image
/// (137 MiB of pixels): 3.3 times the pixels from a 79 MiB PNG, 2.3 times from a 7 MiB JPEG.
inline std::uint64_t in_flight_bytes(std::uint64_t image_bytes, std::uint64_t file_bytes) noexcept {
    return image_bytes * 3 + file_bytes;
}

/// "1.5 GiB", "64 MiB", "900 bytes": sizes in messages.
std::string format_bytes(std::uint64_t bytes);

/// The ratio check of codings whose format bounds no expansion (Limits::max_ratio): `decoded` bytes from
/// `stored` bytes of compressed data are refused above the limit, unless `decoded` is at most
/// Limits::ratio_exempt_bytes. `what` names the coding ("a WebP", "a TIFF with ZSTD compression").
void check_decoded_ratio(std::uint64_t decoded, std::uint64_t stored, const Limits& limits, const std::string& name,
                         const std::string& what);
/// The metadata limits (Limits::max_metadata, max_metadata_items): throws Error naming `name` when `items`
/// items of `bytes` bytes in all are more than one input may carry.
void check_metadata_size(std::uint64_t items, std::uint64_t bytes, const Limits& limits, const std::string& name);

}  // namespace cli
