// TIFF through libtiff, from and to memory. Reading takes the first page: 8/16-bit unsigned gray, gray+alpha,
// RGB or RGBA, chunky (interleaved) samples, in strips or tiles, with any compression this libtiff decodes;
// other layouts (palette, min-is-white, YCbCr, CMYK, float, planar-separate, premultiplied alpha) are
// refused by name. Writing: strips of about 256 KiB, Deflate with the horizontal predictor unless told
// otherwise. libtiff's messages go to a handler of this file only (its default prints to stderr).
#include <tiffio.h>

#include <cstdarg>
#include <cstring>
#include <memory>

#include "io/codecs/codec.hpp"
#include "io/errors.hpp"

namespace cli {
namespace {

struct MemFile {
    const std::uint8_t* data = nullptr;  // reading
    std::size_t size = 0;
    Bytes* out = nullptr;                // writing
    std::size_t pos = 0;
    std::string message;                 // libtiff's last error
};

tmsize_t mem_read(thandle_t h, void* buf, tmsize_t n) {
    auto* f = static_cast<MemFile*>(h);
    if (n < 0 || f->pos >= f->size) return 0;
    const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(n), f->size - f->pos);
    std::memcpy(buf, f->data + f->pos, k);
    f->pos += k;
    return static_cast<tmsize_t>(k);
}

tmsize_t mem_write(thandle_t h, void* buf, tmsize_t n) {
    auto* f = static_cast<MemFile*>(h);
    if (!f->out || n < 0) return -1;
    const std::size_t k = static_cast<std::size_t>(n);
    if (f->pos + k > f->out->size()) {
        // libtiff seeks past the end to align an IFD, then writes after the gap: Bytes does not zero-fill on
        // resize, so the gap is zeroed here (else the output's bytes depend on what the heap held before).
        const std::size_t old = f->out->size();
        f->out->resize(f->pos + k);
        if (f->pos > old) std::memset(f->out->data() + old, 0, f->pos - old);
    }
    std::memcpy(f->out->data() + f->pos, buf, k);
    f->pos += k;
    f->size = f->out->size();
    f->data = f->out->data();
    return n;
}

toff_t mem_seek(thandle_t h, toff_t off, int whence) {
    auto* f = static_cast<MemFile*>(h);
    std::uint64_t base = whence == SEEK_CUR ? f->pos : whence == SEEK_END ? f->size : 0;
    std::uint64_t p = base + off;  // libtiff passes negative offsets as large unsigned ones: wraps back
    if (p > (std::uint64_t(1) << 40)) return static_cast<toff_t>(-1);
    f->pos = static_cast<std::size_t>(p);
    return p;
}

int mem_close(thandle_t) { return 0; }
toff_t mem_size(thandle_t h) { return static_cast<MemFile*>(h)->size; }
int no_map(thandle_t, void**, toff_t*) { return 0; }
void no_unmap(thandle_t, void*, toff_t) {}

int on_error(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
    char buf[512];
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    static_cast<MemFile*>(user)->message = std::string(module ? module : "libtiff") + ": " + buf;
    return 1;
}
int on_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

struct TiffFile {
    TIFF* tif = nullptr;
    ~TiffFile() {
        if (tif) TIFFClose(tif);
    }
};

TIFF* open_tiff(MemFile& f, const char* mode, const std::string& name, std::uint64_t max_alloc) {
    std::unique_ptr<TIFFOpenOptions, void (*)(TIFFOpenOptions*)> o(TIFFOpenOptionsAlloc(), TIFFOpenOptionsFree);
    if (!o) fail(ErrorCode::OutOfMemory, name, "cannot create a TIFF reader");
    TIFFOpenOptionsSetErrorHandlerExtR(o.get(), on_error, &f);
    TIFFOpenOptionsSetWarningHandlerExtR(o.get(), on_warning, &f);
    if (max_alloc) TIFFOpenOptionsSetMaxSingleMemAlloc(o.get(), static_cast<tmsize_t>(max_alloc));
    return TIFFClientOpenExt(name.c_str(), mode, &f, mem_read, mem_write, mem_seek, mem_close, mem_size, no_map,
                             no_unmap, o.get());
}

[[noreturn]] void corrupt(const std::string& name, const MemFile& f, const std::string& what) {
    fail(ErrorCode::InvalidArgument, name,
         "truncated or corrupt TIFF (" + what + (f.message.empty() ? "" : ": " + f.message) + ")");
}

[[noreturn]] void refuse(const std::string& name, const std::string& what) {
    fail(ErrorCode::Unsupported, name, "unsupported TIFF layout: " + what +
                                           " (imghist reads 8/16-bit unsigned gray, gray+alpha, RGB and RGBA)");
}

void read_metadata(TIFF* t, const Bytes& file, Metadata& m) {
    std::uint32_t n = 0;
    void* p = nullptr;
    if (TIFFGetField(t, TIFFTAG_ICCPROFILE, &n, &p) && p && n)
        m.icc.assign(static_cast<const std::uint8_t*>(p), static_cast<const std::uint8_t*>(p) + n);
    n = 0;
    p = nullptr;
    if (TIFFGetField(t, TIFFTAG_XMLPACKET, &n, &p) && p && n) m.xmp.assign(static_cast<const char*>(p), n);
    char* desc = nullptr;
    if (TIFFGetField(t, TIFFTAG_IMAGEDESCRIPTION, &desc) && desc && *desc) m.comments.emplace_back(desc);
    m.exif = exif_from_tiff(file.data(), file.size());  // Orientation, Make, ..., Exif and GPS sub-IFDs
    float xr = 0, yr = 0;
    std::uint16_t unit = RESUNIT_INCH;
    TIFFGetFieldDefaulted(t, TIFFTAG_RESOLUTIONUNIT, &unit);
    if (TIFFGetField(t, TIFFTAG_XRESOLUTION, &xr) && TIFFGetField(t, TIFFTAG_YRESOLUTION, &yr) && xr > 0 && yr > 0 &&
        (unit == RESUNIT_INCH || unit == RESUNIT_CENTIMETER)) {
        const double f = unit == RESUNIT_CENTIMETER ? 2.54 : 1.0;
        m.dpi_x = xr * f;
        m.dpi_y = yr * f;
    }
}

/// How far each compression can expand its data at most, where the format bounds it: PackBits 128 bytes from
/// 2, LZW at most 4096 bytes per code of at least 9 bits, Deflate 1032:1. 0: not bounded by the format (ZSTD,
/// LZMA, JPEG, JBIG, WebP, ...: the user's ratio limit applies).
std::uint64_t max_expansion(std::uint16_t compression) {
    switch (compression) {
        case COMPRESSION_NONE: return 1;
        case COMPRESSION_PACKBITS: return 64;
        case COMPRESSION_LZW: return 3641;  // 4096 * 8 / 9
        case COMPRESSION_ADOBE_DEFLATE:
        case COMPRESSION_DEFLATE: return 1032;
        default: return 0;
    }
}

/// Refuses a header whose strips or tiles hold too few bytes for the image it claims: by the compression's
/// own largest ratio (check_encoded_size), or where the format sets none by the user's ratio limit
/// (check_decoded_ratio), so that decoding time and memory stay bounded by the file's size.
void check_tiff_data_size(TIFF* t, std::uint16_t compression, std::uint64_t image_bytes, std::size_t file_size,
                          const Limits& limits, const std::string& name) {
    const std::uint32_t n = TIFFIsTiled(t) ? TIFFNumberOfTiles(t) : TIFFNumberOfStrips(t);
    // Each has an offset of at least 2 bytes in the file: a count beyond that is a corrupt header.
    if (n > file_size / 2 + 1) check_encoded_size(std::uint64_t(n) * 2, file_size, name, "TIFF");
    std::uint64_t stored = 0;
    for (std::uint32_t i = 0; i < n && stored < file_size; ++i) stored += TIFFGetStrileByteCount(t, i);
    stored = std::min<std::uint64_t>(stored, file_size);
    const std::uint64_t ratio = max_expansion(compression);
    if (ratio) {
        check_encoded_size(image_bytes / ratio, stored, name, "TIFF");
        return;
    }
    const TIFFCodec* codec = TIFFFindCODEC(compression);
    check_decoded_ratio(image_bytes, stored, limits, name,
                        std::string("TIFF ") + (codec && codec->name ? codec->name : "compression " + std::to_string(compression)));
}

}  // namespace

