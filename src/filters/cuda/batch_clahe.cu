// imghist filters — CUDA backend of clahe_batch (batch.hpp): the tile histograms of every image in one launch, the
// tiles' tables in one, the interpolation in one, each image with its own geometry. The tables and the blend are
// the single call's (kernels.cuh: clahe_lut_block, clahe_pixel), and so is the 16-bit counting (clahe_count_u16);
// the 8-bit counting and the interpolation walk the pixels in their own order, with many 16-byte (counting) or
// byte (interpolation) loads in flight per thread: a whole batch gives them the blocks to fill the device, where
// the single call's loops wait for one load at a time. Every count and every blend is the single call's.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <string>

#include "filters/clahe_bands.hpp"
#include "filters/cuda/batch_launch.hpp"

namespace imghist::detail {
namespace {

/// Copies of the 8-bit tile counters in shared memory: lane l counts into copy l % 16, so that at most two lanes of
/// a warp meet on a bank or on a counter.
constexpr int kCountCopies = 16;

/// 8-bit: band `split` of `splits` of tile `tile` of image `im` (clahe_bands.hpp), counted in shared memory and
/// added to the tile's 256 counters `hist` (zeroed beforehand). Every thread of the block calls it.
__device__ __forceinline__ void count_band_u8(const kernels::BatchImage& im, int tile, int split, int splits,
                                              unsigned int* __restrict__ hist) {
    __shared__ __align__(16) unsigned int h[256 * kCountCopies];
    for (int i = threadIdx.x; i < 256 * kCountCopies / 4; i += blockDim.x)
        reinterpret_cast<uint4*>(h)[i] = make_uint4(0, 0, 0, 0);
    __syncthreads();
    const ClaheBand band = clahe_band_of(im.clahe, tile, split, splits);
    unsigned int* mine = h + (threadIdx.x & (kCountCopies - 1));
    for (long long k = threadIdx.x; k < band.units; k += blockDim.x)
        clahe_count_unit(im.clahe, band, im.src, im.src_pitch, k,
                         [mine](unsigned int v) { atomicAdd(mine + v * kCountCopies, 1u); });
    __syncthreads();
    for (int v = threadIdx.x; v < 256; v += blockDim.x) {
        unsigned int sum = 0;
        // Copies taken in a rotated order, so that at most two lanes of a warp read one bank at a time.
        for (int j = 0; j < kCountCopies; ++j) sum += h[v * kCountCopies + ((j + v) & (kCountCopies - 1))];
        if (sum) atomicAdd(&hist[v], sum);
    }
}

/// Block id -> (image, tile, band): grid images x tiles x splits.
template <bool U8>
__global__ void batch_clahe_hist_kernel(kernels::BatchRef b, int tiles, int splits, unsigned int* __restrict__ hist) {
    const unsigned int per_image = static_cast<unsigned int>(tiles) * static_cast<unsigned int>(splits);
    const unsigned int i = blockIdx.x / per_image;
    const unsigned int rest = blockIdx.x - i * per_image;
    const int tile = static_cast<int>(rest / static_cast<unsigned int>(splits));
    const int split = static_cast<int>(rest - static_cast<unsigned int>(tile) * static_cast<unsigned int>(splits));
    const kernels::BatchImage im = b.image(i);
    unsigned int* h = hist + (static_cast<std::size_t>(i) * tiles + tile) * im.clahe.hist_size;
    if constexpr (U8) {
        count_band_u8(im, tile, split, splits, h);
    } else {
        const kernels::ClaheArgs a{im.src, im.src_pitch, im.clahe};
        kernels::clahe_count_u16(a, tile, static_cast<long long>(split) * blockDim.x + threadIdx.x,
                                 static_cast<long long>(splits) * blockDim.x, h);
    }
}

/// Block id -> (image, tile): grid images x tiles.
template <class T>
__global__ void batch_clahe_lut_kernel(kernels::BatchRef b, int tiles, const unsigned int* __restrict__ hist,
                                       T* __restrict__ luts) {
    const unsigned int i = blockIdx.x / static_cast<unsigned int>(tiles);
    const int tile = static_cast<int>(blockIdx.x - i * static_cast<unsigned int>(tiles));
    const fmath::ClaheGeometry g = b.image(i).clahe;
    const std::size_t at = (static_cast<std::size_t>(i) * tiles + tile) * g.hist_size;
    kernels::clahe_lut_block(hist + at, g, luts + at);
}

/// Pixels of a row one thread of the interpolation takes per step, 32 apart (so a warp's loads and stores cover
/// 32 consecutive pixels each, and its table reads stay within one or two tiles); all loaded before any is written.
constexpr int kInterpLoads = 8;

/// The pass over the pixels: image i's tables at luts + i * tiles * bins. An image's rows are cut into chunks of
/// 32 x kInterpLoads pixels, which the warps of its blocks take in turn: each thread reads its kInterpLoads pixels
/// of a chunk, then blends each from the four tables around it (kernels.cuh: clahe_pixel, the single call's).
template <class T>
__global__ void batch_clahe_interp_kernel(kernels::BatchRef b, const T* __restrict__ luts) {
    constexpr unsigned int kChunk = 32 * kInterpLoads;
    const kernels::BlockPart part = kernels::block_part(b);
    const kernels::BatchImage im = b.image(part.image);
    const fmath::ClaheGeometry& g = im.clahe;
    const T* l = luts + static_cast<std::size_t>(part.image) * g.tiles_x * g.tiles_y * g.hist_size;
    const unsigned int warps_per_block = blockDim.x / 32, lane = threadIdx.x & 31u;
    const unsigned long long warps = static_cast<unsigned long long>(part.blocks) * warps_per_block;
    const unsigned int width = static_cast<unsigned int>(g.width);
    const unsigned int per_row = (width + kChunk - 1) / kChunk;
    const unsigned long long chunks = static_cast<unsigned long long>(g.height) * per_row;
    for (unsigned long long u = static_cast<unsigned long long>(part.block) * warps_per_block + threadIdx.x / 32; u < chunks;
         u += warps) {
        const unsigned int y = static_cast<unsigned int>(u / per_row);
        const unsigned int x0 = static_cast<unsigned int>(u - static_cast<unsigned long long>(y) * per_row) * kChunk + lane;
        const fmath::ClaheAxis ay = fmath::clahe_axis(static_cast<int>(y), g.inv_th, g.tiles_y);
        const T* s = reinterpret_cast<const T*>(im.src + static_cast<std::size_t>(y) * im.src_pitch);
        T* d = reinterpret_cast<T*>(im.dst + static_cast<std::size_t>(y) * im.dst_pitch);
        T v[kInterpLoads];
#pragma unroll
        for (int j = 0; j < kInterpLoads; ++j) v[j] = x0 + 32u * j < width ? s[x0 + 32u * j] : T(0);
#pragma unroll
        for (int j = 0; j < kInterpLoads; ++j) {
            const unsigned int x = x0 + 32u * j;
            if (x < width) d[x] = kernels::clahe_pixel(l, g, static_cast<int>(x), ay, v[j]);
        }
    }
}

/// The three launches for images [first, first + n).
template <class T>
void clahe_group(Workspace& ws, const DeviceBatch& b, const fmath::ClaheGeometry* g, std::size_t first, std::size_t n) {
    const Stream stream = ws.stream();
    const int tiles = g[first].tiles_x * g[first].tiles_y, bins = g[first].hist_size;
    const std::size_t per_image = static_cast<std::size_t>(tiles) * bins;
    const std::size_t hist_bytes = n * per_image * sizeof(unsigned int);
    auto* hist = ws.device_as<unsigned int>(DeviceSlot::TileHist, hist_bytes);
    auto* luts = ws.device_as<T>(DeviceSlot::TileLut, n * per_image * sizeof(T));
    BATCH_CUDA(cudaMemsetAsync(hist, 0, hist_bytes, cu(stream)));
    const cuda::BatchFilterTuning& t = batch_tuning(ws);
    const kernels::BatchRef ref = batch_ref(ws, b, first, n, t.clahe_block_pixels, PassUnit::Pixels, g + first);
    int tallest = 1;
    for (std::size_t i = first; i < first + n; ++i) tallest = std::max(tallest, g[i].tile_h);
    const long long target = static_cast<long long>(ws.sm_count()) * t.clahe_hist_blocks_per_sm;
    const long long cells = static_cast<long long>(n) * tiles;
    const int splits = static_cast<int>(std::max(1LL, std::min<long long>(tallest, (target + cells - 1) / cells)));
    if (cells * splits > INT_MAX)
        throw Error(ErrorCode::Unsupported, "clahe_batch: too many images and tiles for one launch");
    const auto hist_grid = static_cast<unsigned>(cells * splits);
    if (sizeof(T) == 1) batch_clahe_hist_kernel<true><<<hist_grid, kBatchThreads, 0, cu(stream)>>>(ref, tiles, splits, hist);
    else batch_clahe_hist_kernel<false><<<hist_grid, kBatchThreads, 0, cu(stream)>>>(ref, tiles, splits, hist);
    BATCH_LAUNCHED("batch_clahe_hist_kernel");
    const int lut_threads = sizeof(T) == 1 ? cuda::FilterTuning::level_threads
                                           : cuda::tuning_for(ws.cc_major()).filters.clahe_lut16_threads;
    batch_clahe_lut_kernel<T><<<static_cast<unsigned>(cells), lut_threads, 0, cu(stream)>>>(ref, tiles, hist, luts);
    BATCH_LAUNCHED("batch_clahe_lut_kernel");
    batch_clahe_interp_kernel<T><<<pass_grid(ref), kBatchThreads, 0, cu(stream)>>>(ref, luts);
    BATCH_LAUNCHED("batch_clahe_interp_kernel");
}

}  // namespace

void cuda_clahe_batch(const DeviceBatch& b, const fmath::ClaheGeometry* g, int device, Stream stream) {
    check_batch_size(b.count, "clahe_batch");
    for (std::size_t i = 0; i < b.count; ++i)
        if (static_cast<long long>(g[i].tile_w) * g[i].tile_h >= (1LL << 31))
            throw Error(ErrorCode::Unsupported, "clahe_batch: batch image " + std::to_string(i) + ": tiles of 2^31 pixels or more");
    refuse_capture(stream, "clahe_batch", layout_obstacle(b, g));
    DeviceGuard scope(device);
    WorkspaceLease lease = acquire_workspace(-1, stream);
    Workspace& ws = *lease;
    const std::size_t per_image =
        static_cast<std::size_t>(g[0].tiles_x) * g[0].tiles_y * g[0].hist_size * sizeof(unsigned int);
    const std::size_t group = std::max<std::size_t>(1, batch_tuning(ws).clahe_group_bytes / per_image);
    for (std::size_t first = 0; first < b.count; first += group) {
        const std::size_t n = std::min(group, b.count - first);
        if (b.src[0].type == SampleType::U8) clahe_group<std::uint8_t>(ws, b, g, first, n);
        else clahe_group<std::uint16_t>(ws, b, g, first, n);
    }
}

}  // namespace imghist::detail
