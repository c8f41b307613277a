// Internal: the plan-and-launch layer of the CUDA histogram (CUB's dispatch layer): from a validated request
// to a kernel, its shared memory, tiling and grid. Policies come from the tuning table
// (cuda/tuning/tuning.hpp); the kernels are in histogram_kernels.cuh; the histogrammer
// (histogrammer.cu) fills the descriptors and calls launch().
#pragma once

#include <cstddef>
#include <string>

#include "core/binning.hpp"
#include "cuda/plan/histogram_params.hpp"
#include "imghist/histogram.hpp"
#include "cuda/launch_shape.hpp"
#include "cuda/tuning/tuning.hpp"

namespace imghist::detail::cuda {

using KernelFn = void (*)(Params);

/// What the plan needs of a device, queried once per device.
struct DeviceInfo {
    int sm_count = 0;
    int cc_major = 0;
    std::size_t smem_optin = HistogramLimits::default_smem;  ///< per block, after cudaFuncSetAttribute
};
const DeviceInfo& device_info(int device);

struct Plan {
    Policy policy;
    Storage storage = Storage::Smem;
    KMode kmode = KMode::Arith;
    int copies_log2 = 0;
    int splits = 1;                   ///< Split storage: sibling blocks per tile range
    unsigned int split_slots = 0;     ///< Split storage: flat slots per sibling
    std::size_t smem = 0;
    std::size_t tile_bytes = 0;
    std::size_t block_bytes_min = 0;  ///< fewest input bytes per block worth its set-up and flush
    bool one_tile_per_block = false;  ///< an image too small to fill the grid: each block takes one tile
    bool whole_images = false;        ///< a batch: every image is one tile (Policy::whole_images)
};

/// Picks storage, copies and tiling for an image (or a batch of `total_bytes` whose largest image has
/// `batch_image_bytes`); `over` overrides the table.
Plan make_plan(int device, const ImageView& img, const BinParams& bp, std::size_t total_bytes,
               const LaunchShape& over, bool allow_split, std::size_t batch_image_bytes = 0);
/// Whether an 8-bit request's raw values are their own bins (256 bins over [0, 256)): the fold at the flush
/// is the identity, and every counted slot is one output counter.
bool identity_fold(const BinParams& bp);
/// The kernel instance for a plan; batch: the instance that takes several images (Params::descs or strides).
KernelFn pick_kernel(SampleType t, int channels, KMode m, Storage st, bool batch);
/// Fills the geometry and tiling of one image's descriptor.
Desc make_desc(const ImageView& img, const ImageView* mask, std::size_t tile_bytes);
/// The rule's fields of a request, as the kernels read them.
BinFields bin_fields(const BinParams& bp);
/// Fills the binning and storage parameters of a launch.
void fill_params(Params& p, const BinParams& bp, const Plan& pl, CountType type);
/// The grid: occupancy-sized, fewer blocks for small inputs; raises the kernel's shared-memory limit once.
int grid_for(int device, KernelFn fn, const Plan& pl, unsigned long long tiles, std::size_t total_bytes,
             std::size_t max_samples, int max_blocks);
/// "hist<u8,c1,direct,smem>": the kernel family a plan runs (detail::last_kernel).
std::string kernel_name(SampleType t, int channels, const Plan& pl);
void launch(KernelFn fn, const Plan& pl, int grid, const Params& p, Stream stream);
/// contiguous_kernel's view of an image: one run of 16-byte vectors (a contiguous image), or rows that all start
/// at the same 16-byte alignment (a pitch that is a multiple of 16). rows == 0: the kernel cannot take it.
struct VectorGeometry {
    unsigned long long rows = 0;         ///< 1: contiguous
    unsigned long long row_vectors = 0;  ///< 16-byte vectors per row (per run)
    unsigned int head = 0, tail = 0;     ///< samples before and after them in each row
};
/// The geometry with which contiguous_kernel can take an overwrite of `img` on the plan's grid (rows == 0:
/// it cannot): 8-bit, 16-bit (bins by a shift) or float samples without a mask, contiguous or in rows of one
/// 16-byte alignment, each row holding at least two vectors, the small-image grid, at most its 512 threads
/// per block.
VectorGeometry contiguous_geometry(const ImageView& img, bool masked, const Plan& pl, int grid);
/// Launches contiguous_kernel on `img` with its contiguous_geometry (raising its shared-memory limit once when
/// the plan needs more): a one-pass overwrite of `out`, or with `merge` the last-block merge into it.
void launch_contiguous(int device, const ImageView& img, const VectorGeometry& g, const BinParams& bp, const Plan& pl,
                       int grid, const OutputRef& out, const MergeRef* merge, Stream stream);
/// Zeroes the outputs of the `count` images of a batch launch (overwrite mode): p.descs on the device, or for an
/// equally spaced batch p.one and p.strides (no descriptor array, nothing from the host per call).
void launch_zero_outputs(const Params& p, unsigned int count, int channels, int bins, bool u64, Stream stream);
/// Zeroes a device output (counts and out-of-range counters) on the stream: the empty-image case.
void zero_output_async(const DeviceHistogramView& out, int channels, int bins, Stream stream);

}  // namespace imghist::detail::cuda
