// imghist_jobs — the one queue of a folder run's files, shared by every worker.
//
// CPU workers take one file at a time (the per-file path: read, decode, process, encode, write); batch
// workers (GPUs) take a batch at a time. Nobody assigns files: whoever is free takes the next ones, so the
// split between the CPU and the GPUs is whatever this run's speeds make it, on any host. Three rules keep
// the workers from getting in each other's way, all from what the run measures as it goes:
//
//   - CPU cores: a starting GPU keeps one core (its set-up needs one), a running one a core for each of its
//     host threads (or as many as they measure using, CPU time over wall time rounded up, if that is more).
//     Those threads hand each batch on to each other: one that waits for a core when woken stalls the
//     device, so their cores are kept free even though each is busy only part of the time (2× H100, 32
//     cores: each GPU's rate beside the CPU workers 1800–2300 files/s when they kept the 4 cores the threads
//     measured, 2400–3050 with a core per thread; DESIGN.md). A GPU that hands most of its files to the CPU
//     workers (it only decodes them: threshold, clahe, non-JPEG outputs) keeps only the cores it measures:
//     the CPU workers do the rest of its work. The CPU workers may use the cores left, up to their number;
//     those above wait until cores are free again. Once a GPU has begun its set-up they also run at a lower
//     priority (pipeline.cpp, yield_cores_to_gpus). With --device cuda the CPU workers take files only once no
//     GPU is left (they still take what a GPU hands them: files it cannot decode).
//   - The start of a GPU under --device auto: only when the CPU workers, at the time per file they measured
//     on their first files, would need longer than a GPU takes to start. A run that ends sooner never pays
//     for loading the driver and nvJPEG (which slows the CPU workers beside it).
//   - The end of the run: a GPU claims a full batch while the files left are many; near the end it claims
//     only its share of what is left — the share with which every worker finishes at the same moment, from
//     each one's measured rate (files per second) and backlog (files taken and not finished) — and none when
//     the others finish sooner than its own batch latency. Rates not yet measured count as "take a batch".
//
// Thread-safe. Files are item indices 0 .. files-1, taken in order.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

namespace cli {

/// The number of files a batch worker takes now (the end-of-run rule above). `left`: files not yet taken;
/// `rate` and `backlog`: the claiming worker's; `latency_s`: its time from claim to the batch's end (0 =
/// unknown); `others_rate`: the other workers' summed rate; `others_backlog`: theirs. A rate of 0 means
/// unknown: then the full `most` (or what is left).
std::size_t batch_share(std::size_t left, std::size_t most, double rate, std::size_t backlog, double latency_s,
                        double others_rate, std::size_t others_backlog);

class WorkQueue {
public:
    /// `cpu_workers`: the CPU worker threads; `cpu_takes_files`: false for --device cuda; `cores`: the host's
    /// hardware threads, which the GPUs and the CPU workers share (0: as many as there are CPU workers).
    WorkQueue(std::size_t files, int cpu_workers, bool cpu_takes_files, int cores = 0);

    // ---- CPU workers
    struct Taken {
        std::size_t file = 0;
        bool handed = false;  ///< a batch worker handed it over (loaded already)
    };
    /// The next file for CPU worker `rank` (0-based): one a batch worker handed over first, else a fresh one.
    /// Waits while this worker is above the number the cores allow, or (--device cuda) while a GPU may still
    /// take the files. nullopt: nothing is left for CPU workers.
    std::optional<Taken> next_for_cpu(int rank);
    /// A CPU worker finished a file in `seconds` (its rate, for the end-of-run rule).
    void cpu_finished(double seconds);
    /// Whether the CPU workers alone would still need more than `seconds` for the files left, from their
    /// measured time per file: waits until each has finished one file. False when no file is left.
    /// (--device auto starts a GPU only when this exceeds its start-up: gpu_jobs.hpp.)
    bool cpu_time_left_exceeds(double seconds);

    // ---- batch workers (GPUs)
    /// A batch worker begins its set-up: it holds a CPU worker's place until it joins or gives up. Returns its
    /// id.
    int batch_starting();
    /// Its set-up is done: true when it may take files (false: the run no longer needs it; it must not touch
    /// the run's items).
    bool batch_joined(int id);
    /// It gave up (its device failed) or ended: its files and place go back to the others.
    void batch_left(int id);
    /// Claims up to `most` files for batch worker `id`, waiting while its share is none (other workers will
    /// finish sooner); empty when no file is left. `rate`: its files per second so far (0 = unknown);
    /// `backlog`: files it holds; `latency_s`: its claim-to-end time of a batch (0 = unknown); `host_cores`:
    /// the CPU its host threads use (cores); `host_threads`: how many they are (0: count only `host_cores`).
    std::vector<std::size_t> claim(int id, std::size_t most, double rate, std::size_t backlog, double latency_s,
                                   double host_cores, int host_threads = 0);
    /// A file a batch worker cannot take after all (another format, a JPEG its decoder declines) or only
    /// decoded: the CPU workers process it. `from`: the batch worker that hands it over (-1: none).
    void hand_to_cpu(std::size_t file, int from = -1);
    /// True while fresh files are left (a starting batch worker gives up its set-up when this turns false).
    bool files_left() const;
    /// True once any batch worker has begun its set-up (the CPU workers then yield the cores to it).
    bool batch_started() const;

    // ---- the run
    /// Ends the queue: no batch worker joins after this; waiting calls return. The run calls it once every
    /// worker that joined has left and the CPU workers are done.
    void close();
    /// Files taken by CPU workers (fresh ones) and by each batch worker, for the trace.
    std::size_t cpu_taken() const;
    std::size_t batch_taken(int id) const;
    /// The CPU workers the cores allow now: the cores the GPUs leave, at most the CPU workers there are.
    int cpu_allowed() const;

private:
    struct Batch {
        bool starting = true, active = false;
        double rate = 0, latency_s = 0, host_cores = 0;
        int host_threads = 0;
        std::size_t backlog = 0, taken = 0, handed = 0;
    };
    int allowed_locked() const;
    bool gpu_may_take_locked() const;
    std::size_t left_locked() const { return files_ - next_; }

    const std::size_t files_;
    const int cpu_workers_, cores_;
    const bool cpu_takes_files_;
    mutable std::mutex m_;
    std::condition_variable changed_;
    std::size_t next_ = 0;
    std::deque<std::size_t> handed_;
    std::deque<Batch> batch_;  // a deque: a waiting claim keeps its reference while another worker is added
    bool closed_ = false;
    std::size_t cpu_taken_ = 0;
    double cpu_seconds_ = 0;  // busy time of the CPU workers' finished files
    std::size_t cpu_files_ = 0;
};

}  // namespace cli
