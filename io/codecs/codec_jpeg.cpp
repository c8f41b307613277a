// JPEG through libjpeg-turbo's libjpeg API. Errors longjmp out of the library into an imghist::Error.
#include "io/codecs/codec_jpeg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <jpeglib.h>

#include "io/codecs/jpeg_order.hpp"
#include "io/errors.hpp"

namespace cli {
namespace {

struct ErrorMgr {
    jpeg_error_mgr pub;
    std::jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
    bool scan_limit;  ///< the longjmp came from the scan limit (ScanLimit), not from libjpeg
};

extern "C" void on_error(j_common_ptr cinfo) {
    auto* err = reinterpret_cast<ErrorMgr*>(cinfo->err);
    (*cinfo->err->format_message)(cinfo, err->message);
    std::longjmp(err->jump, 1);
}

// A corrupt-data warning (e.g. "premature end of data segment") is an error for us: the file is damaged.
extern "C" void on_warning(j_common_ptr cinfo, int level) {
    if (level < 0) on_error(cinfo);
}

std::string describe(const char* msg) {
    std::string m = msg;
    if (m.find("precision") != std::string::npos) return "unsupported sample depth (" + m + "; imghist reads 8-bit JPEG)";
    return "truncated or corrupt JPEG (" + m + ")";
}

/// libjpeg-turbo's advice against progressive JPEGs of very many scans (each one walks every block of the
/// image): a progress monitor that stops the decoder past a scan limit. count_scans refuses such files before
/// anything is allocated; this is the decoder's own bound on what it does.
struct ScanLimit {
    jpeg_progress_mgr pub;
    std::uint64_t max_scans;
};

extern "C" void on_progress(j_common_ptr cinfo) {
    const auto* limit = reinterpret_cast<ScanLimit*>(cinfo->progress);
    const auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
    if (cinfo->is_decompressor && static_cast<std::uint64_t>(d->input_scan_number) > limit->max_scans) {
        auto* err = reinterpret_cast<ErrorMgr*>(cinfo->err);
        err->scan_limit = true;
        std::longjmp(err->jump, 1);
    }
}

// RAII for the two libjpeg structs; destroy is safe after a longjmp.
struct Decompress {
    jpeg_decompress_struct info{};
    ErrorMgr err{};
    ScanLimit progress{};
    Decompress() {
        info.err = jpeg_std_error(&err.pub);
        err.pub.error_exit = on_error;
        err.pub.emit_message = on_warning;
        jpeg_create_decompress(&info);
    }
    ~Decompress() { jpeg_destroy_decompress(&info); }
    void limit_scans(std::uint64_t max_scans) {
        progress.pub.progress_monitor = on_progress;
        progress.max_scans = max_scans;
        info.progress = &progress.pub;
    }
};

[[noreturn]] void fail_scans(std::uint64_t scans, std::uint64_t max_scans, const std::string& name) {
    fail(ErrorCode::Unsupported, name,
         "a JPEG of " + (scans > max_scans ? std::to_string(scans) : "more than " + std::to_string(max_scans)) +
             " scans, above the limit of " + std::to_string(max_scans) +
             " (each scan of a progressive JPEG walks the whole image; raise the limit with --max-scans)");
}

/// The decoder's error: the scan limit, or libjpeg's message in words.
[[noreturn]] void fail_decoding(const Decompress& d, const std::string& name) {
    if (d.err.scan_limit) fail_scans(0, d.progress.max_scans, name);
    fail(ErrorCode::InvalidArgument, name, describe(d.err.message));
}

struct Compress {
    jpeg_compress_struct info{};
    ErrorMgr err{};
    unsigned char* buf = nullptr;
    unsigned long size = 0;
    Compress() {
        info.err = jpeg_std_error(&err.pub);
        err.pub.error_exit = on_error;
        jpeg_create_compress(&info);
    }
    ~Compress() {
        jpeg_destroy_compress(&info);
        std::free(buf);
    }
    Bytes take() { return Bytes(buf, buf + size); }
};

// ---- metadata and encoding hints ---------------------------------------------------------------------------

const char kExifId[] = "Exif\0";                            // + the second NUL of the literal: 6 bytes
const char kXmpId[] = "http://ns.adobe.com/xap/1.0/";       // + its NUL: 29 bytes
constexpr std::size_t kMaxMarker = 65533;                    // payload of one marker segment

/// libjpeg's standard tables, read from the library once: the quantisation tables (natural order) its
/// jpeg_set_quality makes for qualities 1-100 ([q][table]), and the Huffman tables of jpeg_set_defaults (DC
/// luma, DC chroma, AC luma, AC chroma; the same at every quality).
using QuantTables = std::array<std::array<std::array<unsigned, 64>, 2>, 101>;
struct StandardTables {
    QuantTables quant{};
    std::array<JpegEncodingTables::Huffman, 4> huffman{};
};
const StandardTables& standard_tables() {
    static const StandardTables tables = [] {
        StandardTables t;
        jpeg_compress_struct c{};
        jpeg_error_mgr err{};
        c.err = jpeg_std_error(&err);
        jpeg_create_compress(&c);
        c.in_color_space = JCS_RGB;
        c.input_components = 3;
        jpeg_set_defaults(&c);
        for (int k = 0; k < 4; ++k) {
            const JHUFF_TBL* h = k < 2 ? c.dc_huff_tbl_ptrs[k] : c.ac_huff_tbl_ptrs[k - 2];
            JpegEncodingTables::Huffman& out = t.huffman[static_cast<std::size_t>(k)];
            int count = 0;
            for (int n = 1; n <= 16; ++n) {
                out.bits[static_cast<std::size_t>(n)] = h->bits[n];
                count += h->bits[n];
            }
            out.values.assign(h->huffval, h->huffval + count);
        }
        for (int q = 1; q <= 100; ++q) {
            jpeg_set_quality(&c, q, TRUE);
            for (int k = 0; k < 2; ++k)
                for (int i = 0; i < 64; ++i) t.quant[q][k][i] = c.quant_tbl_ptrs[k]->quantval[i];
        }
        jpeg_destroy_compress(&c);
        return t;
    }();
    return tables;
}

/// The quality whose standard tables lie nearest (sum of absolute differences over the file's luma and,
/// when present, chroma table) to the file's tables; ties go to the higher quality. For files written with
/// the standard tables (libjpeg, ImageMagick, PIL, OpenCV, most cameras' "quality" settings) this is the
/// quality they were written at, as ImageMagick's estimate is.
int estimate_quality(const jpeg_decompress_struct& info) {
    const QuantTables& std_tables = standard_tables().quant;
    int best = 0;
    std::uint64_t best_err = ~std::uint64_t(0);
    for (int q = 100; q >= 1; --q) {
        std::uint64_t err = 0;
        int used = 0;
        for (int k = 0; k < 2; ++k) {
            const JQUANT_TBL* t = info.quant_tbl_ptrs[k];
            if (!t) continue;
            ++used;
            for (int i = 0; i < 64; ++i)
                err += static_cast<std::uint64_t>(std::abs(static_cast<int>(t->quantval[i]) - static_cast<int>(std_tables[q][k][i])));
        }
        if (!used) return 0;
        if (err < best_err) {
            best_err = err;
            best = q;
        }
    }
    return best;
}

void save_markers(Decompress& d) {
    jpeg_save_markers(&d.info, JPEG_COM, 0xffff);
    jpeg_save_markers(&d.info, JPEG_APP0 + 1, 0xffff);  // Exif, XMP
    jpeg_save_markers(&d.info, JPEG_APP0 + 2, 0xffff);  // ICC_PROFILE
}

const char kIccId[] = "ICC_PROFILE";  // + its NUL: 12 bytes

/// True for an ICC profile whose header is consistent with its size: the size field (bytes 0-3, big-endian)
/// equals the profile's length, and the 'acsp' signature is at offset 36.
bool plausible_icc(const Blob& p) {
    if (p.size() < 128 || std::memcmp(p.data() + 36, "acsp", 4) != 0) return false;
    const std::uint32_t size = (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) | p[3];
    return size == p.size();
}

/// The ICC profile of the APP2 "ICC_PROFILE" segments: chunks numbered 1..count, each present once, joined
/// in that order. Writers that number them wrongly (counts that disagree or do not match the chunks
/// present, a sequence number out of range or repeated) are common enough that libjpeg-based readers decode
/// such files rather than refuse them; here their chunks, joined in file order, are kept when they form a
/// well-formed profile (plausible_icc), and the profile is dropped otherwise.
Blob read_icc(const jpeg_decompress_struct& info) {
    std::vector<jpeg_saved_marker_ptr> chunks;
    for (jpeg_saved_marker_ptr mk = info.marker_list; mk; mk = mk->next)
        if (mk->marker == JPEG_APP0 + 2 && mk->data_length >= 14 && std::memcmp(mk->data, kIccId, sizeof kIccId) == 0)
            chunks.push_back(mk);
    if (chunks.empty()) return {};
    const std::size_t count = chunks.size();
    std::vector<jpeg_saved_marker_ptr> by_seq(count + 1, nullptr);
    bool numbered = true;
    for (jpeg_saved_marker_ptr mk : chunks) {
        const unsigned seq = mk->data[12], n = mk->data[13];
        if (n != count || seq < 1 || seq > count || by_seq[seq]) {
            numbered = false;
            break;
        }
        by_seq[seq] = mk;
    }
    const std::vector<jpeg_saved_marker_ptr> order = numbered ? std::vector<jpeg_saved_marker_ptr>(by_seq.begin() + 1, by_seq.end()) : chunks;
    Blob icc;
    for (jpeg_saved_marker_ptr mk : order) icc.insert(icc.end(), mk->data + 14, mk->data + mk->data_length);
    if (!numbered && !plausible_icc(icc)) return {};
    return icc;
}

/// After jpeg_read_header: EXIF, XMP, comments, ICC profile, density and the encoding hints, within the
/// metadata limits (every saved segment counts, whatever it holds).
Metadata read_metadata(Decompress& d, const Limits& limits, const std::string& name) {
    std::uint64_t items = 0, bytes = 0;
    for (jpeg_saved_marker_ptr mk = d.info.marker_list; mk; mk = mk->next) {
        ++items;
        bytes += mk->data_length;
    }
    check_metadata_size(items, bytes, limits, name);
    Metadata m;
    m.icc = read_icc(d.info);
    for (jpeg_saved_marker_ptr mk = d.info.marker_list; mk; mk = mk->next) {
        const std::size_t n = mk->data_length;
        const char* p = reinterpret_cast<const char*>(mk->data);
        if (mk->marker == JPEG_COM) {
            m.comments.emplace_back(p, n);
        } else if (mk->marker == JPEG_APP0 + 1 && n >= 6 && std::memcmp(p, kExifId, 6) == 0 && m.exif.empty()) {
            m.exif = normalize_exif(mk->data, n);
        } else if (mk->marker == JPEG_APP0 + 1 && n >= sizeof kXmpId && std::memcmp(p, kXmpId, sizeof kXmpId) == 0) {
            m.xmp.assign(p + sizeof kXmpId, n - sizeof kXmpId);
        }
    }
    if (d.info.saw_JFIF_marker && d.info.X_density && d.info.Y_density &&
        (d.info.density_unit == 1 || d.info.density_unit == 2)) {
        const double f = d.info.density_unit == 2 ? 2.54 : 1.0;  // 2: dots per cm
        m.dpi_x = d.info.X_density * f;
        m.dpi_y = d.info.Y_density * f;
    }
    m.jpeg_quality = estimate_quality(d.info);
    m.progressive = d.info.progressive_mode != 0;
    return m;
}

/// Before jpeg_start_compress: quality (the option, else the input's estimate, else 90), progressive
/// when the input was, and the JFIF density.
void set_encoding(Compress& c, const Metadata& m, const EncodeOptions& opt) {
    jpeg_set_quality(&c.info, jpeg_quality_for(opt, m), TRUE);
    if (m.progressive) jpeg_simple_progression(&c.info);
    if (m.has_resolution() && m.dpi_x < 65535.5 && m.dpi_y < 65535.5) {
        c.info.density_unit = 1;
        c.info.X_density = static_cast<UINT16>(std::max(1L, std::lround(m.dpi_x)));
        c.info.Y_density = static_cast<UINT16>(std::max(1L, std::lround(m.dpi_y)));
    }
}

/// The metadata's marker segments, in the order written: APP1 Exif, APP1 XMP, APP2 ICC (in chunks), COM. A
/// block above the size of one marker segment is left out (extended XMP and multi-segment EXIF are not
/// written). Used by the CPU encoder (write_metadata) and for JPEGs of the GPU encoder (jpeg_with_metadata).
struct Segment {
    int marker;
    Blob payload;
};
std::vector<Segment> metadata_segments(const Metadata& m) {
    std::vector<Segment> out;
    if (!m.exif.empty() && m.exif.size() + 6 <= kMaxMarker) {
        Blob b(kExifId, kExifId + 6);
        b.insert(b.end(), m.exif.begin(), m.exif.end());
        out.push_back({JPEG_APP0 + 1, std::move(b)});
    }
    if (!m.xmp.empty() && m.xmp.size() + sizeof kXmpId <= kMaxMarker) {
        Blob b(kXmpId, kXmpId + sizeof kXmpId);
        b.insert(b.end(), m.xmp.begin(), m.xmp.end());
        out.push_back({JPEG_APP0 + 1, std::move(b)});
    }
    // ICC: chunks of at most 65519 bytes after "ICC_PROFILE\0", sequence number and count (the layout
    // libjpeg-turbo's jpeg_write_icc_profile writes and jpeg_read_icc_profile reads).
    constexpr std::size_t kIccChunk = 65519;
    if (!m.icc.empty() && m.icc.size() <= 255u * kIccChunk) {
        const std::size_t count = (m.icc.size() + kIccChunk - 1) / kIccChunk;
        for (std::size_t k = 0; k < count; ++k) {
            Blob b(kIccId, kIccId + sizeof kIccId);
            b.push_back(static_cast<std::uint8_t>(k + 1));
            b.push_back(static_cast<std::uint8_t>(count));
            const std::size_t from = k * kIccChunk, to = std::min(m.icc.size(), from + kIccChunk);
            b.insert(b.end(), m.icc.begin() + static_cast<std::ptrdiff_t>(from), m.icc.begin() + static_cast<std::ptrdiff_t>(to));
            out.push_back({JPEG_APP0 + 2, std::move(b)});
        }
    }
    for (const std::string& c : m.comments)
        if (c.size() <= kMaxMarker) out.push_back({JPEG_COM, Blob(c.begin(), c.end())});
    return out;
}

/// After jpeg_start_compress: the metadata's segments (metadata_segments).
void write_metadata(Compress& c, const Metadata& m) {
    for (const Segment& s : metadata_segments(m))
        jpeg_write_marker(&c.info, s.marker, s.payload.data(), static_cast<unsigned>(s.payload.size()));
}

/// Reads the header, checks it against the limits (scans, pixels, memory, the file's size) and starts the
/// scan limit's progress monitor; returns the metadata.
Metadata read_header(Decompress& d, const Bytes& data, const std::string& name, const DecodeOptions& opt) {
    const std::uint64_t scans = count_jpeg_scans(data);
    if (scans > opt.limits.max_scans) fail_scans(scans, opt.limits.max_scans, name);
    d.limit_scans(opt.limits.max_scans);
    jpeg_mem_src(&d.info, data.data(), static_cast<unsigned long>(data.size()));
    save_markers(d);
    jpeg_read_header(&d.info, TRUE);
    if (d.info.jpeg_color_space == JCS_CMYK || d.info.jpeg_color_space == JCS_YCCK)
        fail(ErrorCode::Unsupported, name, "unsupported channel count: a 4-channel CMYK/YCCK JPEG (imghist reads gray and colour JPEG)");
    if (d.info.num_components != 1 && d.info.num_components != 3)
        fail(ErrorCode::Unsupported, name, "unsupported channel count " + std::to_string(d.info.num_components));
    checked_image_bytes(d.info.image_width, d.info.image_height, d.info.num_components, 8, opt, name);
    // Largest compression ratio: every 8x8 block a scan codes takes at least one bit, and a file may code only
    // its smallest component (the block counts are known once jpeg_read_header has reached the first scan).
    std::uint64_t least_blocks = UINT64_MAX;
    for (int c = 0; c < d.info.num_components; ++c)
        least_blocks = std::min<std::uint64_t>(least_blocks, std::uint64_t(d.info.comp_info[c].width_in_blocks) *
                                                                  d.info.comp_info[c].height_in_blocks);
    check_encoded_size(least_blocks / 8, data.size(), name, "JPEG");
    return read_metadata(d, opt.limits, name);
}

}  // namespace

std::uint64_t count_jpeg_scans(const Bytes& data) {
    const std::uint8_t* d = data.data();
    const std::size_t n = data.size();
    std::uint64_t scans = 0;
    std::size_t pos = 2;  // after SOI
    while (pos + 1 < n) {
        if (d[pos] != 0xFF || d[pos + 1] == 0xFF) {  // not a marker here, or a fill byte before one
            ++pos;
            continue;
        }
        const std::uint8_t m = d[pos + 1];
        if (m == 0xD9) break;                                   // EOI
        if (m == 0x01 || m == 0x00 || (m >= 0xD0 && m <= 0xD8)) {  // no length: TEM, RSTn, SOI (0x00: stray)
            pos += 2;
            continue;
        }
        if (pos + 3 >= n) break;
        pos += 2 + ((std::size_t(d[pos + 2]) << 8) | d[pos + 3]);
        if (m != 0xDA) continue;
        ++scans;
        // The entropy-coded data runs to the next marker: 0xFF followed by neither 0x00 (a stuffed byte)
        // nor a restart marker. Every JPEG read is walked to its end here: memchr finds the candidates
        // (about one byte in a hundred) several times faster than a byte loop.
        while (pos + 1 < n) {
            const void* ff = std::memchr(d + pos, 0xFF, n - 1 - pos);
            if (ff == nullptr) {
                pos = n - 1;
                break;
            }
            pos = static_cast<std::size_t>(static_cast<const std::uint8_t*>(ff) - d);
            const std::uint8_t next = d[pos + 1];
            if (next != 0x00 && !(next >= 0xD0 && next <= 0xD7)) break;
            ++pos;
        }
    }
    return scans;
}

void check_jpeg_scans(std::uint64_t scans, const Limits& limits, const std::string& name) {
    if (scans > limits.max_scans) fail_scans(scans, limits.max_scans, name);
}

Image decode_jpeg(const Bytes& data, const std::string& name, const DecodeOptions& opt) {
    Decompress d;
    Image img;
    Metadata meta;  // (objects with destructors live above setjmp: a longjmp must not skip them)
    if (setjmp(d.err.jump)) fail_decoding(d, name);
    meta = read_header(d, data, name, opt);
    d.info.out_color_space = d.info.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&d.info);
    img = Image(static_cast<int>(d.info.output_width), static_cast<int>(d.info.output_height),
                d.info.output_components, 8);
    img.meta = std::move(meta);
    while (d.info.output_scanline < d.info.output_height) {
        JSAMPROW rows[16];
        int n = 0;
        for (; n < 16 && d.info.output_scanline + n < d.info.output_height; ++n)
            rows[n] = img.row(static_cast<int>(d.info.output_scanline) + n);
        jpeg_read_scanlines(&d.info, rows, static_cast<JDIMENSION>(n));
    }
    jpeg_finish_decompress(&d.info);
    return img;
}

