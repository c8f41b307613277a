// CUDA backend: request validation, kernel selection, launch shapes, workspaces, and the host-result
// entry points used by calcHist / calcHistBatch.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "binning.hpp"
#include "cuda/common.cuh"
#include "cuda/histogram_kernels.cuh"
#include "cuda/tuning.hpp"
#include "dispatch.hpp"
#include "imghist/buffer.hpp"
#include "imghist/histogram.hpp"

namespace imghist {

namespace detail::cuda {
using KernelFn = void (*)(Params);
namespace {

template <class T, int C, KMode M>
KernelFn pick_storage(Storage st) {
    switch (st) {
        case Storage::Smem: return histogram_kernel<T, C, M, Storage::Smem>;
        case Storage::Split: return histogram_kernel<T, C, M, Storage::Split>;
        case Storage::Global: break;
    }
    // The global fallback evaluates the rule itself (correct for every mode, and the slow path anyway).
    return histogram_kernel<T, C, KMode::Arith, Storage::Global>;
}

template <class T, int C>
KernelFn pick_mode(KMode m, Storage st) {
    if constexpr (std::is_same_v<T, std::uint8_t>) {
        // 8-bit requests always count raw values in shared memory and fold them into bins at the flush.
        (void)st;
        (void)m;
        return histogram_kernel<T, C, KMode::Direct, Storage::Smem>;
    } else if constexpr (std::is_same_v<T, float>) {
        if (m == KMode::ScaleF32) return pick_storage<T, C, KMode::ScaleF32>(st);
        return pick_storage<T, C, KMode::Arith>(st);
    } else if constexpr (std::is_same_v<T, std::uint16_t>) {
        if (m == KMode::ShiftFull || m == KMode::Direct) return pick_storage<T, C, KMode::ShiftFull>(st);
        if (m == KMode::Shift) return pick_storage<T, C, KMode::Shift>(st);
        return pick_storage<T, C, KMode::Arith>(st);
    } else {
        if (m == KMode::Shift || m == KMode::ShiftFull || m == KMode::Direct) return pick_storage<T, C, KMode::Shift>(st);
        return pick_storage<T, C, KMode::Arith>(st);
    }
}

template <class T>
KernelFn pick_channels(int channels, KMode m, Storage st) {
    switch (channels) {
        case 1: return pick_mode<T, 1>(m, st);
        case 2: return pick_mode<T, 2>(m, st);
        case 3: return pick_mode<T, 3>(m, st);
        default: return pick_mode<T, 4>(m, st);
    }
}

}  // namespace

KernelFn pick_kernel(SampleType t, int channels, KMode m, Storage st) {
    switch (t) {
        case SampleType::U8: return pick_channels<std::uint8_t>(channels, m, st);
        case SampleType::U16: return pick_channels<std::uint16_t>(channels, m, st);
        case SampleType::I32: return pick_channels<std::int32_t>(channels, m, st);
        case SampleType::F32: return pick_channels<float>(channels, m, st);
    }
    return nullptr;
}

KMode kmode_of(const BinParams& bp, SampleType t) {
    switch (bp.mode) {
        case BinMode::Shift:
            if (t == SampleType::U8) return KMode::Direct;  // counted raw, folded into bins at flush
            return (bp.limit == 0 && t != SampleType::I32) ? KMode::ShiftFull : KMode::Shift;
        case BinMode::Lut8: return KMode::Direct;  // counted raw, folded into bins at flush
        case BinMode::ScaleF32: return KMode::ScaleF32;
        case BinMode::Arith: return KMode::Arith;
    }
    return KMode::Arith;
}

namespace {

const char* mode_name(KMode m) {
    switch (m) {
        case KMode::Direct: return "direct";
        case KMode::ShiftFull: return "shift";
        case KMode::Shift: return "shift-range";
        case KMode::Arith: return "arith";
        case KMode::ScaleF32: return "scale";
    }
    return "?";
}

struct DeviceInfo {
    int sm_count = 0;
    int cc_major = 0;
    std::size_t smem_optin = 48 * 1024;  // per block, after cudaFuncSetAttribute
};

const DeviceInfo& device_info(int device) {
    static std::mutex m;
    static std::map<int, DeviceInfo> cache;
    std::lock_guard<std::mutex> lock(m);
    auto it = cache.find(device);
    if (it != cache.end()) return it->second;
    DeviceInfo info;
    int v = 0;
    IMGHIST_CUDA(cudaDeviceGetAttribute(&info.sm_count, cudaDevAttrMultiProcessorCount, device));
    IMGHIST_CUDA(cudaDeviceGetAttribute(&info.cc_major, cudaDevAttrComputeCapabilityMajor, device));
    IMGHIST_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    info.smem_optin = static_cast<std::size_t>(v);
    return cache.emplace(device, info).first->second;
}

/// Raises the kernel's dynamic shared-memory limit when needed and returns its occupancy (blocks per SM).
int prepare_kernel(int device, KernelFn fn, int threads, std::size_t smem) {
    static std::mutex m;
    static std::map<std::tuple<int, const void*, int, std::size_t>, int> occ_cache;
    static std::map<std::pair<int, const void*>, std::size_t> smem_set;
    std::lock_guard<std::mutex> lock(m);
    auto key = std::make_tuple(device, reinterpret_cast<const void*>(fn), threads, smem);
    auto it = occ_cache.find(key);
    if (it != occ_cache.end()) return it->second;
    auto& current = smem_set[{device, reinterpret_cast<const void*>(fn)}];
    if (smem > 48 * 1024 && smem > current) {
        IMGHIST_CUDA(cudaFuncSetAttribute(reinterpret_cast<const void*>(fn), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(smem)));
        current = smem;
    }
    int blocks = 0;
    IMGHIST_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, threads, smem));
    occ_cache.emplace(key, blocks);
    return blocks;
}

}  // namespace
}  // namespace detail::cuda

