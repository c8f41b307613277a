// imghist_jobs — one GPU as a batch worker of the folder run (pipeline/batch_worker.hpp): the stages below
// keep its hardware JPEG decoder busy while the batches before and after the one it decodes are read,
// processed, encoded and written.
//
//   readers (R threads)   claim a batch of files from the run's queue when one of the GPU's D batch slots is
//                         free, read them and their headers (files the GPU does not take go to the CPU
//                         workers at once)
//   decoder (1 thread)    lays out the batch's device buffers, enqueues its decode (the hardware decoder's
//                         states in turn: this batch's host part overlaps the previous batch's device part)
//                         and the command's device operation (one batch-filter call for the whole batch,
//                         e.g. equalize_hist_batch over every Y plane), records an event, hands the images on
//   finishers (E threads) each with its own stream: wait for the batch's event on the device (not on the host),
//                         encode a share of the batch's planar images in one call of the batch encoder (RGB
//                         images S at a time with nvJPEG's S encoder states), collect the files (or copy
//                         images back for a CPU operation, or count a batch's histograms)
//   writers (W threads)   add the metadata and write the outputs; the run's sync thread makes them durable
//
// Nothing waits on the host for the device except a decoder state's reuse (its previous decode, normally long
// done), a finisher's bitstream collection, and a batch slot's reuse (its last image collected). Handles,
// states, streams, events and buffers are made once at start-up (or grow once) and reused. R, D, E, S, W and
// the batch size are PipelineTuning's. --trace prints a line per batch and each stage's busy and waiting time.
//
// Host memory: a GPU takes no share of the run's memory budget (--max-memory), whose waits would hold files
// queued for the CPU workers; its own bound is D batches of at most `batch` files' bytes (each within
// --max-input), every image within --max-pixels and, alone, within the budget (checked from its header before
// the device allocates). Images it copies back or its readers decode go to the CPU workers at once, which
// count them in the budget as they take them (docs/DESIGN.md, "The memory budget in a folder run").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "gpu/gpu_jpeg.hpp"
#include "imghist/filters.hpp"
#include "imghist/histogram.hpp"
#include "pipeline/batch_worker.hpp"
#include "pipeline/tuning.hpp"

namespace cli {

/// What a command does with the files a GPU takes (gpu_jobs.cpp makes it). Shared by the GPUs of a run;
/// every function is called from the pipeline's threads, concurrently.
struct GpuJob {
    enum class Action : std::uint8_t {
        Cpu,           ///< not for the GPU: handed to the CPU workers as loaded
        EncodePlanar,  ///< decode the stored planes, `operate` on the Y plane, encode the planes
        EncodeRgb,     ///< decode to RGB, `operate` on it, encode
        Download,      ///< decode to RGB and copy it back: the CPU workers do the operation
        Count,         ///< decode the stored planes; `count` their histograms
    };
    /// For an item the load step kept for the GPU (Item::gpu): what the GPU does with it.
    std::function<Action(const Item&)> action;
    /// The device operation of one batch, enqueued on `fo.stream` without waiting: `luma` the Y planes of its
    /// EncodePlanar images, `rgb` its EncodeRgb images. Empty: none.
    std::function<void(const std::vector<imghist::ImageView>& luma, const std::vector<imghist::ImageView>& rgb,
                       const imghist::FilterOptions& fo)>
        operate;
    /// The histograms of a batch's Count images from their planes, into each item (the call waits for them), on
    /// `options.stream`.
    std::function<void(const std::vector<Item*>& items, const std::vector<imghist::YCbCrPlanes>& planes,
                       const imghist::Options& options)>
        count;
    DecodeOptions decode;  ///< the pixel limit, checked from each header before the device allocates
    EncodeOptions encode;  ///< the quality of GPU-encoded outputs (jpeg_quality_for)
    nv::OutputFormat warm_format = nv::kOutputYUV;  ///< what the hardware decoder's states are set up for
    /// The GPU writes JPEGs: planar images with its own batch encoder (jpeg_encoder.hpp), RGB images with
    /// nvJPEG's encoder (encodes_rgb: made and warmed at start-up).
    bool encodes = true;
    bool encodes_rgb = false;
    /// The GPU finishes its files itself (encodes or counts them) rather than decoding them for the CPU workers.
    bool ends_files() const { return encodes || static_cast<bool>(count); }
};

/// A GPU pipeline for device `d` (not started: BatchWorker::start sets the device up).
std::unique_ptr<BatchWorker> make_gpu_pipeline(const Device& d, std::shared_ptr<const GpuJob> job,
                                               const PipelineTuning& tuning);

}  // namespace cli
