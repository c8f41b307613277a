// The CPU side's parallel-for (parallel_for.hpp): a small persistent worker pool.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/parallel_for.hpp"

namespace imghist::detail {
namespace {

class Pool {
public:
    static Pool& instance() {
        static Pool pool;
        return pool;
    }

    int size() const noexcept { return static_cast<int>(workers_.size()) + 1; }

    // Runs fn over [0, n) in `parts` contiguous ranges; the calling thread takes part 0.
    void run(int n, int parts, const std::function<void(int, int)>& fn) {
        std::lock_guard<std::mutex> job_lock(job_mutex_);  // one job at a time
        // The calling thread runs parts too: a parallel_for inside them must not start a second job (it would
        // wait for job_mutex_ forever), so it counts as a worker until the job ends.
        struct CallerAsWorker {
            bool saved = Pool::in_worker();
            CallerAsWorker() { Pool::in_worker() = true; }
            ~CallerAsWorker() { Pool::in_worker() = saved; }
        } caller_as_worker;
        {
            std::lock_guard<std::mutex> lk(m_);
            fn_ = &fn;
            n_ = n;
            parts_ = parts;
            next_ = 1;
            pending_ = parts - 1;
            error_ = nullptr;
            ++generation_;
        }
        cv_.notify_all();
        run_part(0);
        std::exception_ptr err;
        {
            std::unique_lock<std::mutex> lk(m_);
            // The caller also helps with parts nobody has picked up yet.
            while (next_ < parts_) {
                const int p = next_++;
                lk.unlock();
                run_part(p);
                lk.lock();
                --pending_;
            }
            done_cv_.wait(lk, [&] { return pending_ == 0; });
            fn_ = nullptr;
            err = error_;
        }
        if (err) std::rethrow_exception(err);
    }

private:
    Pool() {
        const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
        for (unsigned i = 1; i < hw; ++i) workers_.emplace_back([this] { loop(); });
    }
    ~Pool() {
        {
            std::lock_guard<std::mutex> lk(m_);
            stop_ = true;
        }
        cv_.notify_all();
        for (auto& t : workers_) t.join();
    }

    void run_part(int p) {
        const long long begin = static_cast<long long>(n_) * p / parts_;
        const long long end = static_cast<long long>(n_) * (p + 1) / parts_;
        if (begin >= end) return;
        try {
            (*fn_)(static_cast<int>(begin), static_cast<int>(end));
        } catch (...) {
            std::lock_guard<std::mutex> lk(m_);
            if (!error_) error_ = std::current_exception();
        }
    }

    void loop() {
        in_worker() = true;
        unsigned long long seen = 0;
        std::unique_lock<std::mutex> lk(m_);
        for (;;) {
            cv_.wait(lk, [&] { return stop_ || (generation_ != seen && next_ < parts_); });
            if (stop_) return;
            seen = generation_;
            while (fn_ && next_ < parts_) {
                const int p = next_++;
                lk.unlock();
                run_part(p);
                lk.lock();
                if (--pending_ == 0) done_cv_.notify_all();
            }
        }
    }

public:
    static bool& in_worker() {
        thread_local bool flag = false;
        return flag;
    }

private:
    std::vector<std::thread> workers_;
    std::mutex job_mutex_;
    std::mutex m_;
    std::condition_variable cv_, done_cv_;
    const std::function<void(int, int)>* fn_ = nullptr;
    int n_ = 0, parts_ = 0, next_ = 0, pending_ = 0;
    unsigned long long generation_ = 0;
    bool stop_ = false;
    std::exception_ptr error_;
};

std::atomic<ParallelForObserver> g_observer{nullptr};

}  // namespace

void set_parallel_for_observer(ParallelForObserver observer) noexcept { g_observer.store(observer); }

void parallel_for(int n, int threads, const std::function<void(int, int)>& fn) {
    if (n <= 0) return;
    Pool& pool = Pool::instance();
    int parts = threads > 0 ? threads : pool.size();
    parts = std::min(parts, n);
    if (Pool::in_worker()) parts = 1;  // nested (on a worker or on a job's calling thread): runs here
    if (const ParallelForObserver observe = g_observer.load()) observe(threads, std::max(parts, 1));
    if (parts <= 1) {
        fn(0, n);
        return;
    }
    pool.run(n, parts, fn);
}

}  // namespace imghist::detail
