// The image commands' jobs as parsed (options/ declares their options): what every command
// takes, the image-to-image job and its per-file work, and the folder run that drives it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/codecs/codec.hpp"
#include "pipeline/device.hpp"
#include "pipeline/pipeline.hpp"

namespace cli {

/// Options every command takes.
struct Common {
    std::string device = "auto";
    Limits limits;  ///< what one input may cost (the --max-* options)
    int threads = 0;
    bool quiet = false;
    bool verbose = false;
    bool trace = false;
    DecodeOptions decode() const {
        DecodeOptions o;
        o.limits = limits;
        return o;
    }
    std::vector<Device> devices() const { return resolve_devices(device); }
};

/// Shared by equalize, threshold, clahe, stretch and match: IN... OUT with files, folders, patterns, stdin/stdout.
struct ImageJob {
    Common common;
    std::vector<std::string> paths;  ///< inputs then the output (unless --in-place)
    bool recursive = false, in_place = false, skip_existing = false;
    std::string shard = "1/1";
    std::string to;                  ///< output extension override
    EncodeOptions encode;
    bool strip = false;              ///< --strip: no metadata in the outputs
    bool auto_orient = false;        ///< --auto-orient: EXIF orientation applied to the pixels
    int depth = 0;                   ///< --depth 8: 16-bit images written as 8-bit (0: as they are)
    bool flatten = false;            ///< --flatten: alpha composited over `background`
    std::string background = "white";
    /// Files the command reads besides the inputs (match's REF): no output may be one of them.
    std::vector<std::string> other_inputs;
};

/// Pipeline options shared by every command that runs files through run_pipeline: threads, quiet,
/// verbosity, the devices; the progress bar only for batches (several inputs or a folder).
RunOptions run_options(const Common& common, bool batch, const std::vector<Device>& devices);

/// What an image command does with JPEG files in a GPU run (gpu_jobs.hpp): equalize's two modes run on
/// the device; DecodeOnly decodes on the GPU and leaves the rest to `process` on the CPU.
enum class GpuImageWork { EqualizeLuma, EqualizePerChannel, DecodeOnly };

/// An image-to-image command as parsed: its job and its work on one file. `process` changes item.image (or
/// item.planes when `planar_ok` says the item may take the JPEG planar path) and may set item.note; it runs on
/// a device worker. When a run takes the GPU JPEG pipeline (gpu_jobs.hpp: gpu_batch_plan), JPEG files go
/// through it as `gpu_work` says.
struct ImageTask {
    ImageJob job;
    std::function<void(Item&, const Device&)> process;
    std::function<bool(const InputFile&, const std::string& output)> planar_ok{};
    GpuImageWork gpu_work = GpuImageWork::DecodeOnly;
};

/// Runs an image-to-image command over its files (the folder pipeline). (file_job.hpp: the same files one at a
/// time, for callers that schedule them.)
int run_image_job(const ImageTask& task);

}  // namespace cli
