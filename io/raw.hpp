// imghist io — raw sample files: a plain array of native-endian samples (u8, u16, i32 or f32), no header.
#pragma once

#include <string>

#include "imghist/histogram.hpp"
#include "io/fileio.hpp"
#include "io/histio.hpp"

namespace cli {

imghist::SampleType parse_dtype(const std::string& s);
/// Histogram of every sample of a raw file of at most `max_input` bytes. Errors name the file (size not a
/// multiple of the sample size, empty file, unreadable, too large).
HistResult raw_histogram(const std::string& path, imghist::SampleType type, const imghist::BinSpec& spec,
                         const imghist::Options& options, std::uint64_t max_input);
/// The same for a file already read; `name` names it in errors.
HistResult raw_histogram(const Bytes& data, const std::string& name, imghist::SampleType type,
                         const imghist::BinSpec& spec, const imghist::Options& options);
/// A view of `count` samples laid out as rows (the library spreads rows over threads); the remainder that
/// does not fill a row is returned as a second one-row view in `tail` (tail.width == 0 when none).
imghist::ImageView raw_view(const void* data, std::size_t count, imghist::SampleType type, imghist::ImageView& tail);

}  // namespace cli