Bytes encode_jpeg(const Image& img, const EncodeOptions& opt, const std::string& name) {
    Compress c;
    if (setjmp(c.err.jump)) fail(ErrorCode::Io, name, std::string("cannot encode JPEG (") + c.err.message + ")");
    jpeg_mem_dest(&c.info, &c.buf, &c.size);
    c.info.image_width = static_cast<JDIMENSION>(img.width());
    c.info.image_height = static_cast<JDIMENSION>(img.height());
    c.info.input_components = img.channels();
    c.info.in_color_space = img.channels() == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&c.info);
    set_encoding(c, img.meta, opt);
    jpeg_start_compress(&c.info, TRUE);
    write_metadata(c, img.meta);
    while (c.info.next_scanline < c.info.image_height) {
        JSAMPROW rows[16];
        int n = 0;
        for (; n < 16 && c.info.next_scanline + n < c.info.image_height; ++n)
            rows[n] = const_cast<JSAMPROW>(img.row(static_cast<int>(c.info.next_scanline) + n));
        jpeg_write_scanlines(&c.info, rows, static_cast<JDIMENSION>(n));
    }
    jpeg_finish_compress(&c.info);
    return c.take();
}

bool read_jpeg_header(const Bytes& data, JpegHeader& out) {
    Decompress d;
    if (setjmp(d.err.jump)) return false;
    jpeg_mem_src(&d.info, data.data(), static_cast<unsigned long>(data.size()));
    save_markers(d);
    if (jpeg_read_header(&d.info, TRUE) != JPEG_HEADER_OK) return false;
    JpegHeader h;
    try {
        h.meta = read_metadata(d, Limits{}, "");
    } catch (const Error&) {
        return false;  // beyond the metadata limits: the CPU decoder names the problem
    }
    h.scans = count_jpeg_scans(data);
    h.components = d.info.num_components;
    h.ycbcr = d.info.num_components == 3 && d.info.jpeg_color_space == JCS_YCbCr;
    h.width = static_cast<int>(d.info.image_width);
    h.height = static_cast<int>(d.info.image_height);
    for (int c = 0; c < 3 && c < d.info.num_components; ++c) {
        h.h_samp[c] = d.info.comp_info[c].h_samp_factor;
        h.v_samp[c] = d.info.comp_info[c].v_samp_factor;
    }
    h.progressive = d.info.progressive_mode != 0;
    h.arithmetic = d.info.arith_code != 0;
    out = h;
    return true;
}

