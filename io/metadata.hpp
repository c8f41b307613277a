// imghist_io — what a photo carries besides its pixels, in one container-independent form.
//
//   item        | JPEG                         | PNG                          | TIFF                   | WebP
//   ------------+------------------------------+------------------------------+------------------------+-----------
//   EXIF        | APP1 "Exif\0\0" (<= 64 KiB)  | eXIf                         | IFD0 tags + sub-IFDs * | EXIF chunk
//   ICC profile | APP2 ICC_PROFILE, chunked    | iCCP (zlib)                  | ICCProfile (34675)     | ICCP chunk
//   XMP         | APP1 Adobe XMP (<= 64 KiB)   | iTXt XML:com.adobe.xmp       | XMLPacket (700)        | "XMP " chunk
//   comments    | COM markers                  | tEXt/zTXt/iTXt "Comment"     | ImageDescription       | -
//   resolution  | JFIF density (dpi / dpcm)    | pHYs (pixels per metre)      | X/YResolution + unit   | -
//
//   * TIFF keeps EXIF as tags of the image's own IFD (Make, Model, Orientation, DateTime, ...) and an Exif and
//     a GPS sub-IFD: these are copied (exif_from_tiff, exif_subifds); MakerNote offsets are not
//     rewritten, and EXIF's IFD1 thumbnail is not carried into a TIFF.
//
// Every reader fills a Metadata; every writer takes one. Outputs keep the input's metadata unless --strip;
// a part that does not fit the output container (an EXIF block above 64 KiB in a JPEG) is left out.
// The EXIF block is kept as the TIFF structure that follows "Exif\0\0" (that prefix is removed on reading).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/limits.hpp"

namespace cli {

using Blob = std::vector<std::uint8_t>;

struct Metadata {
    Blob exif;                          ///< TIFF header onwards ("II*\0" or "MM\0*")
    Blob icc;                           ///< the ICC profile
    std::string xmp;                    ///< the XMP packet (XML)
    std::vector<std::string> comments;
    double dpi_x = 0, dpi_y = 0;        ///< dots per inch; 0 when the file gives no absolute resolution
    // How the input was encoded (not copied as such, but guides a lossy output's defaults).
    int jpeg_quality = 0;               ///< estimated quality of a JPEG input (1-100), 0 otherwise
    int webp_quality = 0;               ///< estimated quality of a lossy WebP input (1-100), 0 otherwise
    bool progressive = false;           ///< the JPEG input was progressive

    bool has_resolution() const noexcept { return dpi_x > 0 && dpi_y > 0; }
    /// Drops everything carried to outputs (--strip); the encoding hints stay.
    void strip() {
        exif.clear();
        icc.clear();
        xmp.clear();
        comments.clear();
        dpi_x = dpi_y = 0;
    }
};

/// Removes a leading "Exif\0\0" (some writers put it in PNG/WebP too) and drops blocks that do not start
/// with a TIFF header.
Blob normalize_exif(const std::uint8_t* data, std::size_t size);
/// The EXIF Orientation (1-8) of the block's first IFD; 1 when absent or unreadable.
int exif_orientation(const Blob& exif) noexcept;
/// Rewrites the Orientation in place (when the block has one; returns false otherwise).
bool set_exif_orientation(Blob& exif, int orientation) noexcept;
/// TIFF files keep EXIF as tags of their first IFD (camera make, model, orientation, ...) plus an Exif and a
/// GPS sub-IFD. exif_from_tiff builds an EXIF block from a TIFF file: those IFD0 tags and both sub-IFDs
/// (with their values; MakerNote offsets are not rewritten); empty when the file has none.
Blob exif_from_tiff(const std::uint8_t* file, std::size_t size);
/// The Exif and GPS sub-IFDs of `exif`, laid out to be appended to a TIFF file of `file_size` (>= 8) bytes
/// that has the byte order of `exif`, and the offsets the file's IFD0 tags 34665 / 34853 must then hold.
struct ExifTail {
    Blob bytes;
    std::vector<std::pair<std::uint16_t, std::uint32_t>> pointers;  ///< tag, offset in the file
};
ExifTail exif_subifds(const Blob& exif, std::size_t file_size);
/// Sets the value of a one-LONG (or IFD) tag of a TIFF file's first IFD; false when the tag is not there.
bool set_ifd0_offset(std::uint8_t* file, std::size_t size, std::uint16_t tag, std::uint32_t offset);
/// The ASCII value of an IFD0 tag of `exif` (e.g. 271 Make), empty when absent.
std::string exif_ascii(const Blob& exif, std::uint16_t tag);

// PNG chunks (no library in between: the PNG reader's chunk walk hands over the chunks, CRCs checked).
struct PngChunk {
    char type[4];
    const std::uint8_t* body;
    std::size_t size;
};
/// True for the chunk types read_png_metadata reads: eXIf, iCCP, pHYs, tEXt, zTXt, iTXt.
bool is_png_metadata_chunk(const std::uint8_t type[4]) noexcept;
/// Reads EXIF, the ICC profile, XMP (iTXt XML:com.adobe.xmp), comments ("Comment" text chunks) and the
/// resolution; a malformed optional chunk is ignored. Every text and profile chunk counts against the
/// metadata limits, decoded (inflated), whatever its keyword: the file `name` is refused once they are
/// exceeded, and no chunk is inflated beyond what is left of them.
Metadata read_png_metadata(const std::vector<PngChunk>& chunks, const Limits& limits, const std::string& name);
/// The chunks that carry `m`, each complete with length and CRC, to be placed after IHDR.
Blob png_metadata_chunks(const Metadata& m);

}  // namespace cli
