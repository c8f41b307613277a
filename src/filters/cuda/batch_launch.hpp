// imghist filters — host-side helpers of the batch filters' CUDA launches (batch_filters.cu, batch_levels.cu,
// batch_clahe.cu): the batch as the kernels address it, the histograms of a whole batch, launch checks. Only CUDA
// translation units include this header.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "cuda/runtime/cuda_error.hpp"
#include "cuda/runtime/workspace.hpp"
#include "cuda/tuning/tuning.hpp"
#include "filters/batch.hpp"
#include "filters/cuda/batch_kernels.cuh"

namespace imghist::detail {

#define BATCH_CUDA(expr) ::imghist::detail::cuda_check((expr), "batch filters: " #expr)
#define BATCH_LAUNCHED(name) ::imghist::detail::cuda_check(cudaGetLastError(), name)

/// Threads of every batch kernel but the multi-Otsu search (one per 8-bit level in the table launches).
constexpr int kBatchThreads = cuda::FilterTuning::threads;

/// The batch filters' row of the tuning table for a workspace's device.
inline const cuda::BatchFilterTuning& batch_tuning(const Workspace& ws) {
    return cuda::tuning_for(ws.cc_major()).batch_filters;
}

/// What the blocks of a pass over the pixels divide: bytes (table passes) or pixels (CLAHE's interpolation).
enum class PassUnit { Bytes, Pixels };

/// Images [first, first + count) of a device batch as the batch kernels address them (kernels::BatchRef), each
/// with one block per `unit` bytes or pixels (at least one). A uniform batch (and, for CLAHE, one geometry)
/// needs nothing on the device; otherwise the descriptors are written to page-locked memory and copied to the
/// workspace with one asynchronous copy (the previous call's copy is waited for before the buffer is rewritten,
/// and a stream being captured is refused, refuse_capture: the graph would copy whatever the buffer holds when it
/// replays).
/// `clahe`: each image's CLAHE geometry (indexed from `first`), or null.
kernels::BatchRef batch_ref(Workspace& ws, const DeviceBatch& b, std::size_t first, std::size_t count,
                            std::size_t unit, PassUnit per, const fmath::ClaheGeometry* clahe = nullptr);

/// What keeps a call on device batch `b` out of a CUDA graph because of its layout: null when batch_ref addresses
/// it without descriptors (a uniform batch; `clahe`: each image's geometry, all with one extent), else why not.
const char* layout_obstacle(const DeviceBatch& b, const fmath::ClaheGeometry* clahe = nullptr);

/// The histograms of every image of a device batch over `bins` levels (256: u8, 65536: u16) in one launch (the
/// core's batch histogram), 32-bit, into the workspace's Counts: image i, channel c at the returned pointer +
/// (i * channels + c) * bins. Images of 2^32 pixels or more are refused.
unsigned int* batch_histograms(Workspace& ws, const DeviceBatch& b, int bins);

/// Launches a pass over the pixels: grid ref.total_blocks, kBatchThreads threads (dim3 for CLAHE's blocks).
inline dim3 pass_grid(const kernels::BatchRef& ref) { return dim3(ref.total_blocks); }

/// Refuses batches the launches cannot address (more images or blocks than a grid holds).
void check_batch_size(std::size_t images, const char* op);

/// The workspace's tables of every image (images x channels x 256 bytes).
inline std::uint8_t* batch_tables(Workspace& ws, std::size_t images, int channels) {
    return ws.device_as<std::uint8_t>(DeviceSlot::BatchTables, images * static_cast<std::size_t>(channels) * 256);
}

/// The table launch: grid (images, channels) of 256 threads (kernels::batch_table_kernel).
template <kernels::BatchTable K, class Tgt>
void launch_tables(std::size_t images, int channels, const kernels::BatchTableArgs<Tgt>& a, Stream stream) {
    kernels::batch_table_kernel<K, Tgt>
        <<<dim3(static_cast<unsigned>(images), static_cast<unsigned>(channels)), cuda::FilterTuning::level_threads, 0,
           cu(stream)>>>(a);
    BATCH_LAUNCHED("batch_table_kernel");
}

/// The 8-bit table pass over every image (tables + image * channels * 256), one launch on ws's stream; `skip`:
/// multi-Otsu results whose unfinished images the pass leaves alone, or null.
void launch_batch_luts(Workspace& ws, const DeviceBatch& b, const std::uint8_t* tables,
                       const kernels::MultiOtsuResult* skip);

}  // namespace imghist::detail
