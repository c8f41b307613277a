// imghist filters — CUDA backend: per-(thread, device, stream) workspaces, launch shapes, the
// device-resident pipelines (histogram -> table -> apply, all enqueued on one stream) and the pinned
// staging pipeline for host images.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "../internal.hpp"
#include "cuda/common.cuh"  // core: cuda_check, DeviceGuard
#include "imghist/buffer.hpp"
#include "imghist/histogram.hpp"
#include "kernels.cuh"

namespace imghist::detail {
namespace {

// One translation of CUDA errors into imghist::Error, and the device scope: the core's own helpers.
#define FILTERS_CUDA(expr) ::imghist::detail::cuda_check((expr), "filters: " #expr)
#define FILTERS_LAUNCHED(name) ::imghist::detail::cuda_check(cudaGetLastError(), name)
using DeviceScope = ::imghist::detail::DeviceGuard;

constexpr int kSlots = 4;                              // pinned staging slots in flight
constexpr std::size_t kChunkBytes = std::size_t(16) << 20;  // bytes per staging chunk
constexpr int kThreads = 256;

// The staging pipeline's own stream is keyed apart from every caller stream.
Stream const kInternalKey = reinterpret_cast<Stream>(~std::uintptr_t(0));

struct Workspace {
    int device = 0;
    Stream key = nullptr;
    int sms = 1;
    std::unique_ptr<CudaHistogrammer> histogrammer;
    DeviceBuffer counts;   // histogram counts
    DeviceBuffer small;    // 4 x 256 bytes of tables, then an int threshold
    DeviceBuffer plane;    // luma plane
    DeviceBuffer tile_hist, tile_lut;
    DeviceBuffer stage_src, stage_dst;
    PinnedBuffer value;    // one int the device writes
    PinnedBuffer slots[kSlots];
    cudaEvent_t events[kSlots] = {};
    bool in_flight[kSlots] = {};
    cudaStream_t own = nullptr;

    ~Workspace() {
        int prev = 0;
        const bool have = cudaGetDevice(&prev) == cudaSuccess;
        if (have && prev != device) cudaSetDevice(device);
        for (auto& e : events)
            if (e) cudaEventDestroy(e);
        if (own) cudaStreamDestroy(own);
        histogrammer.reset();
        counts.reset();
        small.reset();
        plane.reset();
        tile_hist.reset();
        tile_lut.reset();
        stage_src.reset();
        stage_dst.reset();
        value.reset();
        for (auto& s : slots) s.reset();
        if (have && prev != device) cudaSetDevice(prev);
    }

