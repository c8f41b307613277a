// imghist filters — CUDA backend: launch shapes and the device-resident pipelines (histogram -> table ->
// apply, all enqueued on one stream). Temporary storage is the core's workspace of (device, stream), host
// images come through the core's staging path (cuda/runtime/staging.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "filters/internal.hpp"
#include "imghist/buffer.hpp"
#include "imghist/histogram.hpp"
#include "cuda/runtime/cuda_error.hpp"  // core: cuda_check, DeviceGuard
#include "cuda/device_histogram.hpp"
#include "cuda/tuning/tuning.hpp"
#include "cuda/runtime/workspace.hpp"
#include "filters/cuda/fused.hpp"
#include "filters/cuda/kernels.cuh"

namespace imghist::detail {
namespace {

// One translation of CUDA errors into imghist::Error, and the device scope: the core's own helpers.
#define FILTERS_CUDA(expr) ::imghist::detail::cuda_check((expr), "filters: " #expr)
#define FILTERS_LAUNCHED(name) ::imghist::detail::cuda_check(cudaGetLastError(), name)
using DeviceScope = ::imghist::detail::DeviceGuard;

constexpr int kThreads = cuda::FilterTuning::threads;

/// The filters' row of the tuning table for a workspace's device.
const cuda::FilterTuning& tuning(const Workspace& ws) { return cuda::tuning_for(ws.cc_major()).filters; }

/// 4 x 256 bytes of tables, then an int threshold.
std::uint8_t* tables(Workspace& ws) { return ws.device_as<std::uint8_t>(DeviceSlot::Tables, 1024 + 64); }
int* device_threshold(Workspace& ws) { return reinterpret_cast<int*>(tables(ws) + 1024); }

/// The workspace of the current device and `stream` (callers hold a DeviceScope).
WorkspaceLease workspace(Stream stream) { return acquire_workspace(-1, stream); }

/// Grid for a rows x items loop of kThreads-thread blocks: the tuning table's blocks per SM in total.
dim3 grid_for(const Workspace& ws, std::size_t items_per_row, int rows) {
    const long long target = static_cast<long long>(ws.sm_count()) * tuning(ws).blocks_per_sm;
    const long long gy = std::max(1LL, std::min<long long>({static_cast<long long>(rows), 65535LL, target}));
    const long long need_x = static_cast<long long>((items_per_row + kThreads - 1) / kThreads);
    const long long gx = std::max(1LL, std::min(need_x, std::max(1LL, target / gy)));
    return dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
}

/// Histogram of a device image into the workspace's Counts (channels x bins counters); returns the counter type.
CountType device_histogram(Workspace& ws, const ImageView& img, int bins) {
    const CountType type = img.pixels() < (std::size_t(1) << 32) ? CountType::U32 : CountType::U64;
    const std::size_t bytes =
        static_cast<std::size_t>(img.channels) * bins * (type == CountType::U32 ? 4 : 8);
    DeviceHistogramView out;
    out.counts = ws.device_buffer(DeviceSlot::Counts, bytes);
    out.type = type;
    cuda_histogram(ws, img, BinSpec::even(bins, 0.0, static_cast<double>(bins)), out);
    return type;
}

template <class T>
T* counts(Workspace& ws) { return static_cast<T*>(ws.device_buffer(DeviceSlot::Counts, 0)); }

void launch_equalize_tables(Workspace& ws, CountType type, int channels, Stream stream) {
    if (type == CountType::U32)
        kernels::equalize_table_kernel<unsigned int>
            <<<channels, cuda::FilterTuning::level_threads, 0, cu(stream)>>>(counts<unsigned int>(ws), tables(ws));
    else
        kernels::equalize_table_kernel<unsigned long long>
            <<<channels, cuda::FilterTuning::level_threads, 0, cu(stream)>>>(counts<unsigned long long>(ws), tables(ws));
    FILTERS_LAUNCHED("equalize_table_kernel");
}

void launch_lut(Workspace& ws, const ImageView& src, const ImageView& dst, const std::uint8_t* lut_dev,
                const kernels::LutParam& p, bool reverse, Stream stream) {
    const kernels::Span2D s = kernels::span_of(src, dst, reverse);
    const dim3 grid = grid_for(ws, s.segs_per_row, s.rows);
    const std::size_t smem = static_cast<std::size_t>(src.channels) * 8192;
    switch (src.channels) {
        case 1: kernels::lut_kernel<1><<<grid, kThreads, smem, cu(stream)>>>(s, lut_dev, p); break;
        case 2: kernels::lut_kernel<2><<<grid, kThreads, smem, cu(stream)>>>(s, lut_dev, p); break;
        case 3: kernels::lut_kernel<3><<<grid, kThreads, smem, cu(stream)>>>(s, lut_dev, p); break;
        default: kernels::lut_kernel<4><<<grid, kThreads, smem, cu(stream)>>>(s, lut_dev, p); break;
    }
    FILTERS_LAUNCHED("lut_kernel");
}

/// Equalization after device_histogram: one kernel derives the tables from the counts and applies them.
/// The apply pass walks the image backwards: its first reads hit what the histogram pass left in L2.
void launch_equalize_apply(Workspace& ws, CountType type, const ImageView& src, const ImageView& dst, Stream stream) {
    const kernels::Span2D s = kernels::span_of(src, dst, true);
    const dim3 grid = grid_for(ws, s.segs_per_row, s.rows);
    const std::size_t smem = static_cast<std::size_t>(src.channels) * 8192;
    auto go = [&](auto count_tag) {
        using Count = decltype(count_tag);
        const Count* c = counts<const Count>(ws);
        switch (src.channels) {
            case 1: kernels::equalize_apply_kernel<1, Count><<<grid, kThreads, smem, cu(stream)>>>(s, c); break;
            case 2: kernels::equalize_apply_kernel<2, Count><<<grid, kThreads, smem, cu(stream)>>>(s, c); break;
            case 3: kernels::equalize_apply_kernel<3, Count><<<grid, kThreads, smem, cu(stream)>>>(s, c); break;
            default: kernels::equalize_apply_kernel<4, Count><<<grid, kThreads, smem, cu(stream)>>>(s, c); break;
        }
    };
    if (type == CountType::U32) go(0u);
    else go(0ull);
    FILTERS_LAUNCHED("equalize_apply_kernel");
}

void require_device_views(const ImageView& src, const ImageView& dst) {
    if (src.location != Location::Device || dst.location != Location::Device)
        throw Error(ErrorCode::InvalidArgument, "filters: CUDA operations need device views");
}

}  // namespace


void cuda_equalize(const ImageView& src, const ImageView& dst, int device, Stream stream) {
    require_device_views(src, dst);
    DeviceScope scope(device);
    WorkspaceLease lease = workspace(stream);
    Workspace& ws = *lease;
    if (try_fused_filter_u8(ws, src, dst, FusedRequest{FusedFilter::Equalize}, stream)) return;
    const CountType type = device_histogram(ws, src, 256);
    launch_equalize_apply(ws, type, src, dst, stream);
}

void cuda_equalize_color(const ImageView& src, const ImageView& dst, ColorEqualize mode, int device, Stream stream) {
    require_device_views(src, dst);
    DeviceScope scope(device);
    WorkspaceLease lease = workspace(stream);
    Workspace& ws = *lease;
    if (mode == ColorEqualize::PerChannel) {
        if (try_fused_filter_u8(ws, src, dst, FusedRequest{FusedFilter::Equalize}, stream)) return;
        const CountType type = device_histogram(ws, src, 256);
        launch_equalize_apply(ws, type, src, dst, stream);
        return;
    }
    auto* plane_buf = ws.device_as<std::uint8_t>(DeviceSlot::Plane, src.pixels());
    const dim3 grid = grid_for(ws, static_cast<std::size_t>(src.width), src.height);
    kernels::luma_plane_kernel<<<grid, kThreads, 0, cu(stream)>>>(static_cast<const std::uint8_t*>(src.data),
                                                                   src.pitch, src.width, src.height, src.channels,
                                                                   plane_buf);
    FILTERS_LAUNCHED("luma_plane_kernel");
    const ImageView plane = ImageView::device(plane_buf, src.width, src.height, SampleType::U8, 1,
                                              static_cast<std::size_t>(src.width));
    const CountType type = device_histogram(ws, plane, 256);
    launch_equalize_tables(ws, type, 1, stream);
    kernels::luma_apply_kernel<<<grid, kThreads, 0, cu(stream)>>>(
        static_cast<const std::uint8_t*>(src.data), src.pitch,
        const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(dst.data)), dst.pitch, src.width, src.height,
        src.channels, tables(ws));
    FILTERS_LAUNCHED("luma_apply_kernel");
}

