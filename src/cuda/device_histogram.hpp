// Internal: the core's histogram of a device image, enqueued with a workspace the caller already holds —
// what CudaHistogrammer::compute runs, for the filters' device pipelines (histogram -> table or threshold ->
// apply on one stream).
#pragma once

#include "imghist/histogram.hpp"
#include "cuda/runtime/workspace.hpp"

namespace imghist::detail {

/// Where a histogram's output lives. Device memory takes the one-pass overwrite (the kernel zeroes the
/// output and adds into it with atomics) up to HistogramLimits::zero_first_max_counters counters, and wider
/// outputs the workspace merge; mapped page-locked host memory is written with plain stores by the last block
/// (device atomics on it would cross the bus, and are not atomic on every platform).
enum class OutputPlace { Device, HostMapped };

/// Histogram of device image `image` into `out`, enqueued on ws.stream(); the same checks and kernels as
/// CudaHistogrammer::compute with the tuning table's shape. `tag` (0: none), for an overwrite of mapped host
/// memory with 64-bit counts: the call's number, which the launch stores in the upper half of every word of
/// the result (counts, then out-of-range counters) when the image has fewer than 2^32 samples, so that a
/// blocking call can read each word as soon as it carries the tag instead of synchronising the stream.
/// Returns whether the launch tags the result; when it does not (nothing to launch, no tag asked for, 2^32
/// samples or more, accumulation), the caller synchronises the stream before reading the result, whose words
/// then hold plain counts.
bool cuda_histogram(Workspace& ws, const ImageView& image, const BinSpec& spec,
                                     const DeviceHistogramView& out, const AsyncOptions& options = {},
                                     OutputPlace place = OutputPlace::Device, unsigned int tag = 0);

/// One launch for a batch of device images (CudaHistogrammer::compute_batch) on ws.stream().
void cuda_histogram_batch(Workspace& ws, const ImageView* images, std::size_t count,
                                           const BinSpec& spec, const DeviceHistogramView* out, bool accumulate,
                                           const ImageView* masks);

}  // namespace imghist::detail