    std::uint8_t* tables() { return small.as<std::uint8_t>(); }
    int* device_threshold() { return reinterpret_cast<int*>(small.as<std::uint8_t>() + 1024); }
    int* pinned_int() {
        if (value.size() < sizeof(int)) value.reserve(64);
        return value.as<int>();
    }
};

std::vector<std::unique_ptr<Workspace>>& registry() {
    thread_local std::vector<std::unique_ptr<Workspace>> r;
    return r;
}

/// The calling thread's workspace for (current device, key).
Workspace& workspace(Stream key) {
    int dev = 0;
    FILTERS_CUDA(cudaGetDevice(&dev));
    auto& r = registry();
    for (auto& w : r)
        if (w->device == dev && w->key == key) return *w;
    auto w = std::make_unique<Workspace>();
    w->device = dev;
    w->key = key;
    FILTERS_CUDA(cudaDeviceGetAttribute(&w->sms, cudaDevAttrMultiProcessorCount, dev));
    w->histogrammer = std::make_unique<CudaHistogrammer>(dev);
    w->small.reserve(1024 + 64);
    r.push_back(std::move(w));
    return *r.back();
}

cudaStream_t cu(Stream s) { return reinterpret_cast<cudaStream_t>(s); }

kernels::Span2D make_span(const ImageView& src, const ImageView& dst, bool reverse) {
    kernels::Span2D s;
    s.src = static_cast<const std::uint8_t*>(src.data);
    s.dst = const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(dst.data));
    s.reverse = reverse;
    if (src.contiguous() && dst.contiguous()) {
        s.row_bytes = src.row_bytes() * static_cast<std::size_t>(src.height);
        s.rows = 1;
        s.src_pitch = s.dst_pitch = s.row_bytes;
    } else {
        s.row_bytes = src.row_bytes();
        s.rows = src.height;
        s.src_pitch = src.pitch;
        s.dst_pitch = dst.pitch;
    }
    s.segs_per_row = 1 + (s.row_bytes + 15) / 16;
    return s;
}

/// Grid for a rows x items loop with 256-thread blocks: about 8 resident blocks per SM in total.
dim3 grid_for(const Workspace& ws, std::size_t items_per_row, int rows) {
    const long long target = static_cast<long long>(ws.sms) * 8;
    const long long gy = std::max(1LL, std::min<long long>({static_cast<long long>(rows), 65535LL, target}));
    const long long need_x = static_cast<long long>((items_per_row + kThreads - 1) / kThreads);
    const long long gx = std::max(1LL, std::min(need_x, std::max(1LL, target / gy)));
    return dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
}

/// Histogram of a device image into ws.counts (channels x bins counters); returns the counter type.
CountType device_histogram(Workspace& ws, const ImageView& img, int bins, Stream stream) {
    const CountType type = img.pixels() < (std::size_t(1) << 32) ? CountType::U32 : CountType::U64;
    const std::size_t bytes =
        static_cast<std::size_t>(img.channels) * bins * (type == CountType::U32 ? 4 : 8);
    ws.counts.reserve(bytes);
    DeviceHistogramView out;
    out.counts = ws.counts.data();
    out.type = type;
    ws.histogrammer->compute(img, BinSpec::even(bins, 0.0, static_cast<double>(bins)), out, stream);
    return type;
}

void launch_equalize_tables(Workspace& ws, CountType type, int channels, Stream stream) {
    if (type == CountType::U32)
        kernels::equalize_table_kernel<unsigned int>
            <<<channels, 256, 0, cu(stream)>>>(ws.counts.as<unsigned int>(), ws.tables());
    else
        kernels::equalize_table_kernel<unsigned long long>
            <<<channels, 256, 0, cu(stream)>>>(ws.counts.as<unsigned long long>(), ws.tables());
    FILTERS_LAUNCHED("equalize_table_kernel");
}

void launch_lut(Workspace& ws, const ImageView& src, const ImageView& dst, const std::uint8_t* lut_dev,
                const kernels::LutParam& p, bool reverse, Stream stream) {
    const kernels::Span2D s = make_span(src, dst, reverse);
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

/// Equalization after device_histogram: one kernel derives the tables from ws.counts and applies them.
/// The apply pass walks the image backwards: its first reads hit what the histogram pass left in L2.
void launch_equalize_apply(Workspace& ws, CountType type, const ImageView& src, const ImageView& dst, Stream stream) {
    const kernels::Span2D s = make_span(src, dst, true);
    const dim3 grid = grid_for(ws, s.segs_per_row, s.rows);
    const std::size_t smem = static_cast<std::size_t>(src.channels) * 8192;
    auto go = [&](auto count_tag) {
        using Count = decltype(count_tag);
        const Count* c = reinterpret_cast<const Count*>(ws.counts.data());
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

// Copies rows [r0, r1) between a host view and a packed buffer, split over the worker threads.
void copy_rows(const ImageView& host, std::uint8_t* packed, int r0, int r1, bool to_packed) {
    const std::size_t row = host.row_bytes();
    auto* base = const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(host.data));
    if (host.contiguous()) {
        const std::size_t begin = static_cast<std::size_t>(r0) * row;
        const std::size_t bytes = static_cast<std::size_t>(r1 - r0) * row;
        const std::size_t piece = std::size_t(1) << 20;
        const int n = static_cast<int>((bytes + piece - 1) / piece);
        parallel_for(n, 0, [&](int b, int e) {
            const std::size_t o0 = static_cast<std::size_t>(b) * piece;
            const std::size_t o1 = std::min(bytes, static_cast<std::size_t>(e) * piece);
            if (to_packed) std::memcpy(packed + o0, base + begin + o0, o1 - o0);
            else std::memcpy(base + begin + o0, packed + o0, o1 - o0);
        });
        return;
    }
    parallel_for(r1 - r0, 0, [&](int b, int e) {
        for (int i = b; i < e; ++i) {
            std::uint8_t* h = base + static_cast<std::size_t>(r0 + i) * host.pitch;
            std::uint8_t* p = packed + static_cast<std::size_t>(i) * row;
            if (to_packed) std::memcpy(p, h, row);
            else std::memcpy(h, p, row);
        }
    });
}

/// True when the whole host view lies in page-locked memory the device can copy from directly.
bool is_pinned(const ImageView& v) {
    auto pinned_at = [](const void* p) {
        cudaPointerAttributes a{};
        if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
            (void)cudaGetLastError();
            return false;
        }
        return a.type == cudaMemoryTypeHost;
    };
    const auto* first = static_cast<const std::uint8_t*>(v.data);
    const auto* last = first + v.pitch * static_cast<std::size_t>(v.height - 1) + v.row_bytes() - 1;
    return pinned_at(first) && pinned_at(last);
}

}  // namespace


void cuda_equalize(const ImageView& src, const ImageView& dst, int device, Stream stream) {
    require_device_views(src, dst);
    DeviceScope scope(device);
    Workspace& ws = workspace(stream);
    const CountType type = device_histogram(ws, src, 256, stream);
    launch_equalize_apply(ws, type, src, dst, stream);
}

void cuda_equalize_color(const ImageView& src, const ImageView& dst, ColorEqualize mode, int device, Stream stream) {
    require_device_views(src, dst);
    DeviceScope scope(device);
    Workspace& ws = workspace(stream);
    if (mode == ColorEqualize::PerChannel) {
        const CountType type = device_histogram(ws, src, 256, stream);
        launch_equalize_apply(ws, type, src, dst, stream);
        return;
    }
    ws.plane.reserve(src.pixels());
    const dim3 grid = grid_for(ws, static_cast<std::size_t>(src.width), src.height);
    kernels::luma_plane_kernel<<<grid, kThreads, 0, cu(stream)>>>(static_cast<const std::uint8_t*>(src.data),
                                                                   src.pitch, src.width, src.height, src.channels,
                                                                   ws.plane.as<std::uint8_t>());
    FILTERS_LAUNCHED("luma_plane_kernel");
    const ImageView plane = ImageView::device(ws.plane.data(), src.width, src.height, SampleType::U8, 1,
                                              static_cast<std::size_t>(src.width));
    const CountType type = device_histogram(ws, plane, 256, stream);
    launch_equalize_tables(ws, type, 1, stream);
    kernels::luma_apply_kernel<<<grid, kThreads, 0, cu(stream)>>>(
        static_cast<const std::uint8_t*>(src.data), src.pitch,
        const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(dst.data)), dst.pitch, src.width, src.height,
        src.channels, ws.tables());
    FILTERS_LAUNCHED("luma_apply_kernel");
}

