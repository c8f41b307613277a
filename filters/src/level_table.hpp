// imghist filters — internal interfaces of the level-table operations (contrast stretch, histogram
// matching, multi-level Otsu): full-range histograms on either backend, and the table pass for u8 and u16.
#pragma once

#include <cstdint>

#include "imghist/filters.hpp"
#include "imghist/histogram.hpp"

namespace imghist::detail {

/// Size, type and overlap checks shared by every filter (defined in filters.cpp).
void check_pair(const ImageView& src, const ImageView& dst, const char* op);

/// 256 for u8, 65536 for u16; throws Unsupported (naming `op`) for other sample types.
int level_count(SampleType type, const char* op);

/// Histogram over every level of src's type, one per channel, on the backend the options choose (device
/// views: on the device, copied back; the call waits for options.stream).
Histogram level_histogram(const ImageView& src, const FilterOptions& options);

/// Histogram of the luma of a 3- or 4-channel BGR(A) image (see stretch_contrast), one channel.
Histogram luma_histogram(const ImageView& src, const FilterOptions& options);

// ---- CUDA backend (device views) ----------------------------------------------------------------------------
/// Applies 65536-entry tables (one per channel) to a u16 device image, enqueued on `stream`.
void cuda_apply_table16(const ImageView& src, const ImageView& dst, const LevelTable* tables, int device,
                        Stream stream);
/// Luma histogram of a device BGR(A) image into `hist` (host, levels entries); waits for `stream`.
void cuda_luma_histogram(const ImageView& src, std::uint64_t* hist, int device, Stream stream);

}  // namespace imghist::detail
