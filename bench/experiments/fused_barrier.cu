// Experiment (not part of the build): what the one-launch 8-bit filter's shape costs at frame sizes, part by
// part — a cooperative launch against a plain one, the grid-wide barrier of cooperative groups against a
// barrier on a ticket, the count and merge, the table and the write — each as the wall time of launch +
// cudaStreamSynchronize (host clock, median of 2001 after 200 warm-ups), the way a blocking filter call is
// timed. The kernels mimic fused_kernels.cuh (256 threads, two kept 16-byte vectors per thread, shared
// counters, one global histogram, a block scan of 256 counts, the write from registers) without its segment
// cut: the frames here are contiguous and 16-byte aligned.
//
// The ticket barrier needs no cooperative launch and cannot deadlock whatever the residency: a block first
// takes its vectors by a ticket (atomicAdd), so once the tickets are all taken every vector belongs to a block
// that is running, and a block may wait for the count of finished vectors without blocking a block that has
// not started.
//   nvcc -O3 -std=c++17 -arch=sm_90 bench/experiments/fused_barrier.cu -o fused_barrier && ./fused_barrier
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "host_timing.hpp"

enum Work { Empty = 0, Count = 1, CountBarrier = 2, Full = 3 };
enum Barrier { Coop = 0, Ticket = 1 };

struct Args {
    const uint4* src;
    uint4* dst;
    unsigned vectors;
    unsigned* counts;   // 256, zero on entry and exit
    unsigned* state;    // [0] take ticket, [1] finished vectors' blocks, [2] readers
};

constexpr int kThreads = 256;
constexpr int kKept = 2;

template <int W, int B>
__global__ void __launch_bounds__(kThreads) shape_kernel(const __grid_constant__ Args a) {
    if constexpr (W == Empty) return;
    __shared__ unsigned hist[256];
    __shared__ unsigned scan[256];
    __shared__ unsigned char lut[256];
    __shared__ unsigned chunk;
    const unsigned tid = threadIdx.x;
    hist[tid] = 0;
    const unsigned per_block = kThreads * kKept;
    const unsigned chunks = (a.vectors + per_block - 1) / per_block;
    if (B == Ticket) {
        if (tid == 0) chunk = atomicAdd(a.state, 1u);
        __syncthreads();
    } else {
        __syncthreads();
        if (tid == 0) chunk = blockIdx.x;
        __syncthreads();
    }
    const unsigned base = chunk * per_block;
    uint4 kept[kKept];
    bool have[kKept];
#pragma unroll
    for (int j = 0; j < kKept; ++j) {
        const unsigned v = base + j * kThreads + tid;
        have[j] = chunk < chunks && v < a.vectors;
        if (have[j]) kept[j] = __ldcs(a.src + v);
    }
#pragma unroll
    for (int j = 0; j < kKept; ++j)
        if (have[j]) {
            const unsigned w[4] = {kept[j].x, kept[j].y, kept[j].z, kept[j].w};
#pragma unroll
            for (int b = 0; b < 16; ++b) atomicAdd(&hist[(w[b >> 2] >> ((b & 3) * 8)) & 255u], 1u);
        }
    __syncthreads();
    if (hist[tid]) atomicAdd(a.counts + tid, hist[tid]);
    if constexpr (W == Count) {
        // Histogram only: the last block clears (as the core's merge does).
        __shared__ bool last;
        __threadfence();
        __syncthreads();
        if (tid == 0) last = atomicAdd(a.state + 2, 1u) == gridDim.x - 1;
        __syncthreads();
        if (last) {
            a.counts[tid] = 0;
            if (tid == 0) a.state[2] = 0, a.state[0] = 0;
        }
        return;
    }
    if constexpr (B == Coop) {
        cooperative_groups::this_grid().sync();
    } else {
        __threadfence();
        __syncthreads();
        if (tid == 0) {
            atomicAdd(a.state + 1, 1u);
            // Every ticket taken means every chunk is held by a running block: waiting here is safe.
            volatile unsigned* done = a.state + 1;
            while (*done < gridDim.x) {
            }
            __threadfence();
        }
        __syncthreads();
    }
    const unsigned h = __ldcg(a.counts + tid);
    __shared__ bool last;
    if (tid == 0) last = atomicAdd(a.state + 2, 1u) == gridDim.x - 1;
    __syncthreads();
    if (last) {
        a.counts[tid] = 0;
        if (tid == 0) a.state[0] = 0, a.state[1] = 0, a.state[2] = 0;
    }
    if constexpr (W == CountBarrier) return;
    // A Hillis-Steele scan stands in for the equalization table.
    scan[tid] = h;
    __syncthreads();
    for (unsigned d = 1; d < 256; d <<= 1) {
        const unsigned x = tid >= d ? scan[tid - d] : 0u;
        __syncthreads();
        scan[tid] += x;
        __syncthreads();
    }
    const unsigned total = scan[255];
    lut[tid] = total ? static_cast<unsigned char>((255ull * scan[tid]) / total) : 0;
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kKept; ++j)
        if (have[j]) {
            unsigned w[4] = {kept[j].x, kept[j].y, kept[j].z, kept[j].w};
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                unsigned o = 0;
#pragma unroll
                for (int b = 0; b < 4; ++b) o |= static_cast<unsigned>(lut[(w[q] >> (b * 8)) & 255u]) << (b * 8);
                w[q] = o;
            }
            __stcs(a.dst + base + j * kThreads + tid, make_uint4(w[0], w[1], w[2], w[3]));
        }
}

