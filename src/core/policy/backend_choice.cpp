// The Auto backend for host images (backend_choice.hpp says why it is measured and how).
#include "core/policy/backend_choice.hpp"
#include "core/policy/policy.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace imghist::detail {

namespace {
int slot(HostRoute r) { return static_cast<int>(r); }

/// The routes of a class in the order it measures them while settling (ties go to the earlier one).
int routes_of(const HostCallClass& c, HostRoute (&out)[3]) {
    int n = 0;
    out[n++] = HostRoute::Cuda;
    if (c.count_route) out[n++] = HostRoute::CudaCount;
    out[n++] = HostRoute::Cpu;
    return n;
}

int size_class(std::size_t bytes) {
    int c = 0;
    while (c < 63 && (std::size_t(1) << (c + 1)) <= bytes) ++c;
    return c;  // floor(log2(bytes)), 0 for 0 and 1 byte
}
}  // namespace

double BackendChooser::Timings::typical() const {
    const int n = std::min(count, kRecent);
    if (n == 0) return std::numeric_limits<double>::infinity();
    double sorted[kRecent];
    for (int i = 0; i < n; ++i) {  // insertion sort of at most kRecent values
        int j = i;
        for (; j > 0 && sorted[j - 1] > recent[i]; --j) sorted[j] = sorted[j - 1];
        sorted[j] = recent[i];
    }
    return sorted[(n - 1) / 2];
}

std::uint32_t BackendChooser::key_of(const HostCallClass& c) {
    return static_cast<std::uint32_t>(c.work) | static_cast<std::uint32_t>(c.type) << 4 |
           static_cast<std::uint32_t>(c.channels & 7) << 8 | static_cast<std::uint32_t>(c.pinned) << 11 |
           static_cast<std::uint32_t>(size_class(c.bytes)) << 12 | static_cast<std::uint32_t>(c.count_route) << 20;
}

HostRoute BackendChooser::choose(const HostCallClass& c) {
    std::lock_guard<std::mutex> lock(mutex_);
    const HostRoute r = choose_locked(c);
    if (trace_enabled()) trace(c, r);
    return r;
}

bool BackendChooser::trace_enabled() { return policy::trace(); }

void BackendChooser::trace(const HostCallClass& c, HostRoute r) {
    static const char* const work_names[] = {"histogram", "point-filter", "histogram-filter", "clahe",
                                             "channel-histogram"};
    static const char* const route_names[] = {"cpu", "cuda", "cuda-count"};
    const Entry& e = entries_[key_of(c)];
    std::string line = std::string("imghist auto: ") + work_names[static_cast<int>(c.work)] + " " +
                       to_string(c.type) + "x" + std::to_string(c.channels) + " " + std::to_string(c.bytes) + " B" +
                       (c.pinned ? " pinned" : "") + " call " + std::to_string(e.calls - 1) + " -> " +
                       route_names[static_cast<int>(r)] + " (typical us:";
    HostRoute routes[3];
    const int n = routes_of(c, routes);
    for (int i = 0; i < n; ++i) {
        const double t = e.t[slot(routes[i])].typical();
        line += std::string(" ") + route_names[static_cast<int>(routes[i])] + " " +
                (t == std::numeric_limits<double>::infinity() ? std::string("-") : std::to_string(static_cast<long long>(t * 1e6)));
    }
    line += ")\n";
    std::fputs(line.c_str(), stderr);
}

HostRoute BackendChooser::choose_locked(const HostCallClass& c) {
    Entry& e = entries_[key_of(c)];
    if (e.cpu_threads != c.cpu_threads) {  // another thread budget: the CPU timings no longer apply
        e = Entry{};
        e.cpu_threads = c.cpu_threads;
    }
    const std::uint64_t call = e.calls++;
    HostRoute routes[3];
    const int n = routes_of(c, routes);
    // Settling: the route being visited goes on until it has kSamples kept timings, then the next route in
    // order that lacks them.
    const int last = e.last_route;
    if (last >= 0 && e.t[last].count < kSamples) return static_cast<HostRoute>(last);
    for (int i = 0; i < n; ++i)
        if (e.t[slot(routes[i])].count < kSamples) return routes[i];
    int winner = 0;
    for (int i = 1; i < n; ++i)
        if (e.t[slot(routes[i])].typical() < e.t[slot(routes[winner])].typical()) winner = i;
    if (e.recheck_left == 0 && is_recheck(call)) {
        // A recheck visits every other route for kRecheckCalls consecutive calls.
        for (int i = 0; i < n; ++i)
            for (int k = 0; k < kRecheckCalls && i != winner; ++k) e.recheck_queue[e.recheck_left++] = routes[i];
        e.recheck_next = 0;
    }
    if (e.recheck_left > 0) {
        --e.recheck_left;
        return e.recheck_queue[e.recheck_next++];
    }
    return routes[winner];
}

void BackendChooser::record(const HostCallClass& c, HostRoute used, double seconds) {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry& e = entries_[key_of(c)];
    if (e.cpu_threads != c.cpu_threads) return;  // the class restarted meanwhile
    const bool switched = e.last_route != slot(used);
    e.last_route = slot(used);
    if (switched) return;  // the first call of a visit pays the switch: not kept
    Timings& t = e.t[slot(used)];
    t.recent[t.count % kRecent] = seconds;
    ++t.count;
}

void BackendChooser::reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.clear();
}

BackendChooser& host_backend_chooser() {
    static BackendChooser chooser;
    return chooser;
}

}  // namespace imghist::detail
