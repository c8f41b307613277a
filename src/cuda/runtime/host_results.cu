// The CUDA backend's host-result entry points of the dispatch layer (dispatch.hpp): calc_hist /
// accumulate_hist / calc_hist_batch on host or device views with the counts returned to the host. Each is
// one BlockingCall (blocking_call.hpp: device, workspace, staging, clean-up); the routes differ in how the
// image reaches the device and how the counts come back.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/cpu/histogram_cpu.hpp"
#include "core/dispatch.hpp"
#include "core/policy/split_share.hpp"
#include "imghist/histogram.hpp"
#include "cuda/device_histogram.hpp"
#include "cuda/runtime/blocking_call.hpp"
#include "cuda/runtime/cuda_error.hpp"
#include "cuda/runtime/staging.hpp"
#include "cuda/tuning/tuning.hpp"
#include "cuda/runtime/workspace.hpp"

namespace imghist::detail {
namespace {

/// The result of a blocking call of one image (n counts, then `channels` out-of-range counters) goes
/// straight into page-locked host memory, which the device addresses directly (unified addressing): the
/// kernel's last block writes the final counts there, so no copy follows the kernel. With Signal::Tagged
/// each word it writes carries the call's tag in its upper half (cuda_histogram's `tag`), so the call returns as soon as
/// the host sees every word tagged. Results that a copy fills (the streamed paths) are not tagged.
struct PinnedResult {
    enum class Signal { None, Tagged };
    unsigned long long* host;
    std::size_t n;
    int channels;
    unsigned int tag = 0;  ///< 0: the words hold plain counts (not asked for, or the launch stored none)

