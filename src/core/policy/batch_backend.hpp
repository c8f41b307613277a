// Internal: the backend of a filter batch (imghist/batch_filters.hpp) for each requested backend.
#pragma once

#include "imghist/histogram.hpp"
#include "imghist/image.hpp"

namespace imghist::detail {

/// The backend a filter batch whose images are in `location` runs on. Device batches run on CUDA (a request
/// for the CPU is refused, as for single images); host batches run on the requested backend, and for
/// Backend::Auto on the CPU: a host batch through the device pays its upload and download, which costs more
/// than the table passes themselves for images decoded on the host (docs/DESIGN.md section 5, the CLI's
/// `--device cuda` record). Throws Error(NoDevice) for CUDA without a device.
Backend batch_backend(Backend requested, Location location);

}  // namespace imghist::detail
