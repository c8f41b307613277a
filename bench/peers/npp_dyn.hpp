// imghist-bench — NPP's even-bin histogram, loaded at run time with dlopen so that building the benchmark
// needs neither NPP's headers nor its libraries. Where the libraries are absent the column reads "n/a".
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "workloads.hpp"

namespace bench {

class NppHistogram {
public:
    /// Tries `hint` (a file or a directory) first, then the loader's search path, then the usual CUDA
    /// library directories. Returns false (and keeps the reason in why()) when NPP is not found.
    bool load(const std::string& hint);
    /// load(), then runs each entry point once on a small odd-sized image in a forked child process and
    /// keeps only those whose counts match a host count: a wrong declaration or a crash inside NPP then
    /// costs a column, not the benchmark. Must be called before this process initialises CUDA.
    bool load_checked(const std::string& hint, int device);
    bool available() const { return ist_ != nullptr; }
    const std::string& why() const { return why_; }
    /// "13.0.1 (/path/libnppist.so.13)" once loaded.
    const std::string& description() const { return description_; }
    /// Entry points disabled by the self-test, e.g. "8u_C3R (counts differ)"; empty when all passed.
    const std::string& disabled() const { return disabled_; }

    /// Whether NPP has an even-bin histogram for this workload (8u C1/C3/C4, 16u C1).
    bool supports(const Workload& w) const;
    /// Scratch bytes NPP needs for a width x height image of workload `w`; throws BenchError on failure.
    std::size_t buffer_size(const Workload& w, int width, int height, cudaStream_t stream);
    /// Enqueues NPP's histogram of the packed image at `data` into `hist` (channels x bins int32 counters,
    /// channel-major); throws BenchError when NPP returns an error status.
    void run(const Workload& w, const void* data, int width, int height, std::size_t pitch, int* hist,
             void* buffer, cudaStream_t stream);

    ~NppHistogram();

private:
    void* core_ = nullptr;  // libnppc
    void* ist_ = nullptr;   // libnppist (statistics: histograms)
    std::string why_, description_, disabled_;
    int self_test(int device);  // child side: bit i set when variant i works
    void* fn_[8] = {};      // see npp_dyn.cpp for the order
};

}  // namespace bench
