// Experiment (not part of the build): where the time of a batch launch goes (1000 images of 640x480 8-bit,
// one device buffer, 256 bins, overwrite) and which launch shape the batch path should take. Times, CUDA
// events, median of 21 runs queued behind a spin kernel as imghist-bench does:
//   - computeBatch as the library runs it (descriptor copy, zeroing kernel, counting kernel);
//   - its parts alone: a host-to-device copy of the descriptors' size from page-locked memory, a memset of
//     the outputs, and a read of the whole buffer (the read limit);
//   - computeBatch under launch shapes (threads, blocks per SM, copies, tile KiB).
// Data: uniform random bytes, or with --smooth a slowly varying pattern.
// Build and run on the GPU host, against a built library:
//   nvcc -O3 -std=c++17 -arch=sm_90 -Ilibimghist/include -I<build>/libimghist/include \
//        bench/experiments/batch_parts.cu -L<lib dir> -limghist -o batch_parts && ./batch_parts [--smooth]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "imghist/histogram.hpp"

#include "host_timing.hpp"

__global__ void spin(long long cycles) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

__global__ void read_all(const uint4* p, std::size_t n, unsigned* sink) {
    unsigned acc = 0;
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const uint4 q = __ldg(p + i);
        acc ^= q.x ^ q.y ^ q.z ^ q.w;
    }
    if (acc == 0x12345678u) *sink = acc;
}

template <class Op>
float median_ms(cudaStream_t s, Op op) {
    for (int i = 0; i < 3; ++i) op();
    cudaStreamSynchronize(s);
    const int reps = 21;
    std::vector<cudaEvent_t> ev(2 * reps);
    for (auto& e : ev) cudaEventCreate(&e);
    spin<<<1, 1, 0, s>>>(1000000);
    for (int i = 0; i < reps; ++i) {
        cudaEventRecord(ev[2 * i], s);
        op();
        cudaEventRecord(ev[2 * i + 1], s);
    }
    cudaStreamSynchronize(s);
    std::vector<float> ms(reps);
    for (int i = 0; i < reps; ++i) cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]);
    for (auto& e : ev) cudaEventDestroy(e);
    std::sort(ms.begin(), ms.end());
    return ms[reps / 2];
}

int main(int argc, char** argv) {
    const bool smooth = argc > 1 && std::string(argv[1]) == "--smooth";
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device %s\n", prop.name);
    const int n = 1000, w = 640, h = 480;
    const std::size_t img = static_cast<std::size_t>(w) * h, bytes = img * n;
    unsigned char* d;
    unsigned *out, *sink;
    CK(cudaMalloc(&d, bytes));
    CK(cudaMalloc(&out, sizeof(unsigned) * 256 * n));
    CK(cudaMalloc(&sink, 4));
    // Uniform random bytes (the benchmark's hardest data set: every lane's increment lands on a random bin)
    // or, with --smooth, a slowly varying pattern (few distinct values per warp).
    std::vector<unsigned char> hbuf(bytes);
    std::mt19937_64 rng(1);
    for (std::size_t i = 0; i < bytes; i += 8) {
        const unsigned long long r = rng();
        std::memcpy(hbuf.data() + i, &r, std::min<std::size_t>(8, bytes - i));
    }
    if (smooth)
        for (std::size_t i = 0; i < bytes; ++i) hbuf[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
    CK(cudaMemcpy(d, hbuf.data(), bytes, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<imghist::ImageView> views(n);
    std::vector<imghist::DeviceHistogramView> outs(n);
    for (int i = 0; i < n; ++i) {
        views[i] = imghist::ImageView::device(d + i * img, w, h);
        outs[i].counts = out + 256 * i;
        outs[i].type = imghist::CountType::U32;
    }
    imghist::CudaHistogrammer hg(0);
    const auto spec = imghist::BinSpec::u8();
    const float limit = median_ms(s, [&] { read_all<<<prop.multiProcessorCount * 4, 512, 0, s>>>(reinterpret_cast<const uint4*>(d), bytes / 16, sink); });
    const float batch = median_ms(s, [&] { hg.computeBatch(views.data(), n, spec, outs.data(), s); });
    std::printf("read limit %.1f us (%.0f GB/s); computeBatch %.1f us = %.1f%% of the limit, kernel %s\n", limit * 1e3,
                bytes / (limit * 1e6), batch * 1e3, 100.0 * limit / batch, hg.last_kernel().c_str());
    void *hd, *dd;
    CK(cudaHostAlloc(&hd, 112 * n, cudaHostAllocDefault));
    CK(cudaMalloc(&dd, 112 * n));
    std::printf("parts: copy of %d descriptor bytes %.2f us; memset of the outputs %.2f us\n", 112 * n,
                1e3 * median_ms(s, [&] { cudaMemcpyAsync(dd, hd, 112 * n, cudaMemcpyHostToDevice, s); }),
                1e3 * median_ms(s, [&] { cudaMemsetAsync(out, 0, sizeof(unsigned) * 256 * n, s); }));
    for (int th : {256, 512, 1024})
        for (int bpsm : {1, 2, 3, 4, 6, 8})
            for (int copies : {4, 8, 16, 32})
                for (int tk : {0}) {
                    if (th * bpsm > 2048) continue;
                    if (bpsm * copies * 1024 > 200 * 1024) continue;
                    if (th * bpsm < 1024) continue;
                    imghist::CudaHistogrammer::Shape sh;
                    sh.threads = th;
                    sh.blocks_per_sm = bpsm;
                    sh.copies = copies;
                    sh.tile_bytes = tk * 1024;
                    hg.set_shape(sh);
                    const float t = median_ms(s, [&] { hg.computeBatch(views.data(), n, spec, outs.data(), s); });
                    const auto used = hg.last_shape();
                    std::printf("  %4d threads %d b/SM %2d copies %3d KiB tiles (used: %d b/SM, tile %d B): %7.1f us %5.1f%%\n", th,
                                bpsm, copies, tk, used.blocks_per_sm, used.tile_bytes, t * 1e3, 100.0 * limit / t);
                }
    CK(cudaGetLastError());
    return 0;
}
