// imghist CLI — subcommands. Each cmd_*.cpp adds one subcommand to the application and returns the
// function that runs it after parsing.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

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
    DecodeOptions decode() const {
        DecodeOptions o;
        o.limits = limits;
        return o;
    }
    std::vector<Device> devices() const { return resolve_devices(device); }
};
void add_common(CLI::App& sub, Common& c);

struct Command {
    CLI::App* app = nullptr;
    std::function<int()> run;
};

Command add_hist(CLI::App& app);
Command add_equalize(CLI::App& app);
Command add_threshold(CLI::App& app);
Command add_clahe(CLI::App& app);
Command add_stretch(CLI::App& app);
Command add_match(CLI::App& app);
Command add_gen(CLI::App& app);
Command add_bench(CLI::App& app);

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
    void add_options(CLI::App& sub);
};

/// Pipeline options shared by every command that runs files through run_pipeline: threads, quiet,
/// verbosity, the devices; the progress bar only for batches (several inputs or a folder).
RunOptions run_options(const Common& common, bool batch, const std::vector<Device>& devices);

/// What an image command does with JPEG files in a GPU run (gpu_jobs.hpp): equalize's two modes run on
/// the device; DecodeOnly decodes on the GPU and leaves the rest to `process` on the CPU.
enum class GpuImageWork { EqualizeLuma, EqualizePerChannel, DecodeOnly };

/// Runs an image-to-image command. `process` changes item.image (or item.planes when `planar_ok` says the
/// item may take the JPEG planar path) and may set item.note; it runs on a device worker. When the run
/// takes the GPU JPEG pipeline (gpu_jobs.hpp: gpu_jpeg_devices), JPEG files go through it as `gpu_work` says.
int run_image_job(const ImageJob& job, const std::function<void(Item&, const Device&)>& process,
                  const std::function<bool(const InputFile&, const std::string& output)>& planar_ok = {},
                  GpuImageWork gpu_work = GpuImageWork::DecodeOnly);

}  // namespace cli
