// imghist-bench — the reference points every result is compared with: a read-only kernel over the same
// bytes (the limit) and CUB's DeviceHistogram on the same device buffer. Host declarations; the kernels and
// the CUB instantiations live in baselines.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "workloads.hpp"

namespace bench {

/// Reads every byte of [data, data + bytes) with 16-byte loads (a grid-stride loop over the whole device,
/// four loads in flight per thread) and folds them into one word that is stored only if it equals a
/// value it practically never equals, so the loads cannot be optimised away and nothing else is written.
/// `sink` is one device word. This is the upper bound for any kernel that must look at every input byte.
void read_limit(const void* data, std::size_t bytes, unsigned* sink, cudaStream_t stream);

/// CUB's histogram of `pixels` interleaved pixels of workload `w` (the layout of one packed image) into
/// `hist` (channels x bins 32-bit counters, channel-major). With temp == nullptr only sets temp_bytes.
/// Levels follow CUB's convention: bins + 1 evenly spaced levels from low to high, int levels for
/// integer samples (int, because the upper level of 8-bit data is 256) and float levels for float samples.
/// 1 channel: DeviceHistogram::HistogramEven; 3 or 4 channels: MultiHistogramEven<3,3> / <4,4>.
/// Returns cudaErrorNotSupported for combinations the benchmark does not instantiate.
cudaError_t cub_histogram(const Workload& w, const void* data, std::size_t pixels, unsigned* hist, void* temp,
                          std::size_t& temp_bytes, cudaStream_t stream);

/// Busy-waits on the GPU for about `microseconds` (lets the host queue timed work ahead).
void launch_spin(cudaStream_t stream, double microseconds);

/// Writes a scratch buffer twice the size of the L2 cache, evicting the input (used by --flush-l2).
void flush_l2(cudaStream_t stream);

}  // namespace bench
