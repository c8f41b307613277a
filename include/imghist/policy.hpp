// imghist — the automatic choices the library makes, and how to override them.
//
// Every call gives the same bits whichever way it runs; these choices only decide how fast. Each is made in
// one place (src/core/policy/) from one set of measured constants, and the overrides below are the only
// way to change them:
//
//   choice                                        | default                                 | override
//   ----------------------------------------------+-----------------------------------------+-----------------------
//   backend of a host-image call (Backend::Auto)  | measured in this process per kind of     | Options::backend,
//                                                 | call (see Backend, histogram.hpp)        | FilterOptions::backend
//   device and CPU threads counting one large     | measured per kind of call; images of     | Options::backend
//   pageable image together (Auto's third route)  | 4 MiB up to the pinned chunks (64 MiB)   |
//   one launch for histogram + table + apply of   | 8-bit device images up to 4 MiB          | one_launch_max_bytes
//   a device filter (cooperative kernel)          |                                         |
//   streaming (cache-bypassing) stores in the     | destinations from 16 MiB                 | lut_stream_min_bytes
//   CPU's 8-bit table pass                        |                                         |
//   a line on stderr for every Auto choice        | off                                     | trace
//
// The overrides start from the environment, read once at the first choice: IMGHIST_ONE_LAUNCH_MAX_BYTES,
// IMGHIST_LUT_STREAM_MIN_BYTES (whole numbers of bytes; 0 turns the one-launch path off, or makes every
// table pass stream) and IMGHIST_AUTO_TRACE (1 = on). No other environment variable changes the library.
#pragma once

#include "imghist/export.hpp"

#include <cstddef>
#include <optional>

namespace imghist {

struct PolicyOverrides {
    /// Largest 8-bit device image (bytes) whose filters run as one cooperative launch; larger ones take the
    /// histogram kernel, then one table-and-apply kernel. 0: never one launch.
    std::optional<std::size_t> one_launch_max_bytes;
    /// Smallest destination (bytes) of the CPU's 8-bit table pass written with streaming stores.
    std::optional<std::size_t> lut_stream_min_bytes;
    /// Write every Auto choice for a host image to stderr: the kind of call, the route taken and each
    /// route's typical time.
    bool trace = false;
};

/// Replaces the process-wide overrides (the environment's included). Thread-safe; calls already running
/// keep the values they started with.
IMGHIST_API void set_policy_overrides(const PolicyOverrides& overrides);
/// The overrides in force: the environment's, or the last set_policy_overrides.
IMGHIST_API PolicyOverrides policy_overrides();

}  // namespace imghist
