// imghist filters — how the batch filters' passes over the pixels share their blocks among the images of a batch:
// image i gets pass_blocks(its work, unit) blocks (one per `unit` bytes or pixels, at least one), the images' blocks
// follow each other in image order, and a block finds its image from its index: a division for a uniform batch,
// a binary search over the images' first blocks otherwise. Host and device code (the kernels' BatchRef and the
// launch code in cuda/batch_filters.cu); tested on the host (tests/filters/test_batch.cpp).
#pragma once

#include <climits>
#include <cstddef>
#include <string>

#include "core/host_device.hpp"  // IMGHIST_HD
#include "imghist/error.hpp"

namespace imghist::detail {

/// The most blocks one pass launches (a grid's x dimension holds 2^31 - 1).
constexpr std::size_t kMaxPassBlocks = static_cast<std::size_t>(INT_MAX);

/// Blocks of a pass for an image of `work` bytes or pixels: one per `unit` (> 0), at least one.
IMGHIST_HD std::size_t pass_blocks(std::size_t work, std::size_t unit) {
    return work <= unit ? 1 : work / unit + (work % unit != 0);
}

/// The image that block `b` of a pass works on: the last of the `count` images (count > 0) whose first block,
/// images[i].block_begin, is at most b. The first blocks start at 0 and increase strictly (every image has a
/// block), so block b belongs to that image.
template <class Image>
IMGHIST_HD unsigned int image_of_block(const Image* images, unsigned int count, unsigned int b) {
    unsigned int lo = 0, hi = count - 1;
    while (lo < hi) {
        const unsigned int mid = lo + (hi - lo + 1) / 2;
        if (images[mid].block_begin <= b) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/// Lays out a pass over `count` images: set_begin(i, first block of image i) in image order, work(i) giving image
/// i's bytes or pixels; returns the total number of blocks. Error(Unsupported) when the pass would need more
/// than kMaxPassBlocks blocks (checked before each image's first block is handed out, so every first block fits
/// 32 bits).
template <class Work, class SetBegin>
std::size_t lay_out_pass(std::size_t count, std::size_t unit, Work&& work, SetBegin&& set_begin) {
    std::size_t total = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const std::size_t blocks = pass_blocks(work(i), unit);
        if (blocks > kMaxPassBlocks - total)
            throw Error(ErrorCode::Unsupported, "batch filters: the batch needs more than " +
                                                    std::to_string(kMaxPassBlocks) + " blocks in one launch");
        set_begin(i, total);
        total += blocks;
    }
    return total;
}

}  // namespace imghist::detail
