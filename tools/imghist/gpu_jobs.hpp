// imghist CLI — the commands' side of the GPU JPEG pipeline (gpu_jpeg.hpp): when a run takes it, which
// files it takes, and the device work of a batch for each command.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "nvjpeg_api.hpp"
#include "ops.hpp"
#include "pipeline.hpp"

namespace cli {

/// --device auto takes the GPU JPEG pipeline for runs with at least this many JPEG files (and a GPU and
/// nvJPEG present). Measured on an H100 host with 16 cores (docs/PERFORMANCE.md, "GPU JPEG pipeline"): the
/// GPU's start-up (context, nvJPEG handles, decoder and encoder states) costs about S = 0.35 s in a run,
/// after which it equalizes at about r_gpu images/s against r_cpu = 500 on the CPU codecs; the pipeline
/// pays from N = S / (1/r_cpu - 1/r_gpu) files on. The threshold is set above that N, so that auto is never
/// slower than the CPU where the host has fewer cores or a slower GPU.
constexpr std::size_t kGpuAutoMinJpegs = 400;

/// The GPUs a run sends its JPEG files to, or none (then everything goes through the CPU codecs as before).
///   --device cpu: none.  --device auto: every GPU, when the run has at least kGpuAutoMinJpegs JPEG files
///   and nvJPEG and a GPU are present; none otherwise (below the threshold without probing for a GPU).
///   --device cuda[:N] / all: those GPUs when nvJPEG loads and `eligible` holds.
/// `devices` is what resolve_devices gave for --device. Under -v one line says which path runs and why.
std::vector<Device> gpu_jpeg_devices(const Common& common, const std::vector<Device>& devices,
                                     std::size_t jpeg_inputs, bool eligible, const std::string& not_eligible_why);
/// Sets up a command's Stages for the GPU JPEG pipeline: batch size, workers (lanes) per GPU, the warm-up
/// each worker does while the first files are read (the decoder's state for `warm_format`; with `encodes`,
/// the encoder states beside it), with --device auto the CPU's share while the GPU starts
/// (Stages::cpu_until_gpu_ready) and, under IMGHIST_GPU_TRACE, the workers' trace lines.
void gpu_jpeg_stages(Stages& st, const Common& common, nv::OutputFormat warm_format, bool encodes);
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
