// imghist filters — CUDA backend of the batch filters (batch.hpp): how a batch reaches the kernels
// (batch_launch.hpp), and equalization and thresholds: the histograms of the whole batch in one launch, the tables
// or levels of every image in one, the pass over every image in one, all on the caller's stream.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/device_histogram.hpp"
#include "filters/cuda/batch_launch.hpp"

namespace imghist::detail {

void check_batch_size(std::size_t images, const char* op) {
    if (images > static_cast<std::size_t>(INT_MAX))
        throw Error(ErrorCode::Unsupported, std::string(op) + ": more than 2^31 - 1 images in one batch");
}

namespace {

constexpr const char* kVariableShape = "a variable-shape batch copies its image descriptors on every call";

/// batch_ref's test: `count` images (clahe: their geometries, or null) addressed from the first and the strides.
bool strided(const DeviceBatch& b, std::size_t count, const fmath::ClaheGeometry* clahe) {
    bool uniform = b.uniform;
    if (uniform && clahe)  // one size, so one geometry unless the borders beyond the images differ
        for (std::size_t k = 1; k < count && uniform; ++k)
            uniform = clahe[k].ext_w == clahe[0].ext_w && clahe[k].ext_h == clahe[0].ext_h;
    return uniform;
}

}  // namespace

const char* layout_obstacle(const DeviceBatch& b, const fmath::ClaheGeometry* clahe) {
    return strided(b, b.count, clahe) ? nullptr : kVariableShape;
}

void refuse_capture(Stream stream, const char* op, const char* obstacle) {
    if (!obstacle || !stream) return;  // the legacy default stream cannot be captured
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    BATCH_CUDA(cudaStreamIsCapturing(cu(stream), &capture));
    if (capture != cudaStreamCaptureStatusNone)
        throw Error(ErrorCode::Unsupported,
                    std::string(op) + ": the stream is being captured into a CUDA graph, and " + obstacle);
}

kernels::BatchRef batch_ref(Workspace& ws, const DeviceBatch& b, std::size_t first, std::size_t count,
                            std::size_t unit, PassUnit per, const fmath::ClaheGeometry* clahe) {
    auto work_of = [&](std::size_t k) {
        const ImageView& v = b.src[first + k];
        return per == PassUnit::Bytes ? v.row_bytes() * static_cast<std::size_t>(v.height) : v.pixels();
    };
    auto describe = [&](std::size_t i, std::size_t block_begin) {
        kernels::BatchImage d{};
        d.src = static_cast<const std::uint8_t*>(b.src[i].data);
        d.dst = const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(b.dst[i].data));
        d.src_pitch = b.src[i].pitch;
        d.dst_pitch = b.dst[i].pitch;
        d.width = b.src[i].width;
        d.height = b.src[i].height;
        d.block_begin = static_cast<unsigned int>(block_begin);
        if (clahe) d.clahe = clahe[i - first];
        return d;
    };
    const bool uniform = strided(b, count, clahe);
    kernels::BatchRef r{};
    r.count = static_cast<unsigned int>(count);
    if (uniform) {
        // Image i of a uniform batch is image `first` moved by i strides, and its blocks follow by a product: nothing
        // per image goes to the device, so the call neither waits nor copies (a stream capture takes it).
        r.first = describe(first, 0);
        r.src_stride = b.src_stride;
        r.dst_stride = b.dst_stride;
        const std::size_t work = work_of(0);
        r.total_blocks = static_cast<unsigned int>(lay_out_pass(count, unit, [&](std::size_t) { return work; },
                                                                [](std::size_t, std::size_t) {}));
        r.blocks_per_image = static_cast<unsigned int>(pass_blocks(work, unit));
        return r;
    }
    const Stream stream = ws.stream();
    // The entry points refuse a capture before they enqueue anything; this is the last line, for any caller.
    refuse_capture(stream, "batch filters", kVariableShape);
    bool fresh = false;
    auto* copied = static_cast<cudaEvent_t>(ws.event(EventSlot::BatchFilterDescs, &fresh));
    if (!fresh) BATCH_CUDA(cudaEventSynchronize(copied));  // the previous descriptors have left the buffer
    const std::size_t bytes = sizeof(kernels::BatchImage) * count;
    auto* host = static_cast<kernels::BatchImage*>(ws.pinned_buffer(PinnedSlot::BatchFilterDescs, bytes));
    auto* dev = ws.device_as<kernels::BatchImage>(DeviceSlot::BatchFilterDescs, bytes);
    const std::size_t total =
        lay_out_pass(count, unit, work_of, [&](std::size_t k, std::size_t begin) { host[k] = describe(first + k, begin); });
    BATCH_CUDA(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, cu(stream)));
    BATCH_CUDA(cudaEventRecord(copied, cu(stream)));
    r.descs = dev;
    r.first = host[0];
    r.total_blocks = static_cast<unsigned int>(total);
    return r;
}

