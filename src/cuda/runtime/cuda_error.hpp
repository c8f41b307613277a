// Internal: the CUDA runtime glue of the core and the filters alike — the one translation from cudaError_t to
// imghist::Error (IMGHIST_CUDA), a device guard, the public Stream handle as a cudaStream_t, and the dynamic
// shared-memory limit of kernels (header-only: each library links the CUDA runtime itself).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "imghist/error.hpp"
#include "imghist/histogram.hpp"  // Stream

namespace imghist::detail {

inline ErrorCode code_of(cudaError_t e) noexcept {
    switch (e) {
        case cudaErrorMemoryAllocation: return ErrorCode::OutOfMemory;
        case cudaErrorNoDevice:
        case cudaErrorInsufficientDriver:
        case cudaErrorInvalidDevice: return ErrorCode::NoDevice;
        default: return ErrorCode::Cuda;
    }
}

inline void cuda_check(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return;
    (void)cudaGetLastError();  // clear a sticky-free error so the next call starts clean
    throw Error(code_of(e), std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

#define IMGHIST_CUDA(expr) ::imghist::detail::cuda_check((expr), #expr)

/// The public API's Stream (histogram.hpp: CUstream_st*, so that its headers need no CUDA) as the runtime's type.
inline cudaStream_t cu(Stream s) noexcept { return reinterpret_cast<cudaStream_t>(s); }

/// Lets kernel `fn` take `bytes` of dynamic shared memory on `device` (the current one). Without this a
/// kernel may take 48 KiB less its static shared memory; the limit is a property of the function per device,
/// so it is raised once (and only upwards). Call it before asking for the kernel's occupancy.
inline void allow_dynamic_smem(const void* fn, std::size_t bytes, int device) {
    static std::mutex m;
    static std::map<std::pair<int, const void*>, std::size_t> raised;
    std::lock_guard<std::mutex> lock(m);
    std::size_t& current = raised[{device, fn}];
    if (bytes <= current) return;
    IMGHIST_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    current = bytes;
}

/// Makes `device` current for the scope (-1: leave the current one) and restores the previous one.
class DeviceGuard {
public:
    explicit DeviceGuard(int device) {
        IMGHIST_CUDA(cudaGetDevice(&previous_));
        if (device >= 0 && device != previous_) {
            IMGHIST_CUDA(cudaSetDevice(device));
            switched_ = true;
        }
    }
    ~DeviceGuard() {
        if (switched_) cudaSetDevice(previous_);
    }
    DeviceGuard(const DeviceGuard&) = delete;
    DeviceGuard& operator=(const DeviceGuard&) = delete;

private:
    int previous_ = 0;
    bool switched_ = false;
};

}  // namespace imghist::detail
