// imghist_io — a minimal parallel loop for codec work (chunks of rows).
//
// Not the library's parallel-for (imghist/internal/parallel_for.hpp), on purpose: the CLI runs its codecs
// inside the folder pipeline's own loader / processor / storer threads, several files at once, and this
// loop lets those calls proceed side by side (threads of its own, items handed out one at a time). The
// library's pool runs one job at a time, which is right for one call of a library user but would queue
// the pipeline's concurrent encoders behind each other. Library code (the CPU histogram, the filters'
// CPU backend, host staging) uses only the library's.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace cli {

inline int hardware_threads() noexcept {
    unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int>(n);
}

/// Calls fn(i) for i in [0, n) on up to `threads` threads (0 = all hardware threads; fewer when the system
/// refuses to start more); the calling thread takes part. The first exception is rethrown after all threads
/// finish.
template <class Fn>
void parallel_for(std::size_t n, int threads, Fn&& fn) {
    if (threads <= 0) threads = hardware_threads();
    std::size_t workers = std::min<std::size_t>(n, static_cast<std::size_t>(threads));
    if (workers <= 1) {
        for (std::size_t i = 0; i < n; ++i) fn(i);
        return;
    }
    std::atomic<std::size_t> next{0};
    std::exception_ptr error;
    std::mutex error_mutex;
    auto body = [&] {
        for (;;) {
            std::size_t i = next.fetch_add(1);
            if (i >= n) return;
            try {
                fn(i);
            } catch (...) {
                std::lock_guard<std::mutex> lock(error_mutex);
                if (!error) error = std::current_exception();
                next.store(n);
            }
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(workers - 1);
    // When the system refuses more threads, the ones started (and this one) do the work.
    try {
        for (std::size_t t = 1; t < workers; ++t) pool.emplace_back(body);
    } catch (const std::system_error&) {
    }
    body();
    for (auto& th : pool) th.join();
    if (error) std::rethrow_exception(error);
}

}  // namespace cli
