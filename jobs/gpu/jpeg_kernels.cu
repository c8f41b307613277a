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

/// Thread t's MCUs of an image: [first, last).
__device__ void run_of(const Frame& f, unsigned t, std::uint32_t& first, std::uint32_t& last) {
    first = static_cast<std::uint32_t>(std::uint64_t{f.mcus} * t / kRunThreads);
    last = static_cast<std::uint32_t>(std::uint64_t{f.mcus} * (t + 1) / kRunThreads);
}

__global__ void __launch_bounds__(kRunThreads) size(Batch b) {
    using Scan = cub::BlockScan<std::uint64_t, kRunThreads>;
    __shared__ typename Scan::TempStorage scan;
    const int image = blockIdx.x;
    const Frame& f = b.frames[image];
    std::uint32_t first, last;
    run_of(f, threadIdx.x, first, last);
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

/// Puts bits from a bit position of `words` on (32-bit words, most significant bit first) by OR-ing whole
/// words: a word a run shares with the runs beside it gets each side's bits.
class WordWriter {
public:
    __device__ WordWriter(std::uint32_t* words, std::uint64_t bit)
        : words_(words), word_(bit / 32), held_(static_cast<int>(bit % 32)) {}
    __device__ void operator()(unsigned value, int n) {
        acc_ = (acc_ << n) | value;
        held_ += n;
        if (held_ >= 32) {
            held_ -= 32;
            atomicOr(words_ + word_++, static_cast<std::uint32_t>(acc_ >> held_));
        }
    }
    /// With `pad`, fills the last byte with 1 bits; then writes what is held.
    __device__ void finish(bool pad) {
        if (pad && held_ % 8) (*this)((1u << (8 - held_ % 8)) - 1, 8 - held_ % 8);
        if (held_ > 0) atomicOr(words_ + word_, static_cast<std::uint32_t>(acc_ << (32 - held_)));
    }

private:
    std::uint32_t* words_;
    std::uint64_t word_;
    int held_;               // bits of acc_ not written yet: its lowest (the first ones zero padding)
    std::uint64_t acc_ = 0;
};

__global__ void __launch_bounds__(kRunThreads) code(Batch b) {
    if (*b.overflow) return;
    const int image = blockIdx.x;
    const Frame& f = b.frames[image];
    std::uint32_t first, last;
    run_of(f, threadIdx.x, first, last);
    WordWriter w(b.words, b.word_start[image] * 32 + b.run_start[static_cast<std::size_t>(image) * kRunThreads + threadIdx.x]);
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
    const std::uint64_t from = words * threadIdx.x / kRunThreads, to = words * (threadIdx.x + 1) / kRunThreads;
    std::uint64_t ff = 0;
    for (std::uint64_t w = from; w < to; ++w)
        for (unsigned k = 0; k < 4; ++k)
            if (w * 4 + k < bytes && ((in[w] >> (24 - 8 * k)) & 0xFFu) == 0xFFu) ++ff;
    std::uint64_t before = 0, all = 0;
    Scan(scan).ExclusiveSum(ff, before, all);
    std::uint8_t* out = b.out + 8 * b.word_start[image];
    std::uint64_t at = from * 4 + before;
    for (std::uint64_t w = from; w < to; ++w)
        for (unsigned k = 0; k < 4 && w * 4 + k < bytes; ++k) {
            const auto byte = static_cast<std::uint8_t>(in[w] >> (24 - 8 * k));
            out[at++] = byte;
            if (byte == 0xFF) out[at++] = 0;
        }
    if (threadIdx.x == 0) b.out_size[image] = bytes + all;
}

void check(const char* pass) {
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        throw imghist::Error(imghist::ErrorCode::Cuda,
                             std::string("JPEG encoder, ") + pass + " pass: " + cudaGetErrorString(e));
}

}  // namespace

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
