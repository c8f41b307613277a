// Host staging (staging.hpp): host images to the device and results back, through the
// workspace's pinned chunks.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "cuda/runtime/cuda_error.hpp"
#include "core/parallel_for.hpp"
#include "cuda/runtime/staging.hpp"
#include "cuda/tuning/tuning.hpp"

namespace imghist::detail {

namespace {

cudaEvent_t ev(void* e) { return static_cast<cudaEvent_t>(e); }

const cuda::StagingTuning& staging_tuning(const Workspace& ws) { return cuda::tuning_for(ws.cc_major()).staging; }

// Copies rows [r0, r1) between a host view and a packed buffer, split over the worker threads.
void copy_rows(const ImageView& host, std::uint8_t* packed, int r0, int r1, bool to_packed, std::size_t piece) {
    const std::size_t row = host.row_bytes();
    auto* base = const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(host.data));
    if (host.contiguous()) {
        const std::size_t begin = static_cast<std::size_t>(r0) * row;
        const std::size_t bytes = static_cast<std::size_t>(r1 - r0) * row;
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

/// Makes every staging slot at least `bytes` large and gives it an event.
void prepare_slots(Workspace& ws, std::size_t bytes) {
    for (auto& s : ws.stage_slots()) {
        if (s.buffer.size() < bytes) {
            if (s.in_flight) IMGHIST_CUDA(cudaEventSynchronize(ev(s.done)));
            s.in_flight = false;
            s.buffer.reserve(bytes);
        }
        if (!s.done) {
            cudaEvent_t e = nullptr;
            IMGHIST_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
            s.done = e;
        }
    }
}

}  // namespace

bool is_pinned(const ImageView& v) {
    if (v.empty()) return false;
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

ImageView stage_upload(Workspace& ws, const ImageView& src, void* dst) {
    if (src.empty()) return ImageView::device(nullptr, src.width, src.height, src.type, src.channels);
    const std::size_t srow = src.row_bytes();
    auto* dev = static_cast<std::uint8_t*>(dst);
    const Stream s = ws.stream();
    const ImageView out = ImageView::device(dev, src.width, src.height, src.type, src.channels, srow);
    const auto& t = staging_tuning(ws);
    // Page-locked sources are copied directly (asynchronously); small pageable ones too, by the driver's own
    // staging, which beats packing them into our chunks below StagingTuning::direct_upload_bytes.
    if (srow * static_cast<std::size_t>(src.height) < t.direct_upload_bytes || is_pinned(src)) {
        IMGHIST_CUDA(cudaMemcpy2DAsync(dev, srow, src.data, src.height > 1 ? src.pitch : srow, srow, src.height,
                                       cudaMemcpyHostToDevice, cu(s)));
        return out;
    }
    const int up_rows = static_cast<int>(std::max<std::size_t>(1, t.chunk_bytes / srow));
    prepare_slots(ws, static_cast<std::size_t>(std::min(up_rows, src.height)) * srow);
    auto& slots = ws.stage_slots();
    const int nslots = static_cast<int>(slots.size());
    // The host fills slot k % slots while the copy engine drains the previous slots.
    const int chunks = (src.height + up_rows - 1) / up_rows;
    for (int k = 0; k < chunks; ++k) {
        auto& slot = slots[static_cast<std::size_t>(k % nslots)];
        if (slot.in_flight) IMGHIST_CUDA(cudaEventSynchronize(ev(slot.done)));
        const int r0 = k * up_rows, r1 = std::min(src.height, r0 + up_rows);
        auto* pinned = slot.buffer.as<std::uint8_t>();
        copy_rows(src, pinned, r0, r1, true, t.copy_piece);
        IMGHIST_CUDA(cudaMemcpyAsync(dev + static_cast<std::size_t>(r0) * srow, pinned,
                                     static_cast<std::size_t>(r1 - r0) * srow, cudaMemcpyHostToDevice, cu(s)));
        IMGHIST_CUDA(cudaEventRecord(ev(slot.done), cu(s)));
        slot.in_flight = true;
    }
    return out;
}

int staging_capacity_rows(const Workspace& ws, const ImageView& host) {
    const auto& t = staging_tuning(ws);
    const std::size_t row = std::max<std::size_t>(host.row_bytes(), 1);
    return static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(t.slots) * (t.chunk_bytes / row),
                                                  static_cast<std::size_t>(host.height)));
}

std::size_t staging_ring_bytes(const Workspace& ws, const ImageView& host, int rows) {
    const auto& t = staging_tuning(ws);
    const std::size_t row = host.row_bytes();
    const std::size_t slot_rows = t.chunk_bytes / std::max<std::size_t>(row, 1);
    const std::size_t ring_rows = std::min(static_cast<std::size_t>(std::max(rows, 0)), static_cast<std::size_t>(t.slots) * slot_rows);
    return std::max<std::size_t>(ring_rows * row, 1);
}

namespace {

/// One streamed upload of stage_stream_beside as its packing threads share it. Chunk c holds rows
/// [c * slot_rows, ...) in pinned chunk and device chunk c % nslots; it is cut into pieces of about copy_piece
/// bytes, none across two chunks, piece k covering rows [first[k], first[k + 1]). The threads take pieces in
/// order (next).
struct RingUpload {
    Workspace& ws;
    const ImageView& host;
    std::uint8_t* dev;
    int gpu_rows;
    std::size_t row;
    int slot_rows;
    std::vector<Workspace::StageSlot>& slots;
    int nslots;
    cudaStream_t s;
    const std::function<void(const ImageView&)>& chunk_ready;
    int chunks = 0, pieces = 0;
    std::vector<int> first;
    std::vector<std::atomic<int>> pieces_left;  ///< per chunk: pieces not yet enqueued
    /// handed_on[c]: chunk c's copies are all enqueued, its event recorded and chunk_ready has run for it, so
    /// chunk c + nslots may refill both its chunks once that event has completed.
    std::vector<std::atomic<bool>> handed_on;
    std::atomic<bool> failed{false};
    std::mutex ready_mutex;
    std::atomic<int> next{0};