Image decode_tiff(const Bytes& data, const std::string& name, const DecodeOptions& opt) {
    MemFile f;
    f.data = data.data();
    f.size = data.size();
    TiffFile tf;
    // libtiff's own single-allocation bound: our pixel limit at 4 channels of 16 bits, plus slack.
    tf.tif = open_tiff(f, "rm", name, std::min<std::uint64_t>(opt.limits.max_pixels, std::uint64_t(1) << 40) * 8 + (std::uint64_t(64) << 20));
    if (!tf.tif) corrupt(name, f, "cannot read the header");
    TIFF* t = tf.tif;
    std::uint32_t w = 0, h = 0;
    if (!TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &w) || !TIFFGetField(t, TIFFTAG_IMAGELENGTH, &h))
        corrupt(name, f, "no image size");
    std::uint16_t spp = 1, bps = 1, planar = PLANARCONFIG_CONTIG, format = SAMPLEFORMAT_UINT, photometric = 0,
                  compression = COMPRESSION_NONE;
    TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &spp);
    TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &bps);
    TIFFGetFieldDefaulted(t, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLEFORMAT, &format);
    TIFFGetFieldDefaulted(t, TIFFTAG_COMPRESSION, &compression);
    if (!TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &photometric)) corrupt(name, f, "no photometric interpretation");
    if (format == SAMPLEFORMAT_IEEEFP) refuse(name, "floating-point samples");
    if (format != SAMPLEFORMAT_UINT) refuse(name, "signed or complex samples");
    if (bps != 8 && bps != 16) refuse(name, std::to_string(bps) + "-bit samples");
    if (photometric == PHOTOMETRIC_PALETTE) refuse(name, "palette colour");
    if (photometric == PHOTOMETRIC_MINISWHITE) refuse(name, "min-is-white gray");
    if (photometric != PHOTOMETRIC_MINISBLACK && photometric != PHOTOMETRIC_RGB)
        refuse(name, "photometric interpretation " + std::to_string(photometric) + " (YCbCr, CMYK, Lab, ...)");
    const int colour = photometric == PHOTOMETRIC_RGB ? 3 : 1;
    if (spp != colour && spp != colour + 1) refuse(name, std::to_string(spp) + " samples per pixel");
    if (spp == colour + 1) {
        std::uint16_t n_extra = 0;
        std::uint16_t* extra = nullptr;
        if (TIFFGetField(t, TIFFTAG_EXTRASAMPLES, &n_extra, &extra) && n_extra && extra[0] == EXTRASAMPLE_ASSOCALPHA)
            refuse(name, "premultiplied (associated) alpha");
    }
    if (spp > 1 && planar == PLANARCONFIG_SEPARATE) refuse(name, "planar-separate samples (one plane per channel)");
    if (!TIFFIsCODECConfigured(compression))
        refuse(name, "compression scheme " + std::to_string(compression) + ", which this libtiff cannot decode");

    checked_image_bytes(w, h, spp, bps, opt, name);
    check_tiff_data_size(t, compression, static_cast<std::uint64_t>(w) * h * spp * (bps / 8), data.size(), opt.limits, name);
    Image img(static_cast<int>(w), static_cast<int>(h), spp, bps);
    const std::size_t row = img.row_bytes(), px = static_cast<std::size_t>(spp) * (bps / 8);
    if (TIFFIsTiled(t)) {
        std::uint32_t tw = 0, th = 0;
        if (!TIFFGetField(t, TIFFTAG_TILEWIDTH, &tw) || !TIFFGetField(t, TIFFTAG_TILELENGTH, &th))
            corrupt(name, f, "tiled without a tile size");
        DecodeOptions tile_opt = opt;  // the tile buffer is sized by the header too
        tile_opt.output = Format::Unknown;
        checked_image_bytes(tw, th, spp, bps, tile_opt, name);
        const std::size_t tile_row = static_cast<std::size_t>(tw) * px;
        const std::size_t tile_bytes = tile_row * th;
        if (static_cast<std::uint64_t>(TIFFTileSize64(t)) != tile_bytes) corrupt(name, f, "inconsistent tile size");
        Bytes tile(tile_bytes);
        for (std::uint32_t y0 = 0; y0 < h; y0 += th)
            for (std::uint32_t x0 = 0; x0 < w; x0 += tw) {
                if (TIFFReadEncodedTile(t, TIFFComputeTile(t, x0, y0, 0, 0), tile.data(),
                                        static_cast<tmsize_t>(tile_bytes)) < 0)
                    corrupt(name, f, "cannot decode a tile");
                const std::size_t cols = std::min<std::uint32_t>(tw, w - x0) * px;
                for (std::uint32_t y = y0; y < h && y < y0 + th; ++y)
                    std::memcpy(img.row(static_cast<int>(y)) + x0 * px, tile.data() + (y - y0) * tile_row, cols);
            }
    } else {
        std::uint32_t rps = h;
        TIFFGetFieldDefaulted(t, TIFFTAG_ROWSPERSTRIP, &rps);
        if (rps == 0 || rps > h) rps = h;
        const std::uint32_t strips = (h + rps - 1) / rps;
        if (TIFFNumberOfStrips(t) < strips) corrupt(name, f, "fewer strips than the image has rows for");
        for (std::uint32_t s = 0; s < strips; ++s) {
            const std::uint32_t y0 = s * rps, rows = std::min(rps, h - y0);
            const tmsize_t want = static_cast<tmsize_t>(rows * row);
            if (TIFFReadEncodedStrip(t, s, img.row(static_cast<int>(y0)), want) != want)
                corrupt(name, f, "cannot decode strip " + std::to_string(s));
        }
    }
    read_metadata(t, data, img.meta);
    return img;
}