Bytes jpeg_with_metadata(const Bytes& jpeg, const Metadata& m, const std::string& name) {
    if (jpeg.size() < 4 || jpeg[0] != 0xFF || jpeg[1] != 0xD8)
        fail(ErrorCode::Io, name, "the encoded JPEG does not start with SOI");
    // Skip the encoder's own APPn and COM segments: everything from the first other marker on is kept as is.
    std::size_t pos = 2;
    while (pos + 4 <= jpeg.size() && jpeg[pos] == 0xFF &&
           ((jpeg[pos + 1] >= 0xE0 && jpeg[pos + 1] <= 0xEF) || jpeg[pos + 1] == 0xFE))
        pos += 2 + (std::size_t(jpeg[pos + 2]) << 8 | jpeg[pos + 3]);
    if (pos > jpeg.size()) fail(ErrorCode::Io, name, "the encoded JPEG has a truncated marker segment");
    Bytes out;
    out.reserve(jpeg.size() + 256 + m.exif.size() + m.xmp.size() + m.icc.size());
    auto put_segment = [&](int marker, const std::uint8_t* p, std::size_t n) {
        out.push_back(0xFF);
        out.push_back(static_cast<std::uint8_t>(marker));
        out.push_back(static_cast<std::uint8_t>((n + 2) >> 8));
        out.push_back(static_cast<std::uint8_t>((n + 2) & 0xFF));
        out.insert(out.end(), p, p + n);
    };
    out.push_back(0xFF);
    out.push_back(0xD8);
    // JFIF APP0, as libjpeg writes it (version 1.01; density in dpi when the input had one, else 1:1 aspect).
    std::uint8_t jfif[14] = {'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0};
    if (m.has_resolution() && m.dpi_x < 65535.5 && m.dpi_y < 65535.5) {
        const long x = std::max(1L, std::lround(m.dpi_x)), y = std::max(1L, std::lround(m.dpi_y));
        jfif[7] = 1;
        jfif[8] = static_cast<std::uint8_t>(x >> 8);
        jfif[9] = static_cast<std::uint8_t>(x & 0xFF);
        jfif[10] = static_cast<std::uint8_t>(y >> 8);
        jfif[11] = static_cast<std::uint8_t>(y & 0xFF);
    }
    put_segment(JPEG_APP0, jfif, sizeof jfif);
    for (const Segment& s : metadata_segments(m)) put_segment(s.marker, s.payload.data(), s.payload.size());
    out.insert(out.end(), jpeg.begin() + static_cast<std::ptrdiff_t>(pos), jpeg.end());
    return out;
}

namespace {

void check_quality(int quality) {
    if (quality < 1 || quality > 100)
        throw Error(ErrorCode::InvalidArgument, "JPEG quality " + std::to_string(quality) + " is outside 1-100");
}

}  // namespace

JpegEncodingTables jpeg_encoding_tables(int quality) {
    check_quality(quality);
    const StandardTables& std_tables = standard_tables();
    JpegEncodingTables t;
    for (int k = 0; k < 2; ++k)
        for (int i = 0; i < 64; ++i)
            t.quant[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)] =
                static_cast<std::uint16_t>(std_tables.quant[static_cast<std::size_t>(quality)][static_cast<std::size_t>(k)][static_cast<std::size_t>(i)]);
    t.dc = {std_tables.huffman[0], std_tables.huffman[1]};
    t.ac = {std_tables.huffman[2], std_tables.huffman[3]};
    return t;
}

