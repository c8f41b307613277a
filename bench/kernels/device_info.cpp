// imghist-bench — device properties and the time stamp of a run.
#include "device_info.hpp"

#include <cuda_runtime.h>

#include <ctime>
#include <string>

#include "common.hpp"

namespace bench {

DeviceInfo query_device(int dev) {
    DeviceInfo d;
    d.ordinal = dev;
    cudaDeviceProp p{};
    BENCH_CUDA(cudaGetDeviceProperties(&p, dev));
    d.name = p.name;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.sms = p.multiProcessorCount;
    d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
    d.l2_bytes = p.l2CacheSize;
    d.smem_per_sm = static_cast<long long>(p.sharedMemPerMultiprocessor);
    d.bus_bits = p.memoryBusWidth;
    int khz = 0;
    cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev);
    d.sm_clock_mhz = khz / 1000;
    cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev);
    d.mem_clock_mhz = khz / 1000;
    d.peak_gbps = 2.0 * khz * 1e3 * (d.bus_bits / 8.0) / 1e9;
    cudaDriverGetVersion(&d.driver);
    cudaRuntimeGetVersion(&d.runtime);
    return d;
}

std::string now_utc() {
    std::time_t t = std::time(nullptr);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

}  // namespace bench