Bytes encode_tiff(const Image& img, const EncodeOptions& opt, const std::string& name) {
    std::uint16_t compression = COMPRESSION_ADOBE_DEFLATE;
    if (opt.tiff_compression == "lzw") compression = COMPRESSION_LZW;
    else if (opt.tiff_compression == "packbits") compression = COMPRESSION_PACKBITS;
    else if (opt.tiff_compression == "none") compression = COMPRESSION_NONE;
    Bytes out;
    MemFile f;
    f.out = &out;
    {
        TiffFile tf;
        // The file takes the EXIF block's byte order, so that its sub-IFDs can be copied as they are.
        const bool big_endian = !img.meta.exif.empty() && img.meta.exif[0] == 'M';
        tf.tif = open_tiff(f, big_endian ? "wb" : "wl", name, 0);
        if (!tf.tif) fail(ErrorCode::Io, name, "cannot create a TIFF writer (" + f.message + ")");
        TIFF* t = tf.tif;
        const int ch = img.channels();
        const bool rgb = ch >= 3, alpha = ch == 2 || ch == 4;
        TIFFSetField(t, TIFFTAG_IMAGEWIDTH, static_cast<std::uint32_t>(img.width()));
        TIFFSetField(t, TIFFTAG_IMAGELENGTH, static_cast<std::uint32_t>(img.height()));
        TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, static_cast<std::uint16_t>(ch));
        TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, static_cast<std::uint16_t>(img.depth()));
        TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_UINT);
        TIFFSetField(t, TIFFTAG_PHOTOMETRIC, rgb ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
        TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
        if (alpha) {
            std::uint16_t extra = EXTRASAMPLE_UNASSALPHA;
            TIFFSetField(t, TIFFTAG_EXTRASAMPLES, 1, &extra);
        }
        TIFFSetField(t, TIFFTAG_COMPRESSION, compression);
        if (compression == COMPRESSION_ADOBE_DEFLATE || compression == COMPRESSION_LZW)
            TIFFSetField(t, TIFFTAG_PREDICTOR, PREDICTOR_HORIZONTAL);
        const std::size_t row = img.row_bytes();
        const std::uint32_t rps = static_cast<std::uint32_t>(std::max<std::size_t>(1, (std::size_t(256) << 10) / row));
        TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, rps);
        const Metadata& m = img.meta;
        if (!m.icc.empty()) TIFFSetField(t, TIFFTAG_ICCPROFILE, static_cast<std::uint32_t>(m.icc.size()), m.icc.data());
        if (!m.xmp.empty()) TIFFSetField(t, TIFFTAG_XMLPACKET, static_cast<std::uint32_t>(m.xmp.size()), m.xmp.data());
        if (!m.comments.empty()) {
            std::string desc;
            for (const std::string& c : m.comments) desc += (desc.empty() ? "" : "\n") + c;
            TIFFSetField(t, TIFFTAG_IMAGEDESCRIPTION, desc.c_str());
        }
        const int orientation = exif_orientation(m.exif);
        if (orientation != 1) TIFFSetField(t, TIFFTAG_ORIENTATION, static_cast<std::uint16_t>(orientation));
        for (std::uint16_t tag : {TIFFTAG_MAKE, TIFFTAG_MODEL, TIFFTAG_SOFTWARE, TIFFTAG_DATETIME, TIFFTAG_ARTIST,
                                  TIFFTAG_COPYRIGHT}) {
            const std::string v = exif_ascii(m.exif, tag);
            if (!v.empty()) TIFFSetField(t, tag, v.c_str());
        }
        // Placeholders for the sub-IFDs that can be copied, pointed at them once the file is complete.
        for (auto& [tag, offset] : exif_subifds(m.exif, 8).pointers) TIFFSetField(t, tag, std::uint64_t(offset));
        if (m.has_resolution()) {
            TIFFSetField(t, TIFFTAG_XRESOLUTION, static_cast<float>(m.dpi_x));
            TIFFSetField(t, TIFFTAG_YRESOLUTION, static_cast<float>(m.dpi_y));
            TIFFSetField(t, TIFFTAG_RESOLUTIONUNIT, RESUNIT_INCH);
        }
        // The predictor works in place on the buffer it is given: hand it a copy of each strip.
        Bytes strip(rps * row);
        for (std::uint32_t y0 = 0, s = 0; y0 < static_cast<std::uint32_t>(img.height()); y0 += rps, ++s) {
            const std::uint32_t rows = std::min<std::uint32_t>(rps, static_cast<std::uint32_t>(img.height()) - y0);
            std::memcpy(strip.data(), img.row(static_cast<int>(y0)), rows * row);
            if (TIFFWriteEncodedStrip(t, s, strip.data(), static_cast<tmsize_t>(rows * row)) < 0)
                fail(ErrorCode::Io, name, "cannot encode TIFF (" + f.message + ")");
        }
        if (!TIFFWriteDirectory(t)) fail(ErrorCode::Io, name, "cannot encode TIFF (" + f.message + ")");
    }
    const ExifTail tail = exif_subifds(img.meta.exif, out.size());
    if (!tail.pointers.empty()) {
        out.insert(out.end(), tail.bytes.begin(), tail.bytes.end());
        for (auto& [tag, offset] : tail.pointers) set_ifd0_offset(out.data(), out.size(), tag, offset);
    }
    return out;
}

}  // namespace cli
