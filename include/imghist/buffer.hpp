// imghist — owning memory: device buffers, pinned host buffers, device images.
//
// These are the owning counterparts of ImageView. They let users of an OpenCV build without CUDA (such as
// Debian's, where cv::cuda::GpuMat cannot allocate) hold images on the GPU: allocate a DeviceImage, view
// it as an ImageView, or as a cv::cuda::GpuMat through imghist/opencv.hpp. Rows of a DeviceImage are
// padded to a multiple of 256 bytes (cudaMallocPitch).
#pragma once

#include "imghist/export.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>

#include "imghist/histogram.hpp"
#include "imghist/image.hpp"

namespace imghist {

namespace detail {
/// What DeviceBuffer and PinnedBuffer share: an owned (pointer, size) that moves and never copies, and its
/// accessors. The two differ only in how they allocate and free, which stays in their own out-of-line members
/// (the exported ABI); this base adds no members beyond the two they always had, so their layout is unchanged.
class OwnedBytes {
public:
    void* data() noexcept { return ptr_; }
    const void* data() const noexcept { return ptr_; }
    template <class T> T* as() noexcept { return static_cast<T*>(ptr_); }
    std::size_t size() const noexcept { return bytes_; }

protected:
    OwnedBytes() noexcept = default;
    ~OwnedBytes() = default;
    OwnedBytes(const OwnedBytes&) = delete;
    OwnedBytes& operator=(const OwnedBytes&) = delete;
    /// Takes o's allocation and leaves o empty; the caller has freed its own first.
    void take(OwnedBytes& o) noexcept {
        ptr_ = std::exchange(o.ptr_, nullptr);
        bytes_ = std::exchange(o.bytes_, 0);
    }
    /// The move assignment of either buffer: frees its own allocation (Buffer::reset) and takes o's.
    template <class Buffer>
    static Buffer& move_assign(Buffer& self, Buffer& o) noexcept {
        if (&self != &o) {
            self.reset();
            self.take(o);
        }
        return self;
    }

    void* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};
}  // namespace detail

/// Untyped device allocation (cudaMalloc / cudaFree), move-only. Throws Error(OutOfMemory | NoDevice).
class IMGHIST_API DeviceBuffer : public detail::OwnedBytes {
public:
    DeviceBuffer() noexcept = default;
    explicit DeviceBuffer(std::size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(DeviceBuffer&& o) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;

    /// Grows (never shrinks) to at least `bytes`; contents are not kept.
    void reserve(std::size_t bytes);
    void reset() noexcept;

    /// Copies; with a stream the copy is asynchronous on it, otherwise the calls block.
    void upload(const void* host, std::size_t bytes, Stream stream = nullptr);
    void download(void* host, std::size_t bytes, Stream stream = nullptr) const;
    void fill_zero(Stream stream = nullptr);
};

/// Page-locked host memory (cudaMallocHost), for copies that overlap work. Move-only.
class IMGHIST_API PinnedBuffer : public detail::OwnedBytes {
public:
    PinnedBuffer() noexcept = default;
    explicit PinnedBuffer(std::size_t bytes);
    ~PinnedBuffer();
    PinnedBuffer(PinnedBuffer&& o) noexcept;
    PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;

    /// Grows (never shrinks) to at least `bytes`; contents are not kept.
    void reserve(std::size_t bytes);
    void reset() noexcept;
};

/// An owning pitched image in device memory. Move-only.
class IMGHIST_API DeviceImage {
public:
    DeviceImage() noexcept = default;
    DeviceImage(int width, int height, SampleType type = SampleType::U8, int channels = 1);
    ~DeviceImage();
    DeviceImage(DeviceImage&& o) noexcept;
    DeviceImage& operator=(DeviceImage&& o) noexcept;
    DeviceImage(const DeviceImage&) = delete;
    DeviceImage& operator=(const DeviceImage&) = delete;

    /// (Re)allocates when the shape differs; keeps the allocation when it is the same.
    void create(int width, int height, SampleType type = SampleType::U8, int channels = 1);
    void release() noexcept;

    ImageView view() const noexcept;
    void* data() noexcept { return ptr_; }
    const void* data() const noexcept { return ptr_; }
    int width() const noexcept { return width_; }
    int height() const noexcept { return height_; }
    int channels() const noexcept { return channels_; }
    SampleType type() const noexcept { return type_; }
    std::size_t pitch() const noexcept { return pitch_; }
    bool empty() const noexcept { return width_ == 0 || height_ == 0; }

    /// Copies a host image of the same shape in (any pitch); asynchronous on `stream` when given
    /// (the host memory must then stay valid until the stream reaches the copy).
    void upload(const ImageView& host, Stream stream = nullptr);
    /// Copies to a host image of the same shape (any pitch).
    void download(void* host, std::size_t host_pitch, Stream stream = nullptr) const;

private:
    void* ptr_ = nullptr;
    std::size_t pitch_ = 0;
    int width_ = 0, height_ = 0, channels_ = 1;
    SampleType type_ = SampleType::U8;
};

}  // namespace imghist
