// The CUDA backend of a build without CUDA (IMGHIST_WITH_CUDA=OFF): the same functions as src/cuda/
// provides, for a machine that can never have a device. There are no devices (cuda_device_count() == 0), so
// the dispatch layer never picks this backend and every explicit CUDA request fails with Error(NoDevice);
// the owning device and pinned buffers can be declared, moved and emptied, but not allocated.
#include <string>

#include "core/policy/backend_choice.hpp"
#include "core/dispatch.hpp"
#include "core/no_cuda.hpp"
#include "cuda/launch_shape.hpp"
#include "imghist/buffer.hpp"
#include "imghist/histogram.hpp"
#include "cuda/runtime/staging.hpp"
#include "cuda/runtime/workspace.hpp"

namespace imghist {
namespace detail {
[[noreturn]] void no_cuda(const char* what) {
    throw Error(ErrorCode::NoDevice,
                std::string(what) + ": this build of imghist has no CUDA backend (configured with IMGHIST_WITH_CUDA=OFF)");
}
}  // namespace detail
using detail::no_cuda;

bool built_with_cuda() noexcept { return false; }
int cuda_device_count() noexcept { return 0; }
std::string cuda_device_name(int) { return ""; }
namespace detail {
bool host_memory_is_pinned(const void*) noexcept { return false; }
bool split_count_eligible(const ImageView&, const ImageView*) { return false; }
void split_histogram_to_host(const ImageView&, const BinSpec&, std::uint64_t*, std::uint64_t*, int, Stream, int) {
    no_cuda("split_histogram_to_host");
}
}  // namespace detail

// ---- owning buffers: never hold memory here (core/buffer.cpp builds and moves them) ---------------------------
void DeviceBuffer::reserve(std::size_t bytes) {
    if (bytes != 0) no_cuda("DeviceBuffer");
}
void DeviceBuffer::reset() noexcept {}
void DeviceBuffer::upload(const void*, std::size_t bytes, Stream) {
    if (bytes != 0) no_cuda("DeviceBuffer::upload");
}
void DeviceBuffer::download(void*, std::size_t bytes, Stream) const {
    if (bytes != 0) no_cuda("DeviceBuffer::download");
}
void DeviceBuffer::fill_zero(Stream) {}

void PinnedBuffer::reserve(std::size_t bytes) {
    if (bytes != 0) no_cuda("PinnedBuffer");
}
void PinnedBuffer::reset() noexcept {}

// An empty DeviceImage (0 x N) holds no memory, as in the CUDA build; any other size needs a device.
void DeviceImage::create(int width, int height, SampleType type, int channels) {
    detail::validate_device_image_shape(width, height, channels);
    if (width != 0 && height != 0) no_cuda("DeviceImage");
    width_ = width;
    height_ = height;
    type_ = type;
    channels_ = channels;
}
void DeviceImage::release() noexcept { width_ = height_ = 0; }
ImageView DeviceImage::view() const noexcept { return ImageView::device(nullptr, width_, height_, type_, channels_, 1); }
void DeviceImage::upload(const ImageView& host, Stream) {
    if (host.width != width_ || host.height != height_ || host.type != type_ || host.channels != channels_)
        throw Error(ErrorCode::InvalidArgument, "DeviceImage::upload: the host image has a different shape");
}
void DeviceImage::download(void*, std::size_t, Stream) const {}

// ---- CudaHistogrammer: cannot be constructed -------------------------------------------------------------------
struct CudaHistogrammer::Impl {};
CudaHistogrammer::CudaHistogrammer(int) { no_cuda("CudaHistogrammer"); }
CudaHistogrammer::~CudaHistogrammer() = default;
CudaHistogrammer::CudaHistogrammer(CudaHistogrammer&&) noexcept = default;
CudaHistogrammer& CudaHistogrammer::operator=(CudaHistogrammer&&) noexcept = default;
int CudaHistogrammer::device() const noexcept { return -1; }
void CudaHistogrammer::compute(const ImageView&, const BinSpec&, const DeviceHistogramView&, Stream, const AsyncOptions&) {
    no_cuda("CudaHistogrammer::compute");
}
void CudaHistogrammer::compute_batch(const ImageView*, std::size_t, const BinSpec&, const DeviceHistogramView*, Stream, bool,
                                    const ImageView*) {
    no_cuda("CudaHistogrammer::compute_batch");
}
namespace detail {
void set_launch_shape(CudaHistogrammer&, const LaunchShape&) noexcept {}
LaunchShape last_launch_shape(const CudaHistogrammer&) noexcept { return {}; }
std::string last_kernel(const CudaHistogrammer&) { return ""; }
}  // namespace detail

// ---- the dispatch layer's entry points (dispatch.hpp) -------------------------------------------------------------
namespace detail {
void cuda_histogram_to_host(const ImageView&, const ImageView*, const BinSpec&, std::uint64_t*, std::uint64_t*, int,
                            Stream) {
    no_cuda("calc_hist");
}
void cuda_batch_to_host(const std::vector<ImageView>&, const std::vector<ImageView>&, const BinSpec&,
                        std::vector<Histogram>&, int, Stream) {
    no_cuda("calc_hist_batch");
}
std::vector<std::uint64_t> cuda_ycbcr_value_counts(const std::vector<YccPlanesView>&, int, Stream) {
    no_cuda("calc_hist_ycbcr_batch");
}

// ---- the CUDA side's internal parts used by the filters' host code (src/cuda/) -----------------------------------
void cuda_staged(const ImageView&, const ImageView&, int, Stream, const DeviceOp&) { no_cuda("staged transfer"); }
int* pinned_int(int) { no_cuda("pinned memory"); }
void release_workspaces() noexcept {}
}  // namespace detail

}  // namespace imghist
