// imghist_jobs — --trace: where a folder run's time goes.
//
// Each stage of the pipeline (the CPU workers' steps, a GPU's read, decode, encode and write threads, the
// device's decoder and kernels, the durable-write rounds) has a StageClock: the time its threads spent
// working, waiting for input (nothing to do: an earlier stage is slower) and waiting for room (a later
// stage is full: that one is slower). One run's summary then names the stage that limits it: the one whose
// threads are busy nearly all the time while the others wait for it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace cli {

/// --trace is on (set once by the command before its run).
bool tracing();
void set_tracing(bool on);
/// Milliseconds since the program started (the clock of every trace line).
double trace_clock_ms();
/// "imghist: trace: [1234.5 ms] <line>" on stderr, when tracing.
void trace_line(const std::string& line);
/// Names the calling thread ("ih:g0-decode"; at most 15 characters are kept) for debuggers, `top -H` and
/// device profilers, which show each thread's work under its name.
void name_this_thread(const std::string& name);

/// Busy, waiting-for-input and waiting-for-room time of one stage, summed over its threads (thread-safe).
class StageClock {
public:
    enum Kind { Busy, WaitIn, WaitOut };
    StageClock(std::string name, int threads) : name_(std::move(name)), threads_(threads) {}
    void add(Kind k, double ms) { ns_[k].fetch_add(static_cast<std::int64_t>(ms * 1e6)); }
    void add_count(std::size_t n) { count_.fetch_add(n); }
    double ms(Kind k) const { return static_cast<double>(ns_[k].load()) / 1e6; }
    std::size_t count() const { return count_.load(); }
    /// Busy time over the time its threads had (threads x wall).
    double busy_share(double wall_ms) const;
    /// One line: "encode      4 threads  busy  9.51 s  95%  waiting for input 0.31 s  for room 0.02 s  (9188 images)".
    std::string summary(double wall_ms, const char* unit) const;
    const std::string& name() const noexcept { return name_; }
    int threads() const noexcept { return threads_; }

private:
    std::string name_;
    int threads_;
    std::atomic<std::int64_t> ns_[3] = {};
    std::atomic<std::size_t> count_{0};
};

/// Attributes a thread's time to a stage, segment by segment: `to(kind)` ends the segment running since the last
/// call (as its kind) and starts one of `kind`.
class StageTimer {
public:
    explicit StageTimer(StageClock& clock, StageClock::Kind first = StageClock::WaitIn)
        : clock_(clock), kind_(first), since_(std::chrono::steady_clock::now()) {}
    ~StageTimer() { to(kind_); }
    void to(StageClock::Kind next) {
        const auto now = std::chrono::steady_clock::now();
        clock_.add(kind_, std::chrono::duration<double, std::milli>(now - since_).count());
        kind_ = next;
        since_ = now;
    }

private:
    StageClock& clock_;
    StageClock::Kind kind_;
    std::chrono::steady_clock::time_point since_;
};

/// CPU time (user + system) of the calling thread, in seconds.
double thread_cpu_seconds();

}  // namespace cli
