// Internal: the core's histogram of a device image, enqueued with a workspace the caller already holds —
// what CudaHistogrammer::compute runs, for the filters' device pipelines (histogram -> table or threshold ->
// apply on one stream).
#pragma once

#include "imghist/histogram.hpp"
#include "imghist/internal/export.hpp"
#include "imghist/internal/workspace.hpp"

namespace imghist::detail {

/// Histogram of device image `image` into `out` (device or mapped pinned memory), enqueued on ws.stream();
/// the same checks and kernels as CudaHistogrammer::compute with the tuning table's shape.
IMGHIST_INTERNAL void cuda_histogram(Workspace& ws, const ImageView& image, const BinSpec& spec,
                                     const DeviceHistogramView& out, const AsyncOptions& options = {});

/// One launch for a batch of device images (CudaHistogrammer::computeBatch) on ws.stream().
IMGHIST_INTERNAL void cuda_histogram_batch(Workspace& ws, const ImageView* images, std::size_t count,
                                           const BinSpec& spec, const DeviceHistogramView* out, bool accumulate,
                                           const ImageView* masks);

}  // namespace imghist::detail
