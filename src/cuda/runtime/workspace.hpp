// Internal: the one CUDA workspace cache of the core and the filters — temporary device and pinned storage,
// one workspace per (device, stream), reused from call to call so that a steady stream of calls allocates
// nothing.
//
// Ownership and ordering. Work enqueued on one stream runs in order, so a call may reuse what an earlier
// call on the same stream has finished with; a buffer that must grow is replaced only after that stream has
// drained (Workspace::device_buffer). A lease (acquire_workspace) locks the workspace for the calling thread
// while it enqueues: two threads on the same stream take turns, and a thread may lease the workspace it
// already holds again (the lock is recursive: a filter that holds its workspace calls the core's histogram,
// which leases the same one). Calls without a caller stream that stage host images take a private workspace
// on a stream of its own (acquire_private_workspace): concurrent host calls do not queue behind each other.
//
// The bound on what is kept (documented for users in histogram.hpp, CudaHistogrammer):
//  - per workspace, the scratch of the largest device-image call seen (histogram counters, tables, CLAHE
//    tiles, a luma plane of the image's size) — freed with the workspace;
//  - staging buffers (device copies of host images and the pinned chunks) are released at the end of the
//    blocking call that used them when they exceed WorkspaceTuning::keep_staging_bytes (64 MiB);
//  - at most WorkspaceTuning::max_per_device (16) workspaces per device: a 17th stream makes the least
//    recently used idle workspace go, after a device-wide synchronisation (its stream may still read it);
//  - one 64-byte pinned word per (thread, device) for values the device writes for the host (thresholds).
// release_workspaces() frees every workspace no call holds at that moment (tests, and programs that want the
// memory back).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "imghist/buffer.hpp"
#include "imghist/histogram.hpp"

namespace imghist::detail {

/// Device storage of a workspace, one buffer per use. Listing every user here keeps the whole set in view.
enum class DeviceSlot : int {
    HistCounters,  ///< core: the last-block merge's counters (zero between launches)
    HistOor,       ///< core: its out-of-range counters (zero between launches)
    HistTicket,    ///< core: the finishing-block ticket (zero between launches)
    HistSync,      ///< core: the one-pass overwrite's arrival and publication words (zero between launches)
    BatchDescs,    ///< core: per-image descriptors of a batch launch
    BatchResult,   ///< core: a batch's counts before the copy to the host
    ChunkCounts,   ///< core: counts of a host image streamed to the device chunk by chunk, before the copy back
    YccDescs,      ///< core: the plane descriptors of calc_hist_ycbcr_batch
    YccCounts,     ///< core: its R, G, B value counts, before the copy back
    Counts,        ///< filters: the histogram a table or a threshold is derived from
    Tables,        ///< filters: 4 x 256 table bytes, then the computed threshold (an int)
    Plane,         ///< filters: the luma plane of a colour equalization
    TileHist,      ///< filters: CLAHE's per-tile histograms
    TileLut,       ///< filters: CLAHE's per-tile tables
    LevelTables,   ///< filters: 16-bit level tables (65536 entries per channel)
    LevelCounts,   ///< filters: luma counts of the level operations
    LevelSource,   ///< filters: an 8-bit image's counts for stretch, matching and multi-Otsu (u32)
    LevelTarget,   ///< filters: the matching target's counts (u32 from a reference image, u64 from the host)
    MultiOtsuResult,  ///< filters: the device multi-Otsu search's result
    FusedCounts,   ///< filters: the one-launch filters' counters and ticket (zero between launches)
    MatchPoints,   ///< filters: the points of the last host target histogram one-launch matching used (cache,
                   ///< described by its host_tag)
    BatchFilterDescs,  ///< batch filters: per-image descriptors of a variable-shape batch
    BatchTables,   ///< batch filters: every image's tables (images x channels x 256 bytes)
    BatchLevels,   ///< batch filters: every image's automatic threshold (ints)
    StageSrc,      ///< staging: device copy of a host source image, or the ring of a streamed one (bounded, see above)
    StageDst,      ///< staging: device result to be copied back to a host image (bounded)
    Count
};

/// Page-locked host storage of a workspace.
enum class PinnedSlot : int {
    BatchDescs,   ///< core: batch descriptors, copied to BatchDescs
    Result,       ///< core: a single image's counts, written by the finishing block over the bus (mapped, tagged
                  ///< words) or, for the streamed paths, by a copy
    BatchResult,  ///< core: a batch's counts, copied from DeviceSlot::BatchResult
    YccDescs,     ///< core: calc_hist_ycbcr_batch's plane descriptors, copied to DeviceSlot::YccDescs
    YccCounts,    ///< core: its value counts, copied from DeviceSlot::YccCounts
    MultiOtsu,    ///< filters: the multi-Otsu search's result and the 256 counts, written by the device
    BatchFilterDescs,    ///< batch filters: per-image descriptors, copied to DeviceSlot::BatchFilterDescs
    BatchFilterResults,  ///< batch filters: what a blocking batch call returns (levels; multi-Otsu results and counts)
    Count
};

/// Events of a workspace (cudaEvent_t, created on first use, timing disabled).
enum class EventSlot : int {
    BatchDescs,  ///< core: recorded after the batch descriptors left PinnedSlot::BatchDescs
    MultiOtsuSearch,  ///< filters: recorded after the multi-Otsu search wrote its result for the host
    BatchFilterDescs,    ///< batch filters: recorded after the descriptors left PinnedSlot::BatchFilterDescs
    BatchFilterResults,  ///< batch filters: recorded after the results a blocking batch call waits for
    Count
};

class Workspace {
public:
    Workspace(int device, Stream stream, bool own_stream);
    ~Workspace();
    Workspace(const Workspace&) = delete;
    Workspace& operator=(const Workspace&) = delete;

