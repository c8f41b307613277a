#include "gpu/jpeg_kernels.hpp"

#include <cuda_runtime.h>

#include <cub/block/block_scan.cuh>
#include <string>

#include "imghist/error.hpp"

namespace cli::jpeg_kernels {
namespace {

using jpeg_blocks::Frame;

constexpr int kTransformThreads = 128;

__global__ void transform(Batch b) {
    const Frame& f = b.frames[blockIdx.y];
    const std::uint32_t block = blockIdx.x * kTransformThreads + threadIdx.x;
    if (block >= f.mcus * static_cast<std::uint32_t>(f.blocks_per_mcu)) return;
    alignas(16) std::int16_t zz[64];
    const jpeg_blocks::BlockSummary sum = jpeg_blocks::transform_block(f, b.quant[f.quant], *b.codes, block, zz);
    const std::uint64_t at = f.first_block + block;
    int4* to = reinterpret_cast<int4*>(b.coef + at * 64);
    const int4* from = reinterpret_cast<const int4*>(zz);
    for (int k = 0; k < 8; ++k) to[k] = from[k];
    b.nonzero[at] = sum.nonzero;
    b.ac_bits[at] = sum.ac_bits;
}

__global__ void __launch_bounds__(kRunThreads) size(Batch b) {
    using Scan = cub::BlockScan<std::uint64_t, kRunThreads>;
    __shared__ typename Scan::TempStorage scan;
    const int image = blockIdx.x;
    const Frame& f = b.frames[image];
    const auto first = static_cast<std::uint32_t>(jpeg_blocks::share_start(f.mcus, threadIdx.x, kRunThreads));
    const auto last = static_cast<std::uint32_t>(jpeg_blocks::share_start(f.mcus, threadIdx.x + 1, kRunThreads));
    const std::uint64_t bits =
        jpeg_blocks::mcu_bits(f, *b.codes, b.coef + f.first_block * 64, b.ac_bits + f.first_block, first, last);
    std::uint64_t start = 0, total = 0;
    Scan(scan).ExclusiveSum(bits, start, total);
    b.run_start[static_cast<std::size_t>(image) * kRunThreads + threadIdx.x] = start;
    if (threadIdx.x == 0) b.image_bits[image] = total;
}

__global__ void layout(Batch b) {
    std::uint64_t word = 0;
    for (int i = 0; i < b.images; ++i) {
        b.word_start[i] = word;
        word += (b.image_bits[i] + 31) / 32;
        b.out_size[i] = 0;  // the stuff pass sets it; read back even when the room was too small
    }
    b.word_start[b.images] = word;
    *b.overflow = word > b.capacity_words ? 1u : 0u;
}

/// OR-ing into the coded words: a word may be shared with the thread coding the run before or after.
struct AtomicOr {
    std::uint32_t* words;
    __device__ void operator()(std::uint64_t i, std::uint32_t bits) const { atomicOr(words + i, bits); }
};

__global__ void __launch_bounds__(kRunThreads) code(Batch b) {
    if (*b.overflow) return;
    const int image = blockIdx.x;
    const Frame& f = b.frames[image];
    const auto first = static_cast<std::uint32_t>(jpeg_blocks::share_start(f.mcus, threadIdx.x, kRunThreads));
    const auto last = static_cast<std::uint32_t>(jpeg_blocks::share_start(f.mcus, threadIdx.x + 1, kRunThreads));
    jpeg_blocks::WordWriter<AtomicOr> w(AtomicOr{b.words}, b.word_start[image] * 32 +
                                                              b.run_start[static_cast<std::size_t>(image) * kRunThreads + threadIdx.x]);
    jpeg_blocks::code_mcus(f, *b.codes, b.coef + f.first_block * 64, b.nonzero + f.first_block, first, last, w);
    w.finish(threadIdx.x == kRunThreads - 1);
}

__global__ void __launch_bounds__(kRunThreads) stuff(Batch b) {
    if (*b.overflow) return;
    using Scan = cub::BlockScan<std::uint64_t, kRunThreads>;
    __shared__ typename Scan::TempStorage scan;
    const int image = blockIdx.x;
    const std::uint64_t bytes = (b.image_bits[image] + 7) / 8;
    const std::uint64_t words = (bytes + 3) / 4;
    const std::uint32_t* in = b.words + b.word_start[image];
    const std::uint64_t from = jpeg_blocks::share_start(words, threadIdx.x, kRunThreads);
    const std::uint64_t to = jpeg_blocks::share_start(words, threadIdx.x + 1, kRunThreads);
    const std::uint64_t ff = jpeg_blocks::count_ff(in, from, to, bytes);
    std::uint64_t before = 0, all = 0;
    Scan(scan).ExclusiveSum(ff, before, all);
    jpeg_blocks::stuff_words(in, from, to, bytes, b.out + 8 * b.word_start[image] + from * 4 + before);
    if (threadIdx.x == 0) b.out_size[image] = bytes + all;
}

void check(const char* pass) {
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        throw imghist::Error(imghist::ErrorCode::Cuda,
                             std::string("JPEG encoder, ") + pass + " pass: " + cudaGetErrorString(e));
}

}  // namespace

void enqueue_zero_words(const Batch& b, void* stream) {
    if (cudaMemsetAsync(b.words, 0, b.capacity_words * sizeof(std::uint32_t), static_cast<cudaStream_t>(stream)) != cudaSuccess)
        check("zeroing");
}

void enqueue_code(const Batch& b, void* stream) {
    const auto s = static_cast<cudaStream_t>(stream);
    layout<<<1, 1, 0, s>>>(b);
    check("layout");
    code<<<b.images, kRunThreads, 0, s>>>(b);
    check("code");
    stuff<<<b.images, kRunThreads, 0, s>>>(b);
    check("stuff");
}

void enqueue_all(const Batch& b, void* stream) {
    if (b.images == 0) return;
    const auto s = static_cast<cudaStream_t>(stream);
    const dim3 grid((b.most_blocks + kTransformThreads - 1) / kTransformThreads, static_cast<unsigned>(b.images));
    transform<<<grid, kTransformThreads, 0, s>>>(b);
    check("transform");
    size<<<b.images, kRunThreads, 0, s>>>(b);
    check("size");
    enqueue_code(b, stream);
}

}  // namespace cli::jpeg_kernels
