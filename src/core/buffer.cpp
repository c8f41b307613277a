// The owning buffers' members that are the same with and without CUDA: construction, destruction and moves,
// written once in terms of reserve() / reset() / create() / release(), which the backend defines
// (cuda/runtime/buffer.cu allocates; core/no_cuda.cpp refuses to). In a build without CUDA the pointers stay
// null, so the moves below only carry the sizes there.
#include <utility>

#include "imghist/buffer.hpp"

namespace imghist {

DeviceBuffer::DeviceBuffer(std::size_t bytes) { reserve(bytes); }
DeviceBuffer::~DeviceBuffer() { reset(); }
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept { take(o); }
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept { return move_assign(*this, o); }

PinnedBuffer::PinnedBuffer(std::size_t bytes) { reserve(bytes); }
PinnedBuffer::~PinnedBuffer() { reset(); }
PinnedBuffer::PinnedBuffer(PinnedBuffer&& o) noexcept { take(o); }
PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept { return move_assign(*this, o); }

DeviceImage::DeviceImage(int width, int height, SampleType type, int channels) { create(width, height, type, channels); }
DeviceImage::~DeviceImage() { release(); }
DeviceImage::DeviceImage(DeviceImage&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)),
      pitch_(std::exchange(o.pitch_, 0)),
      width_(std::exchange(o.width_, 0)),
      height_(std::exchange(o.height_, 0)),
      channels_(std::exchange(o.channels_, 1)),
      type_(o.type_) {}
DeviceImage& DeviceImage::operator=(DeviceImage&& o) noexcept {
    if (this != &o) {
        release();
        ptr_ = std::exchange(o.ptr_, nullptr);
        pitch_ = std::exchange(o.pitch_, 0);
        width_ = std::exchange(o.width_, 0);
        height_ = std::exchange(o.height_, 0);
        channels_ = std::exchange(o.channels_, 1);
        type_ = o.type_;
    }
    return *this;
}

}  // namespace imghist