int g_reps = 2001, g_warm = 200;  // ./fused_barrier REPS WARM: fewer for a profiler

template <int W, int B>
double time_shape(const Args& a, unsigned grid, cudaStream_t st, bool coop_launch) {
    auto fn = shape_kernel<W, B>;
    Args copy = a;
    void* params[] = {&copy};
    return median_us([&] {
        if (coop_launch)
            cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(fn), dim3(grid), dim3(kThreads), params, 0, st);
        else
            fn<<<grid, kThreads, 0, st>>>(a);
        cudaStreamSynchronize(st);
    }, g_reps, g_warm);
}

int main(int argc, char** argv) {
    if (argc > 2) g_reps = std::max(1, std::atoi(argv[1])), g_warm = std::max(0, std::atoi(argv[2]));
    cudaDeviceProp prop;
    CK(describe_device(prop));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    const std::size_t max_bytes = 7680ull * 4320;
    std::vector<unsigned char> host(max_bytes);
    unsigned x = 12345;
    for (auto& b : host) b = static_cast<unsigned char>((x = x * 1664525u + 1013904223u) >> 24);
    unsigned char *src, *dst;
    unsigned *counts, *state;
    CK(cudaMalloc(&src, max_bytes));
    CK(cudaMalloc(&dst, max_bytes));
    CK(cudaMalloc(&counts, 1024));
    CK(cudaMalloc(&state, 64));
    CK(cudaMemcpy(src, host.data(), max_bytes, cudaMemcpyHostToDevice));
    CK(cudaMemset(counts, 0, 1024));
    CK(cudaMemset(state, 0, 64));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, shape_kernel<Full, Coop>, kThreads, 0));
    std::printf("resident blocks per SM: %d\n", per_sm);
    struct Size { const char* name; int w, h; };
    for (Size s : {Size{"640x480", 640, 480}, Size{"1080p", 1920, 1080}, Size{"4K", 3840, 2160}}) {
        Args a{reinterpret_cast<const uint4*>(src), reinterpret_cast<uint4*>(dst),
               static_cast<unsigned>(static_cast<std::size_t>(s.w) * s.h / 16), counts, state};
        const unsigned grid = (a.vectors + kThreads * kKept - 1) / (kThreads * kKept);
        if (grid > static_cast<unsigned>(per_sm * prop.multiProcessorCount)) {
            std::printf("%s: %u blocks do not fit\n", s.name, grid);
            continue;
        }
        std::printf("%-8s %4u blocks | empty plain %6.2f coop %6.2f | count plain %6.2f coop %6.2f | "
                    "count+barrier coop %6.2f ticket %6.2f | full coop %6.2f ticket %6.2f us\n",
                    s.name, grid, time_shape<Empty, Ticket>(a, grid, st, false), time_shape<Empty, Coop>(a, grid, st, true),
                    time_shape<Count, Coop>(a, grid, st, false), time_shape<Count, Coop>(a, grid, st, true),
                    time_shape<CountBarrier, Coop>(a, grid, st, true), time_shape<CountBarrier, Ticket>(a, grid, st, false),
                    time_shape<Full, Coop>(a, grid, st, true), time_shape<Full, Ticket>(a, grid, st, false));
        CK(cudaStreamSynchronize(st));
        CK(cudaGetLastError());
        // Check the full kernel's output once against the host (both barriers).
        for (int b = 0; b < 2; ++b) {
            CK(cudaMemset(dst, 0, max_bytes));
            if (b == 0) {
                Args copy = a;
                void* params[] = {&copy};
                CK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(shape_kernel<Full, Coop>), dim3(grid), dim3(kThreads), params, 0, st));
            } else {
                shape_kernel<Full, Ticket><<<grid, kThreads, 0, st>>>(a);
            }
            CK(cudaStreamSynchronize(st));
            std::vector<unsigned long long> hh(256, 0);
            const std::size_t n = static_cast<std::size_t>(a.vectors) * 16;
            for (std::size_t i = 0; i < n; ++i) ++hh[host[i]];
            unsigned long long run = 0;
            unsigned char lut[256];
            for (int i = 0; i < 256; ++i) run += hh[i], lut[i] = static_cast<unsigned char>((255ull * run) / n);
            std::vector<unsigned char> out(n);
            CK(cudaMemcpy(out.data(), dst, n, cudaMemcpyDeviceToHost));
            std::size_t bad = 0;
            for (std::size_t i = 0; i < n; ++i) bad += out[i] != lut[host[i]];
            if (bad) std::printf("  %s barrier: %zu wrong bytes\n", b ? "ticket" : "coop", bad);
        }
    }
    return 0;
}
