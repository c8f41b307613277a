// Experiment (not part of the build): where the wall time of a blocking device histogram goes — the host
// side of the call (validation, plan, workspace, launch), the kernel, and the wait for it — against an empty
// kernel's launch and wait on the same stream. Host clock (steady_clock) per call, median of 2001 after 200
// warm-up calls; kernel time by CUDA events. Build and run on the GPU host, against a built library:
//   nvcc -O3 -std=c++17 -arch=sm_90 -Ilibimghist/include -I<build>/libimghist/include \
//        bench/experiments/call_overhead.cu -L<lib dir> -limghist -o call_overhead && ./call_overhead
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "imghist/histogram.hpp"

#include "host_timing.hpp"

__global__ void empty_kernel() {}

int main() {
    cudaDeviceProp prop;
    CK(describe_device(prop));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    std::printf("empty kernel launch only          %6.2f us\n", median_us([&] { empty_kernel<<<1, 32, 0, st>>>(); }));
    CK(cudaStreamSynchronize(st));
    std::printf("empty kernel launch + sync        %6.2f us\n",
                median_us([&] { empty_kernel<<<1, 32, 0, st>>>(); cudaStreamSynchronize(st); }));
    std::printf("sync of an idle stream            %6.2f us\n", median_us([&] { cudaStreamSynchronize(st); }));
    for (auto [w, h] : {std::pair{640, 480}, std::pair{1920, 1080}, std::pair{3840, 2160}}) {
        const std::size_t n = static_cast<std::size_t>(w) * h;
        unsigned char* d;
        unsigned int* out;
        CK(cudaMalloc(&d, n));
        CK(cudaMalloc(&out, 256 * sizeof(unsigned int)));
        std::vector<unsigned char> hbuf(n);
        for (std::size_t i = 0; i < n; ++i) hbuf[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
        CK(cudaMemcpy(d, hbuf.data(), n, cudaMemcpyHostToDevice));
        const imghist::ImageView img = imghist::ImageView::device(d, w, h);
        imghist::DeviceHistogramView ov;
        ov.counts = out;
        ov.type = imghist::CountType::U32;
        imghist::CudaHistogrammer hg(0);
        const double enq = median_us([&] { hg.compute(img, imghist::BinSpec::u8(), ov, st); }, 2001, 200);
        CK(cudaStreamSynchronize(st));
        const double full = median_us([&] { hg.compute(img, imghist::BinSpec::u8(), ov, st); cudaStreamSynchronize(st); });
        // Kernel time: events around each compute, median.
        std::vector<float> ms(201);
        cudaEvent_t a, b;
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
        for (auto& m : ms) {
            cudaEventRecord(a, st);
            hg.compute(img, imghist::BinSpec::u8(), ov, st);
            cudaEventRecord(b, st);
            cudaEventSynchronize(b);
            cudaEventElapsedTime(&m, a, b);
        }
        std::sort(ms.begin(), ms.end());
        imghist::Options opt;
        opt.backend = imghist::Backend::Cuda;
        opt.stream = st;
        const double blocking = median_us([&] { (void)imghist::calcHist(img, imghist::BinSpec::u8(), opt); }, 1001, 100);
        std::printf("%dx%d: compute enqueue %6.2f us | compute + sync %6.2f us | kernel (events) %6.2f us | calcHist(device view, Cuda) %6.2f us (%s)\n",
                    w, h, enq, full, ms[ms.size() / 2] * 1000.0, blocking, hg.last_kernel().c_str());
        CK(cudaFree(d));
        CK(cudaFree(out));
    }
    {
        // A batch of 1000 640x480 frames (imghist-bench's batch workload): the host side of computeBatch
        // (validation and descriptors of every image) against the whole call and its GPU time.
        const int n = 1000, w = 640, h = 480;
        const std::size_t bytes = static_cast<std::size_t>(w) * h;
        unsigned char* d;
        unsigned int* out;
        CK(cudaMalloc(&d, bytes * n));
        CK(cudaMalloc(&out, 256 * sizeof(unsigned int) * n));
        CK(cudaMemset(d, 7, bytes * n));
        std::vector<imghist::ImageView> views(n);
        std::vector<imghist::DeviceHistogramView> outs(n);
        for (int i = 0; i < n; ++i) {
            views[i] = imghist::ImageView::device(d + i * bytes, w, h);
            outs[i].counts = out + 256 * i;
            outs[i].type = imghist::CountType::U32;
        }
        imghist::CudaHistogrammer hg(0);
        auto call = [&] { hg.computeBatch(views.data(), n, imghist::BinSpec::u8(), outs.data(), st); };
        const double enq = median_us([&] { call(); cudaStreamSynchronize(st); }, 101, 10);
        double host = 0;
        {
            std::vector<double> t(101);
            for (auto& x : t) {
                cudaStreamSynchronize(st);
                const auto a = Clock::now();
                call();
                x = std::chrono::duration<double, std::micro>(Clock::now() - a).count();
            }
            cudaStreamSynchronize(st);
            std::sort(t.begin(), t.end());
            host = t[t.size() / 2];
        }
        std::printf("batch 1000 x 640x480: computeBatch host side %6.2f us | call + sync %6.2f us (%s)\n", host, enq,
                    hg.last_kernel().c_str());
        CK(cudaFree(d));
        CK(cudaFree(out));
    }
    return 0;
}
