// imghist filters — CUDA side of the level-table operations: the u16 table pass (65536-entry tables, one
// per channel, read through the L1/L2 caches), the luma histogram of BGR(A) images, and the 8-bit
// device-resident paths of contrast stretch, histogram matching and multi-level Otsu (kernels in
// level_kernels.cuh): histogram -> tables derived in the apply kernel's blocks, no host round trip.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "filters/filter_math.hpp"
#include "filters/internal.hpp"
#include "filters/level_table.hpp"
#include "imghist/buffer.hpp"
#include "cuda/runtime/cuda_error.hpp"  // core: cuda_check, DeviceGuard
#include "cuda/device_histogram.hpp"
#include "cuda/tuning/tuning.hpp"
#include "cuda/runtime/workspace.hpp"
#include "filters/cuda/fused.hpp"
#include "filters/cuda/level_kernels.cuh"

namespace imghist::detail {
namespace {

#define LEVELS_CUDA(expr) ::imghist::detail::cuda_check((expr), "filters: " #expr)
#define LEVELS_LAUNCHED(name) ::imghist::detail::cuda_check(cudaGetLastError(), name)

constexpr int kThreads = cuda::FilterTuning::threads;

// Device storage: the core's workspace of (device, stream) — LevelTables, LevelCounts and the 8-bit paths'
// slots. Work on one stream is ordered, so a later call may overwrite what an earlier one's kernels have
// finished reading.

template <int C>
__global__ void table16_kernel(const std::uint8_t* __restrict__ src, std::size_t spitch, std::uint8_t* dst,
                               std::size_t dpitch, int width, int height, const std::uint16_t* __restrict__ tables) {
    const int n = width * C;
    for (int y = blockIdx.y; y < height; y += gridDim.y) {
        const auto* s = reinterpret_cast<const std::uint16_t*>(src + static_cast<std::size_t>(y) * spitch);
        auto* d = reinterpret_cast<std::uint16_t*>(dst + static_cast<std::size_t>(y) * dpitch);
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
            d[i] = __ldg(tables + (static_cast<std::size_t>(i % C) << 16) + s[i]);
    }
}

/// The luma histogram of one BGR(A) image into counts (Levels entries, zeroed beforehand).
template <class T, int Levels>
__global__ void luma_hist_kernel(const std::uint8_t* __restrict__ src, std::size_t pitch, int width, int height,
                                 int channels, unsigned int* __restrict__ counts) {
    using Counts = kernels::LumaBlockCounts<Levels>;
    __shared__ unsigned int local[Counts::kShared ? Levels : 1];
    const Counts luma{local, counts};
    luma.zero();
    for (int y = blockIdx.y; y < height; y += gridDim.y) {
        const T* row = reinterpret_cast<const T*>(src + static_cast<std::size_t>(y) * pitch);
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < width; x += gridDim.x * blockDim.x)
            luma.add(row + static_cast<std::size_t>(x) * channels);
    }
    luma.flush();
}

dim3 grid_for(const Workspace& ws, int width, int height) {
    const long long target =
        static_cast<long long>(ws.sm_count()) * cuda::tuning_for(ws.cc_major()).filters.blocks_per_sm;
    const long long gy = std::max(1LL, std::min<long long>({static_cast<long long>(height), 65535LL, target}));
    const long long gx = std::max(1LL, std::min<long long>((width + kThreads - 1) / kThreads, std::max(1LL, target / gy)));
    return dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
}

void require_device_views(const ImageView& src, const ImageView& dst) {
    if (src.location != Location::Device || dst.location != Location::Device)
        throw Error(ErrorCode::InvalidArgument, "filters: CUDA operations need device views");
}

}  // namespace