void cuda_apply_lut(const ImageView& src, const ImageView& dst, const Lut8* luts, int device, Stream stream) {
    require_device_views(src, dst);
    DeviceScope scope(device);
    WorkspaceLease lease = workspace(stream);
    Workspace& ws = *lease;
    kernels::LutParam p{};
    for (int c = 0; c < src.channels; ++c) std::memcpy(p.v[c], luts[c].data(), 256);
    launch_lut(ws, src, dst, nullptr, p, false, stream);
}

void cuda_threshold(const ImageView& src, const ImageView& dst, const ThresholdParams& p, AutoThreshold automatic,
                    int* computed, int device, Stream stream) {
    require_device_views(src, dst);
    DeviceScope scope(device);
    WorkspaceLease lease = workspace(stream);
    Workspace& ws = *lease;
    const int* t_dev = nullptr;
    if (automatic != AutoThreshold::None && src.type == SampleType::U8) {
        // One launch: the histogram, the threshold and the pass.
        FusedRequest r;
        r.filter = automatic == AutoThreshold::Otsu ? FusedFilter::Otsu : FusedFilter::Triangle;
        r.maxval = p.imaxval;
        r.op = p.op;
        r.level = device_threshold(ws);
        r.level_host = computed;
        if (try_fused_filter_u8(ws, src, dst, r, stream)) return;
    }
    if (automatic != AutoThreshold::None) {
        const int bins = src.type == SampleType::U8 ? 256 : 65536;
        const CountType type = device_histogram(ws, src, bins);
        int* out = device_threshold(ws);
        int* out2 = computed;
        const bool triangle = automatic == AutoThreshold::Triangle;
        constexpr int threads = cuda::FilterTuning::level_threads;
        if (type == CountType::U32)
            kernels::auto_level_kernel<<<1, threads, 0, cu(stream)>>>(counts<unsigned int>(ws), bins, triangle, out, out2);
        else
            kernels::auto_level_kernel<<<1, threads, 0, cu(stream)>>>(counts<unsigned long long>(ws), bins, triangle, out, out2);
        FILTERS_LAUNCHED("automatic threshold kernel");
        t_dev = out;
    }
    const kernels::Span2D s = kernels::span_of(src, dst, automatic != AutoThreshold::None);
    switch (src.type) {
        case SampleType::U8: {
            const dim3 grid = grid_for(ws, s.segs_per_row, s.rows);
            kernels::threshold_u8_kernel<<<grid, kThreads, 0, cu(stream)>>>(s, t_dev, p.ithresh, p.imaxval, p.op);
            break;
        }
        case SampleType::U16: {
            const dim3 grid = grid_for(ws, s.row_bytes / 2, s.rows);
            kernels::threshold_elem_kernel<std::uint16_t>
                <<<grid, kThreads, 0, cu(stream)>>>(s, t_dev, p.ithresh, p.imaxval, 0.f, 0.f, p.op);
            break;
        }
        case SampleType::F32: {
            const dim3 grid = grid_for(ws, s.row_bytes / 4, s.rows);
            kernels::threshold_elem_kernel<float>
                <<<grid, kThreads, 0, cu(stream)>>>(s, nullptr, 0, 0, p.fthresh, p.fmaxval, p.op);
            break;
        }
        default: throw Error(ErrorCode::Unsupported, "threshold: unsupported sample type");
    }
    FILTERS_LAUNCHED("threshold kernel");
}