// ---------------------------------------------------------------------------------------------------------
// CudaHistogrammer

struct CudaHistogrammer::Impl {
    struct StreamState {
        DeviceBuffer ws_counts, ws_oor, ticket;  // zero between launches (the kernel restores that)
        std::size_t ws_capacity = 0;             // counters
        DeviceBuffer descs;                      // batch descriptors
        PinnedBuffer descs_host;
        cudaEvent_t descs_copied = nullptr;      // the last descriptor upload from descs_host
    };
    int device = 0;
    Shape shape{};
    Shape last{};
    std::string last_kernel;
    std::unordered_map<Stream, StreamState> streams;

    ~Impl() {
        for (auto& [s, st] : streams)
            if (st.descs_copied) cudaEventDestroy(st.descs_copied);
    }

    StreamState& state(Stream s) { return streams[s]; }

    void ensure_ws(StreamState& st, std::size_t counters, Stream stream) {
        if (st.ws_capacity >= counters && st.ticket.size() != 0) return;
        // The old workspace may still be in use by queued work on this stream: order the swap after it.
        // (Growth only: a steady state never gets here.)
        IMGHIST_CUDA(cudaStreamSynchronize(stream));
        const std::size_t cap = std::max<std::size_t>(counters, 1024);
        st.ws_counts.reserve(cap * sizeof(unsigned long long));
        st.ws_oor.reserve(4 * sizeof(unsigned long long));
        st.ticket.reserve(sizeof(unsigned int) * 4);
        // Zeroed in stream order, before the first kernel that uses them.
        IMGHIST_CUDA(cudaMemsetAsync(st.ws_counts.data(), 0, st.ws_counts.size(), stream));
        IMGHIST_CUDA(cudaMemsetAsync(st.ws_oor.data(), 0, st.ws_oor.size(), stream));
        IMGHIST_CUDA(cudaMemsetAsync(st.ticket.data(), 0, st.ticket.size(), stream));
        st.ws_capacity = cap;
    }
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
void CudaHistogrammer::set_shape(const Shape& shape) noexcept { impl_->shape = shape; }
CudaHistogrammer::Shape CudaHistogrammer::last_shape() const noexcept { return impl_->last; }
std::string CudaHistogrammer::last_kernel() const { return impl_->last_kernel; }

namespace {

using detail::BinMode;
using detail::BinParams;
namespace dc = detail::cuda;

// Keeps every per-tile index the kernels split with fast_div below 2^24 (the head/tail loop counts up to
// tile bytes / sample size samples; vectors and masked pixels stay below that).
constexpr std::size_t kMaxTileBytes = 1u << 20;

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

struct Plan {
    dc::Policy policy;
    dc::Storage storage = dc::Storage::Smem;
    dc::KMode kmode = dc::KMode::Arith;
    int copies_log2 = 0;
    int splits = 1;                 ///< Split storage: sibling blocks per tile range
    unsigned int split_slots = 0;   ///< Split storage: flat slots per sibling
    std::size_t smem = 0;
    std::size_t tile_bytes = 0;
    std::size_t block_bytes_min = 0;  ///< fewest input bytes per block worth its set-up and flush
};

int log2_ceil(std::size_t v) {
    int k = 0;
    while ((std::size_t(1) << k) < v) ++k;
    return k;
}

/// Picks storage, copies and tiling.
Plan make_plan(int device, const ImageView& img, const BinParams& bp, std::size_t total_bytes,
               const CudaHistogrammer::Shape& over, bool allow_split) {
    const auto& info = dc::device_info(device);
    Plan pl;
    pl.policy = dc::select_policy(info.cc_major, static_cast<int>(img.sample_bytes()), img.channels, bp.bins,
                                  total_bytes);
    if (over.threads > 0) pl.policy.threads = over.threads;
    if (over.vectors > 0) pl.policy.vectors = std::min(over.vectors, 4);
    if (over.blocks_per_sm > 0) pl.policy.blocks_per_sm = over.blocks_per_sm;
    if (over.copies > 0) pl.policy.copies = over.copies;
    if (over.tile_bytes > 0) pl.policy.tile_bytes = over.tile_bytes;
    pl.kmode = dc::kmode_of(bp, img.type);
    int copies = 1;
    while (copies * 2 <= std::min(pl.policy.copies, 32)) copies *= 2;
    const std::size_t extra = 4 * sizeof(unsigned int);  // the out-of-range words
    // 8-bit requests count the 256 raw values and fold them into bins when flushing (fill_params).
    const std::size_t chan_slots = img.type == SampleType::U8 ? 256 : static_cast<std::size_t>(bp.bins) + 1;
    const std::size_t per_copy = sizeof(unsigned int) * static_cast<std::size_t>(img.channels) * chan_slots;
    while (copies > 1 && per_copy * copies + extra > info.smem_optin) copies /= 2;
    const std::size_t flat_slots = static_cast<std::size_t>(img.channels) * chan_slots;
    if (per_copy + extra <= info.smem_optin) {
        pl.storage = dc::Storage::Smem;
        pl.smem = per_copy * copies + extra;
    } else {
        // Too wide for one block: K siblings each own a range of the slots (see the kernels' header).
        copies = 1;
        const std::size_t room = (info.smem_optin - extra) / 4;
        const std::size_t k = (flat_slots + room - 1) / room;
        if (allow_split && k <= 16) {
            pl.storage = dc::Storage::Split;
            pl.splits = static_cast<int>(k);
            pl.split_slots = static_cast<unsigned int>((flat_slots + k - 1) / k);
            pl.smem = 4 * static_cast<std::size_t>(pl.split_slots) + extra;
            if (over.threads == 0) pl.policy.threads = 1024;
        } else {
            pl.storage = dc::Storage::Global;
            pl.smem = extra;
        }
    }
    pl.copies_log2 = log2_ceil(static_cast<std::size_t>(copies));
    if (over.block_bytes > 0) pl.policy.block_bytes = over.block_bytes;
    // One sweep of a block's loads: a tile smaller than this leaves threads idle.
    const std::size_t sweep = static_cast<std::size_t>(pl.policy.threads) * std::max(1, pl.policy.vectors) * 16;
    // A block pays for zeroing and flushing its counters: give it at least block_bytes of input.
    pl.block_bytes_min = std::min<std::size_t>(std::max(pl.policy.block_bytes, 256), kMaxTileBytes);
    // Tiles: the policy's size, smaller for small images so that every block gets several. An explicit
    // Shape::tile_bytes is taken as given (within [16 bytes, kMaxTileBytes]).
    std::size_t tb = static_cast<std::size_t>(pl.policy.tile_bytes);
    const std::size_t want_tiles = static_cast<std::size_t>(info.sm_count) * 4;
    const std::size_t small_blocks = std::max<std::size_t>(1, total_bytes / pl.block_bytes_min);
    if (over.tile_bytes <= 0 &&
        small_blocks < static_cast<std::size_t>(info.sm_count) * std::max(1, pl.policy.blocks_per_sm)) {
        // Too small to fill the grid: one tile per block (the grid is small_blocks, grid_for), so no block
        // waits on a second tile. Vectors of a contiguous image: total / 16 + 1 at most (alignment).
        tb = 16 * ((total_bytes / 16 + 1 + small_blocks - 1) / small_blocks);
    } else if (over.tile_bytes <= 0 && total_bytes / want_tiles < tb) {
        tb = std::max<std::size_t>(sweep, total_bytes / want_tiles);
    }
    pl.tile_bytes = std::min(std::max<std::size_t>(tb, 16), kMaxTileBytes);
    return pl;
}

/// Fills the geometry and tiling of one image's descriptor.
dc::Desc make_desc(const ImageView& img, const ImageView* mask, std::size_t tile_bytes) {
    dc::Desc d{};
    d.base = static_cast<const unsigned char*>(img.data);
    const std::size_t ss = img.sample_bytes();
    if (img.empty()) return d;
    if (mask != nullptr) {
        d.mask = static_cast<const unsigned char*>(mask->data);
        d.mask_pitch = mask->pitch;
        d.width = static_cast<unsigned int>(img.width);
        d.pitch = img.pitch;
        d.rows = static_cast<unsigned int>(img.height);
        d.row_len = static_cast<unsigned long long>(img.width) * img.channels;
        const std::size_t row_bytes = img.row_bytes();
        std::size_t tr = std::max<std::size_t>(1, tile_bytes / std::max<std::size_t>(row_bytes, 1));
        while (tr > 1 && tr * static_cast<std::size_t>(img.width) >= (1u << 24)) tr /= 2;
        d.tile_rows = static_cast<unsigned int>(tr);
        d.tiles = (img.height + tr - 1) / tr;
        return d;
    }
    if (img.contiguous()) {
        d.rows = 1;
        d.row_len = static_cast<unsigned long long>(img.width) * img.channels * img.height;
        d.pitch = d.row_len * ss;
    } else {
        d.rows = static_cast<unsigned int>(img.height);
        d.row_len = static_cast<unsigned long long>(img.width) * img.channels;
        d.pitch = img.pitch;
    }
    const unsigned long long Lb = d.row_len * ss;
    if (Lb > tile_bytes) {
        d.chunk_vecs = static_cast<unsigned int>(std::max<std::size_t>(1, tile_bytes / 16));
        const unsigned long long vmax = Lb / 16 + 1;
        d.chunks_per_row = static_cast<unsigned int>((vmax + d.chunk_vecs - 1) / d.chunk_vecs);
        d.tile_rows = 0;
        d.tiles = static_cast<unsigned long long>(d.rows) * d.chunks_per_row;
    } else {
        std::size_t tr = std::max<std::size_t>(1, tile_bytes / Lb);
        while (tr > 1 && tr * (Lb / 16 + 1) >= (1u << 24)) tr /= 2;
        d.tile_rows = static_cast<unsigned int>(tr);
        d.tiles = (d.rows + tr - 1) / tr;
    }
    return d;
}

void fill_params(dc::Params& p, const BinParams& bp, const Plan& pl, CountType type) {
    p.bins = bp.bins;
    p.copies_log2 = pl.copies_log2;
    p.splits = pl.splits;
    p.split_slots = pl.split_slots;
    p.vectors = std::max(1, std::min(pl.policy.vectors, 4));
    p.low = bp.low;
    p.high = bp.high;
    p.a = bp.a;
    p.b = bp.b;
    p.shift = bp.shift;
    p.limit = bp.limit;
    p.scale = bp.scale;
    p.high_f = bp.high_f;
    if (pl.kmode == dc::KMode::Direct) {
        // Raw 8-bit values are counted; the table maps each value to its bin (or the out-of-range slot).
        detail::make_lut8(bp, p.lut);
        for (short& e : p.lut)
            if (e < 0) e = static_cast<short>(bp.bins);
        p.fold = 1;
    }
    p.count_u64 = type == CountType::U64 ? 1 : 0;
}

int grid_for(int device, dc::KernelFn fn, const Plan& pl, unsigned long long tiles, std::size_t total_bytes,
             std::size_t max_samples, int max_blocks) {
    const auto& info = dc::device_info(device);
    const int occ = dc::prepare_kernel(device, fn, pl.policy.threads, pl.smem);
    if (occ == 0)
        throw Error(ErrorCode::Unsupported, "histogram kernel cannot be resident with " + std::to_string(pl.smem) +
                                                " bytes of shared memory and " + std::to_string(pl.policy.threads) +
                                                " threads");
    const long long k = pl.splits;
    const long long per_sm = std::max(1, std::min(occ, pl.policy.blocks_per_sm));
    long long groups = std::max<long long>(1, per_sm * info.sm_count / k);
    // Small inputs: fewer blocks, each with enough bytes to amortise zeroing and flushing its counters.
    groups = std::min<long long>(groups, static_cast<long long>(std::max<std::size_t>(1, total_bytes / pl.block_bytes_min)));
    if (max_blocks > 0) groups = std::min<long long>(groups, std::max<long long>(1, max_blocks / k));
    // A block's shared counters are 32-bit: give each block fewer than 2^31 samples.
    groups = std::max<long long>(groups, static_cast<long long>(max_samples >> 31) + 1);
    groups = std::min<long long>(groups, static_cast<long long>(tiles));
    groups = std::min<long long>(groups, 0x7FFFFFF0 / k);
    return static_cast<int>(std::max<long long>(groups, 1) * k);
}

const char* storage_name(dc::Storage s) {
    switch (s) {
        case dc::Storage::Smem: return "smem";
        case dc::Storage::Split: return "split";
        case dc::Storage::Global: return "global";
    }
    return "?";
}

std::string kernel_name(SampleType t, int channels, const Plan& pl) {
    const dc::KMode m = (pl.storage == dc::Storage::Global && t != SampleType::U8) ? dc::KMode::Arith : pl.kmode;
    return std::string("hist<") + to_string(t) + ",c" + std::to_string(channels) + "," + dc::mode_name(m) + "," +
           storage_name(pl.storage) + (pl.storage == dc::Storage::Split ? "x" + std::to_string(pl.splits) : "") + ">";
}

void launch(dc::KernelFn fn, const Plan& pl, int grid, const dc::Params& p, Stream stream) {
    fn<<<grid, pl.policy.threads, pl.smem, stream>>>(p);
    IMGHIST_CUDA(cudaGetLastError());
}

void zero_output_async(const DeviceHistogramView& out, int channels, int bins, Stream stream) {
    const std::size_t cs = out.type == CountType::U64 ? 8 : 4;
    const std::size_t stride = out.channel_stride ? out.channel_stride : static_cast<std::size_t>(bins);
    if (stride == static_cast<std::size_t>(bins)) {
        IMGHIST_CUDA(cudaMemsetAsync(out.counts, 0, cs * bins * channels, stream));
    } else {
        for (int c = 0; c < channels; ++c)
            IMGHIST_CUDA(cudaMemsetAsync(static_cast<char*>(out.counts) + cs * stride * c, 0, cs * bins, stream));
    }
    if (out.out_of_range) IMGHIST_CUDA(cudaMemsetAsync(out.out_of_range, 0, sizeof(unsigned long long) * channels, stream));
}

}  // namespace

void CudaHistogrammer::compute(const ImageView& image, const BinSpec& spec, const DeviceHistogramView& out,
                               Stream stream, const AsyncOptions& options) {
    detail::validate_image(image);
    if (image.location != Location::Device && !image.empty())
        throw Error(ErrorCode::InvalidArgument, "CudaHistogrammer::compute needs a device image view");
    const ImageView* mask = nullptr;
    if (options.mask) {
        detail::validate_mask(*options.mask, image);
        mask = &*options.mask;
    }
    const BinParams bp = detail::make_bin_params(spec, image.type);
    check_output(out, spec, image, options.accumulate, "CudaHistogrammer::compute");
    detail::DeviceGuard guard(impl_->device);
    if (image.empty()) {
        if (!options.accumulate) zero_output_async(out, image.channels, spec.bins, stream);
        return;
    }
    const std::size_t total_bytes = image.row_bytes() * image.height;
    const Plan pl = make_plan(impl_->device, image, bp, total_bytes, impl_->shape, /*allow_split=*/true);
    const dc::KernelFn fn = dc::pick_kernel(image.type, image.channels, pl.kmode, pl.storage);

    dc::Params p{};
    fill_params(p, bp, pl, out.type);
    p.one = make_desc(image, mask, pl.tile_bytes);
    p.one.counts = out.counts;
    p.one.ch_stride = out.channel_stride ? out.channel_stride : static_cast<std::size_t>(spec.bins);
    p.one.oor = out.out_of_range;
    p.descs = nullptr;
    p.ndesc = 1;
    p.total_tiles = p.one.tiles;
    p.direct = options.accumulate ? 1 : 0;
    p.overflow_flag = out.overflow_flag;
    if (!options.accumulate) {
        auto& st = impl_->state(stream);
        impl_->ensure_ws(st, static_cast<std::size_t>(image.channels) * spec.bins, stream);
        p.ws_counts = st.ws_counts.data();
        // 32-bit workspace counters when no counter can reach 2^32: half the atomic traffic of the merge.
        p.ws_u64 = image.pixels() > 0xFFFFFFFFull ? 1 : 0;
        p.ws_oor = st.ws_oor.as<unsigned long long>();
        p.ticket = st.ticket.as<unsigned int>();
    }
    const int grid = grid_for(impl_->device, fn, pl, p.total_tiles, total_bytes, image.pixels() * image.channels,
                              impl_->shape.max_blocks);
    launch(fn, pl, grid, p, stream);
    const int sms = dc::device_info(impl_->device).sm_count;
    impl_->last = Shape{pl.policy.threads, p.vectors, (grid + sms - 1) / sms, 1 << pl.copies_log2, grid,
                        static_cast<int>(pl.tile_bytes)};
    impl_->last_kernel = kernel_name(image.type, image.channels, pl);
}

void CudaHistogrammer::computeBatch(const ImageView* images, std::size_t count, const BinSpec& spec,
                                    const DeviceHistogramView* out, Stream stream, bool accumulate,
                                    const ImageView* masks) {
    if (count == 0) return;
    if (images == nullptr || out == nullptr)
        throw Error(ErrorCode::InvalidArgument, "CudaHistogrammer::computeBatch: null images or outputs");
    const ImageView& first = images[0];
    std::size_t total_bytes = 0, max_samples = 0;
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
            throw Error(ErrorCode::InvalidArgument, "computeBatch: all outputs must have the same CountType");
        total_bytes += images[i].row_bytes() * images[i].height;
        max_samples = std::max(max_samples, images[i].pixels() * images[i].channels);
    }
    const BinParams bp = detail::make_bin_params(spec, first.type);
    detail::DeviceGuard guard(impl_->device);
    const Plan pl = make_plan(impl_->device, first, bp, std::max<std::size_t>(total_bytes, 1), impl_->shape,
                              /*allow_split=*/true);
    const dc::KernelFn fn = dc::pick_kernel(first.type, first.channels, pl.kmode, pl.storage);

