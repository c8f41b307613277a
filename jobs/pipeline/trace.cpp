#include "pipeline/trace.hpp"

#include <pthread.h>
#include <time.h>

#include <cstdio>
#include <mutex>

namespace cli {
namespace {
std::atomic<bool> g_tracing{false};
// The trace's clock starts at the program's static initialisation, just before main.
const std::chrono::steady_clock::time_point g_zero = std::chrono::steady_clock::now();
std::mutex g_trace_mutex;
}  // namespace

bool tracing() { return g_tracing.load(std::memory_order_relaxed); }
void set_tracing(bool on) { g_tracing = on; }

double trace_clock_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g_zero).count();
}

void trace_line(const std::string& line) {
    if (!tracing()) return;
    std::lock_guard<std::mutex> l(g_trace_mutex);
    std::fprintf(stderr, "imghist: trace: [%8.1f ms] %s\n", trace_clock_ms(), line.c_str());
}

double StageClock::busy_share(double wall_ms) const {
    const double room = wall_ms * threads_;
    return room > 0 ? ms(Busy) / room : 0;
}

std::string StageClock::summary(double wall_ms, const char* unit) const {
    char line[320];
    std::snprintf(line, sizeof line,
                  "%-12s %2d thread%s  busy %7.2f s %4.0f%%  waiting for input %6.2f s  for room %6.2f s  (%zu %s)",
                  name_.c_str(), threads_, threads_ == 1 ? " " : "s", ms(Busy) / 1e3, 100 * busy_share(wall_ms),
                  ms(WaitIn) / 1e3, ms(WaitOut) / 1e3, count(), unit);
    return line;
}

double thread_cpu_seconds() {
    timespec ts{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void name_this_thread(const std::string& name) {
#if defined(__linux__)
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
#else
    (void)name;
#endif
}

}  // namespace cli
