// imghist filters — launch code of the one-launch filters (kernels in fused_kernels.cuh): which images
// take them, the grid (every block resident, as the grid-wide barrier needs), the zeroed counters.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include "filters/level_table.hpp"
#include "core/policy/policy.hpp"
#include "filters/cuda/fused.hpp"
#include "filters/cuda/fused_kernels.cuh"
#include "cuda/runtime/cuda_error.hpp"
#include "cuda/tuning/tuning.hpp"

namespace imghist::detail {
namespace {

using kernels::FusedKind;

constexpr int kMaxDevices = 64;

/// The host tag of DeviceSlot::MatchPoints (followed by the target's counts as given): which points the
/// cache holds.
struct MatchTag {
    int channels;   ///< of the image the points were laid out for
    int stride;     ///< the target's channel stride (0: one histogram for every channel)
    int points[4];  ///< points per channel
};

bool cooperative_launch_supported(int device) {
    static std::atomic<int> known[kMaxDevices];  // 0 unknown, 1 yes, 2 no
    if (device < 0 || device >= kMaxDevices) return false;
    int k = known[device].load(std::memory_order_relaxed);
    if (k == 0) {
        int v = 0;
        cuda_check(cudaDeviceGetAttribute(&v, cudaDevAttrCooperativeLaunch, device), "filters: cooperative launch attribute");
        k = v ? 1 : 2;
        known[device].store(k, std::memory_order_relaxed);
    }
    return k == 1;
}

/// Blocks of one kernel resident per SM, per device: the occupancy query's answer, lowered when a
/// cooperative launch finds fewer (tools that instrument kernels, such as compute-sanitizer's memcheck, make
/// them larger than the query sees). 0 = not asked yet, else the count plus one.
struct ResidentBlocks {
    std::atomic<int> per_device[kMaxDevices] = {};

    template <class Kernel>
    int get(Kernel fn, std::size_t smem, int device) {
        if (device < 0 || device >= kMaxDevices) return 0;
        int n = per_device[device].load(std::memory_order_relaxed);
        if (n == 0) {
            // Matching 4 channels to a host histogram keeps 17 KiB of points and tables in static shared
            // memory beside 32 KiB of counters: more than the default limit leaves.
            allow_dynamic_smem(reinterpret_cast<const void*>(fn), smem, device);
            cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, fn, kernels::kFusedThreads, smem),
                       "filters: fused kernel occupancy");
            n = std::max(n, 0) + 1;
            per_device[device].store(n, std::memory_order_relaxed);
        }
        return n - 1;
    }
    void lower(int device, int blocks) { per_device[device].store(std::max(blocks, 0) + 1, std::memory_order_relaxed); }
};

/// Segments each thread keeps in registers across the barrier (FusedArgs::kept): one where that still makes
/// at most one block per SM (the image then spreads over more SMs, each with less to count before the
/// barrier), else two: every block pays for zeroing its counters, adding them into the global histogram and
/// arriving at the barrier, so a second block per SM costs more than a second kept segment per thread. The
/// timings behind the rule are a decision record in docs/DESIGN.md section 5.
int kept_per_thread(unsigned int segments, int sm_count) {
    const long long blocks_of_one =
        (static_cast<long long>(segments) + kernels::kFusedThreads - 1) / kernels::kFusedThreads;
    return blocks_of_one <= sm_count ? 1 : kernels::kFusedKeptMax;
}

template <int C, FusedKind K, class Args>
bool launch(Workspace& ws, Args& a, Stream stream) {
    static ResidentBlocks resident;  // one per kernel
    auto* fn = kernels::fused_filter_kernel<C, K, Args>;
    const std::size_t smem = kernels::fused_smem_bytes(C, a.copies_log2);
    a.kept = kept_per_thread(a.segments, ws.sm_count());  // 1 or kFusedKeptMax: the kernel's loops count on it
    const long long per_block = static_cast<long long>(kernels::kFusedThreads) * a.kept;
    const long long wanted = (static_cast<long long>(a.segments) + per_block - 1) / per_block;
    void* params[] = {&a};
    for (;;) {
        const int per_sm = resident.get(fn, smem, ws.device());
        if (per_sm <= 0) return false;
        const long long fit = static_cast<long long>(per_sm) * ws.sm_count();
        const unsigned grid = static_cast<unsigned>(std::max(1LL, std::min(wanted, fit)));
        const cudaError_t e = cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(fn), dim3(grid),
                                                          dim3(kernels::kFusedThreads), params, smem, cu(stream));
        if (e != cudaErrorCooperativeLaunchTooLarge) {
            cuda_check(e, "fused_filter_kernel");
            return true;
        }
        // Fewer blocks fit than the query said (the grid-stride loops work with any grid): remember a
        // count below this grid's, and try again.
        (void)cudaGetLastError();
        resident.lower(ws.device(), static_cast<int>(std::min<long long>(per_sm - 1, (grid - 1) / ws.sm_count())));
    }
}

/// f(std::integral_constant<int, C>) for C = channels (1, 3 or 4); false for other counts.
template <class F>
bool with_channels(int channels, F&& f) {
    switch (channels) {
        case 1: return f(std::integral_constant<int, 1>{});
        case 3: return f(std::integral_constant<int, 3>{});
        case 4: return f(std::integral_constant<int, 4>{});
        default: return false;
    }
}

template <FusedKind K, class Args>
bool launch_channels(Workspace& ws, int channels, Args& a, Stream stream) {
    return with_channels(channels, [&](auto c) { return launch<decltype(c)::value, K, Args>(ws, a, stream); });
}

}  // namespace

