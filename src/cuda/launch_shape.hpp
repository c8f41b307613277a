// Launch-shape override of the CUDA histogram, for experiments: the kernel benchmark's sweep and the
// white-box tests pin a CudaHistogrammer's launch shape and read back what its last call ran. Not API:
// reached through the white-box library (imghist_whitebox), never exported from libimghist.
#pragma once

#include <string>

#include "imghist/histogram.hpp"

namespace imghist::detail {

/// 0 in a field: take the tuning table's value.
struct LaunchShape {
    int threads = 0;          ///< threads per block
    int vectors = 0;          ///< 16-byte loads in flight per thread
    int blocks_per_sm = 0;    ///< resident blocks per multiprocessor
    int copies = 0;           ///< privatized copies of each bin in shared memory (1..32)
    int max_blocks = 0;       ///< cap on the grid size (0 = none): to study small grids, and for tests
    /// Input bytes per scheduling tile (a block takes a run of whole tiles), clamped to [16, 1 MiB]. The
    /// table's value (0 here) is reduced for small images so that every SM gets at least 4 tiles; an
    /// explicit value is used as given.
    int tile_bytes = 0;
    /// Fewest input bytes per block (0 = the table's): an image smaller than a full grid gets about
    /// bytes / block_bytes blocks, each taking one tile, so that small frames use few enough blocks
    /// for the merge at the end to stay cheap.
    int block_bytes = 0;
};

/// The shape the next compute / compute_batch calls of `hg` use.
void set_launch_shape(CudaHistogrammer& hg, const LaunchShape& shape) noexcept;
/// The shape the last compute / compute_batch call of `hg` used.
LaunchShape last_launch_shape(const CudaHistogrammer& hg) noexcept;
/// The kernel family the last call of `hg` ran, e.g. "hist<u8,c1,direct,smem,contiguous>".
std::string last_kernel(const CudaHistogrammer& hg);

}  // namespace imghist::detail
