// The plan-and-launch layer of the CUDA histogram (plan.hpp): kernel pick, policy, tiling, grid.
#include "cuda/plan/plan.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "cuda/kernels/histogram_kernels.cuh"
#include "cuda/kernels/kernel_instances.hpp"
#include "cuda/runtime/cuda_error.hpp"

namespace imghist::detail::cuda {

KernelFn pick_kernel(SampleType t, int channels, KMode m, Storage st, bool batch) {
    return batch ? pick_batch_kernel(t, channels, m, st) : pick_single_kernel(t, channels, m, st);
}

namespace {

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

/// Raises the kernel's dynamic shared-memory limit when needed and returns its occupancy (blocks per SM).
int prepare_kernel(int device, const void* fn, int threads, std::size_t smem) {
    static std::mutex m;
    static std::map<std::tuple<int, const void*, int, std::size_t>, int> occ_cache;
    std::lock_guard<std::mutex> lock(m);
    auto key = std::make_tuple(device, fn, threads, smem);
    auto it = occ_cache.find(key);
    if (it != occ_cache.end()) return it->second;
    if (smem > HistogramLimits::default_smem) allow_dynamic_smem(fn, smem, device);
    int blocks = 0;
    IMGHIST_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, threads, smem));
    occ_cache.emplace(key, blocks);
    return blocks;
}

using Limits = HistogramLimits;

int log2_ceil(std::size_t v) {
    int k = 0;
    while ((std::size_t(1) << k) < v) ++k;
    return k;
}

const char* storage_name(Storage s) {
    switch (s) {
        case Storage::Smem: return "smem";
        case Storage::Split: return "split";
        case Storage::Global: return "global";
    }
    return "?";
}

}  // namespace

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

