#include "io/metadata.hpp"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace cli {
namespace {

// ---- EXIF (a TIFF structure) --------------------------------------------------------------------------------

struct TiffReader {
    const std::uint8_t* b;
    std::size_t size;
    bool little;
    bool ok(std::size_t pos, std::size_t n) const { return pos <= size && n <= size - pos; }
    std::uint32_t u16(std::size_t p) const {
        return little ? (b[p] | (b[p + 1] << 8)) : ((b[p] << 8) | b[p + 1]);
    }
    std::uint32_t u32(std::size_t p) const {
        return little ? (std::uint32_t(b[p]) | (std::uint32_t(b[p + 1]) << 8) | (std::uint32_t(b[p + 2]) << 16) |
                         (std::uint32_t(b[p + 3]) << 24))
                      : ((std::uint32_t(b[p]) << 24) | (std::uint32_t(b[p + 1]) << 16) |
                         (std::uint32_t(b[p + 2]) << 8) | std::uint32_t(b[p + 3]));
    }
};

bool tiff_header(const Blob& b, bool& little) {
    if (b.size() < 8) return false;
    if (b[0] == 'I' && b[1] == 'I' && b[2] == 42 && b[3] == 0) little = true;
    else if (b[0] == 'M' && b[1] == 'M' && b[2] == 0 && b[3] == 42) little = false;
    else return false;
    return true;
}

/// Offset of the first IFD0 entry for which `match(reader, offset)` holds; 0 when there is none, or when the
/// directory runs past the end of the blob before one is found.
template <class Match>
std::size_t find_ifd0_entry(const Blob& b, Match match) {
    bool little = true;
    if (!tiff_header(b, little)) return 0;
    TiffReader r{b.data(), b.size(), little};
    const std::size_t ifd = r.u32(4);
    if (!r.ok(ifd, 2)) return 0;
    const std::size_t n = r.u16(ifd);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t e = ifd + 2 + 12 * i;
        if (!r.ok(e, 12)) return 0;
        if (match(r, e)) return e;
    }
    return 0;
}

/// Offset of the Orientation entry's value in IFD0 (the first such entry that holds a SHORT), or 0 when there
/// is none.
std::size_t orientation_value_pos(const Blob& b) {
    const std::size_t e = find_ifd0_entry(b, [](const TiffReader& r, std::size_t at) {
        return r.u16(at) == 0x0112 && r.u16(at + 2) == 3 && r.u32(at + 4) >= 1;
    });
    return e == 0 ? 0 : e + 8;
}

// ---- copying IFDs between TIFF structures of the same byte order -------------------------------------------

constexpr std::uint16_t kExifIfd = 34665, kGpsIfd = 34853, kInteropIfd = 40965;
/// The largest EXIF block built from a TIFF (a JPEG holds 64 KiB of it; camera blocks are a few KiB).
constexpr std::size_t kMaxExifBytes = std::size_t(1) << 20;

std::size_t type_size(std::uint32_t type) {
    switch (type) {
        case 1: case 2: case 6: case 7: return 1;  // BYTE, ASCII, SBYTE, UNDEFINED
        case 3: case 8: return 2;                  // SHORT, SSHORT
        case 4: case 9: case 11: case 13: return 4;  // LONG, SLONG, FLOAT, IFD
        case 5: case 10: case 12: return 8;        // RATIONAL, SRATIONAL, DOUBLE
        default: return 0;
    }
}

