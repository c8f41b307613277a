// Internal: the one parallel-for of the CPU side (the CPU histogram backend, the filters' CPU backend and
// the host staging copies), on one persistent worker pool per process. The thread count comes from the
// caller: Options::cpu_threads / FilterOptions::cpu_threads, which the gpuhist:: layer sets from
// cv::getNumThreads() (cv::setNumThreads); 0 = every hardware thread.
#pragma once

#include <functional>

namespace imghist::detail {

/// Runs fn(begin, end) over [0, n) split into contiguous ranges on up to `threads` workers (0 = all); the
/// calling thread takes part. Nested calls (from inside fn) run on the calling worker. The first exception
/// thrown by fn is rethrown after every part has finished.
void parallel_for(int n, int threads, const std::function<void(int, int)>& fn);

/// Test hook: called by every parallel_for with the thread count it was given (0 = all) and the number of
/// parts it splits the work into (at most that many threads run them, the caller's included), so tests can
/// see what reached the backend. nullptr (the default): nothing is called.
using ParallelForObserver = void (*)(int threads, int parts);
void set_parallel_for_observer(ParallelForObserver observer) noexcept;

}  // namespace imghist::detail
