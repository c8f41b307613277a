// The device's share of a split count (split_share.hpp).
#include "core/policy/split_share.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include "core/policy/policy.hpp"

namespace imghist::detail::policy {
namespace {

using Key = std::tuple<int, int, int, int>;

int size_class(std::size_t bytes) {
    int c = 0;
    while (c < 63 && (std::size_t(1) << (c + 1)) <= bytes) ++c;
    return c;
}

Key key_of(const SplitKind& k) {
    return Key{size_class(k.bytes), static_cast<int>(k.type), k.channels, k.threads};
}

struct Shares {
    std::mutex mutex;
    std::map<Key, double> share;
};

Shares& shares() {
    static Shares s;
    return s;
}

}  // namespace

bool split_worthwhile(std::size_t bytes, std::size_t staging_bytes) {
    return bytes >= kConstants.split_min_bytes && bytes <= staging_bytes;
}

double split_share(const SplitKind& kind) {
    Shares& s = shares();
    std::lock_guard<std::mutex> lock(s.mutex);
    const auto it = s.share.find(key_of(kind));
    return it == s.share.end() ? kConstants.split_first_share : it->second;
}

void record_split(const SplitKind& kind, double device_rows, double device_s, double cpu_rows, double cpu_s) {
    if (!(device_s > 0) || !(cpu_s > 0) || device_rows <= 0 || cpu_rows <= 0) return;
    const double device_rate = device_rows / device_s, cpu_rate = cpu_rows / cpu_s;
    const double balanced = device_rate / (device_rate + cpu_rate);
    Shares& s = shares();
    std::lock_guard<std::mutex> lock(s.mutex);
    const Key k = key_of(kind);
    const auto it = s.share.find(k);
    const double old = it == s.share.end() ? kConstants.split_first_share : it->second;
    s.share[k] = std::clamp(0.5 * old + 0.5 * balanced, kConstants.split_min_share, kConstants.split_max_share);
}

}  // namespace imghist::detail::policy