struct IfdCopier {
    TiffReader r;  // the source
    Blob& out;
    std::size_t base = 0;  // where out[0] will lie in the file
    void put16(std::size_t p, std::uint32_t v) {
        out[p + (r.little ? 0 : 1)] = static_cast<std::uint8_t>(v);
        out[p + (r.little ? 1 : 0)] = static_cast<std::uint8_t>(v >> 8);
    }
    void put32(std::size_t p, std::uint32_t v) {
        for (int i = 0; i < 4; ++i) out[p + (r.little ? i : 3 - i)] = static_cast<std::uint8_t>(v >> (8 * i));
    }
    /// Copies the IFD at `ifd` (the entries `keep` accepts) to the end of `out`; returns its offset in the
    /// file (base + its place in out; base or out's first bytes are never 0 where this is used), 0 when there
    /// is nothing to copy. Sub-IFD pointers are followed (`depth` levels at most).
    std::size_t copy(std::size_t ifd, bool (*keep)(std::uint16_t), int depth) {
        if (depth > 2 || !r.ok(ifd, 2)) return 0;
        const std::size_t n = r.u16(ifd);
        if (!r.ok(ifd + 2, 12 * n)) return 0;
        std::vector<std::size_t> entries;
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t e = ifd + 2 + 12 * i;
            const std::uint16_t tag = static_cast<std::uint16_t>(r.u16(e));
            const std::size_t bytes = type_size(r.u16(e + 2)) * r.u32(e + 4);
            if (!type_size(r.u16(e + 2)) || (keep && !keep(tag))) continue;
            if (bytes > 4 && (bytes > kMaxExifBytes || !r.ok(r.u32(e + 8), bytes))) continue;
            entries.push_back(e);
        }
        if (entries.empty() || out.size() + 2 + 12 * entries.size() + 4 > kMaxExifBytes) return 0;
        if ((base + out.size()) & 1) out.push_back(0);
        const std::size_t at = out.size();
        bool followed[3] = {false, false, false};  // each kind of sub-IFD once: no fan-out from a hostile file
        out.resize(at + 2 + 12 * entries.size() + 4, 0);
        put16(at, static_cast<std::uint32_t>(entries.size()));
        for (std::size_t i = 0; i < entries.size(); ++i) {
            const std::size_t e = entries[i], o = at + 2 + 12 * i;
            std::memcpy(out.data() + o, r.b + e, 8);
            const std::uint16_t tag = static_cast<std::uint16_t>(r.u16(e));
            const std::size_t bytes = type_size(r.u16(e + 2)) * r.u32(e + 4);
            if (tag == kExifIfd || tag == kGpsIfd || tag == kInteropIfd) {
                bool& once = followed[tag == kExifIfd ? 0 : tag == kGpsIfd ? 1 : 2];
                const std::size_t sub = once ? 0 : copy(r.u32(e + 8), nullptr, depth + 1);
                once = true;
                put32(o + 8, static_cast<std::uint32_t>(sub));
                if (!sub) put32(o + 4, 0);  // nothing copied: a count of 0, which readers skip
            } else if (bytes > 4) {
                if (out.size() + bytes > kMaxExifBytes) {  // (entries sharing one big value: bounded)
                    put32(o + 4, 0);
                    continue;
                }
                if ((base + out.size()) & 1) out.push_back(0);
                const std::size_t v = out.size(), from = r.u32(e + 8);
                out.insert(out.end(), r.b + from, r.b + from + bytes);
                put32(o + 8, static_cast<std::uint32_t>(base + v));
            } else {
                std::memcpy(out.data() + o + 8, r.b + e + 8, 4);
            }
        }
        return base + at;
    }
};

/// The image-IFD tags that belong to EXIF (TIFF's own structure tags stay with the image).
bool exif_ifd0_tag(std::uint16_t tag) {
    switch (tag) {
        case 271: case 272: case 274: case 305: case 306: case 315: case 33432:  // Make .. Copyright
        case kExifIfd: case kGpsIfd: return true;
        default: return false;
    }
}

/// Offset of IFD0's entry for `tag`, 0 when absent.
std::size_t ifd0_entry(const Blob& b, std::uint16_t tag) {
    return find_ifd0_entry(b, [tag](const TiffReader& r, std::size_t at) { return r.u16(at) == tag; });
}

// ---- PNG chunks ---------------------------------------------------------------------------------------------

std::uint32_t be32(const std::uint8_t* p) {
    return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) | p[3];
}

