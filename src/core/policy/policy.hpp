// Internal: the one home of every automatic choice (include/imghist/policy.hpp lists them for users).
//
// The constants below are the measured starting points of those choices; a choice that is measured at run
// time (the Auto backend, backend_choice.hpp; the device's share of a split count, split_share.hpp) starts
// from them and stays within them. The values each have a decision record in docs/DESIGN.md with the
// measurement behind them; what they trade is said here.
#pragma once

#include <cstddef>

#include "imghist/policy.hpp"

namespace imghist::detail::policy {

struct Constants {
    /// One cooperative launch (count, build the table, apply) pays a grid barrier and counts with a simple
    /// per-block loop; the two-kernel path pays a second launch and reads the image with the tuned
    /// histogram kernel. The barrier wins while the image is small enough that the launch dominates: up to
    /// 4 MiB (640x480 in any channel count, 1080p gray); from 4K on the two kernels are as fast or faster.
    std::size_t one_launch_max_bytes = std::size_t(4) << 20;
    /// Streaming stores skip the cache for a destination that will not be read back soon; below 16 MiB the
    /// destination fits the last-level caches of the hosts measured and cached stores win.
    std::size_t lut_stream_min_bytes = std::size_t(16) << 20;
    /// A pageable image is counted by the device and CPU threads together only from here: below, waking the
    /// CPU threads and the copy engine for both halves costs as much as the whole count.
    std::size_t split_min_bytes = std::size_t(4) << 20;
    /// The device's first share of a split count's rows, before this process has measured the two sides: the
    /// copy engine takes pageable bytes about 30x faster than one CPU thread counts them, and three quarters
    /// of a 16-thread budget count while a quarter packs rows for the copy engine: 30 / (30 + 12).
    double split_first_share = 0.7;
    /// Bounds of the measured share: each side always gets some rows, so both stay measured.
    double split_min_share = 0.05, split_max_share = 0.97;
};

/// The measured constants (one set for every device measured: H100 and H200).
inline constexpr Constants kConstants{};

/// The choices' current values: the constants with the overrides applied.
std::size_t one_launch_max_bytes();
std::size_t lut_stream_min_bytes();
bool trace();

/// The overrides the environment asks for (environment.cpp: the library's only reader of the environment).
PolicyOverrides overrides_from_environment();

}  // namespace imghist::detail::policy
