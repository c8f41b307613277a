// Internal: validation shared by every entry point, and the CUDA backend's host-facing calls.
#pragma once

#include <cstdint>
#include <vector>

#include "binning.hpp"
#include "imghist/histogram.hpp"

namespace imghist::detail {

/// Throws Error(InvalidArgument) with a precise message when the view cannot be read.
void validate_image(const ImageView& img, const char* what = "image");
/// The same conditions as validate_image, without building any message (for per-image checks in batches:
/// the message is built only when this says false).
bool image_valid(const ImageView& img) noexcept;
/// Validates a mask against its image.
void validate_mask(const ImageView& mask, const ImageView& img);

/// CUDA backend, host results: adds the histogram of `image` (host or device view) into counts / oor.
void cuda_histogram_to_host(const ImageView& image, const ImageView* mask, const BinSpec& spec,
                            std::uint64_t* counts, std::uint64_t* oor, int device, Stream stream);
/// CUDA backend, host results for a batch (one launch): adds into hists[i].
void cuda_batch_to_host(const std::vector<ImageView>& images, const std::vector<ImageView>& masks,
                        const BinSpec& spec, std::vector<Histogram>& hists, int device, Stream stream);

}  // namespace imghist::detail
