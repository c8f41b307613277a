// imghist_jobs — the commands' side of the GPU JPEG pipeline (gpu_pipeline.hpp): which runs take it, on which
// GPUs, which files, and what the GPU does with each file of each command.
//
//   command                               | GPU action                              | device operation, per batch
//   --------------------------------------+-----------------------------------------+-----------------------------
//   hist (--mode channels)                | decode the planes, count their RGB      | calc_hist_ycbcr_batch
//   equalize --mode luma, JPEG -> JPEG    | decode the planes, encode the planes    | equalize_hist_batch of the Y planes
//   equalize --mode per-channel, -> JPEG  | decode to RGB, encode                   | equalize_hist_color_batch
//   equalize into other formats,          | decode to RGB, copy back; the CPU       | —
//   threshold, clahe                      | workers do the rest                     |
//
// Which runs: --device cpu none. --device auto the commands whose files the GPU takes from end to end
// (equalize, hist), with every usable GPU and the CPU workers together; --device all every command above
// likewise; --device cuda[:N] that GPU, the CPU workers taking only what it cannot (or everything when it
// fails to start). No run waits for a GPU before its CPU workers start, and none is decided by a count of
// files: the queue (pipeline/work_queue.hpp) splits the files between whoever is ready. --device auto starts
// the GPUs once the CPU workers' first files show they would need longer than a GPU's start-up for the rest.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "commands/ops.hpp"
#include "pipeline/batch_worker.hpp"
#include "pipeline/pipeline.hpp"

namespace cli {

/// What a run does with its JPEG files on a GPU.
enum class GpuWorkload {
    Hist,                ///< hist --mode channels: decode and count
    EqualizeLuma,        ///< equalize --mode luma
    EqualizePerChannel,  ///< equalize --mode per-channel
    DecodeOnly,          ///< threshold, clahe: the GPU only decodes (auto leaves them to the CPU)
};

/// The command-specific parts of a run's batch plan.
struct GpuCommand {
    GpuWorkload work = GpuWorkload::Hist;
    /// The batch workers' load step: read the file, keep a JPEG the GPU takes (take_for_gpu), decode anything
    /// else on the CPU. And the CPU decode of kept bytes the GPU gave back.
    std::function<void(Item&)> load, decode_kept;
    DecodeOptions decode;
    EncodeOptions encode;
    /// hist: the bins, and what follows each file's counts (Item::hist set): its name and its report, as on
    /// the CPU workers.
    HistParams hist;
    std::function<void(Item&)> hist_done;
};

/// The batch plan of a run (Stages::batch), or nullptr when the run takes no GPU: --device cpu, a command
/// auto leaves to the CPU, no JPEG among the inputs (by name), or `eligible` false (then -v says
/// `not_eligible_why`). `spec` is --device and `devices` what resolve_devices gave for it. With `verbose` (-v)
/// one line says which path the JPEG files take and why.
std::shared_ptr<BatchPlan> gpu_batch_plan(const std::string& spec, bool verbose, const std::vector<Device>& devices,
                                          std::size_t jpeg_inputs, bool eligible, const std::string& not_eligible_why,
                                          GpuCommand command);
/// JPEG files among the inputs, by extension.
std::size_t count_jpeg_names(const std::vector<Item>& items);

/// Called by a batch worker's load step: keeps `data` in the item for the GPU (and sets item.gpu) when it is
/// a 3-component YCbCr JPEG with its end-of-image marker (with `writes_images`: a baseline one, since nvJPEG
/// encodes baseline only); otherwise leaves both alone and returns false. item.jpeg_header holds the header and
/// metadata it read.
bool take_for_gpu(Item& item, Bytes& data, bool writes_images);

}  // namespace cli
