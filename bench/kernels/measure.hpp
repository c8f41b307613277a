// imghist-bench — one measured case: our kernel, CUB, NPP, the read limit, the classic kernels and the
// blocking user call on the same buffer, the check of the counts against CUB, and the case's goal.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "context.hpp"

namespace bench {

struct Row {
    const Workload* w = nullptr;
    Data d = Data::Uniform;
    std::size_t target_bytes = 0, bytes = 0;
    int width = 0, height = 0, images = 1;
    Timing ours, cub, npp, limit, atomics, smem;
    Timing blocking;  ///< wall time of the blocking user call imghist::calc_hist(device view), host clock
    std::string kernel, check = "-", npp_check = "-", skipped;
    imghist::detail::LaunchShape shape{};
    std::string goal;   // e.g. ">=90%lim"
    int goal_state = -1;  // -1 no goal, 0 missed, 1 met
    double pct_limit() const { return ours.ok && limit.ok ? 100.0 * limit.median_ms / ours.median_ms : 0.0; }
    double x_cub() const { return ours.ok && cub.ok ? cub.median_ms / ours.median_ms : 0.0; }
};

/// Compares two channel-major count arrays; "ok" or "DIFF n" (n bins differ).
std::string compare_counts(const std::vector<unsigned>& a, const std::vector<unsigned>& b);
std::vector<unsigned> download(const DevMem& m, std::size_t count);
/// The goal for the row's workload and size, and whether the measurement meets it.
void set_goal(Row& r);
/// CUB's DeviceHistogram on one image at `in` into cx.out_cub (see measure.cpp).
Timing time_cub(Context& cx, const Workload& w, const void* in, std::size_t pixels, cudaStream_t s);
/// Fills r's timings for a single-image workload (r.w, r.d, r.target_bytes set), data in cx.input.
void measure_single(Context& cx, Row& r);
/// The batch workload: one launch over r.images images.
void measure_batch(Context& cx, Row& r);
/// Copies the first `bytes` of cx.host into cx.input.
void upload(Context& cx, std::size_t bytes);

}  // namespace bench
