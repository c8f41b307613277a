// imghist-bench — the two classic histogram kernels found in most tutorials, measured next to ours so the
// table shows what each design decision is worth. They are deliberately left naive.
#include "classic_kernels.hpp"

#include "common.hpp"

namespace bench {
namespace {

int shift_for(int bins) {
    int shift = 8;
    while ((1 << (8 - shift)) < bins) --shift;
    if ((256 >> shift) != bins) throw BenchError("classic kernels: bins must be a power of two <= 256");
    return shift;
}

int sm_count() {
    int dev = 0, n = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev);
    return n > 0 ? n : 1;
}

// (a) Global atomics, one per sample.
//
// Why it is slow:
//  * every sample becomes a read-modify-write at the L2 cache; the L2's atomic units, not DRAM bandwidth,
//    set the speed, and there are only `bins` distinct addresses for the whole GPU to fight over;
//  * on low-entropy data (a constant image, a narrow gaussian) most atomics hit the same few addresses and
//    are serialised in one L2 slice: the kernel becomes slower the *easier* the data looks;
//  * one byte per load: a warp asks for 32 bytes per instruction, so the load pipeline runs 16x more
//    instructions than with 16-byte loads for the same bytes.
__global__ void global_atomics_kernel(const std::uint8_t* __restrict__ data, std::size_t n, unsigned* hist,
                                      int shift) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&hist[data[i] >> shift], 1u);
}

// (b) One shared-memory histogram per block, byte loads.
//
// Better: the atomics go to shared memory (fast, on the SM) and each block adds its `bins` totals to global
// memory once at the end. Why it is still far from the read limit:
//  * one byte per thread per load instruction (as above): too few bytes in flight per SM to cover DRAM
//    latency, and the load/atomic instruction rate, not bandwidth, is the bottleneck;
//  * a single copy of the histogram per block: all warps of the block contend for the same 256 counters;
//    lanes of a warp whose samples fall in different bins of the same bank are serialised (bank conflicts),
//    lanes with the same bin are serialised by the atomic itself. Uniform random data is the hard case.
//  The fixes (wide loads, several loads in flight, per-lane bank-private copies) are what our kernel does.
__global__ void shared_bytes_kernel(const std::uint8_t* __restrict__ data, std::size_t n, unsigned* hist,
                                    int shift, int bins) {
    extern __shared__ unsigned smem[];
    for (int b = threadIdx.x; b < bins; b += blockDim.x) smem[b] = 0;
    __syncthreads();
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&smem[data[i] >> shift], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x)
        if (smem[b]) atomicAdd(&hist[b], smem[b]);
}

}  // namespace

void classic_global_atomics(const std::uint8_t* data, std::size_t n, unsigned* hist, int bins,
                            cudaStream_t stream) {
    const int shift = shift_for(bins);
    static const int sms = sm_count();
    static int per_sm = [] {
        int b = 0;
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, global_atomics_kernel, 256, 0);
        return b > 0 ? b : 1;
    }();
    BENCH_CUDA(cudaMemsetAsync(hist, 0, sizeof(unsigned) * bins, stream));
    const std::size_t need = (n + 255) / 256;
    const unsigned grid = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(need, sms * per_sm)));
    global_atomics_kernel<<<grid, 256, 0, stream>>>(data, n, hist, shift);
    BENCH_CUDA(cudaGetLastError());
}

void classic_shared_bytes(const std::uint8_t* data, std::size_t n, unsigned* hist, int bins, cudaStream_t stream) {
    const int shift = shift_for(bins);
    static const int sms = sm_count();
    const std::size_t smem = sizeof(unsigned) * bins;
    int per_sm = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, shared_bytes_kernel, 256, smem);
    per_sm = per_sm > 0 ? per_sm : 1;
    BENCH_CUDA(cudaMemsetAsync(hist, 0, sizeof(unsigned) * bins, stream));
    const std::size_t need = (n + 255) / 256;
    const unsigned grid = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(need, sms * per_sm)));
    shared_bytes_kernel<<<grid, 256, smem, stream>>>(data, n, hist, shift, bins);
    BENCH_CUDA(cudaGetLastError());
}

}  // namespace bench