unsigned int* batch_histograms(Workspace& ws, const DeviceBatch& b, int bins) {
    const int channels = b.src[0].channels;
    for (std::size_t i = 0; i < b.count; ++i)
        if (b.src[i].pixels() >= (std::size_t(1) << 32))
            throw Error(ErrorCode::Unsupported, "batch image " + std::to_string(i) +
                                                    ": batches take images of fewer than 2^32 pixels (use the single call)");
    const std::size_t per_image = static_cast<std::size_t>(channels) * static_cast<std::size_t>(bins);
    auto* counts = ws.device_as<unsigned int>(DeviceSlot::Counts, b.count * per_image * sizeof(unsigned int));
    std::vector<DeviceHistogramView> out(b.count);
    for (std::size_t i = 0; i < b.count; ++i) {
        out[i].counts = counts + i * per_image;
        out[i].type = CountType::U32;
    }
    cuda_histogram_batch(ws, b.src, b.count, BinSpec::even(bins, 0.0, static_cast<double>(bins)), out.data(), false,
                         nullptr);
    return counts;
}

void launch_batch_luts(Workspace& ws, const DeviceBatch& b, const std::uint8_t* tables,
                       const kernels::MultiOtsuResult* skip) {
    const kernels::BatchRef ref = batch_ref(ws, b, 0, b.count, batch_tuning(ws).apply_block_bytes, PassUnit::Bytes);
    const int channels = b.src[0].channels;
    const std::size_t smem = static_cast<std::size_t>(channels) * 8192;
    const cudaStream_t s = cu(ws.stream());
    switch (channels) {
        case 1: kernels::batch_lut_kernel<1><<<pass_grid(ref), kBatchThreads, smem, s>>>(ref, tables, skip); break;
        case 2: kernels::batch_lut_kernel<2><<<pass_grid(ref), kBatchThreads, smem, s>>>(ref, tables, skip); break;
        case 3: kernels::batch_lut_kernel<3><<<pass_grid(ref), kBatchThreads, smem, s>>>(ref, tables, skip); break;
        default: kernels::batch_lut_kernel<4><<<pass_grid(ref), kBatchThreads, smem, s>>>(ref, tables, skip); break;
    }
    BATCH_LAUNCHED("batch_lut_kernel");
}

namespace {

/// Each channel of each image through its own equalization table.
void equalize_channels(Workspace& ws, const DeviceBatch& b, Stream stream) {
    const int channels = b.src[0].channels;
    kernels::BatchTableArgs<unsigned int> a{};
    a.counts = batch_histograms(ws, b, 256);
    a.hist_channels = channels;
    a.tables = batch_tables(ws, b.count, channels);
    launch_tables<kernels::BatchTable::Equalize>(b.count, channels, a, stream);
    launch_batch_luts(ws, b, a.tables, nullptr);
}

/// The Y of Y'CrCb of each BGR(A) image through one equalization table per image.
void equalize_luma(Workspace& ws, const DeviceBatch& b, Stream stream) {
    const int channels = b.src[0].channels;
    const kernels::BatchRef ref = batch_ref(ws, b, 0, b.count, batch_tuning(ws).apply_block_bytes, PassUnit::Bytes);
    const std::size_t bytes = b.count * 256 * sizeof(unsigned int);
    auto* counts = ws.device_as<unsigned int>(DeviceSlot::Counts, bytes);
    BATCH_CUDA(cudaMemsetAsync(counts, 0, bytes, cu(stream)));
    kernels::batch_luma_hist_kernel<std::uint8_t, 256><<<pass_grid(ref), kBatchThreads, 0, cu(stream)>>>(ref, channels, counts);
    BATCH_LAUNCHED("batch_luma_hist_kernel");
    kernels::BatchTableArgs<unsigned int> a{};
    a.counts = counts;
    a.hist_channels = 1;
    a.tables = batch_tables(ws, b.count, 1);
    launch_tables<kernels::BatchTable::Equalize>(b.count, 1, a, stream);
    kernels::batch_luma_apply_kernel<<<pass_grid(ref), kBatchThreads, 0, cu(stream)>>>(ref, channels, a.tables);
    BATCH_LAUNCHED("batch_luma_apply_kernel");
}

/// An equalization call: the batch's checks, its device and a workspace, then `body`.
void equalize_call(const DeviceBatch& b, const char* op, int device, Stream stream,
                   void (*body)(Workspace&, const DeviceBatch&, Stream)) {
    check_batch_size(b.count, op);
    refuse_capture(stream, op, layout_obstacle(b));
    DeviceGuard scope(device);
    WorkspaceLease lease = acquire_workspace(-1, stream);
    body(*lease, b, stream);
}

}  // namespace

