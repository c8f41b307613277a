// imghist — batches of image views (imghist/image_batch.hpp).
#include "imghist/image_batch.hpp"

#include <cstdint>
#include <utility>

namespace imghist {

ImageBatch ImageBatch::uniform(const ImageView& first, std::size_t count) {
    return uniform(first, count, static_cast<std::ptrdiff_t>(first.pitch * static_cast<std::size_t>(first.height)));
}

ImageBatch ImageBatch::uniform(const ImageView& first, std::size_t count, std::ptrdiff_t image_stride) {
    ImageBatch b;
    b.uniform_ = true;
    b.first_ = first;
    b.count_ = count;
    b.stride_ = image_stride;
    return b;
}

ImageBatch ImageBatch::list(std::vector<ImageView> views) {
    ImageBatch b;
    b.views_ = std::move(views);
    return b;
}

ImageBatch ImageBatch::list(const ImageView* views, std::size_t count) {
    return list(views ? std::vector<ImageView>(views, views + count) : std::vector<ImageView>());
}

ImageView ImageBatch::operator[](std::size_t i) const noexcept {
    if (!uniform_) return views_[i];
    ImageView v = first_;
    // Unsigned arithmetic wraps instead of overflowing; the batch's validation refuses strides whose images
    // would leave the address space.
    const auto base = reinterpret_cast<std::uintptr_t>(first_.data);
    v.data = reinterpret_cast<const void*>(base + static_cast<std::uintptr_t>(i) * static_cast<std::uintptr_t>(stride_));
    return v;
}

}  // namespace imghist