Bytes baseline_jpeg(int width, int height, const int h_samp[3], const int v_samp[3], int quality,
                    const std::uint8_t* segment, std::size_t size) {
    check_quality(quality);
    const StandardTables& t = standard_tables();  // read in place: this runs once per output file
    Bytes out;
    out.reserve(size + 640);
    auto byte = [&](unsigned v) { out.push_back(static_cast<std::uint8_t>(v)); };
    auto marker = [&](unsigned m, std::size_t length) {  // length: of the segment, its two length bytes included
        byte(0xFF);
        byte(m);
        byte(static_cast<unsigned>(length >> 8));
        byte(static_cast<unsigned>(length & 0xFF));
    };
    byte(0xFF);
    byte(0xD8);
    // libjpeg-turbo's order (jcmarker.c): a DQT per table, SOF0, a DHT per table in the order the scan's
    // components first use them (DC then AC), SOS.
    for (unsigned k = 0; k < 2; ++k) {
        marker(0xDB, 2 + 1 + 64);
        byte(k);
        for (int i = 0; i < 64; ++i) byte(t.quant[static_cast<std::size_t>(quality)][k][static_cast<std::size_t>(jpeg_natural_order(i))]);
    }
    marker(0xC0, 2 + 6 + 3 * 3);
    byte(8);
    byte(static_cast<unsigned>(height) >> 8);
    byte(static_cast<unsigned>(height) & 0xFF);
    byte(static_cast<unsigned>(width) >> 8);
    byte(static_cast<unsigned>(width) & 0xFF);
    byte(3);
    for (unsigned c = 0; c < 3; ++c) {
        byte(c + 1);
        byte(static_cast<unsigned>(h_samp[c] << 4 | v_samp[c]));
        byte(c == 0 ? 0 : 1);
    }
    auto dht = [&](const JpegEncodingTables::Huffman& h, unsigned id) {
        marker(0xC4, 2 + 1 + 16 + h.values.size());
        byte(id);
        for (int n = 1; n <= 16; ++n) byte(h.bits[static_cast<std::size_t>(n)]);
        for (std::uint8_t v : h.values) byte(v);
    };
    dht(t.huffman[0], 0x00);  // DC luma
    dht(t.huffman[2], 0x10);  // AC luma
    dht(t.huffman[1], 0x01);  // DC chroma
    dht(t.huffman[3], 0x11);  // AC chroma
    marker(0xDA, 2 + 1 + 2 * 3 + 3);
    byte(3);
    for (unsigned c = 0; c < 3; ++c) {
        byte(c + 1);
        byte(c == 0 ? 0x00 : 0x11);
    }
    byte(0);   // Ss
    byte(63);  // Se
    byte(0);   // Ah, Al
    out.insert(out.end(), segment, segment + size);
    byte(0xFF);
    byte(0xD9);
    return out;
}