void cuda_equalize_batch(const DeviceBatch& b, int device, Stream stream) {
    equalize_call(b, "equalize_hist_batch", device, stream, equalize_channels);
}

void cuda_equalize_color_batch(const DeviceBatch& b, ColorEqualize mode, int device, Stream stream) {
    if (mode == ColorEqualize::PerChannel) equalize_call(b, "equalize_hist_batch", device, stream, equalize_channels);
    else equalize_call(b, "equalize_hist_color_batch", device, stream, equalize_luma);
}

void cuda_threshold_batch(const DeviceBatch& b, const ThresholdParams& p, AutoThreshold automatic, int* computed,
                          int* host_levels, int device, Stream stream) {
    check_batch_size(b.count, "threshold_batch");
    refuse_capture(stream, "threshold_batch",
                   host_levels ? "the call waits for the levels it returns (pass `computed` to keep them on the device)"
                               : layout_obstacle(b));
    DeviceGuard scope(device);
    WorkspaceLease lease = acquire_workspace(-1, stream);
    Workspace& ws = *lease;
    const ImageView& f = b.src[0];
    const int* levels = nullptr;
    cudaEvent_t found = nullptr;
    int* staged = nullptr;
    if (automatic != AutoThreshold::None) {
        const int bins = f.type == SampleType::U8 ? 256 : 65536;
        const unsigned int* counts = batch_histograms(ws, b, bins);
        int* out = ws.device_as<int>(DeviceSlot::BatchLevels, b.count * sizeof(int));
        const auto grid = static_cast<unsigned>(b.count);
        if (automatic == AutoThreshold::Triangle)
            kernels::batch_level_kernel<kernels::BatchLevel::Triangle>
                <<<grid, cuda::FilterTuning::level_threads, 0, cu(stream)>>>(counts, bins, out, computed);
        else if (bins == 256)
            kernels::batch_level_kernel<kernels::BatchLevel::Otsu256>
                <<<grid, cuda::FilterTuning::level_threads, 0, cu(stream)>>>(counts, bins, out, computed);
        else
            kernels::batch_level_kernel<kernels::BatchLevel::OtsuSeq>
                <<<grid, cuda::FilterTuning::level_threads, 0, cu(stream)>>>(counts, bins, out, computed);
        BATCH_LAUNCHED("batch_level_kernel");
        levels = out;
        if (host_levels) {
            // The levels go to page-locked memory behind the level launch; the host waits for that copy alone while
            // the pass runs.
            staged = static_cast<int*>(ws.pinned_buffer(PinnedSlot::BatchFilterResults, b.count * sizeof(int)));
            BATCH_CUDA(cudaMemcpyAsync(staged, out, b.count * sizeof(int), cudaMemcpyDeviceToHost, cu(stream)));
            found = static_cast<cudaEvent_t>(ws.event(EventSlot::BatchFilterResults));
            BATCH_CUDA(cudaEventRecord(found, cu(stream)));
        }
    }
    const kernels::BatchRef ref = batch_ref(ws, b, 0, b.count, batch_tuning(ws).apply_block_bytes, PassUnit::Bytes);
    switch (f.type) {
        case SampleType::U8:
            kernels::batch_threshold_u8_kernel<<<pass_grid(ref), kBatchThreads, 0, cu(stream)>>>(
                ref, f.channels, levels, p.ithresh, p.imaxval, p.op);
            break;
        case SampleType::U16:
            kernels::batch_threshold_elem_kernel<std::uint16_t><<<pass_grid(ref), kBatchThreads, 0, cu(stream)>>>(
                ref, f.channels, levels, p.ithresh, p.imaxval, 0.f, 0.f, p.op);
            break;
        case SampleType::F32:
            kernels::batch_threshold_elem_kernel<float><<<pass_grid(ref), kBatchThreads, 0, cu(stream)>>>(
                ref, f.channels, nullptr, 0, 0, p.fthresh, p.fmaxval, p.op);
            break;
        default: throw Error(ErrorCode::Unsupported, "threshold_batch: unsupported sample type");
    }
    BATCH_LAUNCHED("batch threshold kernel");
    if (found) {
        BATCH_CUDA(cudaEventSynchronize(found));
        std::memcpy(host_levels, staged, b.count * sizeof(int));
    }
}

}  // namespace imghist::detail