void cuda_apply_table16(const ImageView& src, const ImageView& dst, const LevelTable* tables, int device,
                        Stream stream) {
    require_device_views(src, dst);
    if (static_cast<long long>(src.width) * src.channels >= (1LL << 31))
        throw Error(ErrorCode::Unsupported, "apply_table: rows of 2^31 samples or more");
    DeviceGuard scope(device);
    WorkspaceLease ws = acquire_workspace(-1, stream);
    const std::size_t bytes = static_cast<std::size_t>(src.channels) * 65536 * sizeof(std::uint16_t);
    auto* level_tables = ws->device_as<std::uint8_t>(DeviceSlot::LevelTables, bytes);
    // Pageable source: the copy returns once the tables are staged, so they may go out of scope afterwards.
    for (int c = 0; c < src.channels; ++c)
        LEVELS_CUDA(cudaMemcpyAsync(level_tables + static_cast<std::size_t>(c) * 65536 * 2,
                                    tables[c].data(), 65536 * 2, cudaMemcpyHostToDevice, cu(stream)));
    const dim3 grid = grid_for(*ws, src.width * src.channels, src.height);
    const auto* s = static_cast<const std::uint8_t*>(src.data);
    auto* d = const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(dst.data));
    const auto* t = reinterpret_cast<const std::uint16_t*>(level_tables);
    switch (src.channels) {
        case 1: table16_kernel<1><<<grid, kThreads, 0, cu(stream)>>>(s, src.pitch, d, dst.pitch, src.width, src.height, t); break;
        case 2: table16_kernel<2><<<grid, kThreads, 0, cu(stream)>>>(s, src.pitch, d, dst.pitch, src.width, src.height, t); break;
        case 3: table16_kernel<3><<<grid, kThreads, 0, cu(stream)>>>(s, src.pitch, d, dst.pitch, src.width, src.height, t); break;
        default: table16_kernel<4><<<grid, kThreads, 0, cu(stream)>>>(s, src.pitch, d, dst.pitch, src.width, src.height, t); break;
    }
    LEVELS_LAUNCHED("table16_kernel");
}

void cuda_luma_histogram(const ImageView& src, std::uint64_t* hist, int device, Stream stream) {
    if (src.location != Location::Device) throw Error(ErrorCode::InvalidArgument, "luma histogram: device view expected");
    if (src.pixels() >= (std::size_t(1) << 32))
        throw Error(ErrorCode::Unsupported, "luma histogram: images of 2^32 pixels or more");
    DeviceGuard scope(device);
    WorkspaceLease ws = acquire_workspace(-1, stream);
    const int levels = src.type == SampleType::U8 ? 256 : 65536;
    const std::size_t bytes = static_cast<std::size_t>(levels) * sizeof(unsigned int);
    auto* level_counts = ws->device_as<unsigned int>(DeviceSlot::LevelCounts, bytes);
    LEVELS_CUDA(cudaMemsetAsync(level_counts, 0, bytes, cu(stream)));
    const dim3 grid = grid_for(*ws, src.width, src.height);
    const auto* s = static_cast<const std::uint8_t*>(src.data);
    if (levels == 256)
        luma_hist_kernel<std::uint8_t, 256><<<grid, kThreads, 0, cu(stream)>>>(s, src.pitch, src.width, src.height,
                                                                              src.channels, level_counts);
    else
        luma_hist_kernel<std::uint16_t, 65536><<<grid, kThreads, 0, cu(stream)>>>(
            s, src.pitch, src.width, src.height, src.channels, level_counts);
    LEVELS_LAUNCHED("luma_hist_kernel");
    std::vector<unsigned int> host(static_cast<std::size_t>(levels));
    LEVELS_CUDA(cudaMemcpyAsync(host.data(), level_counts, bytes, cudaMemcpyDeviceToHost, cu(stream)));
    LEVELS_CUDA(cudaStreamSynchronize(cu(stream)));
    for (int v = 0; v < levels; ++v) hist[v] = host[static_cast<std::size_t>(v)];
}