    /// Cuts rows [0, gpu_rows) into pieces of piece_rows at most.
    void cut(int piece_rows) {
        chunks = (gpu_rows + slot_rows - 1) / slot_rows;
        pieces_left = std::vector<std::atomic<int>>(static_cast<std::size_t>(chunks));
        for (auto& n : pieces_left) n.store(0, std::memory_order_relaxed);
        for (int r = 0; r < gpu_rows;) {
            first.push_back(r);
            pieces_left[static_cast<std::size_t>(r / slot_rows)].fetch_add(1, std::memory_order_relaxed);
            const int slot_end = (r / slot_rows + 1) * slot_rows;
            r = std::min({r + piece_rows, slot_end, gpu_rows});
        }
        pieces = static_cast<int>(first.size());
        first.push_back(gpu_rows);
        handed_on = std::vector<std::atomic<bool>>(static_cast<std::size_t>(chunks));
        for (auto& h : handed_on) h.store(false, std::memory_order_relaxed);
    }

    /// One packing thread: takes pieces until none is left, packs each, enqueues its copy, and hands a chunk
    /// on when its last copy is enqueued.
    void pack() {
        // Pool threads enqueue on the workspace's device (their own current device may be another one, whose
        // context would otherwise be created).
        IMGHIST_CUDA(cudaSetDevice(ws.device()));
        for (int k = next++; k < pieces; k = next++) {
            const int r0 = first[static_cast<std::size_t>(k)], r1 = first[static_cast<std::size_t>(k) + 1];
            const int c = r0 / slot_rows;
            auto& slot = slots[static_cast<std::size_t>(c % nslots)];
            if (c >= nslots) {
                // The chunks' previous rows: their pieces were taken before this one, so the threads packing
                // them are running, never waiting for this one.
                while (!handed_on[static_cast<std::size_t>(c - nslots)].load(std::memory_order_acquire)) {
                    if (failed.load(std::memory_order_relaxed)) return;
                    std::this_thread::yield();
                }
                IMGHIST_CUDA(cudaEventSynchronize(ev(slot.done)));
            }
            const int in_chunk = r0 - c * slot_rows;
            std::uint8_t* pinned = slot.buffer.as<std::uint8_t>() + static_cast<std::size_t>(in_chunk) * row;
            std::uint8_t* target = dev + (static_cast<std::size_t>(c % nslots) * slot_rows + in_chunk) * row;
            const auto* src = static_cast<const std::uint8_t*>(host.data);
            if (host.contiguous()) {
                std::memcpy(pinned, src + static_cast<std::size_t>(r0) * row, static_cast<std::size_t>(r1 - r0) * row);
            } else {
                for (int r = r0; r < r1; ++r)
                    std::memcpy(pinned + static_cast<std::size_t>(r - r0) * row, src + static_cast<std::size_t>(r) * host.pitch, row);
            }
            // Enqueued from whichever thread packed the piece: copies of distinct rows, in any order.
            IMGHIST_CUDA(cudaMemcpyAsync(target, pinned, static_cast<std::size_t>(r1 - r0) * row, cudaMemcpyHostToDevice, s));
            if (pieces_left[static_cast<std::size_t>(c)].fetch_sub(1, std::memory_order_acq_rel) == 1) hand_on(c, slot);
        }
    }