void put_be32(Blob& out, std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::uint8_t>(v >> s));
}

void put_chunk(Blob& out, const char* type, const Blob& body) {
    put_be32(out, static_cast<std::uint32_t>(body.size()));
    const std::size_t start = out.size();
    out.insert(out.end(), type, type + 4);
    out.insert(out.end(), body.begin(), body.end());
    put_be32(out, static_cast<std::uint32_t>(crc32_z(0, out.data() + start, out.size() - start)));
}

enum class Inflated { Ok, Damaged, TooLarge };

/// zlib stream -> bytes, at most `limit` of them.
Inflated inflate_bounded(const std::uint8_t* data, std::size_t size, std::uint64_t limit, Blob& out) {
    z_stream zs{};
    out.clear();
    if (inflateInit(&zs) != Z_OK) return Inflated::Damaged;
    std::uint8_t buf[16384];
    zs.next_in = const_cast<Bytef*>(data);
    zs.avail_in = static_cast<uInt>(size);
    int rc = Z_OK;
    bool too_large = false;
    while (rc == Z_OK) {
        zs.next_out = buf;
        zs.avail_out = sizeof buf;
        rc = inflate(&zs, Z_NO_FLUSH);
        const std::size_t got = sizeof buf - zs.avail_out;
        if (out.size() + got > limit) {
            too_large = true;
            break;
        }
        out.insert(out.end(), buf, buf + got);
        if (rc == Z_OK && got == 0 && zs.avail_in == 0) rc = Z_DATA_ERROR;  // ends early
    }
    inflateEnd(&zs);
    if (too_large) return Inflated::TooLarge;
    return rc == Z_STREAM_END ? Inflated::Ok : Inflated::Damaged;
}

Blob deflate_all(const std::uint8_t* data, std::size_t size) {
    uLongf n = compressBound(static_cast<uLong>(size));
    Blob out(n);
    if (compress2(out.data(), &n, data, static_cast<uLong>(size), 9) != Z_OK) return {};
    out.resize(n);
    return out;
}

const char kXmpKey[] = "XML:com.adobe.xmp";

}  // namespace

Blob normalize_exif(const std::uint8_t* data, std::size_t size) {
    if (size >= 6 && std::memcmp(data, "Exif\0\0", 6) == 0) {
        data += 6;
        size -= 6;
    }
    Blob b(data, data + size);
    bool little = true;
    if (!tiff_header(b, little)) return {};
    return b;
}

int exif_orientation(const Blob& exif) noexcept {
    const std::size_t p = orientation_value_pos(exif);
    if (!p) return 1;
    bool little = exif[0] == 'I';
    TiffReader r{exif.data(), exif.size(), little};
    const std::uint32_t v = r.u16(p);
    return v >= 1 && v <= 8 ? static_cast<int>(v) : 1;
}

bool set_exif_orientation(Blob& exif, int orientation) noexcept {
    const std::size_t p = orientation_value_pos(exif);
    if (!p) return false;
    const bool little = exif[0] == 'I';
    exif[p + (little ? 0 : 1)] = static_cast<std::uint8_t>(orientation);
    exif[p + (little ? 1 : 0)] = 0;
    return true;
}

bool is_png_metadata_chunk(const std::uint8_t type[4]) noexcept {
    for (const char* t : {"eXIf", "iCCP", "pHYs", "tEXt", "zTXt", "iTXt"})
        if (std::memcmp(type, t, 4) == 0) return true;
    return false;
}

Blob exif_from_tiff(const std::uint8_t* file, std::size_t size) {
    Blob out(file, file + std::min<std::size_t>(size, 8));
    bool little = true;
    if (!tiff_header(out, little)) return {};  // (BigTIFF: not read)
    IfdCopier c{TiffReader{file, size, little}, out};
    const std::size_t ifd = c.copy(c.r.u32(4), exif_ifd0_tag, 0);
    if (!ifd) return {};
    c.put32(4, static_cast<std::uint32_t>(ifd));
    return out;
}

