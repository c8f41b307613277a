#include "io/codecs/webp_quality.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace cli {
namespace {

std::uint32_t le32(const std::uint8_t* p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (std::uint32_t(p[3]) << 24); }

/// The boolean entropy decoder of RFC 6386 (section 7.3); reads past the end as zeros, so a truncated
/// header gives some value, never a read outside the data.
class BoolDecoder {
public:
    BoolDecoder(const std::uint8_t* p, std::size_t n) : p_(p), end_(p + n) {
        value_ = (next() << 8) | next();
    }
    bool bit(unsigned prob = 128) {
        const std::uint32_t split = 1 + (((range_ - 1) * prob) >> 8);
        const std::uint32_t big_split = split << 8;
        bool b;
        if (value_ >= big_split) {
            b = true;
            range_ -= split;
            value_ -= big_split;
        } else {
            b = false;
            range_ = split;
        }
        while (range_ < 128) {
            value_ <<= 1;
            range_ <<= 1;
            if (++bit_count_ == 8) {
                bit_count_ = 0;
                value_ |= next();
            }
        }
        return b;
    }
    int literal(int bits) {
        int v = 0;
        while (bits--) v = (v << 1) | (bit() ? 1 : 0);
        return v;
    }
    int signed_literal(int bits) {
        const int v = literal(bits);
        return bit() ? -v : v;
    }
    /// An optional signed field: a flag, then the value when the flag is set (0 otherwise).
    int optional_signed(int bits) { return bit() ? signed_literal(bits) : 0; }

private:
    std::uint32_t next() { return p_ < end_ ? *p_++ : 0; }
    const std::uint8_t* p_;
    const std::uint8_t* end_;
    std::uint32_t value_ = 0, range_ = 255;
    int bit_count_ = 0;
};

/// The "VP8 " chunk's payload of a RIFF/WEBP file; null when the file has none (lossless, or not WebP).
const std::uint8_t* vp8_payload(const std::uint8_t* data, std::size_t size, std::size_t& payload_size) {
    if (size < 20 || std::string_view(reinterpret_cast<const char*>(data), 4) != "RIFF" ||
        std::string_view(reinterpret_cast<const char*>(data + 8), 4) != "WEBP")
        return nullptr;
    std::size_t at = 12;
    while (at + 8 <= size) {
        const std::string_view id(reinterpret_cast<const char*>(data + at), 4);
        const std::size_t len = le32(data + at + 4);
        if (len > size - at - 8) return nullptr;
        if (id == "VP8 ") {
            payload_size = len;
            return data + at + 8;
        }
        if (id == "VP8L" || id == "ANIM") return nullptr;
        at += 8 + len + (len & 1);
    }
    return nullptr;
}

}  // namespace

int webp_lossy_quality(const std::uint8_t* data, std::size_t size) noexcept {
    std::size_t n = 0;
    const std::uint8_t* vp8 = vp8_payload(data, size, n);
    // A key frame: 3-byte tag, start code 9d 01 2a, 4 bytes of size, then the first partition.
    if (!vp8 || n < 11 || (vp8[0] & 1) != 0 || vp8[3] != 0x9d || vp8[4] != 0x01 || vp8[5] != 0x2a) return 0;
    const std::size_t first_part = (vp8[0] | (vp8[1] << 8) | (std::size_t(vp8[2]) << 16)) >> 5;
    BoolDecoder d(vp8 + 10, std::min(first_part, n - 10));
    d.literal(2);  // colour space, clamping type
    int segment_q[4] = {0, 0, 0, 0};
    int tree[3] = {255, 255, 255};  // the segment tree's probabilities (255 when not sent)
    bool segments = false, absolute = false;
    if (d.bit()) {  // segmentation enabled (RFC 6386, 9.3)
        const bool update_map = d.bit();
        if (d.bit()) {  // segment feature data
            segments = true;
            absolute = d.bit();
            for (int& q : segment_q) q = d.optional_signed(7);
            for (int i = 0; i < 4; ++i) d.optional_signed(6);  // loop filter levels
        }
        if (update_map)
            for (int& p : tree)
                if (d.bit()) p = d.literal(8);
    }
    d.literal(1 + 6 + 3);  // filter type, loop filter level, sharpness
    if (d.bit() && d.bit())  // loop filter deltas enabled and updated (9.6)
        for (int i = 0; i < 8; ++i) d.optional_signed(6);
    d.literal(2);  // log2 of the number of DCT partitions
    const int base = d.literal(7);  // y_ac_qi (9.6)
    // Each segment's share of the macroblocks, from the probabilities of the segment tree (libwebp sets them
    // from its counts: P(segment 0 or 1) = tree[0] / 255, ...).
    const double p0 = tree[0] / 255.0, p1 = tree[1] / 255.0, p2 = tree[2] / 255.0;
    const double share[4] = {p0 * p1, p0 * (1 - p1), (1 - p0) * p2, (1 - p0) * (1 - p2)};
    double log_sum = 0, weight = 0;
    for (int s = 0; s < (segments ? 4 : 1); ++s) {
        const int q = std::clamp(segments ? (absolute ? segment_q[s] : base + segment_q[s]) : base, 0, 127);
        const double w = segments ? share[s] : 1.0;
        // libwebp truncates 127·(1 − c) to the index: the middle of its interval, index + 0.5, is nearer c.
        log_sum += w * std::log(std::max(1.0 - (q + 0.5) / 127.0, 1e-3));
        weight += w;
    }
    if (weight <= 0) return 0;
    const double c = std::exp(log_sum / weight);
    const double linear = c * c * c;
    const double quality = linear < 0.5 ? linear * 1.5 : (linear + 1) / 2;
    return std::clamp(static_cast<int>(std::lround(quality * 100)), 1, 100);
}

}  // namespace cli