void cuda_clahe(const ImageView& src, const ImageView& dst, const fmath::ClaheGeometry& g, int device, Stream stream) {
    require_device_views(src, dst);
    if (static_cast<long long>(g.tile_w) * g.tile_h >= (1LL << 31))
        throw Error(ErrorCode::Unsupported, "CLAHE: tiles of 2^31 pixels or more");
    DeviceScope scope(device);
    WorkspaceLease lease = workspace(stream);
    Workspace& ws = *lease;
    const int tiles = g.tiles_x * g.tiles_y;
    const bool u8 = src.type == SampleType::U8;
    const std::size_t hist_bytes = static_cast<std::size_t>(tiles) * g.hist_size * sizeof(unsigned int);
    auto* tile_hist = ws.device_as<unsigned int>(DeviceSlot::TileHist, hist_bytes);
    void* tile_lut = ws.device_buffer(DeviceSlot::TileLut, static_cast<std::size_t>(tiles) * g.hist_size * (u8 ? 1 : 2));
    FILTERS_CUDA(cudaMemsetAsync(tile_hist, 0, hist_bytes, cu(stream)));
    kernels::ClaheArgs a{static_cast<const std::uint8_t*>(src.data), src.pitch, g};
    const long long target = static_cast<long long>(ws.sm_count()) * tuning(ws).blocks_per_sm;
    const int splits = static_cast<int>(std::max(1LL, std::min<long long>(g.tile_h, (target + tiles - 1) / tiles)));
    if (u8) kernels::clahe_hist_u8_kernel<<<dim3(tiles, splits), kThreads, 0, cu(stream)>>>(a, tile_hist);
    else kernels::clahe_hist_u16_kernel<<<dim3(tiles, splits), kThreads, 0, cu(stream)>>>(a, tile_hist);
    FILTERS_LAUNCHED("clahe_hist kernel");
    if (u8)
        kernels::clahe_lut_kernel<std::uint8_t>
            <<<tiles, cuda::FilterTuning::level_threads, 0, cu(stream)>>>(tile_hist, g, static_cast<std::uint8_t*>(tile_lut));
    else
        kernels::clahe_lut_kernel<std::uint16_t>
            <<<tiles, tuning(ws).clahe_lut16_threads, 0, cu(stream)>>>(tile_hist, g, static_cast<std::uint16_t*>(tile_lut));
    FILTERS_LAUNCHED("clahe_lut kernel");
    const cuda::FilterTuning& t = tuning(ws);
    const dim3 block(t.clahe_block_x, t.clahe_block_y);
    const long long gx = std::min<long long>((g.width + t.clahe_block_x - 1) / t.clahe_block_x, t.clahe_max_grid_x);
    const long long gy = std::max(1LL, std::min<long long>((g.height + t.clahe_block_y - 1) / t.clahe_block_y,
                                                           std::max(1LL, target * t.clahe_interp_factor / gx)));
    const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(std::min(gy, 65535LL)));
    auto* d = const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(dst.data));
    if (u8)
        kernels::clahe_interp_kernel<std::uint8_t><<<grid, block, 0, cu(stream)>>>(
            a.src, src.pitch, d, dst.pitch, g, static_cast<std::uint8_t*>(tile_lut));
    else
        kernels::clahe_interp_kernel<std::uint16_t><<<grid, block, 0, cu(stream)>>>(
            a.src, src.pitch, d, dst.pitch, g, static_cast<std::uint16_t*>(tile_lut));
    FILTERS_LAUNCHED("clahe_interp kernel");
}

}  // namespace imghist::detail
