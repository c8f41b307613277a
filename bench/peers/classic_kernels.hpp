// imghist-bench — the two textbook histogram kernels, kept for teaching (see classic_kernels.cu for why
// each is slow). Both take 8-bit gray samples and `bins` in {1, 2, 4, ..., 256} over [0, 256), and both
// clear `hist` first (cudaMemsetAsync) so one call is one complete histogram, like the other columns.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace bench {

/// One global atomicAdd per sample.
void classic_global_atomics(const std::uint8_t* data, std::size_t n, unsigned* hist, int bins, cudaStream_t stream);

/// One shared-memory histogram per block, one byte loaded per thread per step, merged with global atomics.
void classic_shared_bytes(const std::uint8_t* data, std::size_t n, unsigned* hist, int bins, cudaStream_t stream);

}  // namespace bench
