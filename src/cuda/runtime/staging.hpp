// Internal: the one host-staging path of the CUDA side. Host images reach the device through it, for the
// core's calc_hist / calc_hist_batch on host views and for the filters' cv::Mat calls: page-locked images are
// copied directly; pageable ones are cut into chunks that the host packs into pinned buffers (in parallel,
// parallel_for) while the copy engine drains the previous chunks (StagingTuning: 4 chunks of 16 MiB); small
// pageable uploads (below StagingTuning::direct_upload_bytes) are left to the driver's one copy.
#pragma once

#include <cstddef>
#include <functional>

#include "imghist/image.hpp"
#include "cuda/runtime/workspace.hpp"

namespace imghist::detail {

/// True when the whole host view lies in page-locked memory the device can copy from directly.
bool is_pinned(const ImageView& v);

/// Enqueues the copy of host view `host` into `dst` (device memory, rows packed tightly) on the workspace's
/// stream and returns the device view. A pageable source may be reused when this returns (packed into pinned
/// chunks, or staged by the driver's pageable copy, which returns once the source has been read); a
/// page-locked one is copied asynchronously: the caller synchronises the stream before it changes the image.
ImageView stage_upload(Workspace& ws, const ImageView& host, void* dst);

/// Rows of `host` the workspace's pinned chunks hold at once.
int staging_capacity_rows(const Workspace& ws, const ImageView& host);

/// Device bytes of the ring that stage_stream_beside fills with `rows` rows of `host`: the rows themselves
/// when the pinned chunks hold them all, else one device chunk per pinned chunk (StagingTuning: 64 MiB), so
/// that the device copy of an image of any size stays within what a workspace keeps between calls.
std::size_t staging_ring_bytes(const Workspace& ws, const ImageView& host, int rows);

/// An upload that streams through the pinned chunks and shares one parallel job of the CPU side with other
/// work: `packers` of the job's parts pack rows [0, gpu_rows) of pageable `host` piece by piece — chunk c
/// (StagingTuning::chunk_bytes of rows) into pinned chunk c % slots, its copy to device chunk c % slots of
/// `ring` (staging_ring_bytes, rows packed tightly) enqueued on the workspace's stream as soon as a piece is
/// packed — while the job's other `others` parts run other(k) for k in [0, others). When every copy of a
/// chunk is enqueued, chunk_ready(device view of the chunk's rows) runs, one call at a time, on the thread
/// that enqueued the last one: it enqueues the work that reads them, which the stream orders after those
/// copies and before the chunk's next rows (a chunk is refilled only after its previous copies have run
/// and chunk_ready has returned for it). packed_events (optional): `packers` events (cudaEvent_t), packer i
/// records event i after its last copy, so the latest of them marks the end of the device side's part.
/// Returns when the job has finished (the copies and the chunks' work may still be in flight).
void stage_stream_beside(Workspace& ws, const ImageView& host, int gpu_rows, void* ring, int packers,
                                          int others, const std::function<void(int)>& other,
                                          const std::function<void(const ImageView&)>& chunk_ready,
                                          void* const* packed_events = nullptr);

/// Host views on the CUDA backend: src is streamed to the device, `op` runs on device views (src, dst:
/// packed copies of the same shapes) on the given stream, and the result is streamed back into dst.
/// Returns when dst is written. src may be larger than dst (it then carries pixels the op reads beyond
/// dst's extent). stream null: a private workspace and stream of this call's own.
using DeviceOp = std::function<void(const ImageView& dsrc, const ImageView& ddst, Stream stream)>;
void cuda_staged(const ImageView& src, const ImageView& dst, int device, Stream stream,
                                  const DeviceOp& op);

}  // namespace imghist::detail
