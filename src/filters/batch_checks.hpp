// imghist filters — the checks of a filter batch and the batch they leave (batch_checks.cpp).
#pragma once

#include <cstddef>
#include <vector>

#include "filters/batch.hpp"
#include "imghist/image_batch.hpp"

namespace imghist::detail {

/// A checked batch: the views of both sides, and whether they are uniform (DeviceBatch).
struct PreparedBatch {
    std::vector<ImageView> src, dst;
    bool uniform = false;
    std::ptrdiff_t src_stride = 0, dst_stride = 0;

    std::size_t size() const noexcept { return src.size(); }
    bool empty() const noexcept { return src.empty(); }
    const ImageView& first() const noexcept { return src[0]; }
    /// The batch as the CUDA backend takes it (views it points into stay owned here).
    DeviceBatch device() const;
};

/// Checks src and dst as batch_filters.hpp states (equal counts; every pair as the single calls check it, the
/// message naming the image; one sample type, channel count and location; no destination overlapping another
/// destination or another image's source) and returns them.
PreparedBatch prepare_batch(const ImageBatch& src, const ImageBatch& dst, const char* op);

}  // namespace imghist::detail
