// imghist_jobs — the kernels of the GPU's JPEG encoder (jpeg_encoder.hpp), behind a header without CUDA:
// one batch's passes over device buffers the encoder owns.
//
//   transform   every block of every image: integer DCT and quantisation (jpeg_blocks.hpp) into `coef`, and
//               each block's non-zero AC coefficients and AC code bits
//   size        one thread group per image, each thread a run of its MCUs: the bits of each run (its DC
//               codes' and the blocks' AC bits), scanned into each run's first bit (`run_start`) and the
//               image's bit count
//   layout      each image's first 32-bit word in `words` (images one after the other, whole words each),
//               and whether `words` is too small (`overflow`: the two passes below then do nothing)
//   code        the runs again, OR-ing their codes into the zeroed `words` (most significant bit first; the
//               image's last byte padded with 1 bits)
//   stuff       each image's bytes into `out` with a zero after every 0xFF, at 8 bytes per word of its own
//               (room for every stuffed zero), and its size in `out_size`
#pragma once

#include <cstdint>

#include "gpu/jpeg_blocks.hpp"

namespace cli::jpeg_kernels {

/// Threads per image in the passes that walk MCUs.
constexpr int kRunThreads = 512;

struct Batch {
    int images = 0;
    std::uint32_t most_blocks = 0;  ///< of one image
    const jpeg_blocks::Frame* frames = nullptr;
    const jpeg_blocks::QuantTables* quant = nullptr;
    const jpeg_blocks::CodeTables* codes = nullptr;
    std::int16_t* coef = nullptr;         ///< 64 per block
    std::uint64_t* nonzero = nullptr;     ///< per block (jpeg_blocks::BlockSummary)
    std::uint32_t* ac_bits = nullptr;     ///< per block
    std::uint64_t* run_start = nullptr;   ///< images * kRunThreads
    std::uint64_t* image_bits = nullptr;  ///< images
    std::uint64_t* word_start = nullptr;  ///< images + 1
    std::uint32_t* overflow = nullptr;    ///< 1
    std::uint32_t* words = nullptr;
    std::uint64_t capacity_words = 0;     ///< the room: words zeroed for this launch
    std::uint8_t* out = nullptr;          ///< 8 * capacity_words bytes
    std::uint64_t* out_size = nullptr;    ///< images
};

/// Enqueues the zeroing of words [0, capacity_words) on `stream`.
void enqueue_zero_words(const Batch& b, void* stream);
/// Enqueues every pass on `stream` (a CUstream); words [0, capacity_words) must be zero. Throws Error(Cuda)
/// when a launch fails.
void enqueue_all(const Batch& b, void* stream);
/// Enqueues the layout, code and stuff passes again (after the room grew to what `word_start` asked and was
/// zeroed: the layout checks the new room).
void enqueue_code(const Batch& b, void* stream);

}  // namespace cli::jpeg_kernels
