// The CUDA backend's host-result entry points of the dispatch layer (dispatch.hpp): calcHist /
// accumulateHist / calcHistBatch on host or device views with the counts returned to the host. Host images
// go through the one staging path (imghist/internal/staging.hpp); the histogram runs in the workspace of the
// stream the call is ordered on.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dispatch.hpp"
#include "imghist/histogram.hpp"
#include "imghist/internal/cuda_error.hpp"
#include "imghist/internal/device_histogram.hpp"
#include "imghist/internal/staging.hpp"
#include "imghist/internal/workspace.hpp"

namespace imghist::detail {
namespace {

int resolve_device(int device) {
    if (cuda_device_count() == 0) throw Error(ErrorCode::NoDevice, "no CUDA device is available");
    if (device < 0) IMGHIST_CUDA(cudaGetDevice(&device));
    if (device >= cuda_device_count())
        throw Error(ErrorCode::NoDevice, "CUDA device " + std::to_string(device) + " does not exist");
    return device;
}

std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }
std::size_t packed_bytes(const ImageView& v) { return align_up(v.row_bytes() * v.height, 256); }

/// The workspace (and so the stream) of a blocking call. With a caller stream: that one. Host inputs are
/// staged by this call, so without one it works on a private non-blocking stream and waits for nothing
/// else. Device inputs were written by earlier work of the caller's, typically cudaMemcpy or a kernel on the
/// default stream, so the call is ordered on the default (legacy) stream: a non-blocking stream could read
/// the image before that work has finished.
WorkspaceLease blocking_workspace(int device, Stream caller, bool device_input) {
    if (caller || device_input) return acquire_workspace(device, caller);
    return acquire_private_workspace(device);
}

/// After the stream has been synchronised: the staging chunks are free, and oversized staging goes.
void end_blocking_call(Workspace& ws) {
    for (auto& s : ws.stage_slots()) s.in_flight = false;
    ws.trim_staging();
}

}  // namespace

void cuda_histogram_to_host(const ImageView& image, const ImageView* mask, const BinSpec& spec, std::uint64_t* counts,
                            std::uint64_t* oor, int device, Stream stream) {
    device = resolve_device(device);
    DeviceGuard guard(device);
    WorkspaceLease ws = blocking_workspace(device, stream, image.location == Location::Device);
    ImageView dimg = image, dmask = mask ? *mask : ImageView{};
    if (image.location == Location::Host && !image.empty()) {
        const std::size_t ibytes = packed_bytes(image);
        const std::size_t mbytes = mask ? packed_bytes(*mask) : 0;
        auto* buf = ws->device_as<unsigned char>(DeviceSlot::StageSrc, ibytes + mbytes);
        dimg = stage_upload(*ws, image, buf);
        if (mask) dmask = stage_upload(*ws, *mask, buf + ibytes);
    }
    if (image.empty()) return;  // nothing to add
    const std::size_t n = static_cast<std::size_t>(image.channels) * spec.bins;
    // The result goes straight into page-locked host memory, which the device addresses directly (unified
    // addressing): the kernel's last block writes the final counts there, so no copy follows the kernel
    // and the call returns one stream synchronisation after the launch.
    auto* host = static_cast<unsigned long long*>(ws->pinned_buffer(PinnedSlot::Result, sizeof(unsigned long long) * (n + 4)));
    DeviceHistogramView out;
    out.counts = host;
    out.type = CountType::U64;
    out.out_of_range = host + n;
    AsyncOptions opt;
    if (mask) opt.mask = dmask;
    cuda_histogram(*ws, dimg, spec, out, opt);
    IMGHIST_CUDA(cudaStreamSynchronize(cu(ws->stream())));
    end_blocking_call(*ws);
    for (std::size_t i = 0; i < n; ++i) counts[i] += host[i];
    for (int c = 0; c < image.channels; ++c) oor[c] += host[n + c];
}

void cuda_batch_to_host(const std::vector<ImageView>& images, const std::vector<ImageView>& masks, const BinSpec& spec,
                        std::vector<Histogram>& hists, int device, Stream stream) {
    device = resolve_device(device);
    DeviceGuard guard(device);
    WorkspaceLease ws =
        blocking_workspace(device, stream, !images.empty() && images[0].location == Location::Device);
    const std::size_t count = images.size();
    std::vector<ImageView> dimgs(images), dmasks(masks);
    if (!images.empty() && images[0].location == Location::Host) {
        std::size_t bytes = 0;
        for (std::size_t i = 0; i < count; ++i) {
            bytes += packed_bytes(images[i]);
            if (!masks.empty()) bytes += packed_bytes(masks[i]);
        }
        auto* buf = ws->device_as<unsigned char>(DeviceSlot::StageSrc, std::max<std::size_t>(bytes, 256));
        std::size_t off = 0;
        for (std::size_t i = 0; i < count; ++i) {
            dimgs[i] = stage_upload(*ws, images[i], buf + off);
            off += packed_bytes(images[i]);
            if (!masks.empty()) {
                dmasks[i] = stage_upload(*ws, masks[i], buf + off);
                off += packed_bytes(masks[i]);
            }
        }
    }
    const int C = images.empty() ? 1 : images[0].channels;
    const std::size_t n = static_cast<std::size_t>(C) * spec.bins;
    // Counts then out-of-range counters of each image, packed: every word the copy below reads is written
    // by the kernels (no padding the device never initialises).
    const std::size_t per = n + static_cast<std::size_t>(C);
    const std::size_t result_bytes = sizeof(unsigned long long) * per * std::max<std::size_t>(count, 1);
    auto* dres = ws->device_as<unsigned long long>(DeviceSlot::BatchResult, result_bytes);
    std::vector<DeviceHistogramView> outs(count);
    for (std::size_t i = 0; i < count; ++i) {
        outs[i].counts = dres + per * i;
        outs[i].type = CountType::U64;
        outs[i].out_of_range = dres + per * i + n;
    }
    cuda_histogram_batch(*ws, dimgs.data(), count, spec, outs.data(), false, masks.empty() ? nullptr : dmasks.data());
    auto* host = static_cast<unsigned long long*>(ws->pinned_buffer(PinnedSlot::BatchResult, result_bytes));
    const auto s = cu(ws->stream());
    IMGHIST_CUDA(cudaMemcpyAsync(host, dres, sizeof(unsigned long long) * per * count, cudaMemcpyDeviceToHost, s));
    IMGHIST_CUDA(cudaStreamSynchronize(s));
    end_blocking_call(*ws);
    for (std::size_t i = 0; i < count; ++i) {
        for (std::size_t k = 0; k < n; ++k) hists[i].counts[k] += host[per * i + k];
        for (int c = 0; c < C; ++c) hists[i].out_of_range[c] += host[per * i + n + c];
    }
}

}  // namespace imghist::detail
