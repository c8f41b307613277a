// Experiment (not part of the build): how soon a blocking call can know that its kernel's answer is there.
// A kernel of a set duration (blocks spin on the global timer, as a ~6 µs histogram of a 1080p frame
// would run), launched and waited for in different ways, host clock per call, median of 2001 after 200
// warm-up calls:
//   sync    cudaStreamSynchronize after the launch (what the library's blocking calls do);
//   query   cudaStreamQuery in a loop;
//   event   an event recorded after the kernel, cudaEventSynchronize;
//   flag    the last block to finish (a ticket in device memory) writes its answer and then a sequence
//           number to page-locked host memory, after a system-scope fence; the host spins on that word.
// Build and run on the GPU host: nvcc -O3 -std=c++17 -arch=sm_90 bench/experiments/completion_wait.cu && ./a.out
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "host_timing.hpp"

__device__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/// Each block spins for `ns`; the last block to finish copies 256 words of "result" to `out` and then
/// writes `seq` to `flag` (both may be host memory). The ticket is reset by the last block.
__global__ void timed_kernel(unsigned ns, unsigned* ticket, unsigned* out, volatile unsigned* flag, unsigned seq) {
    const unsigned long long t0 = now_ns();
    while (now_ns() - t0 < ns) {
    }
    __shared__ bool last;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    if (out)
        for (unsigned i = threadIdx.x; i < 256; i += blockDim.x) out[i] = seq + i;
    __syncthreads();
    if (threadIdx.x == 0) {
        *ticket = 0;
        if (flag) {
            __threadfence_system();
            *flag = seq;
        }
    }
}

int main() {
    cudaDeviceProp prop;
    CK(describe_device(prop));
    unsigned* ticket;
    CK(cudaMalloc(&ticket, 4));
    CK(cudaMemset(ticket, 0, 4));
    unsigned *hflag, *hout, *dout;
    CK(cudaHostAlloc(&hflag, 4, cudaHostAllocMapped));
    CK(cudaHostAlloc(&hout, 1024, cudaHostAllocMapped));
    CK(cudaMalloc(&dout, 1024));
    *hflag = 0;
    cudaEvent_t ev;
    CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    for (int legacy = 0; legacy < 2; ++legacy) {
        cudaStream_t st = nullptr;
        if (!legacy) CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        std::printf("%s stream\n", legacy ? "legacy default" : "non-blocking");
        for (unsigned ns : {0u, 3000u, 6000u}) {
            for (unsigned blocks : {1u, 132u, 264u}) {
                unsigned seq = 1;
                auto launch = [&](unsigned* out, volatile unsigned* flag) {
                    timed_kernel<<<blocks, 256, 0, st>>>(ns, ticket, out, flag, ++seq);
                };
                const double l_only = median_us([&] { launch(dout, nullptr); });
                CK(cudaStreamSynchronize(st));
                const double sync = median_us([&] { launch(hout, nullptr); cudaStreamSynchronize(st); });
                const double query = median_us([&] {
                    launch(hout, nullptr);
                    while (cudaStreamQuery(st) == cudaErrorNotReady) {
                    }
                });
                const double event = median_us([&] {
                    launch(hout, nullptr);
                    cudaEventRecord(ev, st);
                    cudaEventSynchronize(ev);
                });
                const double flag = median_us([&] {
                    launch(hout, hflag);
                    while (*reinterpret_cast<volatile unsigned*>(hflag) != seq) {
                    }
                });
                CK(cudaStreamSynchronize(st));
                // Check: the flag path read the answer of its own launch.
                bool ok = true;
                for (int i = 0; i < 256; ++i) ok = ok && hout[i] == seq + i;
                std::printf("  spin %4u ns x %3u blocks: launch only %6.2f | sync %6.2f | query loop %6.2f | event sync %6.2f | host flag %6.2f us %s\n",
                            ns, blocks, l_only, sync, query, event, flag, ok ? "" : "(WRONG ANSWER)");
            }
        }
        if (st) CK(cudaStreamDestroy(st));
    }
    CK(cudaGetLastError());
    return 0;
}
