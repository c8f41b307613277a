// imghist_jobs — batch runs over many files: input collection, sharding, and the folder run.
//
// A run is one queue of files (work_queue.hpp) and the workers that take from it:
//
//   CPU workers (one per thread)   take a file, then read, decode, process, encode and write it
//   batch workers (one per GPU)    take files a batch at a time through their own stages (gpu_pipeline.hpp),
//                                  joining when their device is ready; files they cannot take go back to the
//                                  CPU workers
//   the sync thread                makes written outputs durable in rounds, renames them into place, and only
//                                  then counts each file as done (durable_writer.hpp)
//
// A failure in any step is reported with the file's name and the run goes on; the summary counts it and the
// exit status says that something failed. Memory stays bounded whatever the folder's size: one file per CPU
// worker, PipelineTuning::depth batches per GPU, PipelineTuning::pending written outputs awaiting their sync.
// Whatever the images' sizes, the images decoded on the host stay within the memory budget
// (RunOptions::max_memory): a CPU worker reserves a file's share from its header before decoding it, and
// gives it back once the output is handed to the durable writer or the file fails. A batch worker's own
// buffers are bounded by its batches instead (gpu/gpu_pipeline.hpp; docs/DESIGN.md, "Resource model").
// A progress bar is drawn on stderr only when stderr is a terminal (and --trace is off).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/codecs/codec.hpp"
#include "io/codecs/codec_jpeg.hpp"
#include "pipeline/batch_worker.hpp"
#include "pipeline/device.hpp"
#include "io/histio.hpp"
#include "io/image.hpp"

namespace cli {

struct InputFile {
    std::string path;  ///< as given or found
    std::string rel;   ///< path relative to the folder it was found in (the file name when given directly)
    /// The file's device and inode as the folder scan saw them (following symbolic links), so that planning a
    /// run does not ask the file system again; `known` is false for files named on the command line.
    dev_t dev = 0;
    ino_t ino = 0;
    bool known = false;
};

struct Shard {
    int k = 1, n = 1;  ///< this run takes part k of n (1 <= k <= n)
    bool active() const noexcept { return n > 1; }
};
Shard parse_shard(const std::string& s);
/// Stable across machines and runs: FNV-1a of the relative path, modulo n.
bool in_shard(const std::string& rel, const Shard& shard);

/// Expands files, folders (their image files; sub-folders too when recursive) and glob patterns; hidden
/// files are skipped; sorted by relative path; duplicates removed. Missing inputs are an error. Files in
/// folders whose extension names no image format imghist reads are not returned but listed in
/// `unsupported` (relative paths), for the run's summary. A folder whose entries' paths reach PATH_MAX
/// is an error naming it (their files could not be opened).
std::vector<InputFile> collect_inputs(const std::vector<std::string>& args, bool recursive,
                                      std::vector<std::string>* unsupported = nullptr);
/// True when the argument list means a batch run (a folder, a pattern, or several inputs).
bool is_batch(const std::vector<std::string>& args);

/// One file's trip through the pipeline.
struct Item {
    std::size_t index = 0;
    InputFile input;
    std::string output;  ///< empty for commands without output files
    Format input_format = Format::Unknown;  ///< read from the input's bytes by the load stage
    Image image;
    JpegPlanes planes;
    bool planar = false;
    HistResult hist;
    /// The file's result as the command prints it (hist: its JSON or text), made where the file was processed:
    /// the end of the run then joins them instead of formatting every count at once.
    std::string report;
    Bytes jpeg;          ///< the file's bytes, kept for a batch worker's decoder (its load step sets gpu then)
    JpegHeader jpeg_header;  ///< read by a batch worker's load step (size, sampling, metadata)
    Bytes encoded;       ///< the output's pixels as a device encoded them (Stages::encode adds the metadata)
    bool gpu = false;    ///< kept for a batch worker (its load step took it)
    std::string note;    ///< per-file line for the log (e.g. "threshold: 117")
    std::string error;
    std::string worker;  ///< who did it, for -v ("cpu", "cuda:0"); empty: the run's devices
    std::vector<std::pair<const char*, double>> stage_ms;  ///< each step that ran and its milliseconds (--verbose)
    /// The item's share of the run's memory budget (RunOptions::max_memory): bound to the run's budget when
    /// the run starts, taken by the decoder from the header (DecodeOptions::memory), given back when the
    /// output is handed to the durable writer or the item ends.
    MemoryReservation memory;
};

struct Stages {
    std::function<void(Item&)> load;                      ///< read and decode on the CPU
    std::function<void(Item&, const Device&)> process;    ///< the operation, on a CPU worker's device
    /// The output file's bytes (encoded on the CPU, or Item::encoded with the metadata added); empty for
    /// commands without output files. The run writes them durably.
    std::function<Bytes(Item&)> encode;
    /// Optional: the command's batch path (GPUs). Without it every file goes through the CPU workers.
    std::shared_ptr<BatchPlan> batch;
};

struct RunOptions {
    int threads = 0;          ///< CPU workers; 0 = hardware threads
    bool quiet = false;
    bool progress = true;     ///< only drawn when stderr is a terminal
    bool prefix_notes = true; ///< notes as "<file>: <note>" (batch) or "<note>" (one file)
    bool verbose = false;     ///< one line per file with the time of each stage, and the peak memory at the end
    bool make_parent_dirs = false;  ///< outputs in sub-folders that may not exist yet (folder runs)
    std::string verbose_device;
    /// The budget of decoded images held at once (Limits::max_memory): each item gets a share of it
    /// (Item::memory), so a CPU worker decodes its next file only when the budget has room. 0: no budget.
    std::uint64_t max_memory = 0;
    /// The CPU workers' devices: the CPU, or GPUs for images decoded on the host (each worker takes one
    /// of them; the operations on one GPU run one at a time). Runs with a batch plan use the CPU here.
    std::vector<Device> devices;
    std::size_t skipped = 0;  ///< files left out before the run (--skip-existing): counted in an interruption's message
};

struct Summary {
    std::size_t done = 0, failed = 0, skipped = 0;
    std::vector<std::string> unsupported;  ///< files left out because imghist cannot read their format
    double seconds = 0;
};

/// Runs every item through the stages; items come back in input order (with error set when they failed).
/// The run's counts are kept in run_counts() (fileio.hpp) for the message of an interruption.
Summary run_pipeline(std::vector<Item>& items, const Stages& stages, const RunOptions& opt);
/// "done 119, failed 1, skipped 0 in 3.21 s (37.1 images/s)", then "; skipped 3 unsupported: a.xyz, b.doc,
/// c.txt" when files were left out (the first five named).
std::string summary_line(const Summary& s);
/// For a batch that processed nothing and had nothing to skip: the message why (the run then fails);
/// empty otherwise.
std::string nothing_processed(const Summary& s, std::size_t outside_shard);

}  // namespace cli
