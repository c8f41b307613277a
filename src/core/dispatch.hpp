// Internal: the dispatch layer's view of the CUDA backend's host-result calls (implemented in
// cuda/runtime/host_results.cu, or by no_cuda.cpp in a build without CUDA), and the checks every entry point shares.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/binning.hpp"
#include "imghist/histogram.hpp"
#include "core/ycbcr_rgb.hpp"
#include "core/checks.hpp"  // validation, shared with the filters

namespace imghist::detail {

/// CUDA backend, host results: adds the histogram of `image` (host or device view) into counts / oor.
void cuda_histogram_to_host(const ImageView& image, const ImageView* mask, const BinSpec& spec,
                            std::uint64_t* counts, std::uint64_t* oor, int device, Stream stream);
/// Whether split_histogram_to_host takes this image: a pageable host image without a mask, of at least
/// policy::Constants::split_min_bytes and at most what the pinned chunks hold (64 MiB), with a device present.
bool split_count_eligible(const ImageView& image, const ImageView* mask);
/// Adds the histogram of host image `image` into counts / oor, counted on the device and on CPU threads at
/// once: rows [0, g) are staged to the device while the other threads count rows [g, height); g follows the
/// measured balance of the two sides (see host_results.cu). cpu_threads: the thread budget (0 = all).
void split_histogram_to_host(const ImageView& image, const BinSpec& spec, std::uint64_t* counts, std::uint64_t* oor,
                             int device, Stream stream, int cpu_threads);
/// CUDA backend of calc_hist_ycbcr_batch (device planes): 3 x 256 value counts (R, G, B) per image, one launch.
std::vector<std::uint64_t> cuda_ycbcr_value_counts(const std::vector<YccPlanesView>& images, int device, Stream stream);
/// CUDA backend, host results for a batch (one launch): adds into hists[i].
void cuda_batch_to_host(const std::vector<ImageView>& images, const std::vector<ImageView>& masks,
                        const BinSpec& spec, std::vector<Histogram>& hists, int device, Stream stream);

}  // namespace imghist::detail