    int device() const noexcept { return device_; }
    /// The stream this workspace's work is enqueued on (the caller's, or its own for a private workspace).
    Stream stream() const noexcept { return stream_; }
    int sm_count() const noexcept { return sm_count_; }
    int cc_major() const noexcept { return cc_major_; }

    /// The slot's buffer with at least `bytes` bytes. Growing waits for the stream first (queued work may
    /// still read the old buffer); *grown (when given) tells the caller the contents are new.
    void* device_buffer(DeviceSlot slot, std::size_t bytes, bool* grown = nullptr);
    template <class T>
    T* device_as(DeviceSlot slot, std::size_t bytes, bool* grown = nullptr) {
        return static_cast<T*>(device_buffer(slot, bytes, grown));
    }
    std::size_t device_size(DeviceSlot slot) const noexcept { return dev_[static_cast<int>(slot)].size(); }
    /// For a slot used as a cache: what its device contents were derived from, in bytes its user defines.
    /// Emptied whenever the slot's buffer is replaced, so an empty tag means nothing is cached. The contents
    /// a tag describes may still be being written by work queued on the stream; later work on the stream
    /// reads them in order.
    std::vector<unsigned char>& host_tag(DeviceSlot slot) noexcept { return tags_[static_cast<int>(slot)]; }
    /// The slot's pinned buffer with at least `bytes` bytes. The caller orders reuse (events of its own).
    void* pinned_buffer(PinnedSlot slot, std::size_t bytes);
    std::size_t pinned_size(PinnedSlot slot) const noexcept { return pinned_[static_cast<int>(slot)].size(); }
    /// A number the slot's user keeps with its pinned buffer (PinnedSlot::Result: the last tag stored in it,
    /// see host_results.cu), set to zero whenever the buffer is replaced.
    std::uint32_t& pinned_counter(PinnedSlot slot) noexcept { return pinned_counters_[static_cast<int>(slot)]; }
    /// The slot's event (a cudaEvent_t); *fresh (when given) tells whether it was created now (never recorded).
    void* event(EventSlot slot, bool* fresh = nullptr);

    // ---- host staging (staging.cu): pinned chunks and their events -----------------------------------------
    struct StageSlot {
        PinnedBuffer buffer;
        void* done = nullptr;  ///< cudaEvent_t recorded after the chunk's copy
        bool in_flight = false;
    };
    std::vector<StageSlot>& stage_slots() noexcept { return stage_; }
    /// Releases the staging buffers that exceed the bound; called after the stream has been synchronised.
    void trim_staging() noexcept;

private:
    int device_ = 0;
    Stream stream_ = nullptr;
    bool own_stream_ = false;
    int sm_count_ = 1, cc_major_ = 0;
    DeviceBuffer dev_[static_cast<int>(DeviceSlot::Count)];
    std::vector<unsigned char> tags_[static_cast<int>(DeviceSlot::Count)];
    PinnedBuffer pinned_[static_cast<int>(PinnedSlot::Count)];
    std::uint32_t pinned_counters_[static_cast<int>(PinnedSlot::Count)] = {};
    void* events_[static_cast<int>(EventSlot::Count)] = {};
    std::vector<StageSlot> stage_;
};

/// A workspace locked for the calling thread; move-only.
class WorkspaceLease {
public:
    WorkspaceLease(std::shared_ptr<void> entry, Workspace* ws, std::unique_lock<std::recursive_mutex> lock)
        : entry_(std::move(entry)), ws_(ws), lock_(std::move(lock)) {}
    Workspace& operator*() const noexcept { return *ws_; }
    Workspace* operator->() const noexcept { return ws_; }

private:
    std::shared_ptr<void> entry_;  // keeps the workspace alive while leased
    Workspace* ws_;
    std::unique_lock<std::recursive_mutex> lock_;
};

/// The workspace of (device, stream); device -1: the current device. Buffers are allocated on the current
/// device: callers make `device` current first (DeviceGuard) and keep it so while they hold the lease.
WorkspaceLease acquire_workspace(int device, Stream stream);
/// A workspace on a stream of its own (non-blocking) that no other thread holds now: for calls that stage
/// host images and were given no stream.
WorkspaceLease acquire_private_workspace(int device);
/// A pinned int the device can write, private to the calling thread (one per device).
int* pinned_int(int device);
/// Frees every workspace no thread holds (after waiting for each device that has workspaces).
void release_workspaces() noexcept;

}  // namespace imghist::detail