    /// Chunk c's last copy is enqueued (the others returned before their counts fell): what reads the device
    /// chunk follows them in the stream, and precedes the chunk's next copies.
    void hand_on(int c, Workspace::StageSlot& slot) {
        std::lock_guard<std::mutex> lock(ready_mutex);
        IMGHIST_CUDA(cudaEventRecord(ev(slot.done), s));
        const int c0 = c * slot_rows, c1 = std::min(gpu_rows, c0 + slot_rows);
        chunk_ready(ImageView::device(dev + static_cast<std::size_t>(c % nslots) * slot_rows * row, host.width, c1 - c0,
                                      host.type, host.channels, row));
        handed_on[static_cast<std::size_t>(c)].store(true, std::memory_order_release);
    }
};

}  // namespace

void stage_stream_beside(Workspace& ws, const ImageView& host, int gpu_rows, void* ring, int packers, int others,
                         const std::function<void(int)>& other, const std::function<void(const ImageView&)>& chunk_ready,
                         void* const* packed_events) {
    const std::size_t row = host.row_bytes();
    const auto& t = staging_tuning(ws);
    const int slot_rows = static_cast<int>(t.chunk_bytes / std::max<std::size_t>(row, 1));
    if (slot_rows < 1 || gpu_rows < 1 || gpu_rows > host.height)
        throw Error(ErrorCode::InvalidArgument, "stage_stream_beside: no row fits a pinned chunk, or no rows to stream");
    prepare_slots(ws, static_cast<std::size_t>(std::min(slot_rows, gpu_rows)) * row);
    auto& slots = ws.stage_slots();
    for (auto& s : slots)
        if (s.in_flight) {  // an earlier upload on this workspace may still read a chunk
            IMGHIST_CUDA(cudaEventSynchronize(ev(s.done)));
            s.in_flight = false;
        }
    RingUpload up{ws, host, static_cast<std::uint8_t*>(ring), gpu_rows, row, slot_rows, slots,
                  static_cast<int>(slots.size()), cu(ws.stream()), chunk_ready};
    up.cut(static_cast<int>(std::max<std::size_t>(1, t.copy_piece / std::max<std::size_t>(row, 1))));
    packers = std::max(1, packers);
    // One part per packer and per other task; a nested parallel_for inside `other` runs on its own worker.
    try {
        parallel_for(packers + others, packers + others, [&](int b, int e) {
            for (int i = b; i < e; ++i) {
                if (i < packers) {
                    try {
                        up.pack();
                    } catch (...) {
                        up.failed.store(true);  // packers waiting for a chunk this one would have handed on
                        throw;
                    }
                    if (packed_events) IMGHIST_CUDA(cudaEventRecord(ev(packed_events[i]), up.s));
                } else {
                    other(i - packers);
                }
            }
        });
    } catch (...) {
        // Copies already enqueued may still read the chunks: let them finish before anything reuses them.
        (void)cudaStreamSynchronize(up.s);
        (void)cudaGetLastError();
        throw;
    }
    // Each used chunk's event was recorded after its last copies: the chunks are free once those have run.
    for (int k = 0; k < std::min(up.nslots, up.chunks); ++k) slots[static_cast<std::size_t>(k)].in_flight = true;
}

namespace {

/// Copies the packed device image `dev` back into host view `dst` and waits for it.
void stage_download(Workspace& ws, const std::uint8_t* dev, const ImageView& dst) {
    const std::size_t drow = dst.row_bytes();
    const Stream s = ws.stream();
    if (is_pinned(dst)) {
        IMGHIST_CUDA(cudaMemcpy2DAsync(const_cast<void*>(dst.data), dst.pitch, dev, drow, drow, dst.height,
                                       cudaMemcpyDeviceToHost, cu(s)));
        IMGHIST_CUDA(cudaStreamSynchronize(cu(s)));
        return;
    }
    const auto& t = staging_tuning(ws);
    const int down_rows = static_cast<int>(std::max<std::size_t>(1, t.chunk_bytes / drow));
    prepare_slots(ws, static_cast<std::size_t>(std::min(down_rows, dst.height)) * drow);
    auto& slots = ws.stage_slots();
    const int nslots = static_cast<int>(slots.size());
    // Keep up to `slots` chunks in flight; the host empties slot k while later chunks arrive.
    const int chunks = (dst.height + down_rows - 1) / down_rows;
    auto issue = [&](int k) {
        auto& slot = slots[static_cast<std::size_t>(k % nslots)];
        if (slot.in_flight) IMGHIST_CUDA(cudaEventSynchronize(ev(slot.done)));  // an upload still reading it
        const int r0 = k * down_rows, r1 = std::min(dst.height, r0 + down_rows);
        IMGHIST_CUDA(cudaMemcpyAsync(slot.buffer.data(), dev + static_cast<std::size_t>(r0) * drow,
                                     static_cast<std::size_t>(r1 - r0) * drow, cudaMemcpyDeviceToHost, cu(s)));
        IMGHIST_CUDA(cudaEventRecord(ev(slot.done), cu(s)));
        slot.in_flight = true;
    };
    for (int k = 0; k < std::min(chunks, nslots); ++k) issue(k);
    for (int k = 0; k < chunks; ++k) {
        auto& slot = slots[static_cast<std::size_t>(k % nslots)];
        IMGHIST_CUDA(cudaEventSynchronize(ev(slot.done)));
        slot.in_flight = false;
        const int r0 = k * down_rows, r1 = std::min(dst.height, r0 + down_rows);
        copy_rows(dst, slot.buffer.as<std::uint8_t>(), r0, r1, false, t.copy_piece);
        if (k + nslots < chunks) issue(k + nslots);
    }
    // Everything enqueued before the last download on this stream has completed too.
}

}  // namespace

void cuda_staged(const ImageView& src, const ImageView& dst, int device, Stream stream, const DeviceOp& op) {
    if (src.location != Location::Host || dst.location != Location::Host)
        throw Error(ErrorCode::InvalidArgument, "filters: staged operations need host views");
    DeviceGuard guard(device);
    WorkspaceLease ws = stream ? acquire_workspace(device, stream) : acquire_private_workspace(device);
    const std::size_t srow = src.row_bytes(), drow = dst.row_bytes();
    void* dev_src = ws->device_buffer(DeviceSlot::StageSrc, srow * static_cast<std::size_t>(src.height));
    auto* dev_dst = ws->device_as<std::uint8_t>(DeviceSlot::StageDst, drow * static_cast<std::size_t>(dst.height));
    const ImageView dsrc = stage_upload(*ws, src, dev_src);
    const ImageView ddst = ImageView::device(dev_dst, dst.width, dst.height, dst.type, dst.channels, drow);
    op(dsrc, ddst, ws->stream());
    stage_download(*ws, dev_dst, dst);
    for (auto& s : ws->stage_slots()) s.in_flight = false;  // the stream has drained
    ws->trim_staging();
}

}  // namespace imghist::detail
