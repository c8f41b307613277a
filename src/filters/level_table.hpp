// imghist filters — internal interfaces of the level-table operations (contrast stretch, histogram
// matching, multi-level Otsu): full-range histograms on either backend, and the table pass for u8 and u16.
#pragma once

#include <cstdint>
#include <vector>

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

/// The target's points of histogram matching (np.interp's xp and fp): the cumulative quantile and the level
/// at each level the target holds, in level order. Used by match_table and by the device's one-launch
/// matching to a host histogram. Throws InvalidArgument for an empty target.
struct MatchPoints {
    std::vector<double> xp;
    std::vector<int> fp;
};
/// The number of samples a target histogram counts; throws Error(InvalidArgument) when it counts none
/// (matching to it is undefined).
std::uint64_t target_total(const std::uint64_t* target_hist, int bins);
MatchPoints match_points(const std::uint64_t* target_hist, int bins);

// ---- CUDA backend (device views) ----------------------------------------------------------------------------
/// Applies 65536-entry tables (one per channel) to a u16 device image, enqueued on `stream`.
void cuda_apply_table16(const ImageView& src, const ImageView& dst, const LevelTable* tables, int device,
                        Stream stream);
/// Luma histogram of a device BGR(A) image into `hist` (host, levels entries); waits for `stream`.
void cuda_luma_histogram(const ImageView& src, std::uint64_t* hist, int device, Stream stream);


// 8-bit device images, whole operation on the device (no host round trip; asynchronous on `stream`): one
// cooperative launch for images up to policy::one_launch_max_bytes() (cuda/fused.hpp; not multi-Otsu), else
// the histogram, then one apply kernel whose blocks derive the tables from the counts themselves.
/// True when src takes these paths: a device view of u8 samples with fewer than 2^32 pixels (32-bit counts).
bool cuda_level_path_u8(const ImageView& src);
/// stretch_table for every channel (luma: one table from the luma histogram for B, G, R; alpha copied);
/// q_lo = low_percent / 100, q_hi = (100 - high_percent) / 100, rounded as stretch_table rounds them.
void cuda_stretch_u8(const ImageView& src, const ImageView& dst, double q_lo, double q_hi, bool luma, int device,
                     Stream stream);
/// match_table per channel against a device reference image (same channels) or a host target histogram
/// (1 or src.channels channels of 256 non-empty bins) — exactly one of the two is non-null.
void cuda_match_u8(const ImageView& src, const ImageView* reference, const Histogram* target, const ImageView& dst,
                   int device, Stream stream);
/// Multi-Otsu of a 1-channel image: histogram, the search on the device, the label pass; waits for the
/// search (the label pass completes in stream order). Returns true with `thresholds` set when the device found them; false when the host must run
/// multiotsu_thresholds on `hist` (256 counts, filled either way) and apply the labels itself (the device
/// then wrote nothing to dst): too few distinct values (the host raises the error) or too many
/// near-equal candidates for the device's search.
bool cuda_multiotsu_u8(const ImageView& src, const ImageView& dst, int classes, std::vector<int>& thresholds,
                       std::uint64_t* hist, int device, Stream stream);

}  // namespace imghist::detail
