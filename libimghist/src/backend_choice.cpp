// The Auto backend for host images (backend_choice.hpp says why it is measured and how).
#include "imghist/internal/backend_choice.hpp"

#include <algorithm>
#include <limits>

namespace imghist::detail {

namespace {
constexpr int kCpu = 0, kCuda = 1;
int slot(Backend b) { return b == Backend::Cuda ? kCuda : kCpu; }

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
           static_cast<std::uint32_t>(size_class(c.bytes)) << 12;
}

Backend BackendChooser::choose(const HostCallClass& c) {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry& e = entries_[key_of(c)];
    if (e.cpu_threads != c.cpu_threads) {  // another thread budget: the CPU timings no longer apply
        e = Entry{};
        e.cpu_threads = c.cpu_threads;
    }
    const std::uint64_t call = e.calls++;
    // Settling: alternate, CUDA first, until both have kSamples kept timings.
    if (e.t[kCuda].count < kSamples || e.t[kCpu].count < kSamples)
        return e.t[kCuda].seen <= e.t[kCpu].seen ? Backend::Cuda : Backend::Cpu;
    const int winner = e.t[kCuda].typical() <= e.t[kCpu].typical() ? kCuda : kCpu;
    const int pick = is_recheck(call) ? 1 - winner : winner;
    return pick == kCuda ? Backend::Cuda : Backend::Cpu;
}

void BackendChooser::record(const HostCallClass& c, Backend used, double seconds) {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry& e = entries_[key_of(c)];
    if (e.cpu_threads != c.cpu_threads) return;  // the class restarted meanwhile
    Timings& t = e.t[slot(used)];
    if (t.seen++ == 0) return;  // the backend's first call in the class: one-time costs, not kept
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
