#include "io/limits.hpp"

#include <unistd.h>

#include <cstdio>

#include "io/errors.hpp"

namespace cli {

std::uint64_t default_max_memory() noexcept {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return std::uint64_t(1) << 30;
    return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) / 2;
}

std::string format_bytes(std::uint64_t bytes) {
    static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) return std::to_string(bytes) + " bytes";
    double v = static_cast<double>(bytes);
    int u = -1;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, v < 10 && v != static_cast<int>(v) ? "%.1f %s" : "%.0f %s", v, units[u]);
    return buf;
}

void check_decoded_ratio(std::uint64_t decoded, std::uint64_t stored, const Limits& limits, const std::string& name,
                         const std::string& what) {
    if (decoded <= limits.ratio_exempt_bytes) return;
    const unsigned __int128 allowed = static_cast<unsigned __int128>(stored) * limits.max_ratio;
    if (decoded <= allowed) return;
    fail(ErrorCode::Unsupported, name,
         what + " data of " + std::to_string(stored) + " bytes that decodes to " + format_bytes(decoded) + " (" +
             std::to_string(stored ? decoded / stored : decoded) + ":1), above the limit of " +
             std::to_string(limits.max_ratio) + ":1 for images over " + format_bytes(limits.ratio_exempt_bytes) +
             " (a decompression bomb? raise it with --max-ratio)");
}

void check_metadata_size(std::uint64_t items, std::uint64_t bytes, const Limits& limits, const std::string& name) {
    if (items > limits.max_metadata_items)
        fail(ErrorCode::Unsupported, name,
             "carries more than " + std::to_string(limits.max_metadata_items) +
                 " metadata chunks or segments (raise the limit with --max-metadata-items)");
    if (bytes > limits.max_metadata)
        fail(ErrorCode::Unsupported, name,
             "carries more than " + format_bytes(limits.max_metadata) +
                 " of metadata once decoded (raise the limit with --max-metadata)");
}

}  // namespace cli