bool try_fused_filter_u8(Workspace& ws, const ImageView& src, const ImageView& dst, const FusedRequest& r,
                         Stream stream) {
    const bool threshold = r.filter == FusedFilter::Otsu || r.filter == FusedFilter::Triangle;
    if (src.type != SampleType::U8 || src.location != Location::Device || dst.location != Location::Device)
        return false;
    if (threshold ? src.channels != 1 : (src.channels != 1 && src.channels != 3 && src.channels != 4)) return false;
    const kernels::Span2D s = kernels::span_of(src, dst, false);
    const std::size_t bytes = s.row_bytes * static_cast<std::size_t>(s.rows);
    // The kernel counts, sums and indexes segments in 32 bits (also with a one-launch limit set high).
    if (bytes == 0 || bytes > policy::one_launch_max_bytes() || bytes > 0xFFFFFFFFu || !cooperative_launch_supported(ws.device()))
        return false;

    // Counters (4 x 256) and the ticket: zeroed when the buffer is new, left zero by every launch.
    bool grown = false;
    auto* zeroed = ws.device_as<unsigned int>(DeviceSlot::FusedCounts, (4 * 256 + 1) * sizeof(unsigned int), &grown);
    if (grown)
        cuda_check(cudaMemsetAsync(zeroed, 0, (4 * 256 + 1) * sizeof(unsigned int), cu(stream)), "filters: fused counters");

    auto fill = [&](kernels::FusedArgs& a) {
        a.s = s;
        a.segments = static_cast<unsigned int>(s.segs_per_row * static_cast<std::size_t>(s.rows));
        a.counts = zeroed;
        a.ticket = zeroed + 4 * 256;
        a.copies_log2 = cuda::tuning_for(ws.cc_major()).filters.fused_copies_log2;
        a.q_lo = r.q_lo;
        a.q_hi = r.q_hi;
        a.target_stride = r.target_stride;
        a.maxval = r.maxval;
        a.op = r.op;
        a.level = r.level;
        a.level_host = r.level_host;
    };
    if (r.filter == FusedFilter::MatchHistogram) {
        auto go = [&](auto channels) {
            constexpr int C = decltype(channels)::value;
            const auto* host = static_cast<const std::uint64_t*>(r.target);
            const std::size_t target_bytes = (r.target_stride == 0 ? 1 : C) * 256 * sizeof(std::uint64_t);
            // A new buffer comes with an empty tag: nothing cached.
            auto* saved = ws.device_as<kernels::SavedMatchPoints>(DeviceSlot::MatchPoints, sizeof(kernels::SavedMatchPoints));
            std::vector<unsigned char>& tag = ws.host_tag(DeviceSlot::MatchPoints);
            MatchTag head{C, r.target_stride, {}};
            // A stream being captured into a graph runs its work later, maybe more than once, so the tag
            // (what the buffer holds when the call returns) could not describe it: no cache there.
            cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
            cuda_check(cudaStreamIsCapturing(cu(stream), &capture), "filters: stream capture status");
            const bool cache = capture == cudaStreamCaptureStatusNone;
            if (cache && tag.size() == sizeof(MatchTag) + target_bytes) {
                // The points of this target are in the cache when the channel layout and the counts are the same.
                MatchTag cached;
                std::memcpy(&cached, tag.data(), sizeof(MatchTag));
                if (cached.channels == head.channels && cached.stride == head.stride &&
                    std::memcmp(tag.data() + sizeof(MatchTag), host, target_bytes) == 0) {
                    kernels::FusedArgsCachedTarget a{};
                    fill(a);
                    a.saved = saved;
                    std::memcpy(a.points, cached.points, sizeof(a.points));
                    return launch<C, FusedKind::Match>(ws, a, stream);
                }
            }
            kernels::FusedArgsHostTarget<C> a{};
            fill(a);
            a.save = cache ? saved : nullptr;
            MatchPoints p;
            for (int c = 0; c < C; ++c) {
                // One target histogram for every channel (stride 0): its points are found once.
                if (c == 0 || r.target_stride != 0) p = match_points(host + c * r.target_stride, 256);
                a.points[c] = head.points[c] = static_cast<int>(p.xp.size());
                for (std::size_t i = 0; i < p.xp.size(); ++i) {
                    a.xp[c][i] = p.xp[i];
                    a.fp[c][i] = static_cast<std::uint8_t>(p.fp[i]);
                }
            }
            if (!cache) return launch<C, FusedKind::Match>(ws, a, stream);
            tag.clear();  // the launch below overwrites the cache
            if (!launch<C, FusedKind::Match>(ws, a, stream)) return false;
            tag.resize(sizeof(MatchTag) + target_bytes);
            std::memcpy(tag.data(), &head, sizeof(MatchTag));
            std::memcpy(tag.data() + sizeof(MatchTag), host, target_bytes);
            return true;
        };
        return with_channels(src.channels, go);
    }
    kernels::FusedArgs a{};
    fill(a);
    a.target = static_cast<const unsigned int*>(r.target);  // MatchImage: the reference's device counts
    switch (r.filter) {
        case FusedFilter::Equalize: return launch_channels<FusedKind::Equalize>(ws, src.channels, a, stream);
        case FusedFilter::Stretch: return launch_channels<FusedKind::Stretch>(ws, src.channels, a, stream);
        case FusedFilter::MatchImage: return launch_channels<FusedKind::Match>(ws, src.channels, a, stream);
        case FusedFilter::Otsu: return launch<1, FusedKind::Otsu>(ws, a, stream);
        case FusedFilter::Triangle: return launch<1, FusedKind::Triangle>(ws, a, stream);
        default: return false;
    }
}

}  // namespace imghist::detail
