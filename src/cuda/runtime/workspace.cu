// The workspace registry: one workspace per (device, stream), bounded as workspace.hpp states.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "cuda/runtime/cuda_error.hpp"
#include "cuda/tuning/tuning.hpp"
#include "cuda/runtime/workspace.hpp"

namespace imghist::detail {

Workspace::Workspace(int device, Stream stream, bool own_stream) : device_(device), stream_(stream), own_stream_(own_stream) {
    IMGHIST_CUDA(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device));
    IMGHIST_CUDA(cudaDeviceGetAttribute(&cc_major_, cudaDevAttrComputeCapabilityMajor, device));
    stage_.resize(static_cast<std::size_t>(cuda::tuning_for(cc_major_).staging.slots));
}

Workspace::~Workspace() {
    int prev = 0;
    const bool have = cudaGetDevice(&prev) == cudaSuccess;
    if (have && prev != device_) cudaSetDevice(device_);
    for (auto& s : stage_)
        if (s.done) cudaEventDestroy(static_cast<cudaEvent_t>(s.done));
    for (void* e : events_)
        if (e) cudaEventDestroy(static_cast<cudaEvent_t>(e));
    if (own_stream_ && stream_) cudaStreamDestroy(cu(stream_));
    for (auto& b : dev_) b.reset();
    for (auto& b : pinned_) b.reset();
    stage_.clear();
    if (have && prev != device_) cudaSetDevice(prev);
}

void* Workspace::device_buffer(DeviceSlot slot, std::size_t bytes, bool* grown) {
    DeviceBuffer& b = dev_[static_cast<int>(slot)];
    const bool grow = b.data() == nullptr || b.size() < bytes;
    if (grow) {
        // The old buffer may still be read by work queued on this stream: replace it after that work.
        if (b.data() != nullptr) IMGHIST_CUDA(cudaStreamSynchronize(cu(stream_)));
        tags_[static_cast<int>(slot)].clear();
        b.reserve(std::max<std::size_t>(bytes, 1));
    }
    if (grown) *grown = grow;
    return b.data();
}

void* Workspace::pinned_buffer(PinnedSlot slot, std::size_t bytes) {
    PinnedBuffer& b = pinned_[static_cast<int>(slot)];
    const std::size_t want = std::max<std::size_t>(bytes, 1);
    if (b.data() == nullptr || b.size() < want) pinned_counters_[static_cast<int>(slot)] = 0;  // replaced below
    b.reserve(want);
    return b.data();
}

void* Workspace::event(EventSlot slot, bool* fresh) {
    void*& e = events_[static_cast<int>(slot)];
    const bool make = e == nullptr;
    if (make) {
        cudaEvent_t created = nullptr;
        IMGHIST_CUDA(cudaEventCreateWithFlags(&created, cudaEventDisableTiming));
        e = created;
    }
    if (fresh) *fresh = make;
    return e;
}

void Workspace::trim_staging() noexcept {
    constexpr std::size_t keep = cuda::WorkspaceTuning::keep_staging_bytes;
    for (DeviceSlot s : {DeviceSlot::StageSrc, DeviceSlot::StageDst})
        if (dev_[static_cast<int>(s)].size() > keep) dev_[static_cast<int>(s)].reset();
    std::size_t pinned = 0;
    for (auto& s : stage_) pinned += s.buffer.size();
    if (pinned > keep)
        for (auto& s : stage_)
            if (!s.in_flight) s.buffer.reset();
}

namespace {

struct Entry {
    std::recursive_mutex mutex;
    std::unique_ptr<Workspace> ws;
    bool internal = false;          ///< a private workspace on its own stream
    unsigned long long last_use = 0;
};

struct Registry {
    std::mutex mutex;
    std::map<std::pair<int, Stream>, std::shared_ptr<Entry>> entries;
    unsigned long long clock = 0;

    static Registry& get() {
        static Registry* r = new Registry;  // never destroyed: workspaces may be leased during static teardown
        return *r;
    }

