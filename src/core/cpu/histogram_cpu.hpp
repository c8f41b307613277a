// Internal: the threaded CPU backend. Same answers as the CUDA kernels, bit for bit.
#pragma once

#include <cstdint>

#include "core/binning.hpp"
#include "imghist/image.hpp"

namespace imghist::detail {

/// Adds the histogram of `image` (host view, validated) into counts[c * bins + bin] and oor[c]; with
/// channel >= 0, of that channel alone into counts[bin] and oor[0] (the other channels are not read).
/// `mask` may be null. threads = 0: all hardware threads.
void cpu_histogram(const ImageView& image, const ImageView* mask, const BinParams& bins, std::uint64_t* counts,
                   std::uint64_t* oor, int threads, int channel = -1);

}  // namespace imghist::detail