void cuda_apply_lut(const ImageView& src, const ImageView& dst, const Lut8* luts, int device, Stream stream) {
    require_device_views(src, dst);
    DeviceScope scope(device);
    Workspace& ws = workspace(stream);
    kernels::LutParam p{};
    for (int c = 0; c < src.channels; ++c) std::memcpy(p.v[c], luts[c].data(), 256);
    launch_lut(ws, src, dst, nullptr, p, false, stream);
}

double cuda_threshold(const ImageView& src, const ImageView& dst, const ThresholdParams& p, AutoThreshold automatic,
                      int* computed, bool wait, int device, Stream stream) {
    require_device_views(src, dst);
    DeviceScope scope(device);
    Workspace& ws = workspace(stream);
    const int* t_dev = nullptr;
    int* waited = nullptr;
    if (automatic != AutoThreshold::None) {
        const int bins = src.type == SampleType::U8 ? 256 : 65536;
        const CountType type = device_histogram(ws, src, bins, stream);
        int* out = ws.device_threshold();
        int* out2 = computed;
        if (wait) out2 = waited = ws.pinned_int();
        const bool u32 = type == CountType::U32;
        if (automatic == AutoThreshold::Triangle) {
            if (u32) kernels::triangle_kernel<<<1, 256, 0, cu(stream)>>>(ws.counts.as<unsigned int>(), out, out2);
            else kernels::triangle_kernel<<<1, 256, 0, cu(stream)>>>(ws.counts.as<unsigned long long>(), out, out2);
        } else if (bins == 256) {
            if (u32) kernels::otsu256_kernel<<<1, 256, 0, cu(stream)>>>(ws.counts.as<unsigned int>(), out, out2);
            else kernels::otsu256_kernel<<<1, 256, 0, cu(stream)>>>(ws.counts.as<unsigned long long>(), out, out2);
        } else {
            if (u32)
                kernels::otsu_seq_kernel<<<1, 256, 0, cu(stream)>>>(ws.counts.as<unsigned int>(), bins, out, out2);
            else
                kernels::otsu_seq_kernel<<<1, 256, 0, cu(stream)>>>(ws.counts.as<unsigned long long>(), bins, out,
                                                                    out2);
        }
        FILTERS_LAUNCHED("automatic threshold kernel");
        t_dev = out;
    }
    const kernels::Span2D s = make_span(src, dst, automatic != AutoThreshold::None);
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
    if (waited) {
        FILTERS_CUDA(cudaStreamSynchronize(cu(stream)));
        return static_cast<double>(*waited);
    }
    return std::numeric_limits<double>::quiet_NaN();
}

