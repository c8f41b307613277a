// The overrides of the automatic choices (policy.hpp), process-wide.
#include "core/policy/policy.hpp"

#include <mutex>

namespace imghist {
namespace {

struct State {
    std::mutex mutex;
    PolicyOverrides overrides = detail::policy::overrides_from_environment();
};

State& state() {
    static State s;
    return s;
}

PolicyOverrides current() {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    return s.overrides;
}

}  // namespace

void set_policy_overrides(const PolicyOverrides& overrides) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.overrides = overrides;
}

PolicyOverrides policy_overrides() { return current(); }

namespace detail::policy {

std::size_t one_launch_max_bytes() {
    return current().one_launch_max_bytes.value_or(kConstants.one_launch_max_bytes);
}

std::size_t lut_stream_min_bytes() {
    return current().lut_stream_min_bytes.value_or(kConstants.lut_stream_min_bytes);
}

bool trace() { return current().trace; }

}  // namespace detail::policy
}  // namespace imghist
