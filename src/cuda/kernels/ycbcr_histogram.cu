// The CUDA backend of calc_hist_ycbcr_batch: R, G and B value counts of YCbCr planes (device views), the RGB
// values computed per pixel by the one definition in ycbcr_rgb.hpp and counted in shared memory; one launch
// for the whole batch (blockIdx.y = image), one synchronisation.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/dispatch.hpp"
#include "cuda/runtime/blocking_call.hpp"
#include "cuda/runtime/cuda_error.hpp"
#include "core/ycbcr_rgb.hpp"
#include "cuda/tuning/tuning.hpp"

namespace imghist::detail {
namespace {

constexpr int kThreads = cuda::KernelBounds::ycbcr;

__global__ void __launch_bounds__(kThreads) ycc_value_counts(const YccPlanesView* images, unsigned long long* counts) {
    __shared__ unsigned int local[3 * 256];
    for (int i = threadIdx.x; i < 3 * 256; i += blockDim.x) local[i] = 0u;
    __syncthreads();
    const YccPlanesView p = images[blockIdx.y];
    const long long total = static_cast<long long>(p.width) * p.height;
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
        const int y = static_cast<int>(i / p.width), x = static_cast<int>(i - static_cast<long long>(y) * p.width);
        int r = 0, g = 0, b = 0;
        ycc_rgb_at(p, x, y, r, g, b);
        atomicAdd(&local[r], 1u);
        atomicAdd(&local[256 + g], 1u);
        atomicAdd(&local[512 + b], 1u);
    }
    __syncthreads();
    unsigned long long* out = counts + static_cast<std::size_t>(blockIdx.y) * 3 * 256;
    for (int i = threadIdx.x; i < 3 * 256; i += blockDim.x)
        if (local[i]) atomicAdd(out + i, static_cast<unsigned long long>(local[i]));
}

}  // namespace

std::vector<std::uint64_t> cuda_ycbcr_value_counts(const std::vector<YccPlanesView>& images, int device, Stream stream) {
    std::vector<std::uint64_t> counts(images.size() * 3 * 256, 0);
    if (images.empty()) return counts;
    if (images.size() > 65535)
        throw Error(ErrorCode::InvalidArgument, "calc_hist_ycbcr_batch: at most 65535 images per call on CUDA");
    BlockingCall call(device, stream, true);
    Workspace& ws = call.ws();
    const cudaStream_t s = cu(ws.stream());
    long long largest = 0;
    for (const YccPlanesView& p : images) largest = std::max(largest, static_cast<long long>(p.width) * p.height);
    // Enough blocks per image to fill the device with a batch of one, each block counting at least 4096
    // pixels (a shared-memory flush per block is then a small share of its work); the grid's y is the batch.
    const long long per_block = static_cast<long long>(kThreads) * 16;
    const unsigned int blocks = static_cast<unsigned int>(std::clamp<long long>((largest + per_block - 1) / per_block, 1, 1024));
    // The descriptors and the counts live in the workspace's slots: a steady stream of calls allocates
    // nothing, and the call's end (stream synchronised) makes them free for the next.
    const std::size_t image_bytes = images.size() * sizeof(YccPlanesView), count_bytes = counts.size() * sizeof(unsigned long long);
    auto* h_images = static_cast<YccPlanesView*>(ws.pinned_buffer(PinnedSlot::YccDescs, image_bytes));
    std::memcpy(h_images, images.data(), image_bytes);
    auto* d_images = ws.device_as<YccPlanesView>(DeviceSlot::YccDescs, image_bytes);
    auto* d_counts = ws.device_as<unsigned long long>(DeviceSlot::YccCounts, count_bytes);
    auto* h_counts = static_cast<unsigned long long*>(ws.pinned_buffer(PinnedSlot::YccCounts, count_bytes));
    IMGHIST_CUDA(cudaMemcpyAsync(d_images, h_images, image_bytes, cudaMemcpyHostToDevice, s));
    IMGHIST_CUDA(cudaMemsetAsync(d_counts, 0, count_bytes, s));
    ycc_value_counts<<<dim3(blocks, static_cast<unsigned int>(images.size())), kThreads, 0, s>>>(d_images, d_counts);
    IMGHIST_CUDA(cudaGetLastError());
    IMGHIST_CUDA(cudaMemcpyAsync(h_counts, d_counts, count_bytes, cudaMemcpyDeviceToHost, s));
    IMGHIST_CUDA(cudaStreamSynchronize(s));
    call.finish();
    std::copy(h_counts, h_counts + counts.size(), counts.begin());
    return counts;
}

}  // namespace imghist::detail
