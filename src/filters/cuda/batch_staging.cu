// imghist filters — host batches on the CUDA backend (batch.hpp: cuda_staged_batch): the images go up in groups,
// packed (through the core's staging path), each group runs as a device batch in place, and comes back.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "cuda/runtime/staging.hpp"
#include "filters/cuda/batch_launch.hpp"

namespace imghist::detail {
namespace {

/// Bytes a host image takes packed on the device, rounded up to 256 (each image starts aligned).
std::size_t packed_bytes(const ImageView& v) {
    return (v.row_bytes() * static_cast<std::size_t>(v.height) + 255) / 256 * 256;
}

}  // namespace

void cuda_staged_batch(const ImageView* src, const ImageView* dst, std::size_t count, int device, Stream stream,
                       const DeviceBatchOp& op) {
    refuse_capture(stream, "batch filters", "a host batch waits for its outputs");
    DeviceGuard guard(device);
    WorkspaceLease lease = stream ? acquire_workspace(-1, stream) : acquire_private_workspace(-1);
    Workspace& ws = *lease;
    const Stream s = ws.stream();
    const std::size_t limit = batch_tuning(ws).host_group_bytes;
    std::vector<ImageView> up, down;
    for (std::size_t first = 0; first < count;) {
        std::size_t bytes = 0, end = first;
        while (end < count && (end == first || bytes + packed_bytes(src[end]) <= limit)) bytes += packed_bytes(src[end++]);
        auto* dev = static_cast<std::uint8_t*>(ws.device_buffer(DeviceSlot::StageSrc, bytes));
        up.clear();
        down.clear();
        std::size_t at = 0;
        for (std::size_t i = first; i < end; ++i) {
            // The device copy has src's rows packed; the op sees dst's extent of it (src may carry a border beyond).
            const ImageView copy = stage_upload(ws, src[i], dev + at);
            up.push_back(ImageView::device(copy.data, dst[i].width, dst[i].height, dst[i].type, dst[i].channels, copy.pitch));
            at += packed_bytes(src[i]);
        }
        down = up;  // in place
        DeviceBatch g;
        g.src = up.data();
        g.dst = down.data();
        g.count = end - first;
        // Images of one size are packed at equal distances.
        g.uniform = true;
        for (std::size_t k = 1; k < g.count && g.uniform; ++k)
            g.uniform = up[k].width == up[0].width && up[k].height == up[0].height && up[k].pitch == up[0].pitch &&
                        packed_bytes(src[first + k]) == packed_bytes(src[first]);
        g.src_stride = g.dst_stride = g.count > 1 ? static_cast<std::ptrdiff_t>(packed_bytes(src[first])) : 0;
        op(g, first, s);
        for (std::size_t i = first; i < end; ++i) {
            const ImageView& d = down[i - first];
            const std::size_t pitch = dst[i].height > 1 ? dst[i].pitch : dst[i].row_bytes();
            BATCH_CUDA(cudaMemcpy2DAsync(const_cast<void*>(dst[i].data), pitch, d.data, d.pitch, dst[i].row_bytes(),
                                         static_cast<std::size_t>(dst[i].height), cudaMemcpyDeviceToHost, cu(s)));
        }
        BATCH_CUDA(cudaStreamSynchronize(cu(s)));
        for (auto& slot : ws.stage_slots()) slot.in_flight = false;  // the stream has drained
        first = end;
    }
    ws.trim_staging();
}

}  // namespace imghist::detail
