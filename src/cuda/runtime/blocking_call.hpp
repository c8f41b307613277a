// Internal: one blocking call of the CUDA backend — a call that returns finished host results (the
// histograms' host-result entry points, dispatch.hpp; calc_hist_ycbcr_batch). Every route such a call takes
// (a staged image with a tagged result, an image streamed through the pinned ring, a count shared with CPU
// threads, a batch copied back) goes through this object, which owns what they have in common: the device
// made current, the lease of the workspace of the stream the call is ordered on, the staging of host
// inputs into it, and the end of the call — the staging given back, also when the call fails.
#pragma once

#include <cstddef>

#include "cuda/runtime/cuda_error.hpp"
#include "cuda/runtime/workspace.hpp"
#include "imghist/image.hpp"

namespace imghist::detail {

class BlockingCall {
public:
    /// device: an ordinal or -1 for the current one (Error(NoDevice) when it does not exist). The workspace
    /// is the caller's stream's; without one, a call with device inputs is ordered on the legacy default
    /// stream (the inputs were written by earlier default-stream work, typically cudaMemcpy), and a call
    /// with host inputs, which it stages itself, works on a private stream and waits for nothing else.
    BlockingCall(int device, Stream caller, bool device_inputs);
    /// A call that did not finish (an error on the way) first waits for what it enqueued, so that the
    /// staging it gives back is no longer read.
    ~BlockingCall();
    BlockingCall(const BlockingCall&) = delete;
    BlockingCall& operator=(const BlockingCall&) = delete;

    int device() const noexcept { return device_; }
    Workspace& ws() const noexcept { return *lease_; }

    /// Bytes a host view takes in the staging buffer (rows packed, 256-byte aligned).
    static std::size_t staged_bytes(const ImageView& host) noexcept;
    /// The staging buffer for `bytes` bytes of packed host views (DeviceSlot::StageSrc).
    unsigned char* staging(std::size_t bytes);
    /// Enqueues the upload of a host view to `dst` (inside staging()) and returns the device view.
    ImageView stage(const ImageView& host, unsigned char* dst);

    /// The call's work is complete: its stream has been synchronised, or its result was seen whole (a
    /// tagged result is written by the last block, after every block has read the inputs). Gives the
    /// staging back and trims oversized staging buffers.
    void finish() noexcept;

private:
    int device_;
    DeviceGuard guard_;
    WorkspaceLease lease_;
    bool finished_ = false;
};

}  // namespace imghist::detail
