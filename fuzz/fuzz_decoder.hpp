// One decoder under libFuzzer: the input goes through decode_image (the entry point the program uses) when
// it is sniffed as the target's format; inputs of other formats are skipped so each target stays on its
// decoder. A decoder may refuse an input only with imghist::Error (a clear message); anything else
// (a crash, a sanitizer report, another exception) is a finding. A decoded image must have the shape its
// dimensions promise, and every byte of it is read (so uninitialised or out-of-bounds pixels show up under
// the sanitizers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "io/codecs/codec.hpp"
#include "io/errors.hpp"

namespace fuzz {

/// Small enough that a case never takes long, large enough for every code path.
inline cli::DecodeOptions options() {
    cli::DecodeOptions o;
    o.limits.max_pixels = std::uint64_t(1) << 22;
    return o;
}

inline unsigned checksum(const cli::Image& img) {
    unsigned s = 0;
    for (std::size_t i = 0; i < img.bytes(); ++i) s += img.data()[i];
    return s;
}

/// Decodes `data` as `format` (named `name`); returns the image, empty when refused.
inline cli::Image decode(const std::uint8_t* data, std::size_t size, cli::Format format, const char* name) {
    cli::Bytes bytes(data, data + size);
    if (cli::sniff_format(bytes, name) != format) return {};
    try {
        cli::Image img = cli::decode_image(bytes, name, options());
        if (img.width() < 1 || img.height() < 1 || img.channels() < 1 || img.channels() > 4) std::abort();
        volatile unsigned sink = checksum(img);
        (void)sink;
        return img;
    } catch (const cli::Error&) {
        return {};
    }
}

}  // namespace fuzz
