// imghist_io — JPEG's zig-zag order of a block's 64 coefficients, for the host and for CUDA device code (the
// GPU's JPEG encoder, jobs/gpu/jpeg_blocks.hpp): a constexpr function, folded away where k is known.
// IMGHIST_JPEG_HD marks the functions both compile (jpeg_blocks.hpp uses it too).
#pragma once

#if defined(__CUDACC__)
#define IMGHIST_JPEG_HD __host__ __device__
#else
#define IMGHIST_JPEG_HD
#endif

namespace cli {

/// The row-major index of the k-th coefficient (k = 0-63) of a block in zig-zag order.
IMGHIST_JPEG_HD constexpr int jpeg_natural_order(int k) {
    constexpr unsigned char order[64] = {
        0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33, 40, 48,
        41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23,
        30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63};
    return order[k];
}

}  // namespace cli