// ---- 8-bit device-resident paths -----------------------------------------------------------------------------
namespace {

/// Counts of a device image into the workspace's `slot` (channels x 256 u32), on the core's histogram
/// kernel; returns them.
unsigned int* counts_of(Workspace& ws, const ImageView& img, DeviceSlot slot) {
    DeviceHistogramView out;
    out.counts = ws.device_buffer(slot, static_cast<std::size_t>(img.channels) * 256 * sizeof(unsigned int));
    out.type = CountType::U32;
    cuda_histogram(ws, img, BinSpec::u8(), out);
    return static_cast<unsigned int*>(out.counts);
}

template <kernels::LevelOp Op, class Tgt>
void launch_level_apply(const Workspace& ws, const ImageView& src, const ImageView& dst, const kernels::LevelArgs<Tgt>& a,
                        Stream stream) {
    // Backwards: the first reads hit what the histogram pass left in L2.
    const kernels::Span2D s = kernels::span_of(src, dst, true);
    const dim3 grid = grid_for(ws, static_cast<int>(std::min<std::size_t>(s.segs_per_row, 1u << 30)), s.rows);
    const std::size_t smem = static_cast<std::size_t>(src.channels) * 8192;
    switch (src.channels) {
        case 1: kernels::level_apply_kernel<1, Op, Tgt><<<grid, kThreads, smem, cu(stream)>>>(s, a); break;
        case 2: kernels::level_apply_kernel<2, Op, Tgt><<<grid, kThreads, smem, cu(stream)>>>(s, a); break;
        case 3: kernels::level_apply_kernel<3, Op, Tgt><<<grid, kThreads, smem, cu(stream)>>>(s, a); break;
        default: kernels::level_apply_kernel<4, Op, Tgt><<<grid, kThreads, smem, cu(stream)>>>(s, a); break;
    }
    LEVELS_LAUNCHED("level_apply_kernel");
}

}  // namespace

bool cuda_level_path_u8(const ImageView& src) {
    return src.location == Location::Device && src.type == SampleType::U8 && src.pixels() < (std::size_t(1) << 32);
}

void cuda_stretch_u8(const ImageView& src, const ImageView& dst, double q_lo, double q_hi, bool luma, int device,
                     Stream stream) {
    require_device_views(src, dst);
    DeviceGuard scope(device);
    WorkspaceLease ws = acquire_workspace(-1, stream);
    kernels::LevelArgs<unsigned int> a{};
    a.q_lo = q_lo;
    a.q_hi = q_hi;
    if (luma) {
        auto* luma_counts = ws->device_as<unsigned int>(DeviceSlot::LevelCounts, 256 * sizeof(unsigned int));
        LEVELS_CUDA(cudaMemsetAsync(luma_counts, 0, 256 * sizeof(unsigned int), cu(stream)));
        luma_hist_kernel<std::uint8_t, 256><<<grid_for(*ws, src.width, src.height), kThreads, 0, cu(stream)>>>(
            static_cast<const std::uint8_t*>(src.data), src.pitch, src.width, src.height, src.channels, luma_counts);
        LEVELS_LAUNCHED("luma_hist_kernel");
        for (int c = 0; c < 3; ++c) a.counts[c] = luma_counts;
        a.counts[3] = nullptr;  // alpha: identity
    } else {
        FusedRequest r;
        r.filter = FusedFilter::Stretch;
        r.q_lo = q_lo;
        r.q_hi = q_hi;
        if (try_fused_filter_u8(*ws, src, dst, r, stream)) return;
        const unsigned int* counts = counts_of(*ws, src, DeviceSlot::LevelSource);
        for (int c = 0; c < src.channels; ++c) a.counts[c] = counts + c * 256;
    }
    launch_level_apply<kernels::LevelOp::Stretch>(*ws, src, dst, a, stream);
}