int jpeg_planar_components(const Bytes& data) {
    Decompress d;
    if (setjmp(d.err.jump)) return 0;
    jpeg_mem_src(&d.info, data.data(), static_cast<unsigned long>(data.size()));
    if (jpeg_read_header(&d.info, TRUE) != JPEG_HEADER_OK) return 0;
    if (d.info.num_components == 1 && d.info.jpeg_color_space == JCS_GRAYSCALE) return 1;
    if (d.info.num_components == 3 && d.info.jpeg_color_space == JCS_YCbCr) return 3;
    return 0;
}

bool jpeg_planar_ok(const Bytes& data) { return jpeg_planar_components(data) != 0; }

JpegPlanes decode_jpeg_planes(const Bytes& data, const std::string& name, const DecodeOptions& opt) {
    Decompress d;
    JpegPlanes p;
    // Everything with a destructor lives above setjmp: a longjmp must not skip destructors.
    std::vector<std::vector<JSAMPROW>> comp_rows(MAX_COMPONENTS);
    JSAMPARRAY arrays[MAX_COMPONENTS];
    if (setjmp(d.err.jump)) fail_decoding(d, name);
    p.meta = read_header(d, data, name, opt);
    if (!((d.info.num_components == 1 && d.info.jpeg_color_space == JCS_GRAYSCALE) ||
          (d.info.num_components == 3 && d.info.jpeg_color_space == JCS_YCbCr)))
        fail(ErrorCode::Unsupported, name, "JPEG colour space is neither gray nor YCbCr");
    d.info.raw_data_out = TRUE;
    d.info.out_color_space = d.info.jpeg_color_space;
    jpeg_start_decompress(&d.info);
    p.width = static_cast<int>(d.info.image_width);
    p.height = static_cast<int>(d.info.image_height);
    p.ycbcr = d.info.num_components == 3;
    p.max_v_samp = d.info.max_v_samp_factor;
    const int mcu_rows = d.info.max_v_samp_factor * DCTSIZE;
    const int imcu_count = static_cast<int>((d.info.image_height + mcu_rows - 1) / mcu_rows);
    p.planes.resize(static_cast<std::size_t>(d.info.num_components));
    for (int c = 0; c < d.info.num_components; ++c) {
        const jpeg_component_info& ci = d.info.comp_info[c];
        JpegPlane& pl = p.planes[static_cast<std::size_t>(c)];
        pl.width = static_cast<int>(ci.downsampled_width);
        pl.height = static_cast<int>(ci.downsampled_height);
        pl.h_samp = ci.h_samp_factor;
        pl.v_samp = ci.v_samp_factor;
        pl.stride = static_cast<int>(ci.width_in_blocks) * DCTSIZE;
        // Round the stride up to whole MCUs so the encoder's raw input covers every block it reads.
        int mcu_w = d.info.max_h_samp_factor * DCTSIZE;
        int full_w = ((p.width + mcu_w - 1) / mcu_w) * ci.h_samp_factor * DCTSIZE;
        if (full_w > pl.stride) pl.stride = full_w;
        pl.rows = imcu_count * ci.v_samp_factor * DCTSIZE;
        pl.data.resize(static_cast<std::size_t>(pl.stride) * pl.rows);
    }
    for (int imcu = 0; imcu < imcu_count; ++imcu) {
        for (int c = 0; c < d.info.num_components; ++c) {
            JpegPlane& pl = p.planes[static_cast<std::size_t>(c)];
            int n = pl.v_samp * DCTSIZE;
            auto& rows = comp_rows[static_cast<std::size_t>(c)];
            rows.resize(static_cast<std::size_t>(n));
            for (int r = 0; r < n; ++r)
                rows[static_cast<std::size_t>(r)] = pl.data.data() + static_cast<std::size_t>(imcu * n + r) * pl.stride;
            arrays[c] = rows.data();
        }
        if (jpeg_read_raw_data(&d.info, arrays, static_cast<JDIMENSION>(mcu_rows)) == 0)
            fail(ErrorCode::InvalidArgument, name, "truncated or corrupt JPEG (no data)");
    }
    jpeg_finish_decompress(&d.info);
    return p;
}