void cuda_clahe(const ImageView& src, const ImageView& dst, const fmath::ClaheGeometry& g, int device, Stream stream) {
    require_device_views(src, dst);
    if (static_cast<long long>(g.tile_w) * g.tile_h >= (1LL << 31))
        throw Error(ErrorCode::Unsupported, "CLAHE: tiles of 2^31 pixels or more");
    DeviceScope scope(device);
    Workspace& ws = workspace(stream);
    const int tiles = g.tiles_x * g.tiles_y;
    const bool u8 = src.type == SampleType::U8;
    const std::size_t hist_bytes = static_cast<std::size_t>(tiles) * g.hist_size * sizeof(unsigned int);
    ws.tile_hist.reserve(hist_bytes);
    ws.tile_lut.reserve(static_cast<std::size_t>(tiles) * g.hist_size * (u8 ? 1 : 2));
    FILTERS_CUDA(cudaMemsetAsync(ws.tile_hist.data(), 0, hist_bytes, cu(stream)));
    kernels::ClaheArgs a{static_cast<const std::uint8_t*>(src.data), src.pitch, g};
    const long long target = static_cast<long long>(ws.sms) * 8;
    const int splits = static_cast<int>(std::max(1LL, std::min<long long>(g.tile_h, (target + tiles - 1) / tiles)));
    if (u8) kernels::clahe_hist_u8_kernel<<<dim3(tiles, splits), kThreads, 0, cu(stream)>>>(a, ws.tile_hist.as<unsigned int>());
    else kernels::clahe_hist_u16_kernel<<<dim3(tiles, splits), kThreads, 0, cu(stream)>>>(a, ws.tile_hist.as<unsigned int>());
    FILTERS_LAUNCHED("clahe_hist kernel");
    if (u8)
        kernels::clahe_lut_kernel<std::uint8_t>
            <<<tiles, 256, 0, cu(stream)>>>(ws.tile_hist.as<unsigned int>(), g, ws.tile_lut.as<std::uint8_t>());
    else
        kernels::clahe_lut_kernel<std::uint16_t>
            <<<tiles, 1024, 0, cu(stream)>>>(ws.tile_hist.as<unsigned int>(), g, ws.tile_lut.as<std::uint16_t>());
    FILTERS_LAUNCHED("clahe_lut kernel");
    const dim3 block(32, 8);
    const long long gx = std::min<long long>((g.width + 31) / 32, 64);
    const long long gy = std::max(1LL, std::min<long long>((g.height + 7) / 8, std::max(1LL, target * 8 / gx)));
    const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(std::min(gy, 65535LL)));
    auto* d = const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(dst.data));
    if (u8)
        kernels::clahe_interp_kernel<std::uint8_t><<<grid, block, 0, cu(stream)>>>(
            a.src, src.pitch, d, dst.pitch, g, ws.tile_lut.as<std::uint8_t>());
    else
        kernels::clahe_interp_kernel<std::uint16_t><<<grid, block, 0, cu(stream)>>>(
            a.src, src.pitch, d, dst.pitch, g, ws.tile_lut.as<std::uint16_t>());
    FILTERS_LAUNCHED("clahe_interp kernel");
}