void cuda_match_u8(const ImageView& src, const ImageView* reference, const Histogram* target, const ImageView& dst,
                   int device, Stream stream) {
    require_device_views(src, dst);
    DeviceGuard scope(device);
    WorkspaceLease ws = acquire_workspace(-1, stream);
    if (reference) {
        const unsigned int* ref_counts = counts_of(*ws, *reference, DeviceSlot::LevelTarget);
        FusedRequest r;
        r.filter = FusedFilter::MatchImage;
        r.target = ref_counts;
        if (try_fused_filter_u8(*ws, src, dst, r, stream)) return;
        const unsigned int* counts = counts_of(*ws, src, DeviceSlot::LevelSource);
        kernels::LevelArgs<unsigned int> a{};
        for (int c = 0; c < src.channels; ++c) {
            a.counts[c] = counts + c * 256;
            a.target[c] = ref_counts + c * 256;
        }
        launch_level_apply<kernels::LevelOp::Match>(*ws, src, dst, a, stream);
        return;
    }
    // A host histogram: one launch takes its points in its parameters (or from the workspace's cache, when the
    // target repeats); otherwise its 64-bit counts are copied as they are (a pageable copy returns once staged).
    FusedRequest r;
    r.filter = FusedFilter::MatchHistogram;
    r.target = target->counts.data();
    r.target_stride = target->channels == 1 ? 0 : 256;
    if (try_fused_filter_u8(*ws, src, dst, r, stream)) return;
    const std::size_t bytes = target->counts.size() * sizeof(std::uint64_t);
    auto* target_counts = ws->device_as<unsigned long long>(DeviceSlot::LevelTarget, bytes);
    LEVELS_CUDA(cudaMemcpyAsync(target_counts, target->counts.data(), bytes, cudaMemcpyHostToDevice, cu(stream)));
    const unsigned int* counts = counts_of(*ws, src, DeviceSlot::LevelSource);
    kernels::LevelArgs<unsigned long long> a{};
    for (int c = 0; c < src.channels; ++c) {
        a.counts[c] = counts + c * 256;
        a.target[c] = target_counts + (target->channels == 1 ? 0 : c * 256);
    }
    launch_level_apply<kernels::LevelOp::Match>(*ws, src, dst, a, stream);
}

bool cuda_multiotsu_u8(const ImageView& src, const ImageView& dst, int classes, std::vector<int>& thresholds,
                       std::uint64_t* hist, int device, Stream stream) {
    require_device_views(src, dst);
    DeviceGuard scope(device);
    WorkspaceLease ws = acquire_workspace(-1, stream);
    const unsigned int* counts = counts_of(*ws, src, DeviceSlot::LevelSource);
    auto* result = ws->device_as<kernels::MultiOtsuResult>(DeviceSlot::MultiOtsuResult, sizeof(kernels::MultiOtsuResult));
    const std::size_t host_bytes = sizeof(kernels::MultiOtsuResult) + 256 * sizeof(unsigned int);
    auto* host = static_cast<std::uint8_t*>(ws->pinned_buffer(PinnedSlot::MultiOtsu, host_bytes));
    constexpr std::size_t smem = kernels::multiotsu_smem_bytes();
    allow_dynamic_smem(reinterpret_cast<const void*>(kernels::multiotsu_kernel<unsigned int>), smem, ws->device());
    auto* host_result = reinterpret_cast<kernels::MultiOtsuResult*>(host);
    auto* host_counts = reinterpret_cast<unsigned int*>(host + sizeof(kernels::MultiOtsuResult));
    kernels::multiotsu_kernel<unsigned int><<<1, kernels::kMultiOtsuThreads, smem, cu(stream)>>>(
        counts, classes, result, host_result, host_counts);
    LEVELS_LAUNCHED("multiotsu_kernel");
    // The host needs the search's result, not the labels: it waits for an event behind the search while
    // the label pass runs, and the labels complete in stream order like every other enqueued pass.
    auto* searched = static_cast<cudaEvent_t>(ws->event(EventSlot::MultiOtsuSearch));
    LEVELS_CUDA(cudaEventRecord(searched, cu(stream)));
    kernels::LevelArgs<unsigned int> a{};
    a.result = result;
    a.classes = classes;
    launch_level_apply<kernels::LevelOp::Labels>(*ws, src, dst, a, stream);
    LEVELS_CUDA(cudaEventSynchronize(searched));
    const kernels::MultiOtsuResult r = *host_result;
    for (int v = 0; v < 256; ++v) hist[v] = host_counts[v];
    if (r.status != kernels::kMultiOtsuDone) return false;
    thresholds.assign(r.thresholds, r.thresholds + (classes - 1));
    return true;
}

}  // namespace imghist::detail