    PinnedResult(Workspace& ws, std::size_t n_, int channels_, Signal signal = Signal::None)
        : n(n_), channels(channels_) {
        const std::size_t words = n_ + static_cast<std::size_t>(channels_);
        host = static_cast<unsigned long long*>(ws.pinned_buffer(PinnedSlot::Result, sizeof(unsigned long long) * words));
        // The slot's counter: the last tag stored in the buffer, or 0 when its words are unknown — a new
        // buffer, or one a result without tags was written into (plain counts, whose upper half can hold any
        // number). Tags count up from 1 over a zeroed buffer, so a word an earlier call left behind carries a
        // smaller tag (or 0) and is never taken for this call's; the buffer is zeroed again before the count
        // would wrap. (Each call returned after every word it reads carried its tag, or after synchronising
        // its stream, so no earlier launch still writes here.)
        std::uint32_t& last = ws.pinned_counter(PinnedSlot::Result);
        if (signal == Signal::None) {
            last = 0;
            return;
        }
        if (last == 0 || last == 0xFFFFFFFFu) {
            std::memset(host, 0, ws.pinned_size(PinnedSlot::Result));
            last = 0;
        }
        tag = ++last;
    }
    /// For a result asked for with tags whose launch stored none (cuda_histogram returned false): its words
    /// hold plain counts, for this call and in the buffer afterwards.
    void launched_untagged(Workspace& ws) {
        tag = 0;
        ws.pinned_counter(PinnedSlot::Result) = 0;
    }
    DeviceHistogramView view() const {
        DeviceHistogramView out;
        out.counts = host;
        out.type = CountType::U64;
        out.out_of_range = host + n;
        return out;
    }
    /// Whether every word carries the tag; words seen tagged are not read again.
    bool complete() const {
        const volatile unsigned long long* w = host;
        for (; seen_ < n + static_cast<std::size_t>(channels); ++seen_)
            if (static_cast<unsigned int>(w[seen_] >> 32) != tag) return false;
        return true;
    }
    /// Returns once the result is complete: when the launch tags it, as soon as the host sees every word
    /// tagged; otherwise, or when that has not happened after BlockingTuning::spin_us (a long kernel, work
    /// queued before it, a failed launch), after synchronising the stream, which reports a kernel's failure.
    void wait(const Workspace& ws) const {
        const bool tagged = tag != 0;
        if (tagged) {
            using Clock = std::chrono::steady_clock;
            const auto limit = std::chrono::microseconds(cuda::tuning_for(ws.cc_major()).blocking.spin_us);
            const auto t0 = Clock::now();
            do {
                for (int i = 0; i < 32; ++i) {
                    if (complete()) {
                        std::atomic_thread_fence(std::memory_order_acquire);  // add_to reads the words after this
                        return;
                    }
                    spin_pause();
                }
            } while (Clock::now() - t0 < limit);
        }
        IMGHIST_CUDA(cudaStreamSynchronize(cu(ws.stream())));
        if (tagged && !complete())
            throw Error(ErrorCode::Cuda, "histogram: the kernel finished without tagging its result (internal error)");
    }
    /// After wait(): adds the result to the caller's counts.
    void add_to(std::uint64_t* counts, std::uint64_t* oor) const {
        const unsigned long long keep = tag != 0 ? 0xFFFFFFFFull : ~0ull;  // a tagged word's count: its lower half
        for (std::size_t i = 0; i < n; ++i) counts[i] += host[i] & keep;
        for (int c = 0; c < channels; ++c) oor[c] += host[n + c] & keep;
    }

private:
    mutable std::size_t seen_ = 0;
    static void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
};

/// The counts of a host image streamed to the device in chunks (stage_stream_beside): each chunk's histogram
/// is added into 64-bit device counters, zeroed in stream order first, and the total is copied into the
/// call's pinned result at the end. A chunk's kernel runs while the copy engine moves the next chunks, and
/// the device holds the ring of chunks instead of a copy of the whole image.
class ChunkedCounts {
public:
    ChunkedCounts(Workspace& ws, const BinSpec& spec, int channels)
        : ws_(ws), spec_(spec), words_(static_cast<std::size_t>(channels) * spec.bins + static_cast<std::size_t>(channels)) {
        auto* d = ws.device_as<unsigned long long>(DeviceSlot::ChunkCounts, sizeof(unsigned long long) * words_);
        IMGHIST_CUDA(cudaMemsetAsync(d, 0, sizeof(unsigned long long) * words_, cu(ws.stream())));
        out_.counts = d;
        out_.type = CountType::U64;
        out_.out_of_range = d + (words_ - static_cast<std::size_t>(channels));
    }
    /// Enqueues the histogram of one device chunk, added to the counts (stage_stream_beside's chunk_ready).
    void add(const ImageView& chunk) const {
        AsyncOptions acc;
        acc.accumulate = true;
        cuda_histogram(ws_, chunk, spec_, out_, acc, OutputPlace::Device);
    }
    /// Enqueues the copy of the counts into `result` (same layout: counts, then the out-of-range counters).
    void copy_to(const PinnedResult& result) const {
        IMGHIST_CUDA(cudaMemcpyAsync(result.host, out_.counts, sizeof(unsigned long long) * words_, cudaMemcpyDeviceToHost,
                                     cu(ws_.stream())));
    }

private:
    Workspace& ws_;
    const BinSpec& spec_;
    std::size_t words_;
    DeviceHistogramView out_;
};

/// Rows [0, gpu_rows) of pageable host image `image` streamed through the pinned chunks and counted on the
/// device chunk by chunk (ChunkedCounts), while `others` parts of the same job run other(k); then the counts
/// are added to counts / oor once the stream has drained. The device route of images beyond the pinned
/// chunks (packers: every CPU thread, no others) and the split count (the others count the rest of the rows
/// on the CPU) share it. packed_events: as stage_stream_beside's.
void stream_count_to_host(BlockingCall& call, const ImageView& image, int gpu_rows, const BinSpec& spec, int packers,
                          int others, const std::function<void(int)>& other, void* const* packed_events,
                          std::uint64_t* counts, std::uint64_t* oor) {
    Workspace& ws = call.ws();
    auto* ring = ws.device_as<unsigned char>(DeviceSlot::StageSrc, staging_ring_bytes(ws, image, gpu_rows));
    const ChunkedCounts device_counts(ws, spec, image.channels);
    stage_stream_beside(ws, image, gpu_rows, ring, packers, others, other,
                        [&](const ImageView& chunk) { device_counts.add(chunk); }, packed_events);
    const PinnedResult result(ws, static_cast<std::size_t>(image.channels) * spec.bins, image.channels);
    device_counts.copy_to(result);
    IMGHIST_CUDA(cudaStreamSynchronize(cu(ws.stream())));
    call.finish();
    result.add_to(counts, oor);
}

}  // namespace

bool split_count_eligible(const ImageView& image, const ImageView* mask) {
    if (mask != nullptr || image.location != Location::Host || image.empty() || cuda_device_count() == 0) return false;
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    int major = 0;
    (void)cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    const auto& t = cuda::tuning_for(major).staging;
    const std::size_t bytes = image.row_bytes() * static_cast<std::size_t>(image.height);
    return policy::split_worthwhile(bytes, static_cast<std::size_t>(t.slots) * t.chunk_bytes) && !is_pinned(image);
}

void split_histogram_to_host(const ImageView& image, const BinSpec& spec, std::uint64_t* counts, std::uint64_t* oor,
                             int device, Stream stream, int cpu_threads) {
    const int threads =
        cpu_threads > 0 ? cpu_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    // cudaStreamPerThread names another stream on every thread: the copies the pool's threads enqueue would
    // not be ordered before the kernel. Such callers get the device count alone.
    if (threads < 3 || image.height < 4 || image.location != Location::Host || stream == reinterpret_cast<Stream>(cudaStreamPerThread)) {
        cuda_histogram_to_host(image, nullptr, spec, counts, oor, device, stream);
        return;
    }
    BlockingCall call(device, stream, false);
    Workspace& ws = call.ws();
    if (staging_capacity_rows(ws, image) < 1) {  // not even one row fits the chunks (another device's tuning)
        call.finish();
        cuda_histogram_to_host(image, nullptr, spec, counts, oor, call.device(), stream);
        return;
    }
    const int H = image.height, C = image.channels;
    const int packers = std::max(1, threads / 4), bands = threads - packers;
    const policy::SplitKind kind{image.row_bytes() * static_cast<std::size_t>(H), image.type, C, threads};
    const double share = policy::split_share(kind);
    const int g = std::max(1, std::min(static_cast<int>(std::lround(H * share)), H - 1));
    const std::size_t n = static_cast<std::size_t>(C) * spec.bins;

    // The CPU's rows [g, H) in `bands` bands, each counted by one part of the shared job into its own counts.
    const BinParams bp = make_bin_params(spec, image.type);
    std::vector<std::uint64_t> local(static_cast<std::size_t>(bands) * (n + C), 0);
    using Clock = std::chrono::steady_clock;
    const Clock::time_point t0 = Clock::now();
    std::atomic<Clock::rep> cpu_end{t0.time_since_epoch().count()};
    auto count_band = [&](int k) {
        const int y0 = g + static_cast<int>(static_cast<long long>(H - g) * k / bands);
        const int y1 = g + static_cast<int>(static_cast<long long>(H - g) * (k + 1) / bands);
        if (y1 <= y0) return;
        std::uint64_t* c = local.data() + static_cast<std::size_t>(k) * (n + C);
        cpu_histogram(image.roi(0, y0, image.width, y1 - y0), nullptr, bp, c, c + n, 1);
        const Clock::rep now = Clock::now().time_since_epoch().count();
        for (Clock::rep seen = cpu_end.load(); now > seen && !cpu_end.compare_exchange_weak(seen, now);) {
        }
    };
    // The device side is timed by events from before the job to the end of its last copy (its own clock).
    const cudaStream_t s = cu(ws.stream());
    std::vector<cudaEvent_t> ev(static_cast<std::size_t>(packers) + 1, nullptr);
    struct Events {
        std::vector<cudaEvent_t>& e;
        ~Events() {
            for (cudaEvent_t x : e)
                if (x) cudaEventDestroy(x);
        }
    } events{ev};
    for (auto& e : ev) IMGHIST_CUDA(cudaEventCreate(&e));
    IMGHIST_CUDA(cudaEventRecord(ev[0], s));
    stream_count_to_host(call, image, g, spec, packers, bands, count_band, reinterpret_cast<void* const*>(ev.data() + 1),
                         counts, oor);
    float device_ms = 0.f;
    for (std::size_t i = 1; i < ev.size(); ++i) {
        float ms = 0.f;
        IMGHIST_CUDA(cudaEventElapsedTime(&ms, ev[0], ev[i]));
        device_ms = std::max(device_ms, ms);
    }
    const double cpu_s = std::chrono::duration<double>(Clock::duration(cpu_end.load()) - t0.time_since_epoch()).count();
    policy::record_split(kind, g, device_ms * 1e-3, H - g, cpu_s);
    for (int k = 0; k < bands; ++k) {
        const std::uint64_t* c = local.data() + static_cast<std::size_t>(k) * (n + C);
        for (std::size_t i = 0; i < n; ++i) counts[i] += c[i];
        for (int ch = 0; ch < C; ++ch) oor[ch] += c[n + ch];
    }
}

void cuda_histogram_to_host(const ImageView& image, const ImageView* mask, const BinSpec& spec, std::uint64_t* counts,
                            std::uint64_t* oor, int device, Stream stream) {
    BlockingCall call(device, stream, image.location == Location::Device);
    Workspace& ws = call.ws();
    if (mask == nullptr && image.location == Location::Host && image.height > staging_capacity_rows(ws, image) &&
        staging_capacity_rows(ws, image) >= 1 && !is_pinned(image)) {
        // A pageable image beyond the pinned chunks (a 16K frame): streamed through them, every CPU thread
        // packing, and counted chunk by chunk, so the device holds the 64 MiB ring that the workspace keeps
        // instead of a copy of the whole image allocated and freed again by every call, which is no faster
        // (docs/DESIGN.md section 5).
        const int packers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        stream_count_to_host(call, image, image.height, spec, packers, 0, [](int) {}, nullptr, counts, oor);
        return;
    }
    if (image.empty()) {  // nothing to add
        call.finish();
        return;
    }
    ImageView dimg = image, dmask = mask ? *mask : ImageView{};
    if (image.location == Location::Host) {
        const std::size_t ibytes = BlockingCall::staged_bytes(image);
        unsigned char* buf = call.staging(ibytes + (mask ? BlockingCall::staged_bytes(*mask) : 0));
        dimg = call.stage(image, buf);
        if (mask) dmask = call.stage(*mask, buf + ibytes);
    }
    PinnedResult result(ws, static_cast<std::size_t>(image.channels) * spec.bins, image.channels,
                        PinnedResult::Signal::Tagged);
    AsyncOptions opt;
    if (mask) opt.mask = dmask;
    if (!cuda_histogram(ws, dimg, spec, result.view(), opt, OutputPlace::HostMapped, result.tag))
        result.launched_untagged(ws);
    // Once every word carries the tag, every block has read the image (staged copies included) and the last
    // one has written the result, so the staging can go back to the workspace.
    result.wait(ws);
    call.finish();
    result.add_to(counts, oor);
}

void cuda_batch_to_host(const std::vector<ImageView>& images, const std::vector<ImageView>& masks, const BinSpec& spec,
                        std::vector<Histogram>& hists, int device, Stream stream) {
    BlockingCall call(device, stream, !images.empty() && images[0].location == Location::Device);
    Workspace& ws = call.ws();
    const std::size_t count = images.size();
    std::vector<ImageView> dimgs(images), dmasks(masks);
    if (!images.empty() && images[0].location == Location::Host) {
        std::size_t bytes = 0;
        for (std::size_t i = 0; i < count; ++i) {
            bytes += BlockingCall::staged_bytes(images[i]);
            if (!masks.empty()) bytes += BlockingCall::staged_bytes(masks[i]);
        }
        unsigned char* buf = call.staging(bytes);
        std::size_t off = 0;
        for (std::size_t i = 0; i < count; ++i) {
            dimgs[i] = call.stage(images[i], buf + off);
            off += BlockingCall::staged_bytes(images[i]);
            if (!masks.empty()) {
                dmasks[i] = call.stage(masks[i], buf + off);
                off += BlockingCall::staged_bytes(masks[i]);
            }
        }
    }
    const int C = images.empty() ? 1 : images[0].channels;
    const std::size_t n = static_cast<std::size_t>(C) * spec.bins;
    // Counts then out-of-range counters of each image, packed: every word the copy below reads is written
    // by the kernels (no padding the device never initialises).
    const std::size_t per = n + static_cast<std::size_t>(C);
    const std::size_t result_bytes = sizeof(unsigned long long) * per * std::max<std::size_t>(count, 1);
    auto* dres = ws.device_as<unsigned long long>(DeviceSlot::BatchResult, result_bytes);
    std::vector<DeviceHistogramView> outs(count);
    for (std::size_t i = 0; i < count; ++i) {
        outs[i].counts = dres + per * i;
        outs[i].type = CountType::U64;
        outs[i].out_of_range = dres + per * i + n;
    }
    cuda_histogram_batch(ws, dimgs.data(), count, spec, outs.data(), false, masks.empty() ? nullptr : dmasks.data());
    auto* host = static_cast<unsigned long long*>(ws.pinned_buffer(PinnedSlot::BatchResult, result_bytes));
    const auto s = cu(ws.stream());
    IMGHIST_CUDA(cudaMemcpyAsync(host, dres, sizeof(unsigned long long) * per * count, cudaMemcpyDeviceToHost, s));
    IMGHIST_CUDA(cudaStreamSynchronize(s));
    call.finish();
    for (std::size_t i = 0; i < count; ++i) {
        for (std::size_t k = 0; k < n; ++k) hists[i].counts[k] += host[per * i + k];
        for (int c = 0; c < C; ++c) hists[i].out_of_range[c] += host[per * i + n + c];
    }
}

}  // namespace imghist::detail