ExifTail exif_subifds(const Blob& exif, std::size_t file_size) {
    ExifTail t;
    bool little = true;
    if (!tiff_header(exif, little) || file_size < 8) return t;
    IfdCopier c{TiffReader{exif.data(), exif.size(), little}, t.bytes, file_size};
    for (std::uint16_t tag : {kExifIfd, kGpsIfd}) {
        const std::size_t entry = ifd0_entry(exif, tag);
        if (!entry) continue;
        const std::size_t sub = c.copy(c.r.u32(entry + 8), nullptr, 1);
        if (sub) t.pointers.emplace_back(tag, static_cast<std::uint32_t>(sub));
    }
    return t;
}

bool set_ifd0_offset(std::uint8_t* file, std::size_t size, std::uint16_t tag, std::uint32_t offset) {
    if (size < 8) return false;
    const Blob head(file, file + 8);
    bool little = true;
    if (!tiff_header(head, little)) return false;
    TiffReader r{file, size, little};
    const std::size_t ifd = r.u32(4);
    if (!r.ok(ifd, 2)) return false;
    const std::size_t n = r.u16(ifd);
    for (std::size_t i = 0; i < n && r.ok(ifd + 2 + 12 * i, 12); ++i) {
        const std::size_t e = ifd + 2 + 12 * i;
        if (r.u16(e) != tag || r.u32(e + 4) != 1 || (r.u16(e + 2) != 4 && r.u16(e + 2) != 13)) continue;
        for (int k = 0; k < 4; ++k) file[e + 8 + (little ? k : 3 - k)] = static_cast<std::uint8_t>(offset >> (8 * k));
        return true;
    }
    return false;
}

std::string exif_ascii(const Blob& exif, std::uint16_t tag) {
    const std::size_t e = ifd0_entry(exif, tag);
    if (!e) return {};
    TiffReader r{exif.data(), exif.size(), exif[0] == 'I'};
    const std::size_t n = r.u32(e + 4);
    if (r.u16(e + 2) != 2 || n == 0 || n > 4096) return {};
    const std::size_t at = n <= 4 ? e + 8 : r.u32(e + 8);
    if (!r.ok(at, n)) return {};
    std::string v(reinterpret_cast<const char*>(exif.data() + at), n);
    while (!v.empty() && v.back() == '\0') v.pop_back();
    return v;
}

