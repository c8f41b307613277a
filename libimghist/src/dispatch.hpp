// Internal: the dispatch layer's view of the CUDA backend's host-result calls (implemented in
// cuda/host_paths.cu, or by no_cuda.cpp in a build without CUDA), and the checks every entry point shares.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "binning.hpp"
#include "imghist/histogram.hpp"
#include "imghist/internal/checks.hpp"  // validation, shared with the filters

namespace imghist::detail {

/// CUDA backend, host results: adds the histogram of `image` (host or device view) into counts / oor.
void cuda_histogram_to_host(const ImageView& image, const ImageView* mask, const BinSpec& spec,
                            std::uint64_t* counts, std::uint64_t* oor, int device, Stream stream);
/// CUDA backend, host results for a batch (one launch): adds into hists[i].
void cuda_batch_to_host(const std::vector<ImageView>& images, const std::vector<ImageView>& masks,
                        const BinSpec& spec, std::vector<Histogram>& hists, int device, Stream stream);

}  // namespace imghist::detail
