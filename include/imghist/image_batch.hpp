// imghist — batches of image views: N images of one geometry at equal distances (a (N, H, W[, C]) array),
// or a list of views of any sizes.
//
// A batch never allocates or frees the images it describes. Every image of a batch has the same sample type,
// channel count and location (host or device); a list's images may differ in width, height and pitch.
//
// How arrays map onto it:
//   - A C-contiguous (N, H, W) or (N, H, W, C) array of samples at `base` (NumPy, CuPy, torch, DLPack):
//       ImageBatch::uniform(ImageView::device(base, W, H, type, C, strides[1]), N, strides[0])
//     with strides in bytes (strides[2] must be the pixel size and strides[3], if any, the sample size). A
//     strided array (a slice of a larger one, every k-th frame, a ROI of every frame) maps the same way: the
//     view of image 0 (its pointer, pitch and ROI) and the distance between two images. A distance of 0 is a
//     broadcast source (one image used N times); a destination must not repeat an image.
//   - A list of arrays or of cv::Mat / GpuMat: ImageBatch::list(views).
// A list whose views happen to be equally spaced copies of one geometry is run as a uniform batch.
#pragma once

#include "imghist/export.hpp"

#include <cstddef>
#include <vector>

#include "imghist/image.hpp"

namespace imghist {

class IMGHIST_API ImageBatch {
public:
    /// An empty batch.
    ImageBatch() = default;

    /// `count` images of `first`'s geometry, packed: image i starts at first.data + i * pitch * height.
    static ImageBatch uniform(const ImageView& first, std::size_t count);
    /// `count` images of `first`'s geometry, image i at first.data + i * image_stride bytes (any sign; 0
    /// repeats image 0, which only a source may do).
    static ImageBatch uniform(const ImageView& first, std::size_t count, std::ptrdiff_t image_stride);
    /// The given views (copied into the batch), one image each.
    static ImageBatch list(std::vector<ImageView> views);
    static ImageBatch list(const ImageView* views, std::size_t count);

    std::size_t size() const noexcept { return uniform_ ? count_ : views_.size(); }
    bool empty() const noexcept { return size() == 0; }
    /// True for a batch made by uniform() (lists are not, even when equally spaced).
    bool is_uniform() const noexcept { return uniform_; }
    /// Image i (i < size()).
    ImageView operator[](std::size_t i) const noexcept;
    /// uniform(): image 0 and the distance in bytes between two images.
    const ImageView& first() const noexcept { return first_; }
    std::ptrdiff_t image_stride() const noexcept { return stride_; }
    /// list(): the views.
    const std::vector<ImageView>& views() const noexcept { return views_; }

private:
    bool uniform_ = false;
    ImageView first_{};
    std::ptrdiff_t stride_ = 0;
    std::size_t count_ = 0;
    std::vector<ImageView> views_;
};

}  // namespace imghist