Plan make_plan(int device, const ImageView& img, const BinParams& bp, std::size_t total_bytes,
               const LaunchShape& over, bool allow_split, std::size_t batch_image_bytes) {
    const auto& info = device_info(device);
    Plan pl;
    pl.kmode = kmode_of(bp, img.type);
    const bool by_shift = pl.kmode == KMode::ShiftFull || pl.kmode == KMode::Shift;
    HistogramRequest req;
    req.sample_bytes = static_cast<int>(img.sample_bytes());
    req.floating = img.type == SampleType::F32;
    req.channels = img.channels;
    req.bins = bp.bins;
    req.by_shift = by_shift;
    req.total_bytes = total_bytes;
    req.batch_image_bytes = batch_image_bytes;
    pl.policy = select_policy(info.cc_major, req);
    // A batch's row of one tile per image needs an image for every resident block; fewer would leave blocks
    // idle, and such a batch is cut into tiles like one image of its total size.
    if (pl.policy.whole_images && total_bytes / std::max<std::size_t>(batch_image_bytes, 1) <
                                      static_cast<std::size_t>(info.sm_count) * std::max(1, pl.policy.blocks_per_sm)) {
        req.batch_image_bytes = 0;
        pl.policy = select_policy(info.cc_major, req);
    }
    if (over.threads > 0) pl.policy.threads = over.threads;
    if (over.vectors > 0) pl.policy.vectors = std::min(over.vectors, 4);
    if (over.blocks_per_sm > 0) pl.policy.blocks_per_sm = over.blocks_per_sm;
    if (over.copies > 0) pl.policy.copies = over.copies;
    if (over.tile_bytes > 0) pl.policy.tile_bytes = over.tile_bytes;
    int copies = 1;
    while (copies * 2 <= std::min(pl.policy.copies, 32)) copies *= 2;
    const std::size_t extra = 4 * sizeof(unsigned int);  // the out-of-range words
    // 8-bit requests count the 256 raw values and fold them into bins when flushing (fill_params).
    const std::size_t chan_slots = img.type == SampleType::U8 ? 256 : static_cast<std::size_t>(bp.bins) + 1;
    const std::size_t per_copy = sizeof(unsigned int) * static_cast<std::size_t>(img.channels) * chan_slots;
    while (copies > 1 && per_copy * copies + extra > info.smem_optin) copies /= 2;
    const std::size_t flat_slots = static_cast<std::size_t>(img.channels) * chan_slots;
    if (per_copy + extra <= info.smem_optin) {
        pl.storage = Storage::Smem;
        pl.smem = per_copy * copies + extra;
    } else {
        // Too wide for one block: K siblings each own a range of the slots (see the kernels' header).
        copies = 1;
        const std::size_t room = (info.smem_optin - extra) / 4;
        const std::size_t k = (flat_slots + room - 1) / room;
        if (allow_split && k <= static_cast<std::size_t>(Limits::max_splits)) {
            pl.storage = Storage::Split;
            pl.splits = static_cast<int>(k);
            pl.split_slots = static_cast<unsigned int>((flat_slots + k - 1) / k);
            pl.smem = 4 * static_cast<std::size_t>(pl.split_slots) + extra;
            if (over.threads == 0) pl.policy.threads = Limits::split_threads;
        } else {
            pl.storage = Storage::Global;
            pl.smem = extra;
        }
    }
    pl.copies_log2 = log2_ceil(static_cast<std::size_t>(copies));
    if (over.block_bytes > 0) pl.policy.block_bytes = over.block_bytes;
    // One sweep of a block's loads: a tile smaller than this leaves threads idle.
    const std::size_t sweep = static_cast<std::size_t>(pl.policy.threads) * std::max(1, pl.policy.vectors) * 16;
    // A block pays for zeroing and flushing its counters: give it at least block_bytes of input.
    pl.block_bytes_min = std::min<std::size_t>(std::max(pl.policy.block_bytes, 256), Limits::max_tile_bytes);
    // Tiles: the policy's size, smaller for small images so that every block gets several. An explicit
    // LaunchShape::tile_bytes is taken as given (within [16 bytes, Limits::max_tile_bytes]).
    std::size_t tb = static_cast<std::size_t>(pl.policy.tile_bytes);
    const std::size_t want_tiles = static_cast<std::size_t>(info.sm_count) * Limits::tiles_per_sm;
    const std::size_t small_blocks = std::max<std::size_t>(1, total_bytes / pl.block_bytes_min);
    pl.whole_images = pl.policy.whole_images && over.tile_bytes <= 0;
    if (pl.whole_images) {
        // A batch's tile of one image is kept whatever the total.
    } else if (over.tile_bytes <= 0 &&
        small_blocks < static_cast<std::size_t>(info.sm_count) * std::max(1, pl.policy.blocks_per_sm)) {
        // Too small to fill the grid: one tile per block (the grid is small_blocks, grid_for), so no block
        // waits on a second tile. Vectors of a contiguous image: total / 16 + 1 at most (alignment).
        tb = 16 * ((total_bytes / 16 + 1 + small_blocks - 1) / small_blocks);
        pl.one_tile_per_block = true;
    } else if (over.tile_bytes <= 0 && total_bytes / want_tiles < tb) {
        tb = std::max<std::size_t>(sweep, total_bytes / want_tiles);
    }
    pl.tile_bytes = std::min(std::max<std::size_t>(tb, 16), Limits::max_tile_bytes);
    return pl;
}