    auto& st = impl_->state(stream);
    // The pinned staging of the previous batch on this stream must have been copied before it is rewritten.
    if (st.descs_copied) IMGHIST_CUDA(cudaEventSynchronize(st.descs_copied));
    else IMGHIST_CUDA(cudaEventCreateWithFlags(&st.descs_copied, cudaEventDisableTiming));
    const std::size_t desc_bytes = sizeof(dc::Desc) * count;
    if (st.descs.size() < desc_bytes) {
        IMGHIST_CUDA(cudaStreamSynchronize(stream));  // the old array may still be read by queued kernels
        st.descs.reserve(desc_bytes);
    }
    st.descs_host.reserve(desc_bytes);
    auto* hd = st.descs_host.as<dc::Desc>();
    unsigned long long tiles = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const ImageView* m = masks && !masks[i].empty() ? &masks[i] : nullptr;
        dc::Desc d = make_desc(images[i], m, pl.tile_bytes);
        d.counts = out[i].counts;
        d.ch_stride = out[i].channel_stride ? out[i].channel_stride : static_cast<std::size_t>(spec.bins);
        d.oor = out[i].out_of_range;
        d.tile_begin = tiles;
        tiles += d.tiles;
        hd[i] = d;
    }
    IMGHIST_CUDA(cudaMemcpyAsync(st.descs.data(), hd, desc_bytes, cudaMemcpyHostToDevice, stream));
    IMGHIST_CUDA(cudaEventRecord(st.descs_copied, stream));
    const auto* dd = st.descs.as<dc::Desc>();
    if (!accumulate) {
        dc::zero_outputs_kernel<<<static_cast<unsigned int>(count), 256, 0, stream>>>(
            dd, static_cast<unsigned int>(count), first.channels, spec.bins, out[0].type == CountType::U64);
        IMGHIST_CUDA(cudaGetLastError());
    }
    if (tiles == 0) return;
    dc::Params p{};
    fill_params(p, bp, pl, out[0].type);
    p.descs = dd;
    p.ndesc = static_cast<unsigned int>(count);
    p.total_tiles = tiles;
    p.direct = 1;
    p.overflow_flag = out[0].overflow_flag;
    const int grid = grid_for(impl_->device, fn, pl, tiles, total_bytes, max_samples, impl_->shape.max_blocks);
    launch(fn, pl, grid, p, stream);
    impl_->last = Shape{pl.policy.threads, p.vectors, 0, 1 << pl.copies_log2, grid, static_cast<int>(pl.tile_bytes)};
    impl_->last_kernel = kernel_name(first.type, first.channels, pl) + "[batch]";
}

