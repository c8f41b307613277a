// imghist_jobs — the interface between a folder run (pipeline.cpp) and a worker that takes its files in
// batches: a GPU (gpu/gpu_pipeline.hpp). The run owns the queue, the items and the per-file steps of the CPU
// path; a batch worker takes files through RunAccess and ends every item it takes through it.
//
// Life of a batch worker: the run starts a thread that finds the devices (BatchPlan::devices: loading the
// driver is slow, so the CPU workers are already working), then one thread per device: make, start (the
// device's set-up, while the CPU workers take files), and — when files are still left — run, which returns
// once the worker has claimed nothing more and every item it took has ended. A run whose files are all done
// before a worker's set-up ends does not wait for it: the worker finds the run over and ends on its own,
// never touching the run's items.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/device.hpp"

namespace cli {

struct Item;

/// What a batch worker knows of itself when it claims files (WorkQueue::claim).
struct BatchStats {
    double rate = 0;         ///< files per second it has finished (0 = none yet)
    std::size_t backlog = 0; ///< files it holds: claimed and not ended
    double latency_s = 0;    ///< time from a claim to the end of that batch's last file (0 = unknown)
    double host_cores = 0;   ///< CPU its host threads use: CPU seconds over wall seconds
    int host_threads = 0;    ///< its host threads that hand work to each other (each wants a core when woken)
};

/// The run, as a batch worker sees it. Thread-safe: every call may come from any of the worker's threads.
class RunAccess {
public:
    virtual ~RunAccess() = default;
    /// Claims up to `most` files; empty when none is left for this worker. May wait (the end-of-run rule).
    virtual std::vector<Item*> claim(std::size_t most, const BatchStats& stats) = 0;
    /// The reader's load step (BatchPlan::load); false when the file failed (it has ended, by name).
    virtual bool load(Item& it) = 0;
    /// Hands an item to the CPU workers: a file loaded on the CPU (Item::gpu false), or one whose bytes the
    /// device declined (Item::jpeg kept: the CPU decodes it), or one decoded into Item::image for a CPU
    /// operation.
    virtual void to_cpu(Item& it) = 0;
    /// Its output: Stages::encode (the bytes, metadata added), written durably; the item ends once durable.
    virtual void store(Item& it) = 0;
    /// Ends an item that has no output file (a histogram) or that failed (Item::error set).
    virtual void finish(Item& it) = 0;
};

class BatchWorker {
public:
    virtual ~BatchWorker() = default;
    /// "cuda:0 (NVIDIA H100 80GB HBM3)"
    virtual std::string name() const = 0;
    /// The device's set-up. `wanted()` turns false once no file is left for it: the set-up stops between its
    /// steps then. False, with `why`, when the device cannot take files.
    virtual bool start(const std::function<bool()>& wanted, std::string& why) = 0;
    /// Takes batches until none is left for it; returns when every item it took has ended.
    virtual void run(RunAccess& run) = 0;
    /// For --trace, after run(): one line per stage.
    virtual std::vector<std::string> summary() const = 0;
};

/// A command's batch path (gpu/gpu_jobs.hpp makes it), given to run_pipeline in Stages::batch.
struct BatchPlan {
    /// The devices that take batches, or none with `why`. Runs on a thread of its own: it must not use the
    /// command's objects (capture by value).
    std::function<std::vector<Device>(std::string& why)> devices;
    /// A worker for one device.
    std::function<std::unique_ptr<BatchWorker>(const Device&)> make;
    /// A batch worker's load step: reads the file and keeps the bytes of a file the device may take (Item::gpu
    /// set), or decodes it on the CPU.
    std::function<void(Item&)> load;
    /// The CPU decode of an item whose bytes a batch worker gave back (Item::jpeg).
    std::function<void(Item&)> decode_kept;
    /// The CPU workers take files from the queue too (false: --device cuda, where they take files only once
    /// no GPU is left).
    bool cpu_takes_files = true;
    /// Starts the devices only once the CPU workers alone would need longer than this many seconds for the
    /// files left (WorkQueue::cpu_time_left_exceeds); 0: at once.
    double start_when_cpu_needs_s = 0;
    /// Say so on stderr when no device takes files, or one fails (else only under -v).
    bool say_unavailable = false;
};

/// Waits until every batch worker thread of the process has ended (before a normal exit; see gpu_jpeg_exit).
void wait_for_batch_threads();
/// True when a batch worker thread was started in this process.
bool batch_threads_started();

}  // namespace cli
