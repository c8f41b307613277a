// imghist-bench — shared helpers: CUDA error checks, a small device allocation, the timing harness.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench {

/// Any failure inside one measurement; the driver turns it into "err" in the table and keeps going.
struct BenchError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline void check(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return;
    (void)cudaGetLastError();
    throw BenchError(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}
#define BENCH_CUDA(expr) ::bench::check((expr), #expr)

/// Owning device allocation (cudaMalloc / cudaFree); grows on reserve, never shrinks.
class DevMem {
public:
    DevMem() = default;
    explicit DevMem(std::size_t bytes) { reserve(bytes); }
    ~DevMem() { reset(); }
    DevMem(const DevMem&) = delete;
    DevMem& operator=(const DevMem&) = delete;
    DevMem(DevMem&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr; o.n_ = 0; }
    DevMem& operator=(DevMem&& o) noexcept {
        if (this != &o) { reset(); p_ = o.p_; n_ = o.n_; o.p_ = nullptr; o.n_ = 0; }
        return *this;
    }
    void reserve(std::size_t bytes) {
        if (bytes <= n_) return;
        reset();
        BENCH_CUDA(cudaMalloc(&p_, bytes == 0 ? 1 : bytes));
        n_ = bytes;
    }
    void reset() noexcept {
        if (p_) cudaFree(p_);
        p_ = nullptr;
        n_ = 0;
    }
    void* get() const noexcept { return p_; }
    template <class T> T* as() const noexcept { return static_cast<T*>(p_); }
    std::size_t size() const noexcept { return n_; }

private:
    void* p_ = nullptr;
    std::size_t n_ = 0;
};

/// Result of timing one operation: median and minimum of the individual runs, in milliseconds.
struct Timing {
    bool ok = false;          ///< false: not run (n/a) or failed (error non-empty)
    double median_ms = 0.0;
    double min_ms = 0.0;
    int runs = 0;
    std::string error;        ///< why it failed, when it did
    std::string note;         ///< e.g. "per-image calls"
    double gbps(double bytes) const { return ok && median_ms > 0 ? bytes / (median_ms * 1e-3) / 1e9 : 0.0; }
};

struct TimingConfig {
    int warmup = 3;
    int reps = 21;
    /// When one warm-up run takes longer than this, fewer runs are taken (never fewer than min_reps); only
    /// used for the slow teaching kernels so a full run stays short.
    double slow_run_ms = 1e30;
    int min_reps = 5;
    bool flush_l2 = false;
};

/// Device-side helpers used by the harness (defined in baselines.cu).
void launch_spin(cudaStream_t stream, double microseconds);
void flush_l2(cudaStream_t stream);

/// Times `op` (which only enqueues work on `stream`) with CUDA events: `warmup` untimed calls, then a short
/// spin kernel so the host can queue the timed calls ahead of the GPU (launch latency does not pad the
/// intervals), then `reps` calls, each between its own pair of events. Returns median and minimum.
template <class Op>
Timing time_op(Op&& op, cudaStream_t stream, const TimingConfig& cfg) {
    Timing t;
    try {
        int reps = cfg.reps;
        cudaEvent_t a, b;
        BENCH_CUDA(cudaEventCreate(&a));
        BENCH_CUDA(cudaEventCreate(&b));
        for (int i = 0; i < cfg.warmup; ++i) {
            if (i + 1 == cfg.warmup) BENCH_CUDA(cudaEventRecord(a, stream));
            op();
            if (i + 1 == cfg.warmup) BENCH_CUDA(cudaEventRecord(b, stream));
        }
        BENCH_CUDA(cudaStreamSynchronize(stream));
        BENCH_CUDA(cudaGetLastError());
        if (cfg.warmup > 0) {
            float ms = 0.f;
            BENCH_CUDA(cudaEventElapsedTime(&ms, a, b));
            if (ms > cfg.slow_run_ms) {
                int fit = static_cast<int>(20.0 * cfg.slow_run_ms / ms);
                reps = std::max(cfg.min_reps, std::min(reps, fit));
            }
        }
        cudaEventDestroy(a);
        cudaEventDestroy(b);

        std::vector<cudaEvent_t> ev(2 * static_cast<std::size_t>(reps));
        for (auto& e : ev) BENCH_CUDA(cudaEventCreate(&e));
        launch_spin(stream, 500.0);
        for (int i = 0; i < reps; ++i) {
            if (cfg.flush_l2) flush_l2(stream);
            BENCH_CUDA(cudaEventRecord(ev[2 * i], stream));
            op();
            BENCH_CUDA(cudaEventRecord(ev[2 * i + 1], stream));
        }
        BENCH_CUDA(cudaStreamSynchronize(stream));
        BENCH_CUDA(cudaGetLastError());
        std::vector<double> ms(reps);
        for (int i = 0; i < reps; ++i) {
            float m = 0.f;
            BENCH_CUDA(cudaEventElapsedTime(&m, ev[2 * i], ev[2 * i + 1]));
            ms[i] = m;
        }
        for (auto& e : ev) cudaEventDestroy(e);
        std::sort(ms.begin(), ms.end());
        t.median_ms = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
        t.min_ms = ms.front();
        t.runs = reps;
        t.ok = true;
    } catch (const std::exception& e) {
        cudaStreamSynchronize(stream);
        (void)cudaGetLastError();
        t.ok = false;
        t.error = e.what();
    }
    return t;
}

/// Times a blocking call (one that returns when its work is done) with the host's steady clock: `warmup`
/// untimed calls, then `reps` timed ones; median and minimum. This is the wall time a user of the call sees,
/// launch and synchronisation included.
template <class Op>
Timing time_wall(Op&& op, const TimingConfig& cfg) {
    Timing t;
    try {
        for (int i = 0; i < cfg.warmup; ++i) op();
        std::vector<double> ms(static_cast<std::size_t>(std::max(1, cfg.reps)));
        for (auto& m : ms) {
            const auto a = std::chrono::steady_clock::now();
            op();
            m = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
        }
        std::sort(ms.begin(), ms.end());
        const std::size_t n = ms.size();
        t.median_ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
        t.min_ms = ms.front();
        t.runs = static_cast<int>(n);
        t.ok = true;
    } catch (const std::exception& e) {
        t.ok = false;
        t.error = e.what();
    }
    return t;
}

}  // namespace bench
