// Internal: the threaded CPU backend. Same answers as the CUDA kernels, bit for bit.
#pragma once

#include <cstdint>

#include "core/binning.hpp"
#include "imghist/image.hpp"

namespace imghist::detail {

/// Adds the histogram of `image` (host view, validated) into counts[c * bins + bin] and oor[c].
/// `mask` may be null. threads = 0: all hardware threads.
void cpu_histogram(const ImageView& image, const ImageView* mask, const BinParams& bins, std::uint64_t* counts,
                   std::uint64_t* oor, int threads);

}  // namespace imghist::detail
