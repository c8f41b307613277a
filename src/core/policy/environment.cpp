// The environment variables of the library (include/imghist/policy.hpp lists them): read here and nowhere
// else, once, into the initial policy overrides.
#include <cstdlib>
#include <cstring>
#include <optional>

#include "core/policy/policy.hpp"

namespace imghist::detail::policy {
namespace {

/// A whole number of bytes, "1e15" included; anything else (empty, negative, text) is ignored.
std::optional<std::size_t> bytes_from(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    char* end = nullptr;
    const double d = std::strtod(v, &end);
    if (end == v || *end != '\0' || !(d >= 0)) return std::nullopt;
    return d >= 1.8e19 ? ~std::size_t(0) : static_cast<std::size_t>(d);
}

bool flag_from(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

}  // namespace

PolicyOverrides overrides_from_environment() {
    PolicyOverrides o;
    o.one_launch_max_bytes = bytes_from("IMGHIST_ONE_LAUNCH_MAX_BYTES");
    o.lut_stream_min_bytes = bytes_from("IMGHIST_LUT_STREAM_MIN_BYTES");
    o.trace = flag_from("IMGHIST_AUTO_TRACE");
    return o;
}

}  // namespace imghist::detail::policy
