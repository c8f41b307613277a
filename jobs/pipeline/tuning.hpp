// imghist_jobs — the folder pipeline's tunable sizes, in one place.
//
// Every value has a default chosen by reasoning about the stages (docs/DESIGN.md, "Folder pipeline"); a
// measurement picks others without a rebuild through one option of every command (commands/image_command.cpp):
//
//   imghist equalize in/ out/ --pipeline batch=256,encoders=6,sync=fdatasync
//
//   key           default  what
//   batch         128      files a GPU claims and decodes at once (1-1024)
//   depth         4        batches in flight per GPU: each has its own device buffers (2-16)
//   readers       2        threads per GPU that claim batches and read their files (1-64); a running GPU
//                          keeps a core free for each of its reader, decoder, encoding and writing threads
//                          (work_queue.hpp), so more threads here leave fewer cores to the CPU workers
//   decoders      2        hardware decoder states per GPU, used in turn (1-8): the host part of one batch's
//                          decode overlaps the previous batch's decode on the device
//   encoders      4        encoding (and download) threads per GPU, each with its own stream (1-64); each
//                          encodes a 1/encoders share of a batch's planar images in one call
//   states        2        nvJPEG encoder states per encoding thread, for RGB images (equalize --mode
//                          per-channel): images one thread has in flight (1-16)
//   writers       4        threads per GPU that add the metadata and write the outputs (1-64); two were the
//                          busiest stage under --device auto once the GPU encodes a batch in one call
//   sync          syncfs   how outputs are made durable before their rename: syncfs (one call per file
//                          system and round) or fdatasync (one call per file, on sync_threads threads)
//   sync_threads  4        threads of sync=fdatasync (1-64)
//   pending       1024     most written outputs waiting to be made durable; writers wait beyond it (16-4096)
//   wait          auto     how a thread waits for the GPU: auto (the driver's choice, which spins while there
//                          are fewer contexts than cores: the thread reacts at once, on the core the work queue
//                          keeps for it anyway; but block where that core is not kept or is short: spin_wait)
//                          or block (sleeps; each wake-up costs latency)
//   exit          fast     fast: the process ends as soon as every output is durable (the CUDA driver's
//                          teardown is not waited for); normal: it returns from main
//
// An unknown key or a value out of range is a usage error naming it.
#pragma once

#include <cstddef>
#include <string>

namespace cli {

struct PipelineTuning {
    int batch = 128;
    int depth = 4;
    int readers = 2;
    int decoders = 2;
    int encoders = 4;
    int states = 2;
    int writers = 4;
    enum class Sync { Syncfs, Fdatasync } sync = Sync::Syncfs;
    int sync_threads = 4;
    std::size_t pending = 1024;
    bool blocking_wait = false;
    bool fast_exit = true;
};

/// Parses "key=value,key=value" (empty: the defaults). Throws UsageError naming the key or value.
PipelineTuning parse_tuning(const std::string& spec);
/// Sets the process's tuning to `spec` (--pipeline), parsed at the next pipeline_tuning(); before the run starts.
void set_pipeline_spec(const std::string& spec);
/// The process's tuning: the spec parsed at the first call (a usage error then), the defaults without one. A
/// copy: a later set_pipeline_spec (another command parsed in this process) cannot change it under a caller.
PipelineTuning pipeline_tuning();
/// Whether a GPU's threads may spin while they wait for it: wait=auto, for a GPU that finishes its files itself
/// (the work queue then keeps a core for each of its threads; one that only decodes for the CPU workers keeps
/// the cores it measures, and spinning would take theirs), on a host with at least two hardware threads for
/// each thread that may wait on one of `gpus` GPUs (a decoder and the encoders each).
bool spin_wait(const PipelineTuning& t, bool gpu_ends_files, int hardware_threads, int gpus);
/// "batch=128,depth=4,..." — every value, for --trace.
std::string describe(const PipelineTuning& t);

}  // namespace cli
