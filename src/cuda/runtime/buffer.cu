// Owning device / pinned memory and device queries.
#include <cuda_runtime.h>

#include "cuda/runtime/cuda_error.hpp"
#include "core/policy/backend_choice.hpp"
#include "core/dispatch.hpp"
#include "imghist/buffer.hpp"
#include "imghist/histogram.hpp"

namespace imghist {

bool built_with_cuda() noexcept { return true; }

int cuda_device_count() noexcept {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

std::string cuda_device_name(int ordinal) {
    if (ordinal < 0 || ordinal >= cuda_device_count()) return "";
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, ordinal) != cudaSuccess) return "";
    return prop.name;
}

namespace detail {
bool host_memory_is_pinned(const void* p) noexcept {
    if (p == nullptr) return false;
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return a.type == cudaMemoryTypeHost;
}
}  // namespace detail

namespace {
void require_device() {
    if (cuda_device_count() == 0) throw Error(ErrorCode::NoDevice, "no CUDA device is available");
}

/// Whether a grow-only buffer of `size` bytes at `ptr` must allocate to hold `bytes` (there is then a device).
/// DeviceBuffer and PinnedBuffer share this; they differ in the allocator only.
bool must_grow(const void* ptr, std::size_t size, std::size_t bytes) {
    if (bytes <= size && ptr != nullptr) return false;
    if (bytes == 0) return false;
    require_device();
    return true;
}
}  // namespace

// ---- DeviceBuffer ----------------------------------------------------------------------------------------
void DeviceBuffer::reserve(std::size_t bytes) {
    if (!must_grow(ptr_, bytes_, bytes)) return;
    reset();
    IMGHIST_CUDA(cudaMalloc(&ptr_, bytes));
    bytes_ = bytes;
}
void DeviceBuffer::reset() noexcept {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
}
void DeviceBuffer::upload(const void* host, std::size_t bytes, Stream stream) {
    if (bytes > bytes_) throw Error(ErrorCode::InvalidArgument, "DeviceBuffer::upload: more bytes than the buffer holds");
    if (bytes == 0) return;
    if (stream) IMGHIST_CUDA(cudaMemcpyAsync(ptr_, host, bytes, cudaMemcpyHostToDevice, stream));
    else IMGHIST_CUDA(cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice));
}
void DeviceBuffer::download(void* host, std::size_t bytes, Stream stream) const {
    if (bytes > bytes_) throw Error(ErrorCode::InvalidArgument, "DeviceBuffer::download: more bytes than the buffer holds");
    if (bytes == 0) return;
    if (stream) IMGHIST_CUDA(cudaMemcpyAsync(host, ptr_, bytes, cudaMemcpyDeviceToHost, stream));
    else IMGHIST_CUDA(cudaMemcpy(host, ptr_, bytes, cudaMemcpyDeviceToHost));
}
void DeviceBuffer::fill_zero(Stream stream) {
    if (!ptr_) return;
    if (stream) IMGHIST_CUDA(cudaMemsetAsync(ptr_, 0, bytes_, stream));
    else IMGHIST_CUDA(cudaMemset(ptr_, 0, bytes_));
}

// ---- PinnedBuffer ----------------------------------------------------------------------------------------
void PinnedBuffer::reserve(std::size_t bytes) {
    if (!must_grow(ptr_, bytes_, bytes)) return;
    reset();
    IMGHIST_CUDA(cudaMallocHost(&ptr_, bytes));
    bytes_ = bytes;
}
void PinnedBuffer::reset() noexcept {
    if (ptr_) cudaFreeHost(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
}

// ---- DeviceImage -----------------------------------------------------------------------------------------
void DeviceImage::create(int width, int height, SampleType type, int channels) {
    detail::validate_device_image_shape(width, height, channels);
    if (ptr_ && width == width_ && height == height_ && type == type_ && channels == channels_) return;
    release();
    width_ = width;
    height_ = height;
    type_ = type;
    channels_ = channels;
    if (width == 0 || height == 0) return;
    require_device();
    const std::size_t row = static_cast<std::size_t>(width) * channels * sample_size(type);
    IMGHIST_CUDA(cudaMallocPitch(&ptr_, &pitch_, row, static_cast<std::size_t>(height)));
}
void DeviceImage::release() noexcept {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    pitch_ = 0;
    width_ = height_ = 0;
}
ImageView DeviceImage::view() const noexcept {
    return ImageView::device(ptr_, width_, height_, type_, channels_, pitch_ ? pitch_ : 1);
}
void DeviceImage::upload(const ImageView& host, Stream stream) {
    if (host.width != width_ || host.height != height_ || host.type != type_ || host.channels != channels_)
        throw Error(ErrorCode::InvalidArgument, "DeviceImage::upload: the host image has a different shape");
    if (empty()) return;
    const std::size_t row = host.row_bytes();
    const auto kind = host.location == Location::Device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
    IMGHIST_CUDA(cudaMemcpy2DAsync(ptr_, pitch_, host.data, host.pitch, row, height_, kind, stream));
    if (!stream) IMGHIST_CUDA(cudaStreamSynchronize(stream));
}
void DeviceImage::download(void* host, std::size_t host_pitch, Stream stream) const {
    if (empty()) return;
    const std::size_t row = view().row_bytes();
    if (host_pitch == 0) host_pitch = row;
    IMGHIST_CUDA(cudaMemcpy2DAsync(host, host_pitch, ptr_, pitch_, row, height_, cudaMemcpyDeviceToHost, stream));
    if (!stream) IMGHIST_CUDA(cudaStreamSynchronize(stream));
}

}  // namespace imghist
