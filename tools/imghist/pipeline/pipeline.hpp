// imghist CLI — batch runs over many files: input collection, sharding, and the threaded pipeline.
//
//   read+decode (N threads) --bounded queue--> process (one thread per GPU, or N on the CPU)
//                           --bounded queue--> encode+write (N threads)
//
// With a batch stage (Stages::process_batch, the GPU JPEG pipeline of gpu_jpeg.hpp) each GPU runs
// Stages::workers_per_gpu workers that take items in batches of up to Stages::batch from the queue, which
// then holds one batch more than there are workers: while the GPU works on some, the readers fill the next. Items the batch stage does not take (Item::gpu false after load, or
// Item::deferred set by it) are processed on the CPU backend by the encode+write threads.
//
// A failure in any stage is reported with the file's name and the run goes on; the summary counts it and
// the exit status says that something failed. Queues are bounded, so memory stays at a few images per
// thread whatever the folder's size, and within the memory budget (RunOptions::max_memory) whatever the
// images' sizes. A progress bar is drawn on stderr only when stderr is a terminal.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/codecs/codec.hpp"
#include "io/codecs/codec_jpeg.hpp"
#include "pipeline/device.hpp"
#include "io/histio.hpp"
#include "io/image.hpp"

namespace cli {

struct InputFile {
    std::string path;  ///< as given or found
    std::string rel;   ///< path relative to the folder it was found in (the file name when given directly)
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
    Bytes jpeg;          ///< the file's bytes, kept for the GPU decoder (load sets gpu when it keeps them)
    JpegHeader jpeg_header;  ///< read by the load stage for the GPU decoder (its size and sampling)
    Bytes encoded;       ///< the output file's bytes when the GPU encoded them (store writes them as they are)
    bool gpu = false;    ///< taken by the batch stage
    bool deferred = false;  ///< to be processed on the CPU by the store threads
    std::string note;    ///< per-file line for the log (e.g. "threshold: 117")
    std::string error;
    std::vector<double> stage_ms;  ///< time spent in each stage that ran (for --verbose)
    /// The item's share of the run's memory budget (RunOptions::max_memory): given to the decoder through
    /// DecodeOptions::memory by the load stage, released when the item is done.
    MemoryReservation memory;
};

struct Stages {
    std::function<void(Item&)> load;                      ///< read and decode (worker threads)
    std::function<void(Item&, const Device&)> process;    ///< on a device worker
    std::function<void(Item&)> store;                     ///< encode and write (worker threads); may be empty
    /// Optional: the device work of a batch of items whose `gpu` flag load set, on a GPU worker. It may set
    /// an item's error (that item fails alone) or its `deferred` flag (then `process` runs on the CPU later).
    std::function<void(std::vector<Item*>&, const Device&)> process_batch;
    int batch = 1;                                        ///< most items per process_batch call
    /// With process_batch: decodes an item's kept bytes (Item::jpeg) on the CPU, for items the batch stage
    /// deferred without decoding them (files nvJPEG declines). Runs on the store threads.
    std::function<void(Item&)> decode_kept;
    /// Optional: run once on each GPU worker before it takes work (creates the decoder while files load).
    std::function<void(const Device&)> warm_up;
    /// With process_batch: GPU workers per GPU, each with its own batch in flight (its own stream and
    /// decoder/encoder states: while one encodes, another decodes). The queue holds one batch more than
    /// there are workers, so memory stays (workers + 1) batches whatever the folder's size.
    int workers_per_gpu = 1;
    /// Optional: receives one line per GPU worker at its end (start-up, time waiting for input, busy time).
    std::function<void(const std::string&)> trace;
};

struct RunOptions {
    int threads = 0;          ///< decode/encode threads; 0 = hardware threads
    bool quiet = false;
    bool progress = true;     ///< only drawn when stderr is a terminal
    bool prefix_notes = true; ///< notes as "<file>: <note>" (batch) or "<note>" (one file)
    bool verbose = false;     ///< one line per file with the time of each stage, and the peak memory at the end
    std::string verbose_device;
    /// The budget of decoded images held at once (Limits::max_memory): each item gets a share of it
    /// (Item::memory), so a loader decodes its next file only when the budget has room. 0: no budget.
    std::uint64_t max_memory = 0;
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