// ---------------------------------------------------------------------------------------------------------
// Host-result paths for calcHist / accumulateHist / calcHistBatch.

namespace detail {
namespace {

struct HostPathContext {
    std::mutex mutex;
    std::unique_ptr<CudaHistogrammer> hist;
    Stream own_stream = nullptr;
    DeviceBuffer image, mask, result;
    PinnedBuffer mapped;  ///< single-image results: the kernel's last block writes them here over the bus
    std::vector<unsigned long long> host_result;
};

HostPathContext& host_context(int device) {
    static std::mutex m;
    static std::map<int, std::unique_ptr<HostPathContext>> contexts;
    std::lock_guard<std::mutex> lock(m);
    auto& ctx = contexts[device];
    if (!ctx) {
        ctx = std::make_unique<HostPathContext>();
        ctx->hist = std::make_unique<CudaHistogrammer>(device);
        DeviceGuard guard(device);
        IMGHIST_CUDA(cudaStreamCreateWithFlags(&ctx->own_stream, cudaStreamNonBlocking));
    }
    return *ctx;
}

int resolve_device(int device) {
    if (cuda_device_count() == 0) throw Error(ErrorCode::NoDevice, "no CUDA device is available");
    if (device < 0) IMGHIST_CUDA(cudaGetDevice(&device));
    if (device >= cuda_device_count())
        throw Error(ErrorCode::NoDevice, "CUDA device " + std::to_string(device) + " does not exist");
    return device;
}

/// Packs a host view into device memory `buf` (tight rows); returns the device view.
ImageView stage(const ImageView& v, DeviceBuffer& buf, std::size_t offset, Stream stream) {
    if (v.empty()) return ImageView::device(nullptr, v.width, v.height, v.type, v.channels);
    const std::size_t row = v.row_bytes();
    char* dst = static_cast<char*>(buf.data()) + offset;
    IMGHIST_CUDA(cudaMemcpy2DAsync(dst, row, v.data, v.height > 1 ? v.pitch : row, row, v.height,
                                   cudaMemcpyHostToDevice, stream));
    return ImageView::device(dst, v.width, v.height, v.type, v.channels, row);
}

std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

/// The stream a blocking call uses when the caller named none. Host inputs are staged by this call, so it
/// works on its own non-blocking stream and waits for nothing else. Device inputs were written by earlier
/// work of the caller's, typically cudaMemcpy or a kernel on the default stream, so the call is ordered on
/// the default (legacy) stream: a non-blocking stream could read the image before that work has finished.
Stream blocking_stream(Stream caller, bool device_input, const HostPathContext& ctx) {
    if (caller) return caller;
    return device_input ? Stream{nullptr} : ctx.own_stream;
}

}  // namespace

void cuda_histogram_to_host(const ImageView& image, const ImageView* mask, const BinSpec& spec, std::uint64_t* counts,
                            std::uint64_t* oor, int device, Stream stream) {
    device = resolve_device(device);
    HostPathContext& ctx = host_context(device);
    std::lock_guard<std::mutex> lock(ctx.mutex);
    DeviceGuard guard(device);
    const Stream s = blocking_stream(stream, image.location == Location::Device, ctx);
    ImageView dimg = image, dmask = mask ? *mask : ImageView{};
    if (image.location == Location::Host && !image.empty()) {
        const std::size_t ibytes = align_up(image.row_bytes() * image.height, 256);
        const std::size_t mbytes = mask ? align_up(mask->row_bytes() * mask->height, 256) : 0;
        ctx.image.reserve(ibytes + mbytes);
        dimg = stage(image, ctx.image, 0, s);
        if (mask) dmask = stage(*mask, ctx.image, ibytes, s);
    }
    if (image.empty()) return;  // nothing to add
    const std::size_t n = static_cast<std::size_t>(image.channels) * spec.bins;
    // The result goes straight into page-locked host memory, which the device addresses directly (unified
    // addressing): the kernel's last block writes the final counts there, so no copy follows the kernel
    // and the call returns one stream synchronisation after the launch.
    ctx.mapped.reserve(sizeof(unsigned long long) * (n + 4));
    auto* host = ctx.mapped.as<unsigned long long>();
    DeviceHistogramView out;
    out.counts = host;
    out.type = CountType::U64;
    out.out_of_range = host + n;
    AsyncOptions opt;
    if (mask) opt.mask = dmask;
    ctx.hist->compute(dimg, spec, out, s, opt);
    IMGHIST_CUDA(cudaStreamSynchronize(s));
    for (std::size_t i = 0; i < n; ++i) counts[i] += host[i];
    for (int c = 0; c < image.channels; ++c) oor[c] += host[n + c];
}

void cuda_batch_to_host(const std::vector<ImageView>& images, const std::vector<ImageView>& masks, const BinSpec& spec,
                        std::vector<Histogram>& hists, int device, Stream stream) {
    device = resolve_device(device);
    HostPathContext& ctx = host_context(device);
    std::lock_guard<std::mutex> lock(ctx.mutex);
    DeviceGuard guard(device);
    const Stream s = blocking_stream(stream, !images.empty() && images[0].location == Location::Device, ctx);
    const std::size_t count = images.size();
    std::vector<ImageView> dimgs(images), dmasks(masks);
    if (!images.empty() && images[0].location == Location::Host) {
        std::size_t bytes = 0;
        for (std::size_t i = 0; i < count; ++i) {
            bytes += align_up(images[i].row_bytes() * images[i].height, 256);
            if (!masks.empty()) bytes += align_up(masks[i].row_bytes() * masks[i].height, 256);
        }
        ctx.image.reserve(std::max<std::size_t>(bytes, 256));
        std::size_t off = 0;
        for (std::size_t i = 0; i < count; ++i) {
            dimgs[i] = stage(images[i], ctx.image, off, s);
            off += align_up(images[i].row_bytes() * images[i].height, 256);
            if (!masks.empty()) {
                dmasks[i] = stage(masks[i], ctx.image, off, s);
                off += align_up(masks[i].row_bytes() * masks[i].height, 256);
            }
        }
    }
    const int C = images.empty() ? 1 : images[0].channels;
    const std::size_t n = static_cast<std::size_t>(C) * spec.bins;
    // Counts then out-of-range counters of each image, packed: every word the copy below reads is written
    // by the kernels (no padding the device never initialises).
    const std::size_t per = n + static_cast<std::size_t>(C);
    ctx.result.reserve(sizeof(unsigned long long) * per * std::max<std::size_t>(count, 1));
    std::vector<DeviceHistogramView> outs(count);
    for (std::size_t i = 0; i < count; ++i) {
        outs[i].counts = ctx.result.as<unsigned long long>() + per * i;
        outs[i].type = CountType::U64;
        outs[i].out_of_range = ctx.result.as<unsigned long long>() + per * i + n;
    }
    ctx.hist->computeBatch(dimgs.data(), count, spec, outs.data(), s, false, masks.empty() ? nullptr : dmasks.data());
    ctx.host_result.resize(per * count);
    IMGHIST_CUDA(cudaMemcpyAsync(ctx.host_result.data(), ctx.result.data(), sizeof(unsigned long long) * per * count,
                                 cudaMemcpyDeviceToHost, s));
    IMGHIST_CUDA(cudaStreamSynchronize(s));
    for (std::size_t i = 0; i < count; ++i) {
        for (std::size_t k = 0; k < n; ++k) hists[i].counts[k] += ctx.host_result[per * i + k];
        for (int c = 0; c < C; ++c) hists[i].out_of_range[c] += ctx.host_result[per * i + n + c];
    }
}

}  // namespace detail
}  // namespace imghist
