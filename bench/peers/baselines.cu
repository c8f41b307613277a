// imghist-bench — read-limit kernel, CUB baselines, timing helpers.
#include "baselines.hpp"

#include <cub/device/device_histogram.cuh>
#include <cuda/std/array>

#include <cstdint>

#include "common.hpp"

namespace bench {

// ---- read limit ---------------------------------------------------------------------------------------------

namespace {

__device__ __forceinline__ unsigned fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

__global__ void __launch_bounds__(256) read_limit_kernel(const uint4* __restrict__ data, std::size_t n16,
                                                         const std::uint8_t* __restrict__ tail, unsigned n_tail,
                                                         unsigned* sink) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    unsigned acc = 0;
    // Four independent 16-byte loads per thread before their first use: enough bytes in flight per SM to
    // cover the memory latency at full occupancy.
    for (; i + 3 * stride < n16; i += 4 * stride) {
        const uint4 a = data[i], b = data[i + stride], c = data[i + 2 * stride], d = data[i + 3 * stride];
        acc ^= fold(a) ^ fold(b) ^ fold(c) ^ fold(d);
    }
    for (; i < n16; i += stride) acc ^= fold(data[i]);
    if (blockIdx.x == 0 && threadIdx.x < n_tail) acc ^= tail[threadIdx.x];
    if (acc == 0x9E3779B9u) *sink = acc;  // practically never true; keeps the loads alive
}

int device_sms() {
    static int sms = [] {
        int dev = 0, n = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev);
        return n > 0 ? n : 1;
    }();
    return sms;
}

}  // namespace

void read_limit(const void* data, std::size_t bytes, unsigned* sink, cudaStream_t stream) {
    // cudaMalloc returns 256-byte aligned memory; the caller passes such a pointer (checked here).
    if (reinterpret_cast<std::uintptr_t>(data) % 16 != 0) throw BenchError("read_limit: unaligned buffer");
    const std::size_t n16 = bytes / 16;
    const unsigned n_tail = static_cast<unsigned>(bytes % 16);
    static int blocks_per_sm = [] {
        int b = 0;
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, read_limit_kernel, 256, 0);
        return b > 0 ? b : 1;
    }();
    std::size_t blocks = static_cast<std::size_t>(device_sms()) * blocks_per_sm;
    blocks = std::max<std::size_t>(1, std::min(blocks, (n16 + 255) / 256));
    read_limit_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
        static_cast<const uint4*>(data), n16, static_cast<const std::uint8_t*>(data) + n16 * 16, n_tail, sink);
    BENCH_CUDA(cudaGetLastError());
}

// ---- CUB --------------------------------------------------------------------------------------------------

namespace {

template <class T, class LevelT, bool kMultiChannel>
cudaError_t cub_one(const Workload& w, const void* data, std::size_t pixels, unsigned* hist, void* temp,
                    std::size_t& temp_bytes, cudaStream_t stream) {
    const T* d = static_cast<const T*>(data);
    const int levels = w.bins + 1;
    const LevelT lo = static_cast<LevelT>(w.low), hi = static_cast<LevelT>(w.high);
    if (pixels * w.channels > 0x7fffffffu) return cudaErrorNotSupported;  // int offsets suffice here
    const int n = static_cast<int>(pixels);
    if (w.channels == 1)
        return cub::DeviceHistogram::HistogramEven(temp, temp_bytes, d, hist, levels, lo, hi, n, stream);
    if constexpr (kMultiChannel) {
        const int b = w.bins;
        if (w.channels == 3) {
            return cub::DeviceHistogram::MultiHistogramEven<3, 3>(
                temp, temp_bytes, d, ::cuda::std::array<unsigned*, 3>{hist, hist + b, hist + 2 * b},
                ::cuda::std::array<int, 3>{levels, levels, levels}, ::cuda::std::array<LevelT, 3>{lo, lo, lo},
                ::cuda::std::array<LevelT, 3>{hi, hi, hi}, n, stream);
        }
        if (w.channels == 4) {
            return cub::DeviceHistogram::MultiHistogramEven<4, 4>(
                temp, temp_bytes, d, ::cuda::std::array<unsigned*, 4>{hist, hist + b, hist + 2 * b, hist + 3 * b},
                ::cuda::std::array<int, 4>{levels, levels, levels, levels},
                ::cuda::std::array<LevelT, 4>{lo, lo, lo, lo}, ::cuda::std::array<LevelT, 4>{hi, hi, hi, hi}, n,
                stream);
        }
    }
    return cudaErrorNotSupported;
}

}  // namespace

cudaError_t cub_histogram(const Workload& w, const void* data, std::size_t pixels, unsigned* hist, void* temp,
                          std::size_t& temp_bytes, cudaStream_t stream) {
    switch (w.type) {
        case imghist::SampleType::U8:
            return cub_one<std::uint8_t, int, true>(w, data, pixels, hist, temp, temp_bytes, stream);
        case imghist::SampleType::U16:
            return cub_one<std::uint16_t, int, false>(w, data, pixels, hist, temp, temp_bytes, stream);
        case imghist::SampleType::I32:
            return cub_one<std::int32_t, int, false>(w, data, pixels, hist, temp, temp_bytes, stream);
        case imghist::SampleType::F32:
            return cub_one<float, float, false>(w, data, pixels, hist, temp, temp_bytes, stream);
    }
    return cudaErrorNotSupported;
}

// ---- timing helpers -----------------------------------------------------------------------------------------

namespace {

__global__ void spin_kernel(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

}  // namespace

void launch_spin(cudaStream_t stream, double microseconds) {
    spin_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(microseconds * 1000.0));
    BENCH_CUDA(cudaGetLastError());
}

void flush_l2(cudaStream_t stream) {
    static DevMem scratch;
    static int pass = 0;
    if (scratch.size() == 0) {
        int dev = 0, l2 = 0;
        BENCH_CUDA(cudaGetDevice(&dev));
        BENCH_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
        scratch.reserve(2 * static_cast<std::size_t>(std::max(l2, 1 << 20)));
    }
    BENCH_CUDA(cudaMemsetAsync(scratch.get(), ++pass & 0xff, scratch.size(), stream));
}

}  // namespace bench
