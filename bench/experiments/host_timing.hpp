// Shared by the experiments in this folder, each a program of its own built by one nvcc line: CK() checks a
// CUDA call inside main(), describe_device() starts an experiment's output with the device it ran on,
// median_us() times a host-side action (steady_clock, warm-up calls first).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("CUDA %s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

using Clock = std::chrono::steady_clock;

/// Device 0's properties, after printing its name and SM count (the first line of every experiment's output).
inline cudaError_t describe_device(cudaDeviceProp& prop) {
    const cudaError_t e = cudaGetDeviceProperties(&prop, 0);
    if (e == cudaSuccess) std::printf("device %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    return e;
}

/// Median wall time of f() in microseconds over `reps` calls, after `warm` calls that are not timed.
template <class F>
double median_us(F f, int reps = 2001, int warm = 200) {
    for (int i = 0; i < warm; ++i) f();
    std::vector<double> t(reps);
    for (int i = 0; i < reps; ++i) {
        const auto t0 = Clock::now();
        f();
        t[i] = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    }
    std::sort(t.begin(), t.end());
    return t[reps / 2];
}