void cuda_staged(const ImageView& src, const ImageView& dst, int device, Stream stream, const DeviceOp& op) {
    if (src.location != Location::Host || dst.location != Location::Host)
        throw Error(ErrorCode::InvalidArgument, "filters: staged operations need host views");
    DeviceScope scope(device);
    Workspace& ws = workspace(stream ? stream : kInternalKey);
    if (!stream && !ws.own) FILTERS_CUDA(cudaStreamCreateWithFlags(&ws.own, cudaStreamNonBlocking));
    const Stream s = stream ? stream : reinterpret_cast<Stream>(ws.own);

    const std::size_t srow = src.row_bytes(), drow = dst.row_bytes();
    ws.stage_src.reserve(srow * static_cast<std::size_t>(src.height));
    ws.stage_dst.reserve(drow * static_cast<std::size_t>(dst.height));
    const int up_rows = static_cast<int>(std::max<std::size_t>(1, kChunkBytes / srow));
    const int down_rows = static_cast<int>(std::max<std::size_t>(1, kChunkBytes / drow));
    const std::size_t slot_bytes = std::max(static_cast<std::size_t>(up_rows) * srow,
                                            static_cast<std::size_t>(down_rows) * drow);
    for (int i = 0; i < kSlots; ++i) {
        if (ws.slots[i].size() < slot_bytes) {
            if (ws.events[i]) FILTERS_CUDA(cudaEventSynchronize(ws.events[i]));
            ws.slots[i].reserve(slot_bytes);
        }
        if (!ws.events[i]) FILTERS_CUDA(cudaEventCreateWithFlags(&ws.events[i], cudaEventDisableTiming));
    }
    auto* dev_src = ws.stage_src.as<std::uint8_t>();
    auto* dev_dst = ws.stage_dst.as<std::uint8_t>();

    // Page-locked host images are copied directly, without staging.
    const bool src_pinned = is_pinned(src), dst_pinned = is_pinned(dst);
    if (src_pinned)
        FILTERS_CUDA(cudaMemcpy2DAsync(dev_src, srow, src.data, src.pitch, srow, src.height, cudaMemcpyHostToDevice, cu(s)));

    // Upload: the host fills slot k % kSlots while the copy engine drains the previous slots.
    const int up_chunks = src_pinned ? 0 : (src.height + up_rows - 1) / up_rows;
    for (int k = 0; k < up_chunks; ++k) {
        const int slot = k % kSlots;
        if (ws.in_flight[slot]) FILTERS_CUDA(cudaEventSynchronize(ws.events[slot]));
        const int r0 = k * up_rows, r1 = std::min(src.height, r0 + up_rows);
        auto* pinned = ws.slots[slot].as<std::uint8_t>();
        copy_rows(src, pinned, r0, r1, true);
        FILTERS_CUDA(cudaMemcpyAsync(dev_src + static_cast<std::size_t>(r0) * srow, pinned,
                                     static_cast<std::size_t>(r1 - r0) * srow, cudaMemcpyHostToDevice, cu(s)));
        FILTERS_CUDA(cudaEventRecord(ws.events[slot], cu(s)));
        ws.in_flight[slot] = true;
    }

    const ImageView dsrc = ImageView::device(dev_src, src.width, src.height, src.type, src.channels, srow);
    const ImageView ddst = ImageView::device(dev_dst, dst.width, dst.height, dst.type, dst.channels, drow);
    op(dsrc, ddst, s);

    if (dst_pinned) {
        FILTERS_CUDA(cudaMemcpy2DAsync(const_cast<void*>(dst.data), dst.pitch, dev_dst, drow, drow, dst.height,
                                       cudaMemcpyDeviceToHost, cu(s)));
        FILTERS_CUDA(cudaStreamSynchronize(cu(s)));
        return;
    }
    // Download: keep up to kSlots chunks in flight; the host empties slot k while later chunks arrive.
    const int chunks = (dst.height + down_rows - 1) / down_rows;
    auto issue = [&](int k) {
        const int slot = k % kSlots;
        const int r0 = k * down_rows, r1 = std::min(dst.height, r0 + down_rows);
        FILTERS_CUDA(cudaMemcpyAsync(ws.slots[slot].data(), dev_dst + static_cast<std::size_t>(r0) * drow,
                                     static_cast<std::size_t>(r1 - r0) * drow, cudaMemcpyDeviceToHost, cu(s)));
        FILTERS_CUDA(cudaEventRecord(ws.events[slot], cu(s)));
        ws.in_flight[slot] = true;
    };
    for (int k = 0; k < std::min(chunks, kSlots); ++k) issue(k);
    for (int k = 0; k < chunks; ++k) {
        const int slot = k % kSlots;
        FILTERS_CUDA(cudaEventSynchronize(ws.events[slot]));
        ws.in_flight[slot] = false;
        const int r0 = k * down_rows, r1 = std::min(dst.height, r0 + down_rows);
        copy_rows(dst, ws.slots[slot].as<std::uint8_t>(), r0, r1, false);
        if (k + kSlots < chunks) issue(k + kSlots);
    }
    // Everything the op enqueued precedes the last download on this stream, so it has completed too.
}

void cuda_histogram_into(const ImageView& img, const ImageView* mask, const BinSpec& spec, void* counts,
                         std::size_t channel_stride, Stream stream) {
    if (img.pixels() >= (std::size_t(1) << 32))
        throw Error(ErrorCode::Unsupported, "calcHist: 32-bit counts cannot hold a histogram of 2^32 pixels or more");
    Workspace& ws = workspace(stream);
    DeviceHistogramView out;
    out.counts = counts;
    out.type = CountType::U32;
    out.channel_stride = channel_stride;
    AsyncOptions ao;
    if (mask) ao.mask = *mask;
    ws.histogrammer->compute(img, spec, out, stream, ao);
}

int* cuda_pinned_int(int device, Stream stream) {
    DeviceScope scope(device);
    return workspace(stream).pinned_int();
}

void cuda_release_workspaces() noexcept { registry().clear(); }

}  // namespace imghist::detail
