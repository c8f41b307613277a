// imghist CLI — the commands' side of the GPU JPEG pipeline (gpu_jpeg.hpp): when a run takes it, which
// files it takes, and the device work of a batch for each command.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "commands/commands.hpp"
#include "gpu/nvjpeg_api.hpp"
#include "commands/ops.hpp"
#include "pipeline/pipeline.hpp"

namespace cli {

/// What a run does on the GPU, for --device auto's decision.
enum class GpuWorkload {
    Hist,      ///< hist --mode channels: decode and histograms, no encode
    Equalize,  ///< equalize into JPEG: decode, equalize, encode
    Other,     ///< threshold, clahe (the GPU decodes only): not measured faster, auto keeps the CPU
};

/// --device auto takes the GPU JPEG pipeline for runs with at least this many JPEG files (and a GPU and
/// nvJPEG present); SIZE_MAX where it does not pay. A GPU run costs a fixed S seconds (probe, CUDA context,
/// nvJPEG handles and states, the end of the process) and then r_gpu images/s; the CPU codecs run at r1
/// images/s per hardware thread, so the GPU pays from N = S / (1/(threads * r1) - 1/r_gpu) files on; the
/// threshold is 1.25 N. Measured on an H100 host (docs/PERFORMANCE.md, "GPU JPEG pipeline"; 1000 and 4000
/// 1920x1080 JPEGs, whole runs, the CPU path in the same run): S from the 1000-file run less 1000 / r_gpu,
/// r_gpu from the difference between the 4000- and the 1000-file runs, r1 from the CPU path's 4000- and
/// 1000-file runs (41-43 and 36-38 images/s per thread on that host, the fastest CPU per thread measured so
/// far; a 32-core H200 host gave 33.5 and 31), so that auto does not take the GPU where the CPU would still
/// win: luma equalization S = 1.42 s, r_gpu = 2420, r1 = 42 (threshold 1652 files with 16 threads, 5366
/// with 32); hist S = 1.0 s, r_gpu = 2960, r1 = 37 (925 with 16 threads, 2467 with 32).
std::size_t gpu_auto_min_jpegs(GpuWorkload work, int threads);

/// The GPUs a run sends its JPEG files to, or none (then everything goes through the CPU codecs as before).
///   --device cpu: none.  --device auto: the first GPU, when the run has at least gpu_auto_min_jpegs(work,
///   threads) JPEG files and nvJPEG and a GPU are present; none otherwise (below the threshold without
///   probing for a GPU).
///   --device cuda[:N] / all: those GPUs when nvJPEG loads and `eligible` holds.
/// `devices` is what resolve_devices gave for --device. Under -v one line says which path runs and why.
std::vector<Device> gpu_jpeg_devices(const Common& common, const std::vector<Device>& devices,
                                     std::size_t jpeg_inputs, GpuWorkload work, bool eligible,
                                     const std::string& not_eligible_why);
/// Sets up a command's Stages for the GPU JPEG pipeline: batch size, workers (lanes) per GPU, the warm-up
/// each worker does while the first files are read (the start of the GPU's hardware decoder set-up for
/// `warm_format`, on a thread of its own; with `encodes`, the lane's encoder states meanwhile) and, under
/// IMGHIST_GPU_TRACE, the workers' trace lines.
void gpu_jpeg_stages(Stages& st, nv::OutputFormat warm_format, bool encodes);
/// JPEG files among the inputs, by extension (the count --device auto weighs).
std::size_t count_jpeg_names(const std::vector<Item>& items);

/// Called by a load stage in a GPU run: keeps `data` in the item for the GPU (and sets item.gpu) when it is
/// a 3-component YCbCr JPEG (with `writes_images`: a baseline one, since nvJPEG encodes baseline only);
/// otherwise leaves both alone and returns false. item.jpeg_header holds the header and metadata it read.
bool take_for_gpu(Item& item, Bytes& data, bool writes_images);

/// Decodes an item's bytes on the CPU, as the command's load stage does (Stages::decode_kept: for files
/// nvJPEG declines).
using CpuLoad = std::function<void(Item&, Bytes&&)>;

/// Batch stage of equalize, threshold and clahe. JPEG outputs of the two equalize modes are produced on the
/// GPU (luma: on the stored planes); everything else is decoded on the GPU, copied back and deferred to
/// the command's CPU process (threshold and clahe need the host's gray conversion).
void gpu_image_batch(std::vector<Item*>& batch, const Device& device, GpuImageWork work, const EncodeOptions& eopt,
                     const DecodeOptions& dopt);

/// Batch stage of hist --mode channels: histograms of the decoded RGB images on the device.
/// `file_name(item)` gives the name the result carries.
void gpu_hist_batch(std::vector<Item*>& batch, const Device& device, const HistParams& params,
                    const std::function<std::string(const Item&)>& file_name, const DecodeOptions& dopt);

}  // namespace cli
