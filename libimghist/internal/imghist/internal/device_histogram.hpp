// Internal: the core's histogram of a device image, enqueued with a workspace the caller already holds —
// what CudaHistogrammer::compute runs, for the filters' device pipelines (histogram -> table or threshold ->
// apply on one stream).
#pragma once

#include "imghist/histogram.hpp"
#include "imghist/internal/export.hpp"
#include "imghist/internal/workspace.hpp"

namespace imghist::detail {

/// Where a histogram's output lives. Device memory takes the one-pass overwrite (the kernel zeroes the
/// output and adds into it with atomics); mapped page-locked host memory is written with plain stores by
/// the last block (device atomics on it would cross the bus, and are not atomic on every platform).
enum class OutputPlace { Device, HostMapped };

/// For an overwrite of mapped host memory: a page-locked host word that the launch sets to `seq` once the
/// whole result is written (the last-block merge raises it last), so that a blocking call can read the
/// result as soon as it is there instead of synchronising the stream.
struct ResultSignal {
    unsigned int* word = nullptr;
    unsigned int seq = 0;
};

/// Histogram of device image `image` into `out`, enqueued on ws.stream(); the same checks and kernels as
/// CudaHistogrammer::compute with the tuning table's shape. Returns whether the launch raises `signal`
/// (given with OutputPlace::HostMapped and no accumulation); when it does not (nothing to launch, or no
/// signal asked for), the caller synchronises the stream before reading the result.
IMGHIST_INTERNAL bool cuda_histogram(Workspace& ws, const ImageView& image, const BinSpec& spec,
                                     const DeviceHistogramView& out, const AsyncOptions& options = {},
                                     OutputPlace place = OutputPlace::Device, const ResultSignal* signal = nullptr);

/// One launch for a batch of device images (CudaHistogrammer::computeBatch) on ws.stream().
IMGHIST_INTERNAL void cuda_histogram_batch(Workspace& ws, const ImageView* images, std::size_t count,
                                           const BinSpec& spec, const DeviceHistogramView* out, bool accumulate,
                                           const ImageView* masks);

}  // namespace imghist::detail