    /// Keeps at most max_per_device workspaces on `device` (called with `mutex` held, before an insertion).
    void bound(int device) {
        int n = 0;
        for (auto& [k, e] : entries) n += k.first == device;
        while (n >= cuda::WorkspaceTuning::max_per_device) {
            auto victim = entries.end();
            for (auto it = entries.begin(); it != entries.end(); ++it) {
                if (it->first.first != device || it.operator->()->second.use_count() > 1) continue;
                if (victim == entries.end() || it->second->last_use < victim->second->last_use) victim = it;
            }
            if (victim == entries.end()) return;  // all in use: keep them (the bound is exceeded only then)
            // Its stream may still have queued work reading the buffers (and a caller's stream may already be
            // destroyed, so it cannot be synchronised by itself): wait for the whole device, once per eviction.
            cudaDeviceSynchronize();
            entries.erase(victim);
            --n;
        }
    }
};

WorkspaceLease lease_of(const std::shared_ptr<Entry>& e, std::unique_lock<std::recursive_mutex> lock) {
    return WorkspaceLease(std::shared_ptr<void>(e), e->ws.get(), std::move(lock));
}

int current_device(int device) {
    if (device < 0) IMGHIST_CUDA(cudaGetDevice(&device));
    return device;
}

}  // namespace

WorkspaceLease acquire_workspace(int device, Stream stream) {
    device = current_device(device);
    Registry& r = Registry::get();
    std::shared_ptr<Entry> e;
    {
        std::lock_guard<std::mutex> lock(r.mutex);
        auto& slot = r.entries[{device, stream}];
        if (!slot) {
            r.entries.erase({device, stream});
            r.bound(device);
            auto fresh = std::make_shared<Entry>();
            fresh->ws = std::make_unique<Workspace>(device, stream, false);
            e = r.entries[{device, stream}] = std::move(fresh);
        } else {
            e = slot;
        }
        e->last_use = ++r.clock;
    }
    return lease_of(e, std::unique_lock<std::recursive_mutex>(e->mutex));
}

WorkspaceLease acquire_private_workspace(int device) {
    device = current_device(device);
    Registry& r = Registry::get();
    std::lock_guard<std::mutex> lock(r.mutex);
    for (auto& [k, e] : r.entries) {
        if (k.first != device || !e->internal) continue;
        std::unique_lock<std::recursive_mutex> l(e->mutex, std::try_to_lock);
        if (!l.owns_lock()) continue;
        e->last_use = ++r.clock;
        return lease_of(e, std::move(l));
    }
    r.bound(device);
    cudaStream_t s = nullptr;
    IMGHIST_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    auto e = std::make_shared<Entry>();
    e->internal = true;
    try {
        e->ws = std::make_unique<Workspace>(device, reinterpret_cast<Stream>(s), true);
    } catch (...) {
        cudaStreamDestroy(s);
        throw;
    }
    e->last_use = ++r.clock;
    r.entries[{device, reinterpret_cast<Stream>(s)}] = e;
    return lease_of(e, std::unique_lock<std::recursive_mutex>(e->mutex));
}

int* pinned_int(int device) {
    device = current_device(device);
    thread_local std::map<int, PinnedBuffer> words;
    PinnedBuffer& b = words[device];
    if (b.size() == 0) b.reserve(64);
    return b.as<int>();
}

void release_workspaces() noexcept {
    Registry& r = Registry::get();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.entries.empty()) return;
    // Queued work may still use the buffers: wait for every device that has workspaces.
    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
    int synced = -1;
    for (const auto& entry : r.entries) {
        if (entry.first.first == synced) continue;
        synced = entry.first.first;  // the map is ordered by device first
        if (cudaSetDevice(synced) == cudaSuccess) cudaDeviceSynchronize();
    }
    if (previous >= 0) cudaSetDevice(previous);
    (void)cudaGetLastError();
    for (auto it = r.entries.begin(); it != r.entries.end();) {
        if (it->second.use_count() > 1) ++it;  // leased now: its holder frees it later
        else it = r.entries.erase(it);
    }
}

}  // namespace imghist::detail
