// imghist-bench — what the device is (printed and written with every result).
#pragma once

#include <string>

namespace bench {

struct DeviceInfo {
    std::string name;
    int ordinal = 0, cc_major = 0, cc_minor = 0, sms = 0, sm_clock_mhz = 0, mem_clock_mhz = 0, bus_bits = 0;
    int max_threads_per_sm = 2048;
    long long l2_bytes = 0, smem_per_sm = 0;
    double peak_gbps = 0;  // 2 (DDR) x memory clock x bus width
    int driver = 0, runtime = 0;
};

DeviceInfo query_device(int dev);
/// The current time, ISO 8601 in UTC.
std::string now_utc();
/// A CUDA version number (12040) as "12.4".
std::string version_string(int v);

}  // namespace bench
