// The histogrammer layer of the CUDA histogram: CudaHistogrammer (validation, descriptors, the workspace of
// its (device, stream)) on top of the plan-and-launch layer (plan.hpp), and the same path for the filters'
// device pipelines (device_histogram.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/binning.hpp"
#include "cuda/plan/plan.hpp"
#include "core/dispatch.hpp"
#include "imghist/buffer.hpp"
#include "imghist/histogram.hpp"
#include "cuda/runtime/cuda_error.hpp"
#include "cuda/device_histogram.hpp"
#include "cuda/launch_shape.hpp"
#include "cuda/runtime/workspace.hpp"

namespace imghist {

// ---------------------------------------------------------------------------------------------------------
// CudaHistogrammer: the device, the launch-shape override and what the last call ran. Temporary storage
// is the library's workspace of (device, stream) (runtime/workspace.hpp).

namespace {
/// What the last launch ran: kept as the plan and grid, and described only when asked
/// (detail::last_launch_shape / last_kernel, launch_shape.hpp) — building the name on every call would cost
/// the host side of a small launch a string allocation.
struct LastLaunch {
    bool valid = false;
    SampleType type = SampleType::U8;
    int channels = 1;
    detail::cuda::Plan plan{};
    int grid = 0;
    int vectors = 0;
    bool contiguous = false;  ///< contiguous_kernel ran (on a contiguous image, or on rows: `rows`)
    bool rows = false;
    bool batch = false;
};
}  // namespace

struct CudaHistogrammer::Impl {
    int device = 0;
    detail::LaunchShape shape{};
    LastLaunch last{};
};

CudaHistogrammer::CudaHistogrammer(int device) : impl_(std::make_unique<Impl>()) {
    if (cuda_device_count() == 0) throw Error(ErrorCode::NoDevice, "CudaHistogrammer: no CUDA device is available");
    if (device < 0) IMGHIST_CUDA(cudaGetDevice(&device));
    if (device >= cuda_device_count())
        throw Error(ErrorCode::NoDevice, "CudaHistogrammer: CUDA device " + std::to_string(device) + " does not exist");
    impl_->device = device;
}
CudaHistogrammer::~CudaHistogrammer() = default;
CudaHistogrammer::CudaHistogrammer(CudaHistogrammer&&) noexcept = default;
CudaHistogrammer& CudaHistogrammer::operator=(CudaHistogrammer&&) noexcept = default;

int CudaHistogrammer::device() const noexcept { return impl_->device; }

namespace detail {
struct HistogrammerAccess {
    static CudaHistogrammer::Impl& impl(const CudaHistogrammer& hg) noexcept { return *hg.impl_; }
};

void set_launch_shape(CudaHistogrammer& hg, const LaunchShape& shape) noexcept {
    HistogrammerAccess::impl(hg).shape = shape;
}

LaunchShape last_launch_shape(const CudaHistogrammer& hg) noexcept {
    const auto& impl = HistogrammerAccess::impl(hg);
    const LastLaunch& l = impl.last;
    if (!l.valid) return LaunchShape{};
    int per_sm = 0;  // a batch's shape reports none (its grid is not per SM)
    if (!l.batch) {
        try {
            const int sms = cuda::device_info(impl.device).sm_count;
            per_sm = (l.grid + sms - 1) / sms;
        } catch (...) {
        }
    }
    return LaunchShape{l.plan.policy.threads, l.vectors, per_sm, 1 << l.plan.copies_log2, l.grid,
                       static_cast<int>(l.plan.tile_bytes)};
}

std::string last_kernel(const CudaHistogrammer& hg) {
    const LastLaunch& l = HistogrammerAccess::impl(hg).last;
    if (!l.valid) return {};
    std::string name = cuda::kernel_name(l.type, l.channels, l.plan);
    if (l.contiguous) name.insert(name.size() - 1, l.rows ? ",contiguous-rows" : ",contiguous");
    if (l.batch) name += "[batch]";
    return name;
}
}  // namespace detail

namespace {

using detail::BinParams;
using detail::DeviceSlot;
using detail::Workspace;
using detail::OutputPlace;
namespace dc = detail::cuda;

void check_output(const DeviceHistogramView& out, const BinSpec& spec, const ImageView& img, bool accumulate,
                  const detail::ArgName& name) {
    auto what = [&name] { return name.str(); };
    if (out.counts == nullptr) throw Error(ErrorCode::InvalidArgument, what() + ": output counts pointer is null");
    if (out.channel_stride != 0 && out.channel_stride < static_cast<std::size_t>(spec.bins))
        throw Error(ErrorCode::InvalidArgument, what() + ": channel_stride is smaller than the bin count");
    if (out.type == CountType::U32) {
        if (!accumulate && img.pixels() > 0xFFFFFFFFull)
            throw Error(ErrorCode::Overflow, what() + ": " + std::to_string(img.pixels()) +
                                                 " samples per channel do not fit 32-bit counts; use CountType::U64");
        if (accumulate && out.overflow_flag == nullptr)
            throw Error(ErrorCode::InvalidArgument,
                        what() + ": accumulating into 32-bit counts needs DeviceHistogramView::overflow_flag (or use U64)");
    }
}

/// Where a launch records what it ran (detail::last_launch_shape / last_kernel); null: not wanted.
using LaunchRecord = LastLaunch*;

/// The merge counters of the finishing block: zero between launches (each launch's last block restores
/// that), zeroed in stream order when first allocated.
dc::MergeRef bind_merge_workspace(Workspace& ws, std::size_t counters) {
    const std::size_t cap = std::max<std::size_t>(counters, 1024);
    bool g1 = false, g2 = false, g3 = false;
    dc::MergeRef m{};
    m.counts = ws.device_buffer(DeviceSlot::HistCounters, cap * sizeof(unsigned long long), &g1);
    m.oor = ws.device_as<unsigned long long>(DeviceSlot::HistOor, 4 * sizeof(unsigned long long), &g2);
    m.ticket = ws.device_as<unsigned int>(DeviceSlot::HistTicket, 4 * sizeof(unsigned int), &g3);
    const cudaStream_t s = detail::cu(ws.stream());
    if (g1) IMGHIST_CUDA(cudaMemsetAsync(m.counts, 0, ws.device_size(DeviceSlot::HistCounters), s));
    if (g2) IMGHIST_CUDA(cudaMemsetAsync(m.oor, 0, ws.device_size(DeviceSlot::HistOor), s));
    if (g3) IMGHIST_CUDA(cudaMemsetAsync(m.ticket, 0, ws.device_size(DeviceSlot::HistTicket), s));
    return m;
}

/// The first-arrival zeroing's two words (Params::sync): zero between launches, zeroed in stream order
/// when first allocated. A slot of their own: a launch that fails between the two halves leaves them set
/// (only a failed launch can: every block runs both), and the ticket path must not inherit that.
unsigned int* bind_sync_words(Workspace& ws) {
    bool fresh = false;
    auto* w = ws.device_as<unsigned int>(DeviceSlot::HistSync, 2 * sizeof(unsigned int), &fresh);
    if (fresh) IMGHIST_CUDA(cudaMemsetAsync(w, 0, 2 * sizeof(unsigned int), detail::cu(ws.stream())));
    return w;
}

/// Returns whether the launch tags its result with `tag` (see cuda_histogram).
bool compute_on(Workspace& ws, const ImageView& image, const BinSpec& spec, const DeviceHistogramView& out,
                const AsyncOptions& options, OutputPlace place, unsigned int tag,
                const detail::LaunchShape& shape, LaunchRecord rec, const char* who) {
    detail::validate_image(image);
    if (image.location != Location::Device && !image.empty())
        throw Error(ErrorCode::InvalidArgument, std::string(who) + " needs a device image view");
    const ImageView* mask = nullptr;
    if (options.mask) {
        detail::validate_mask(*options.mask, image);
        mask = &*options.mask;
    }
    const BinParams bp = detail::make_bin_params(spec, image.type);
    check_output(out, spec, image, options.accumulate, who);
    const Stream stream = ws.stream();
    if (image.empty()) {
        if (!options.accumulate) dc::zero_output_async(out, image.channels, spec.bins, stream);
        return false;
    }
    const int device = ws.device();
    const std::size_t total_bytes = image.row_bytes() * image.height;
    const dc::Plan pl = dc::make_plan(device, image, bp, total_bytes, shape, /*allow_split=*/true);
    const dc::KernelFn fn = dc::pick_kernel(image.type, image.channels, pl.kmode, pl.storage, /*batch=*/false);

    dc::Params p{};
    dc::fill_params(p, bp, pl, out.type);
    p.one = dc::make_desc(image, mask, pl.tile_bytes);
    p.one.counts = out.counts;
    p.one.ch_stride = out.channel_stride ? out.channel_stride : static_cast<std::size_t>(spec.bins);
    p.one.oor = out.out_of_range;
    p.descs = nullptr;
    p.ndesc = 1;
    p.total_tiles = p.one.tiles;
    p.direct = options.accumulate ? 1 : 0;
    // Only an accumulation can wrap a 32-bit counter (check_output refuses overwrites of 2^32 samples or
    // more); without a flag the kernel's additions are reductions it does not wait for.
    p.overflow_flag = options.accumulate ? out.overflow_flag : nullptr;
    const std::size_t counters = static_cast<std::size_t>(image.channels) * spec.bins;
    if (!options.accumulate && place == OutputPlace::Device && pl.storage != dc::Storage::Global &&
        counters <= dc::HistogramLimits::zero_first_max_counters) {
        // Overwrite in one pass: the first block to arrive zeroes the output, all add straight into it.
        p.direct = 1;
        p.zero_first = 1;
        p.sync = bind_sync_words(ws);
    } else if (!options.accumulate) {
        // Mapped host memory, histograms wider than the one-pass zeroing: counted in the workspace, copied out
        // by the last block.
        p.merge = bind_merge_workspace(ws, counters);
        // 32-bit workspace counters when no counter can reach 2^32: half the atomic traffic of the merge.
        p.merge.u64 = image.pixels() > 0xFFFFFFFFull ? 1 : 0;
        // A tag needs the upper half of each 64-bit output word free: counts below 2^32.
        if (tag != 0 && place == OutputPlace::HostMapped && !p.merge.u64 && out.type == CountType::U64) p.merge.tag = tag;
    }
    const int grid = dc::grid_for(device, fn, pl, p.total_tiles, total_bytes, image.pixels() * image.channels,
                                  shape.max_blocks);
    const bool merged = !p.direct;
    const dc::VectorGeometry g =
        p.zero_first || merged ? dc::contiguous_geometry(image, mask != nullptr, pl, grid) : dc::VectorGeometry{};
    const bool contiguous = g.rows != 0;
    if (contiguous) {
        dc::launch_contiguous(device, image, g, bp, pl, grid,
                              dc::OutputRef{out.counts, p.one.ch_stride, out.out_of_range, spec.bins, p.count_u64,
                                            p.sync},
                              merged ? &p.merge : nullptr, stream);
    } else {
        dc::launch(fn, pl, grid, p, stream);
    }
    if (rec) *rec = LastLaunch{true, image.type, image.channels, pl, grid, p.vectors, contiguous, g.rows > 1, false};
    return p.merge.tag != 0;
}

}  // namespace

void CudaHistogrammer::compute(const ImageView& image, const BinSpec& spec, const DeviceHistogramView& out,
                               Stream stream, const AsyncOptions& options) {
    detail::DeviceGuard guard(impl_->device);
    detail::WorkspaceLease ws = detail::acquire_workspace(impl_->device, stream);
    (void)compute_on(*ws, image, spec, out, options, OutputPlace::Device, 0u, impl_->shape, &impl_->last,
                     "CudaHistogrammer::compute");
}

namespace {

/// Whether the images and outputs of a batch are equally spaced copies of the first's geometry (a [N, H, W]
/// tensor, frames in one allocation, their histograms in one array): then the kernel moves image 0's
/// descriptor by d strides, and no descriptor array is built or copied. Masked batches take descriptors.
bool equally_spaced(const ImageView* images, std::size_t count, const DeviceHistogramView* out,
                    dc::BatchStrides& st) {
    if (count == 0) return false;
    auto delta = [](const void* a, const void* b) {
        return static_cast<long long>(reinterpret_cast<std::uintptr_t>(a) - reinterpret_cast<std::uintptr_t>(b));
    };
    const ImageView& f = images[0];
    st = dc::BatchStrides{};  // one image: no distances to take
    if (count > 1) {
        st.image = delta(images[1].data, f.data);
        st.counts = delta(out[1].counts, out[0].counts);
        st.oor = out[0].out_of_range && out[1].out_of_range ? delta(out[1].out_of_range, out[0].out_of_range) : 0;
    }
    for (std::size_t i = 0; i < count; ++i) {
        const ImageView& v = images[i];
        const long long k = static_cast<long long>(i);
        if (v.width != f.width || v.height != f.height || v.pitch != f.pitch || v.empty()) return false;
        if (delta(v.data, f.data) != k * st.image || delta(out[i].counts, out[0].counts) != k * st.counts) return false;
        if (out[i].channel_stride != out[0].channel_stride) return false;
        if ((out[i].out_of_range == nullptr) != (out[0].out_of_range == nullptr)) return false;
        if (out[i].out_of_range && delta(out[i].out_of_range, out[0].out_of_range) != k * st.oor) return false;
    }
    return true;
}

void batch_on(Workspace& ws, const ImageView* images, std::size_t count, const BinSpec& spec,
              const DeviceHistogramView* out, bool accumulate, const ImageView* masks,
              const detail::LaunchShape& shape, LaunchRecord rec) {
    if (count == 0) return;
    const Stream stream = ws.stream();
    if (images == nullptr || out == nullptr)
        throw Error(ErrorCode::InvalidArgument, "CudaHistogrammer::compute_batch: null images or outputs");
    const ImageView& first = images[0];
    std::size_t total_bytes = 0, max_samples = 0, max_bytes = 0;
    for (std::size_t i = 0; i < count; ++i) {
        // Messages are built only on failure: the host cost per image must stay well below the GPU's.
        const detail::ArgName name{"batch image", i};
        detail::validate_image(images[i], name);
        if (images[i].type != first.type || images[i].channels != first.channels)
            throw Error(ErrorCode::InvalidArgument, name.str() + " differs in sample type or channel count from image 0");
        if (images[i].location != Location::Device && !images[i].empty())
            throw Error(ErrorCode::InvalidArgument, name.str() + " is not a device image view");
        if (masks) detail::validate_mask(masks[i], images[i]);
        check_output(out[i], spec, images[i], accumulate, name);
        if (out[i].type != out[0].type)
            throw Error(ErrorCode::InvalidArgument, "compute_batch: all outputs must have the same CountType");
        const std::size_t bytes = images[i].row_bytes() * images[i].height;
        total_bytes += bytes;
        max_bytes = std::max(max_bytes, bytes);
        max_samples = std::max(max_samples, images[i].pixels() * images[i].channels);
    }
    const BinParams bp = detail::make_bin_params(spec, first.type);
    const dc::Plan pl = dc::make_plan(ws.device(), first, bp, std::max<std::size_t>(total_bytes, 1), shape,
                                      /*allow_split=*/true, std::max<std::size_t>(max_bytes, 1));
    const dc::KernelFn fn = dc::pick_kernel(first.type, first.channels, pl.kmode, pl.storage, /*batch=*/true);

    dc::Params p{};
    dc::fill_params(p, bp, pl, out[0].type);
    p.ndesc = static_cast<unsigned int>(count);
    p.direct = 1;
    p.overflow_flag = accumulate ? out[0].overflow_flag : nullptr;  // as in compute_on
    // An overwrite stores the counts of each image that one block holds whole, where every counted slot is
    // one output counter; the outputs then need zeroing only when some image is shared between blocks or
    // empty (no block flushes it).
    p.store_whole = !accumulate && pl.storage == dc::Storage::Smem &&
                    (pl.kmode != dc::KMode::Direct || dc::identity_fold(bp)) ? 1 : 0;
    const std::size_t ch_stride0 = out[0].channel_stride ? out[0].channel_stride : static_cast<std::size_t>(spec.bins);
    bool one_tile_each = true;
    unsigned long long tiles = 0;
    dc::BatchStrides strides{};
    const bool spaced = masks == nullptr && equally_spaced(images, count, out, strides);
    if (spaced) {
        p.descs = nullptr;
        p.one = dc::make_desc(first, nullptr, pl.tile_bytes);
        p.one.counts = out[0].counts;
        p.one.ch_stride = ch_stride0;
        p.one.oor = out[0].out_of_range;
        p.strides = strides;
        tiles = p.one.tiles * count;
        one_tile_each = p.one.tiles == 1;
    } else {
        // Descriptors on the device: one per image, built in pinned memory and copied. The pinned staging of
        // the previous batch on this stream must have been copied before it is rewritten. (A spaced batch
        // takes none, so it neither waits nor copies anything from the host: it can be captured into a graph.)
        // A graph would replay the copy from whatever the staging holds then, and the wait would end the
        // capture: a capturing stream is refused before anything is enqueued on it.
        cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
        IMGHIST_CUDA(cudaStreamIsCapturing(stream, &capture));
        if (capture != cudaStreamCaptureStatusNone)
            throw Error(ErrorCode::Unsupported,
                        "compute_batch: a batch whose images or outputs are not equally spaced, or that has masks, "
                        "copies per-image descriptors on every call and cannot be captured into a CUDA graph");
        bool fresh = false;
        const auto descs_copied = static_cast<cudaEvent_t>(ws.event(detail::EventSlot::BatchDescs, &fresh));
        if (!fresh) IMGHIST_CUDA(cudaEventSynchronize(descs_copied));
        const std::size_t desc_bytes = sizeof(dc::Desc) * count;
        auto* dd = ws.device_as<dc::Desc>(DeviceSlot::BatchDescs, desc_bytes);  // grows after queued kernels
        auto* hd = static_cast<dc::Desc*>(ws.pinned_buffer(detail::PinnedSlot::BatchDescs, desc_bytes));
        tiles = 0;
        one_tile_each = true;
        for (std::size_t i = 0; i < count; ++i) {
            const ImageView* m = masks && !masks[i].empty() ? &masks[i] : nullptr;
            dc::Desc d = dc::make_desc(images[i], m, pl.tile_bytes);
            d.counts = out[i].counts;
            d.ch_stride = out[i].channel_stride ? out[i].channel_stride : static_cast<std::size_t>(spec.bins);
            d.oor = out[i].out_of_range;
            d.tile_begin = tiles;
            tiles += d.tiles;
            one_tile_each = one_tile_each && d.tiles == 1;
            hd[i] = d;
        }
        IMGHIST_CUDA(cudaMemcpyAsync(dd, hd, desc_bytes, cudaMemcpyHostToDevice, stream));
        IMGHIST_CUDA(cudaEventRecord(descs_copied, stream));
        p.descs = dd;
    }
    if (!accumulate && !(p.store_whole && one_tile_each))
        dc::launch_zero_outputs(p, static_cast<unsigned int>(count), first.channels, spec.bins,
                                out[0].type == CountType::U64, stream);
    if (tiles == 0) return;
    p.total_tiles = tiles;
    const int grid = dc::grid_for(ws.device(), fn, pl, tiles, total_bytes, max_samples, shape.max_blocks);
    dc::launch(fn, pl, grid, p, stream);
    if (rec) *rec = LastLaunch{true, first.type, first.channels, pl, grid, p.vectors, false, false, true};
}

}  // namespace

void CudaHistogrammer::compute_batch(const ImageView* images, std::size_t count, const BinSpec& spec,
                                    const DeviceHistogramView* out, Stream stream, bool accumulate,
                                    const ImageView* masks) {
    if (count == 0) return;
    detail::DeviceGuard guard(impl_->device);
    detail::WorkspaceLease ws = detail::acquire_workspace(impl_->device, stream);
    batch_on(*ws, images, count, spec, out, accumulate, masks, impl_->shape,
             &impl_->last);
}

namespace detail {

bool cuda_histogram(Workspace& ws, const ImageView& image, const BinSpec& spec, const DeviceHistogramView& out,
                    const AsyncOptions& options, OutputPlace place, unsigned int tag) {
    return compute_on(ws, image, spec, out, options, place, tag, detail::LaunchShape{}, nullptr, "histogram");
}

void cuda_histogram_batch(Workspace& ws, const ImageView* images, std::size_t count, const BinSpec& spec,
                          const DeviceHistogramView* out, bool accumulate, const ImageView* masks) {
    batch_on(ws, images, count, spec, out, accumulate, masks, detail::LaunchShape{},
             nullptr);
}

}  // namespace detail
}  // namespace imghist
