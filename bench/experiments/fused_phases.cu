// Experiment (not part of the build): where the time of the one-launch equalization (filters/src/cuda/
// fused_kernels.cuh) goes inside the kernel. The library's kernel is compiled here with its phase marks
// (IMGHIST_FUSED_MARK) defined to record the GPU's global timer from each block's thread 0: start, kept
// segments counted, all counted, merged into the global histogram, grid barrier passed, tables built, pass
// done. For each phase it prints, over the blocks of a launch, the earliest, median and latest mark relative to
// the launch's first block start (medians over the launches), beside the launch + synchronise wall time and the
// event time, for 1 to 16 copies of the global histogram (FusedArgs::merge_copies_log2). Frames: 640x480, 1080p
// and 4K, pitched as a cv::cuda::GpuMat allocates them (cudaMallocPitch). Build and run from the repository root:
//   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -Ifilters/src -Ilibimghist/include -Ilibimghist/internal \
//        -o fused_phases bench/experiments/fused_phases.cu && ./fused_phases
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

__device__ unsigned long long* g_marks;  // 8 per block
#define IMGHIST_FUSED_MARK(p)                                                  \
    do {                                                                       \
        if (threadIdx.x == 0) {                                                \
            unsigned long long t_;                                             \
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_)::"memory");   \
            g_marks[blockIdx.x * 8 + (p)] = t_;                                \
        }                                                                      \
    } while (0)

#include "cuda/fused_kernels.cuh"
#include "host_timing.hpp"

namespace k = imghist::detail::kernels;

static const char* kPhase[] = {"start", "kept counted", "all counted", "merged", "grid barrier", "tables", "pass done"};
constexpr int kPhases = 7;

static double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

static int run(const char* name, int width, int height, bool pitched, int sms, int merge_log2, bool table) {
    auto* fn = k::fused_filter_kernel<1, k::FusedKind::Equalize, k::FusedArgs>;
    const int copies_log2 = 3;
    const std::size_t smem = k::fused_smem_bytes(1, copies_log2);
    CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, k::kFusedThreads, smem));

    std::uint8_t *src = nullptr, *dst = nullptr;
    std::size_t pitch = width;
    if (pitched) {
        CK(cudaMallocPitch(reinterpret_cast<void**>(&src), &pitch, width, height));
        std::size_t p2 = 0;
        CK(cudaMallocPitch(reinterpret_cast<void**>(&dst), &p2, width, height));
    } else {
        CK(cudaMalloc(&src, pitch * height));
        CK(cudaMalloc(&dst, pitch * height));
    }
    std::vector<std::uint8_t> host(pitch * height);
    std::mt19937 rng(7);
    std::normal_distribution<double> gauss(110.0, 40.0);  // photo-like: most levels used, unevenly
    for (auto& b : host) b = static_cast<std::uint8_t>(std::min(255.0, std::max(0.0, gauss(rng))));
    CK(cudaMemcpy(src, host.data(), host.size(), cudaMemcpyHostToDevice));

    k::FusedArgs a{};
    a.s.src = src;
    a.s.dst = dst;
    a.s.reverse = false;
    if (pitched) {
        a.s.row_bytes = width;
        a.s.rows = height;
        a.s.src_pitch = a.s.dst_pitch = pitch;
    } else {
        a.s.row_bytes = static_cast<std::size_t>(width) * height;
        a.s.rows = 1;
        a.s.src_pitch = a.s.dst_pitch = a.s.row_bytes;
    }
    a.s.segs_per_row = 1 + (a.s.row_bytes + 15) / 16;
    a.segments = static_cast<unsigned>(a.s.segs_per_row * a.s.rows);
    unsigned* counts = nullptr;
    constexpr std::size_t kCounters = std::size_t(4 * 256) << k::kFusedMaxMergeLog2;
    CK(cudaMalloc(&counts, (kCounters + 1) * sizeof(unsigned)));
    CK(cudaMemset(counts, 0, (kCounters + 1) * sizeof(unsigned)));
    a.counts = counts;
    a.ticket = counts + kCounters;
    a.copies_log2 = copies_log2;
    a.merge_copies_log2 = merge_log2;
    const long long per_block = static_cast<long long>(k::kFusedThreads) * k::kFusedKept;
    const unsigned grid = static_cast<unsigned>(std::min<long long>((a.segments + per_block - 1) / per_block,
                                                                    static_cast<long long>(per_sm) * sms));
    unsigned long long* marks = nullptr;
    CK(cudaMalloc(&marks, grid * 8 * sizeof(unsigned long long)));
    CK(cudaMemcpyToSymbol(g_marks, &marks, sizeof(marks)));

    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    void* params[] = {&a};
    auto launch = [&] {
        return cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(fn), dim3(grid), dim3(k::kFusedThreads), params,
                                           smem, stream);
    };
    const double wall = median_us([&] { launch(); cudaStreamSynchronize(stream); }, 501, 100);
    CK(cudaGetLastError());

    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    constexpr int kRuns = 101;
    std::vector<double> ev(kRuns);
    std::vector<std::vector<double>> lo(kPhases), mid(kPhases), hi(kPhases);
    std::vector<unsigned long long> m(grid * 8);
    for (int r = 0; r < kRuns; ++r) {
        CK(cudaEventRecord(e0, stream));
        CK(launch());
        CK(cudaEventRecord(e1, stream));
        CK(cudaStreamSynchronize(stream));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        ev[r] = ms * 1000.0;
        CK(cudaMemcpy(m.data(), marks, m.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
        unsigned long long t0 = ~0ull;
        for (unsigned b = 0; b < grid; ++b) t0 = std::min(t0, m[b * 8]);
        for (int p = 0; p < kPhases; ++p) {
            std::vector<double> v(grid);
            for (unsigned b = 0; b < grid; ++b) v[b] = (m[b * 8 + p] - t0) / 1000.0;
            std::sort(v.begin(), v.end());
            lo[p].push_back(v.front());
            mid[p].push_back(v[v.size() / 2]);
            hi[p].push_back(v.back());
        }
    }
    std::printf("%s %dx%d %s, %d global copies: grid %u x %d threads (%d per SM fit), launch + sync %.2f us, events %.2f us\n",
                name, width, height, pitched ? "pitched" : "contiguous", 1 << merge_log2, grid, k::kFusedThreads, per_sm,
                wall, median_of(ev));
    if (table) {
        std::printf("  %-14s %9s %9s %9s   (us after the first block's start; medians over %d launches)\n", "phase end",
                    "earliest", "median", "latest", kRuns);
        for (int p = 0; p < kPhases; ++p)
            std::printf("  %-14s %9.2f %9.2f %9.2f\n", kPhase[p], median_of(lo[p]), median_of(mid[p]), median_of(hi[p]));
    } else {
        std::printf("  latest block past the grid barrier %.2f us, done %.2f us\n", median_of(hi[4]), median_of(hi[6]));
    }
    cudaFree(src);
    cudaFree(dst);
    cudaFree(counts);
    cudaFree(marks);
    cudaStreamDestroy(stream);
    return 0;
}

int main() {
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    const int sms = prop.multiProcessorCount;
    // Each frame size in rounds, every copy count once per round (launch + sync times drift between runs).
    const int sizes[][2] = {{640, 480}, {1920, 1080}, {3840, 2160}};
    for (const auto& wh : sizes)
        for (int round = 0; round < 3; ++round)
            for (int m = 0; m <= k::kFusedMaxMergeLog2; ++m)
                if (run("equalize", wh[0], wh[1], true, sms, m, round == 0)) return 1;
    return 0;
}
