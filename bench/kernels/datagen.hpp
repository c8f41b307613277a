// imghist-bench — host-side data generators (fixed seeds, the same bytes on every run and machine).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "workloads.hpp"

namespace bench {

/// The sample photograph, decoded once: gray, RGB and RGBA (alpha 255) planes of w x h pixels.
struct Photo {
    int width = 0, height = 0;
    std::vector<std::uint8_t> gray, rgb, rgba;
    std::string path;
    bool ok() const { return width > 0 && height > 0; }
};

/// Decodes `path` (PNG). Returns false and sets `why` when the file is missing or the build lacks a decoder.
bool load_photo(const std::string& path, Photo& photo, std::string& why);

/// Candidate locations of the sample photograph, most specific first (see bench/README.md).
std::vector<std::string> photo_candidates(const std::string& explicit_path, const std::string& argv0);

/// Fills `out` with `rows` tightly packed rows of `width` pixels of workload `w` drawn from data set `d`.
///
/// Values live in the workload's bin range [low, high):
///   uniform   every representable value in the range equally likely;
///   constant  the middle of the range (128 for 8-bit samples);
///   gauss4/32 normal around the middle with sigma = 4 or 32 *bins* (gray levels for the 256-bin 8-bit
///             workloads), rounded to the sample type and clamped to the range;
///   photo     the sample photograph tiled: 8-bit workloads take its gray / RGB / RGBA pixels; 16-bit,
///             int32 and float workloads scale its gray level to the range and fill the low bits with a
///             fixed dither, so the values spread like a real high-depth image.
/// `tile_rows` restarts the photograph's rows every that many rows (a batch of small images); 0 = never.
/// Generation is split across host threads by rows; each row has its own seed, so the output does not
/// depend on the number of threads.
void generate(const Workload& w, Data d, const Photo& photo, int width, std::size_t rows, std::size_t tile_rows,
              void* out, std::uint64_t seed = 0x1a2b3c4d5e6f7081ull);

}  // namespace bench