Bytes encode_jpeg_planes(const JpegPlanes& p, const EncodeOptions& opt, const std::string& name) {
    Compress c;
    std::vector<std::vector<JSAMPROW>> comp_rows(MAX_COMPONENTS);
    // Rows handed to libjpeg with the padding filled from the edge samples (rows past a plane's width or
    // height); rows that have no padding are handed over as they are.
    std::vector<Bytes> padded(p.planes.size());
    JSAMPARRAY arrays[MAX_COMPONENTS];
    if (setjmp(c.err.jump)) fail(ErrorCode::Io, name, std::string("cannot encode JPEG (") + c.err.message + ")");
    jpeg_mem_dest(&c.info, &c.buf, &c.size);
    c.info.image_width = static_cast<JDIMENSION>(p.width);
    c.info.image_height = static_cast<JDIMENSION>(p.height);
    c.info.input_components = p.ycbcr ? 3 : 1;
    c.info.in_color_space = p.ycbcr ? JCS_YCbCr : JCS_GRAYSCALE;
    jpeg_set_defaults(&c.info);
    jpeg_set_colorspace(&c.info, p.ycbcr ? JCS_YCbCr : JCS_GRAYSCALE);
    set_encoding(c, p.meta, opt);
    for (std::size_t i = 0; i < p.planes.size(); ++i) {
        c.info.comp_info[i].h_samp_factor = p.planes[i].h_samp;
        c.info.comp_info[i].v_samp_factor = p.planes[i].v_samp;
    }
    c.info.raw_data_in = TRUE;
    jpeg_start_compress(&c.info, TRUE);
    write_metadata(c, p.meta);
    const int mcu_rows = p.max_v_samp * DCTSIZE;
    for (int imcu = 0; c.info.next_scanline < c.info.image_height; ++imcu) {
        for (std::size_t ci = 0; ci < p.planes.size(); ++ci) {
            const JpegPlane& pl = p.planes[ci];
            const int n = pl.v_samp * DCTSIZE;
            const std::size_t stride = static_cast<std::size_t>(pl.stride), width = static_cast<std::size_t>(pl.width);
            auto& rows = comp_rows[ci];
            rows.resize(static_cast<std::size_t>(n));
            padded[ci].resize(static_cast<std::size_t>(n) * stride);
            for (int r = 0; r < n; ++r) {
                const int y = imcu * n + r;
                const std::uint8_t* src = pl.data.data() + static_cast<std::size_t>(std::min(y, pl.height - 1)) * stride;
                if (y < pl.height && width == stride) {
                    rows[static_cast<std::size_t>(r)] = const_cast<JSAMPROW>(src);  // libjpeg only reads its input
                    continue;
                }
                std::uint8_t* row = padded[ci].data() + static_cast<std::size_t>(r) * stride;
                std::memcpy(row, src, width);
                std::memset(row + width, src[width - 1], stride - width);
                rows[static_cast<std::size_t>(r)] = row;
            }
            arrays[ci] = rows.data();
        }
        jpeg_write_raw_data(&c.info, arrays, static_cast<JDIMENSION>(mcu_rows));
    }
    jpeg_finish_compress(&c.info);
    return c.take();
}

}  // namespace cli