Desc make_desc(const ImageView& img, const ImageView* mask, std::size_t tile_bytes) {
    Desc d{};
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

bool identity_fold(const BinParams& bp) { return bp.bins == 256 && bp.low == 0.0 && bp.high == 256.0; }

BinFields bin_fields(const BinParams& bp) {
    return BinFields{bp.low, bp.high, bp.a, bp.b, bp.shift, bp.limit, bp.scale, bp.high_f};
}

void fill_params(Params& p, const BinParams& bp, const Plan& pl, CountType type) {
    p.bins = bp.bins;
    p.copies_log2 = pl.copies_log2;
    p.splits = pl.splits;
    p.split_slots = pl.split_slots;
    p.vectors = std::max(1, std::min(pl.policy.vectors, 4));
    p.rule = bin_fields(bp);
    // Raw 8-bit values are counted; the kernel maps each value to its bin (or the out-of-range slot).
    if (pl.kmode == KMode::Direct) p.fold = 1;
    p.count_u64 = type == CountType::U64 ? 1 : 0;
}

int grid_for(int device, KernelFn fn, const Plan& pl, unsigned long long tiles, std::size_t total_bytes,
             std::size_t max_samples, int max_blocks) {
    const auto& info = device_info(device);
    const int occ = prepare_kernel(device, reinterpret_cast<const void*>(fn), pl.policy.threads, pl.smem);
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

std::string kernel_name(SampleType t, int channels, const Plan& pl) {
    const KMode m = (pl.storage == Storage::Global && t != SampleType::U8) ? KMode::Arith : pl.kmode;
    return std::string("hist<") + to_string(t) + ",c" + std::to_string(channels) + "," + mode_name(m) + "," +
           storage_name(pl.storage) + (pl.storage == Storage::Split ? "x" + std::to_string(pl.splits) : "") + ">";
}

void launch(KernelFn fn, const Plan& pl, int grid, const Params& p, Stream stream) {
    fn<<<grid, pl.policy.threads, pl.smem, stream>>>(p);
    IMGHIST_CUDA(cudaGetLastError());
}

namespace {

/// The image's vectors, whatever the plan (rows == 0: no whole vector in a row, or rows of different
/// alignments).
VectorGeometry vector_geometry(const ImageView& img) {
    VectorGeometry g;
    const std::size_t ss = img.sample_bytes();
    const std::size_t addr = reinterpret_cast<std::size_t>(img.data);
    const std::size_t head = ((16 - addr % 16) % 16) / ss;  // views are aligned to their sample size
    const std::size_t spv = 16 / ss;
    const bool one_run = img.contiguous();
    if (!one_run && img.pitch % 16 != 0) return g;
    const std::size_t n = one_run ? img.row_bytes() * img.height / ss : img.row_bytes() / ss;  // samples per run
    if (n < head + spv) {
        if (one_run) {  // no whole vector: block 0 counts every sample (< 32)
            g.rows = 1;
            g.head = static_cast<unsigned int>(n);
        }
        return g;
    }
    g.rows = one_run ? 1 : static_cast<unsigned long long>(img.height);
    g.head = static_cast<unsigned int>(head);
    g.row_vectors = (n - head) / spv;
    g.tail = static_cast<unsigned int>(n - head - spv * g.row_vectors);
    return g;
}

}  // namespace

VectorGeometry contiguous_geometry(const ImageView& img, bool masked, const Plan& pl, int grid) {
    const bool kind = (img.type == SampleType::U8 && pl.kmode == KMode::Direct) ||
                      (img.type == SampleType::U16 && (pl.kmode == KMode::ShiftFull || pl.kmode == KMode::Shift)) ||
                      (img.type == SampleType::F32 && (pl.kmode == KMode::ScaleF32 || pl.kmode == KMode::Arith));
    if (!kind || masked || pl.storage != Storage::Smem || !pl.one_tile_per_block || pl.policy.threads > 512 ||
        img.channels > 4)
        return VectorGeometry{};
    const VectorGeometry g = vector_geometry(img);
    const unsigned long long vectors = g.rows * g.row_vectors;
    // Rows: the kernel's division of vector indices by row_vectors (ContiguousRows::row_magic) is exact
    // within these bounds.
    const bool fits = (vectors + 1) * static_cast<unsigned long long>(grid) < (1ull << 32) &&
                      (g.rows <= 1 || (vectors < (1ull << 24) && g.row_vectors >= 2 && g.row_vectors < (1ull << 16)));
    return fits ? g : VectorGeometry{};
}

namespace {

template <class T, KMode M, bool Merged, bool Rows>
void launch_contiguous_args(int device, int channels, const Plan& pl, int grid, const ContiguousArgs<Merged, Rows>& a,
                            Stream stream) {
    using Fn = void (*)(ContiguousArgs<Merged, Rows>);
    static const Fn fns[4] = {contiguous_kernel<T, 1, M, Merged, Rows>, contiguous_kernel<T, 2, M, Merged, Rows>,
                              contiguous_kernel<T, 3, M, Merged, Rows>, contiguous_kernel<T, 4, M, Merged, Rows>};
    const Fn fn = fns[channels - 1];
    if (pl.smem > HistogramLimits::default_smem)
        (void)prepare_kernel(device, reinterpret_cast<const void*>(fn), pl.policy.threads, pl.smem);
    fn<<<grid, pl.policy.threads, pl.smem, stream>>>(a);
    IMGHIST_CUDA(cudaGetLastError());
}

/// The instance for the case (rows: a non-null `rows`; merged: a non-null `merge`).
template <class T, KMode M>
void launch_contiguous_as(int device, int channels, const Plan& pl, int grid, const ContiguousParams& p,
                          const ContiguousRows* rows, const MergeRef* merge, Stream stream) {
    if (rows && merge) {
        ContiguousArgs<true, true> a{p};
        a.rows = *rows;
        a.merge = *merge;
        launch_contiguous_args<T, M>(device, channels, pl, grid, a, stream);
    } else if (rows) {
        ContiguousArgs<false, true> a{p};
        a.rows = *rows;
        launch_contiguous_args<T, M>(device, channels, pl, grid, a, stream);
    } else if (merge) {
        ContiguousArgs<true, false> a{p};
        a.merge = *merge;
        launch_contiguous_args<T, M>(device, channels, pl, grid, a, stream);
    } else {
        launch_contiguous_args<T, M>(device, channels, pl, grid, ContiguousArgs<false, false>{p}, stream);
    }
}

}  // namespace

void launch_contiguous(int device, const ImageView& img, const VectorGeometry& g, const BinParams& bp, const Plan& pl,
                       int grid, const OutputRef& out, const MergeRef* merge, Stream stream) {
    ContiguousParams p{};
    p.base = static_cast<const unsigned char*>(img.data);
    p.head = g.head;
    p.tail = g.tail;
    p.vectors = static_cast<unsigned int>(g.rows * g.row_vectors);
    p.copies_log2 = pl.copies_log2;
    p.rule = bin_fields(bp);
    p.identity = identity_fold(bp) ? 1 : 0;
    p.out = out;
    ContiguousRows rows{};
    if (g.rows > 1) {
        rows.row_vectors = static_cast<unsigned int>(g.row_vectors);
        rows.pitch = img.pitch;
        rows.row_magic = (1ull << 40) / g.row_vectors + 1;  // row_vectors >= 2 (contiguous_geometry)
    }
    const ContiguousRows* r = g.rows > 1 ? &rows : nullptr;
    const int C = img.channels;
    if (img.type == SampleType::U8) launch_contiguous_as<std::uint8_t, KMode::Direct>(device, C, pl, grid, p, r, merge, stream);
    else if (img.type == SampleType::U16 && pl.kmode == KMode::ShiftFull)
        launch_contiguous_as<std::uint16_t, KMode::ShiftFull>(device, C, pl, grid, p, r, merge, stream);
    else if (img.type == SampleType::U16) launch_contiguous_as<std::uint16_t, KMode::Shift>(device, C, pl, grid, p, r, merge, stream);
    else if (pl.kmode == KMode::ScaleF32) launch_contiguous_as<float, KMode::ScaleF32>(device, C, pl, grid, p, r, merge, stream);
    else launch_contiguous_as<float, KMode::Arith>(device, C, pl, grid, p, r, merge, stream);
}

namespace {

/// Zeroes the outputs of a batch (overwrite mode), one block per image, each found as the histogram kernels
/// find it (desc_at: its descriptor, or image 0's moved by the strides).
__global__ void zero_outputs_kernel(const Params p, int channels, int bins, int count_u64) {
    const Desc D = desc_at(p, blockIdx.x);
    for (int i = threadIdx.x; i < channels * bins; i += blockDim.x) {
        const int c = i / bins, b = i - c * bins;
        const unsigned long long idx = static_cast<unsigned long long>(c) * D.ch_stride + b;
        if (count_u64) static_cast<unsigned long long*>(D.counts)[idx] = 0ull;
        else static_cast<unsigned int*>(D.counts)[idx] = 0u;
    }
    if (D.oor && threadIdx.x < channels) D.oor[threadIdx.x] = 0ull;
}

}  // namespace

void launch_zero_outputs(const Params& p, unsigned int count, int channels, int bins, bool u64, Stream stream) {
    zero_outputs_kernel<<<count, HistogramLimits::zero_threads, 0, stream>>>(p, channels, bins, u64 ? 1 : 0);
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

}  // namespace imghist::detail::cuda
