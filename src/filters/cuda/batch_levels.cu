// imghist filters — CUDA backend of the batch level-table operations (batch.hpp): contrast stretch, histogram
// matching and multi-level Otsu over a device batch. 8-bit batches stay on the device (the histograms of the whole
// batch in one launch, every image's tables in one, the pass in one; multi-Otsu's searches in one launch, the host
// waiting once for their results); 16-bit batches take their histograms to the host for the tables (one wait, as
// the single calls do) and come back for one pass.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/parallel_for.hpp"
#include "cuda/device_histogram.hpp"
#include "filters/cuda/batch_launch.hpp"
#include "filters/level_table.hpp"

namespace imghist::detail {
namespace {

/// Why a 16-bit table batch cannot be captured into a CUDA graph.
constexpr const char* kHostTables = "16-bit tables are made on the host from histograms the call waits for";

/// The luma histograms of a batch of BGR(A) images into the workspace's Counts: image i at + i * levels.
unsigned int* batch_luma_histograms(Workspace& ws, const DeviceBatch& b, int levels) {
    const std::size_t bytes = b.count * static_cast<std::size_t>(levels) * sizeof(unsigned int);
    auto* counts = ws.device_as<unsigned int>(DeviceSlot::Counts, bytes);
    const Stream stream = ws.stream();
    BATCH_CUDA(cudaMemsetAsync(counts, 0, bytes, cu(stream)));
    const kernels::BatchRef ref = batch_ref(ws, b, 0, b.count, batch_tuning(ws).apply_block_bytes, PassUnit::Bytes);
    const int channels = b.src[0].channels;
    if (levels == 256)
        kernels::batch_luma_hist_kernel<std::uint8_t, 256>
            <<<pass_grid(ref), kBatchThreads, 0, cu(stream)>>>(ref, channels, counts);
    else
        kernels::batch_luma_hist_kernel<std::uint16_t, 65536>
            <<<pass_grid(ref), kBatchThreads, 0, cu(stream)>>>(ref, channels, counts);
    BATCH_LAUNCHED("batch_luma_hist_kernel");
    return counts;
}

/// `n` device counters on the host (the call waits for the stream).
std::vector<unsigned int> download_counts(Workspace& ws, const unsigned int* dev, std::size_t n) {
    std::vector<unsigned int> host(n);
    BATCH_CUDA(cudaMemcpyAsync(host.data(), dev, n * sizeof(unsigned int), cudaMemcpyDeviceToHost, cu(ws.stream())));
    BATCH_CUDA(cudaStreamSynchronize(cu(ws.stream())));
    return host;
}

/// 65536 counters of `counts` as the 64-bit histogram the host rules take.
std::vector<std::uint64_t> widened(const unsigned int* counts) { return std::vector<std::uint64_t>(counts, counts + 65536); }

/// The 16-bit pass: `tables` (image i, channel c at (i * channels + c) * 65536) to the workspace, then one launch.
void apply_tables16(Workspace& ws, const DeviceBatch& b, const std::vector<std::uint16_t>& tables) {
    const Stream stream = ws.stream();
    const std::size_t bytes = tables.size() * sizeof(std::uint16_t);
    auto* dev = ws.device_as<std::uint16_t>(DeviceSlot::LevelTables, bytes);
    // A pageable copy returns once the tables are staged, so `tables` may go when this returns.
    BATCH_CUDA(cudaMemcpyAsync(dev, tables.data(), bytes, cudaMemcpyHostToDevice, cu(stream)));
    const kernels::BatchRef ref = batch_ref(ws, b, 0, b.count, batch_tuning(ws).apply_block_bytes, PassUnit::Bytes);
    switch (b.src[0].channels) {
        case 1: kernels::batch_table16_kernel<1><<<pass_grid(ref), kBatchThreads, 0, cu(stream)>>>(ref, dev); break;
        case 2: kernels::batch_table16_kernel<2><<<pass_grid(ref), kBatchThreads, 0, cu(stream)>>>(ref, dev); break;
        case 3: kernels::batch_table16_kernel<3><<<pass_grid(ref), kBatchThreads, 0, cu(stream)>>>(ref, dev); break;
        default: kernels::batch_table16_kernel<4><<<pass_grid(ref), kBatchThreads, 0, cu(stream)>>>(ref, dev); break;
    }
    BATCH_LAUNCHED("batch_table16_kernel");
}

/// Runs table(i, c) -> LevelTable for every image and channel on the host's threads, into one array; the first
/// error names its image.
template <class Table>
std::vector<std::uint16_t> host_tables(std::size_t images, int channels, Table&& table) {
    std::vector<std::uint16_t> out(images * static_cast<std::size_t>(channels) * 65536);
    parallel_for(static_cast<int>(images), 0, [&](int i0, int i1) {
        for (int i = i0; i < i1; ++i)
            for (int c = 0; c < channels; ++c) {
                LevelTable t;
                try {
                    t = table(static_cast<std::size_t>(i), c);
                } catch (const Error& e) {
                    throw Error(e.code(), "batch image " + std::to_string(i) + ": " + e.what());
                }
                std::copy(t.begin(), t.end(), out.begin() + (static_cast<std::ptrdiff_t>(i) * channels + c) * 65536);
            }
    });
    return out;
}

LevelTable identity16() {
    LevelTable t(65536);
    for (int v = 0; v < 65536; ++v) t[static_cast<std::size_t>(v)] = static_cast<std::uint16_t>(v);
    return t;
}

}  // namespace

void cuda_stretch_batch(const DeviceBatch& b, double low_percent, double high_percent, bool luma, int device,
                        Stream stream) {
    check_batch_size(b.count, "stretch_contrast_batch");
    refuse_capture(stream, "stretch_contrast_batch", b.src[0].type == SampleType::U8 ? layout_obstacle(b) : kHostTables);
    DeviceGuard scope(device);
    WorkspaceLease lease = acquire_workspace(-1, stream);
    Workspace& ws = *lease;
    const int channels = b.src[0].channels;
    if (b.src[0].type == SampleType::U8) {
        kernels::BatchTableArgs<unsigned int> a{};
        a.counts = luma ? batch_luma_histograms(ws, b, 256) : batch_histograms(ws, b, 256);
        a.hist_channels = luma ? 1 : channels;
        // The two quantiles stretch_table forms, rounded as it rounds them (as the single call passes them).
        a.q_lo = low_percent / 100.0;
        a.q_hi = (100.0 - high_percent) / 100.0;
        a.tables = batch_tables(ws, b.count, channels);
        launch_tables<kernels::BatchTable::Stretch>(b.count, channels, a, stream);
        launch_batch_luts(ws, b, a.tables, nullptr);
        return;
    }
    const int hist_channels = luma ? 1 : channels;
    const unsigned int* dev = luma ? batch_luma_histograms(ws, b, 65536) : batch_histograms(ws, b, 65536);
    const std::vector<unsigned int> counts = download_counts(ws, dev, b.count * hist_channels * std::size_t(65536));
    const LevelTable identity = identity16();
    const std::vector<std::uint16_t> tables = host_tables(b.count, channels, [&](std::size_t i, int c) {
        if (luma && c == 3) return identity;  // alpha is copied
        const int hc = luma ? 0 : c;
        const std::vector<std::uint64_t> h = widened(&counts[(i * hist_channels + hc) * 65536]);
        return stretch_table(h.data(), 65536, low_percent, high_percent);
    });
    apply_tables16(ws, b, tables);
}

void cuda_match_batch(const DeviceBatch& b, const ImageView* reference, const Histogram* target, int device,
                      Stream stream) {
    check_batch_size(b.count, "histogram matching batch");
    refuse_capture(stream, "histogram matching batch",
                   b.src[0].type != SampleType::U8 ? kHostTables
                   : reference                     ? layout_obstacle(b)
                                                   : "the target histogram is copied from pageable host memory");
    DeviceGuard scope(device);
    WorkspaceLease lease = acquire_workspace(-1, stream);
    Workspace& ws = *lease;
    const int channels = b.src[0].channels;
    if (b.src[0].type == SampleType::U8) {
        auto tables_from = [&](auto& a) {
            a.counts = batch_histograms(ws, b, 256);
            a.hist_channels = channels;
            a.tables = batch_tables(ws, b.count, channels);
            using Tgt = std::remove_const_t<std::remove_pointer_t<decltype(a.target)>>;
            launch_tables<kernels::BatchTable::Match, Tgt>(b.count, channels, a, stream);
            launch_batch_luts(ws, b, a.tables, nullptr);
        };
        if (reference) {
            // The reference's counts, once, on the core's histogram kernel.
            DeviceHistogramView out;
            out.counts = ws.device_buffer(DeviceSlot::LevelTarget, static_cast<std::size_t>(channels) * 256 * sizeof(unsigned int));
            out.type = CountType::U32;
            cuda_histogram(ws, *reference, BinSpec::u8(), out);
            kernels::BatchTableArgs<unsigned int> a{};
            a.target = static_cast<const unsigned int*>(out.counts);
            a.target_stride = 256;
            tables_from(a);
            return;
        }
        // A host histogram's 64-bit counts, copied as they are (a pageable copy returns once staged).
        const std::size_t bytes = target->counts.size() * sizeof(std::uint64_t);
        auto* dev = ws.device_as<unsigned long long>(DeviceSlot::LevelTarget, bytes);
        BATCH_CUDA(cudaMemcpyAsync(dev, target->counts.data(), bytes, cudaMemcpyHostToDevice, cu(stream)));
        kernels::BatchTableArgs<unsigned long long> a{};
        a.target = dev;
        a.target_stride = target->channels == 1 ? 0 : 256;
        tables_from(a);
        return;
    }
    const unsigned int* dev = batch_histograms(ws, b, 65536);
    const std::vector<unsigned int> counts = download_counts(ws, dev, b.count * channels * std::size_t(65536));
    const std::vector<std::uint16_t> tables = host_tables(b.count, channels, [&](std::size_t i, int c) {
        const std::vector<std::uint64_t> h = widened(&counts[(i * channels + c) * 65536]);
        return match_table(h.data(), target->channel(target->channels == 1 ? 0 : c), 65536);
    });
    apply_tables16(ws, b, tables);
}

namespace {

/// The 16-bit multi-Otsu batch: thresholds and label tables on the host (refusing the whole batch before any
/// pass when an image cannot be split), one pass.
std::vector<std::vector<int>> multiotsu_batch_u16(Workspace& ws, const DeviceBatch& b, int classes, int* computed) {
    const unsigned int* dev = batch_histograms(ws, b, 65536);
    const std::vector<unsigned int> counts = download_counts(ws, dev, b.count * std::size_t(65536));
    std::vector<std::vector<int>> t(b.count);
    const std::vector<std::uint16_t> tables = host_tables(b.count, 1, [&](std::size_t i, int) {
        const std::vector<std::uint64_t> h = widened(&counts[i * 65536]);
        t[i] = multiotsu_thresholds(h.data(), 65536, classes);
        return multiotsu_label_table(t[i], 65536);
    });
    apply_tables16(ws, b, tables);
    if (computed) {
        std::vector<int> flat;
        for (const std::vector<int>& x : t) flat.insert(flat.end(), x.begin(), x.end());
        BATCH_CUDA(cudaMemcpyAsync(computed, flat.data(), flat.size() * sizeof(int), cudaMemcpyHostToDevice,
                                   cu(ws.stream())));
        BATCH_CUDA(cudaStreamSynchronize(cu(ws.stream())));  // `flat` goes when this returns
    }
    return t;
}

}  // namespace

std::vector<std::vector<int>> cuda_multiotsu_batch(const DeviceBatch& b, int classes, int* computed, int device,
                                                   Stream stream) {
    check_batch_size(b.count, "threshold_multiotsu_batch");
    refuse_capture(stream, "threshold_multiotsu_batch", "the call waits for the thresholds it returns");
    DeviceGuard scope(device);
    WorkspaceLease lease = acquire_workspace(-1, stream);
    Workspace& ws = *lease;
    if (b.src[0].type != SampleType::U8) return multiotsu_batch_u16(ws, b, classes, computed);
    const unsigned int* counts = batch_histograms(ws, b, 256);
    auto* results = ws.device_as<kernels::MultiOtsuResult>(DeviceSlot::MultiOtsuResult,
                                                           b.count * sizeof(kernels::MultiOtsuResult));
    // Written by the searches for the host: each image's result, then each image's 256 counts.
    const std::size_t result_bytes = b.count * sizeof(kernels::MultiOtsuResult);
    auto* pinned = static_cast<std::uint8_t*>(
        ws.pinned_buffer(PinnedSlot::BatchFilterResults, result_bytes + b.count * 256 * sizeof(unsigned int)));
    auto* host_results = reinterpret_cast<kernels::MultiOtsuResult*>(pinned);
    auto* host_counts = reinterpret_cast<unsigned int*>(pinned + result_bytes);
    constexpr std::size_t smem = kernels::multiotsu_smem_bytes();
    allow_dynamic_smem(reinterpret_cast<const void*>(kernels::batch_multiotsu_kernel<unsigned int>), smem, ws.device());
    kernels::batch_multiotsu_kernel<unsigned int><<<static_cast<unsigned>(b.count), kernels::kMultiOtsuThreads, smem,
                                                    cu(stream)>>>(counts, classes, results, host_results, host_counts);
    BATCH_LAUNCHED("batch_multiotsu_kernel");
    auto* searched = static_cast<cudaEvent_t>(ws.event(EventSlot::BatchFilterResults));
    BATCH_CUDA(cudaEventRecord(searched, cu(stream)));
    kernels::BatchTableArgs<unsigned int> a{};
    a.counts = counts;
    a.hist_channels = 1;
    a.results = results;
    a.classes = classes;
    a.computed = computed;
    a.tables = batch_tables(ws, b.count, 1);
    launch_tables<kernels::BatchTable::Labels>(b.count, 1, a, stream);
    launch_batch_luts(ws, b, a.tables, results);
    // The host needs the searches' results, not the labels: the pass runs while it waits.
    BATCH_CUDA(cudaEventSynchronize(searched));
    const std::size_t k = static_cast<std::size_t>(classes - 1);
    std::vector<std::vector<int>> t(b.count);
    std::string error;
    ErrorCode error_code = ErrorCode::InvalidArgument;
    for (std::size_t i = 0; i < b.count; ++i) {
        const kernels::MultiOtsuResult r = host_results[i];
        if (r.status == kernels::kMultiOtsuDone) {
            t[i].assign(r.thresholds, r.thresholds + k);
            continue;
        }
        // Too few levels (the host rule raises scikit-image's error) or too many near-equal candidates for the
        // device's frontier: the host's search, and the image's labels from the host's table, as the single call.
        std::vector<std::uint64_t> hist(host_counts + i * 256, host_counts + (i + 1) * 256);
        try {
            t[i] = multiotsu_thresholds(hist.data(), 256, classes);
        } catch (const Error& e) {
            if (error.empty()) {
                error = "batch image " + std::to_string(i) + ": " + e.what();
                error_code = e.code();
            }
            continue;
        }
        const LevelTable labels = multiotsu_label_table(t[i], 256);
        Lut8 lut;
        for (int v = 0; v < 256; ++v) lut[static_cast<std::size_t>(v)] = static_cast<std::uint8_t>(labels[static_cast<std::size_t>(v)]);
        cuda_apply_lut(b.src[i], b.dst[i], &lut, -1, stream);
        if (computed) {
            // A pageable copy returns once the thresholds are staged.
            BATCH_CUDA(cudaMemcpyAsync(computed + i * k, t[i].data(), k * sizeof(int), cudaMemcpyHostToDevice, cu(stream)));
        }
    }
    if (!error.empty()) throw Error(error_code, error);
    return t;
}

}  // namespace imghist::detail