Metadata read_png_metadata(const std::vector<PngChunk>& chunks, const Limits& limits, const std::string& name) {
    Metadata m;
    Blob text;
    std::uint64_t used = 0;  // decoded bytes of every text and profile chunk so far
    // Inflates a zlib stream within what is left of the limit; false when damaged (the chunk is ignored).
    auto inflate_counted = [&](const std::uint8_t* z, std::size_t n) {
        const Inflated r = inflate_bounded(z, n, limits.max_metadata - std::min(used, limits.max_metadata), text);
        if (r == Inflated::TooLarge) check_metadata_size(0, limits.max_metadata + 1, limits, name);
        used += text.size();
        return r == Inflated::Ok;
    };
    for (const PngChunk& c : chunks) {
        const char* type = c.type;
        const std::uint8_t* body = c.body;
        const std::size_t len = c.size;
        used += len;
        check_metadata_size(0, used, limits, name);
        // Keyword-led chunks: keyword, NUL, then the chunk's own fields.
        const std::uint8_t* nul = static_cast<const std::uint8_t*>(std::memchr(body, 0, len));
        const std::string keyword = nul ? std::string(reinterpret_cast<const char*>(body), nul - body) : "";
        const std::size_t after = nul ? static_cast<std::size_t>(nul - body) + 1 : len;
        if (std::memcmp(type, "eXIf", 4) == 0) {
            m.exif = normalize_exif(body, len);
        } else if (std::memcmp(type, "iCCP", 4) == 0) {
            // name, NUL, method 0, zlib data
            if (nul && after < len && body[after] == 0 && inflate_counted(body + after + 1, len - after - 1)) m.icc = text;
        } else if (std::memcmp(type, "pHYs", 4) == 0) {
            if (len == 9 && body[8] == 1) {  // unit 1: pixels per metre
                m.dpi_x = be32(body) * 0.0254;
                m.dpi_y = be32(body + 4) * 0.0254;
            }
        } else if (std::memcmp(type, "tEXt", 4) == 0) {
            if (nul && keyword == "Comment") m.comments.emplace_back(reinterpret_cast<const char*>(body + after), len - after);
        } else if (std::memcmp(type, "zTXt", 4) == 0) {
            // Inflated whatever the keyword: libspng (the palette and interlaced path) inflates them all too.
            if (nul && after < len && body[after] == 0 && inflate_counted(body + after + 1, len - after - 1) &&
                keyword == "Comment")
                m.comments.emplace_back(text.begin(), text.end());
        } else if (std::memcmp(type, "iTXt", 4) == 0) {
            // keyword, NUL, compressed flag, method, language tag, NUL, translated keyword, NUL, text
            if (!nul || keyword.empty() || after + 2 > len) continue;
            const bool compressed = body[after] != 0;
            std::size_t p = after + 2;
            for (int field = 0; field < 2 && p < len; ++field) {
                const void* z = std::memchr(body + p, 0, len - p);
                p = z ? static_cast<std::size_t>(static_cast<const std::uint8_t*>(z) - body) + 1 : len + 1;
            }
            if (p > len) continue;
            std::string value;
            if (compressed) {
                if (!inflate_counted(body + p, len - p)) continue;
                value.assign(text.begin(), text.end());
            } else {
                value.assign(reinterpret_cast<const char*>(body + p), len - p);
            }
            if (keyword == kXmpKey) m.xmp = value;
            else if (keyword == "Comment") m.comments.push_back(value);
        }
    }
    return m;
}

Blob png_metadata_chunks(const Metadata& m) {
    Blob out, body;
    if (!m.icc.empty()) {
        Blob z = deflate_all(m.icc.data(), m.icc.size());
        if (!z.empty()) {
            static const char name[] = "ICC profile";
            body.assign(name, name + sizeof name);  // with its NUL
            body.push_back(0);                      // method: zlib
            body.insert(body.end(), z.begin(), z.end());
            put_chunk(out, "iCCP", body);
        }
    }
    if (m.has_resolution()) {
        body.clear();
        put_be32(body, static_cast<std::uint32_t>(std::lround(m.dpi_x / 0.0254)));
        put_be32(body, static_cast<std::uint32_t>(std::lround(m.dpi_y / 0.0254)));
        body.push_back(1);
        put_chunk(out, "pHYs", body);
    }
    if (!m.exif.empty()) put_chunk(out, "eXIf", m.exif);
    auto itxt = [&](const std::string& key, const std::string& value) {
        body.assign(key.begin(), key.end());
        const std::uint8_t fields[] = {0, 0, 0, 0, 0};  // NUL, uncompressed, method, empty language, empty key
        body.insert(body.end(), fields, fields + 5);
        body.insert(body.end(), value.begin(), value.end());
        put_chunk(out, "iTXt", body);
    };
    if (!m.xmp.empty()) itxt(kXmpKey, m.xmp);
    // tEXt holds Latin-1; a comment with other bytes than printable ASCII goes to iTXt (UTF-8).
    for (const std::string& c : m.comments) {
        bool ascii = true;
        for (unsigned char ch : c) ascii = ascii && ch < 0x80;
        if (ascii) {
            static const char key[] = "Comment";
            body.assign(key, key + sizeof key);
            body.insert(body.end(), c.begin(), c.end());
            put_chunk(out, "tEXt", body);
        } else {
            itxt("Comment", c);
        }
    }
    return out;
}

}  // namespace cli
