// imghist_jobs — a folder run's outputs made durable in rounds.
//
// The promise of every output: written to a temporary name, made durable, renamed over its destination, and
// the folder's entry made durable — so a crash or a power cut leaves either the old file or the whole new one
// under the final name, never a part of it. One fsync per file makes the disk's flush latency, not its write
// rate, the limit of a folder run; here the workers only write temporaries (their write-back starts at once)
// and one sync thread makes them durable many at a time:
//
//   workers: write temporary ─► pending ─► sync thread, one round at a time:
//                                           1. every pending file's data durable: one syncfs per file system
//                                              (or fdatasync of each file on sync_threads threads)
//                                           2. each file renamed into place
//                                           3. each folder that received a file fsynced once
//                                           4. each file's `done` callback (the file counts as done now)
//
// A round takes whatever is pending when it starts, so rounds grow while the disk is slower than the
// workers and shrink when it is faster; at most `pending` files wait (writers block beyond), which bounds
// the temporaries an interruption must remove. A file whose sync or rename fails fails alone, by name (a
// failed syncfs is retried file by file with fdatasync to find which).
//
// syncfs reports write errors since Linux 5.8; on older kernels sync=fdatasync (pipeline/tuning.hpp) is the
// one that notices a failed write.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "io/fileio.hpp"
#include "pipeline/trace.hpp"
#include "pipeline/tuning.hpp"

namespace cli {

class DurableWriter {
public:
    /// `error` is empty when the file is durable under its final name.
    using Done = std::function<void(const std::string& error)>;
    struct Options {
        PipelineTuning::Sync sync = PipelineTuning::Sync::Syncfs;
        int sync_threads = 4;
        std::size_t pending = 1024;
        bool make_parent_dirs = false;  ///< create a destination's folder first (folder runs mirror sub-folders)
    };
    explicit DurableWriter(const Options& o);
    ~DurableWriter();  ///< finish() if not called
    DurableWriter(const DurableWriter&) = delete;
    DurableWriter& operator=(const DurableWriter&) = delete;

    /// Writes `bytes` to a temporary next to `path`; `done` runs on the sync thread once the file is durable
    /// under its final name or has failed (a write error is thrown here instead, nothing pending). "-"
    /// writes standard output at once and calls `done` before returning.
    void write(const std::string& path, const void* bytes, std::size_t size, Done done);
    /// Waits for every pending file's round, then ends the sync thread.
    void finish();

    StageClock& clock() noexcept { return clock_; }
    /// For --trace: rounds, files, and the time in each step of a round.
    std::string summary(double wall_ms) const;

private:
    struct Entry {
        PendingFile file;
        std::size_t bytes = 0;
        Done done;
    };
    void sync_loop();
    void round(std::vector<Entry>& batch);
    /// Makes the data of `batch` durable; the entries whose sync failed get their error in `errors`.
    void make_durable(std::vector<Entry>& batch, std::vector<std::string>& errors);
    void fdatasync_each(std::vector<Entry>& batch, std::vector<std::string>& errors);
    int filesystem_fd(const std::string& dir);

    const Options opt_;
    std::mutex m_;
    std::condition_variable work_, room_;
    std::vector<Entry> pending_;
    bool finishing_ = false;
    std::mutex dirs_m_;
    std::set<std::string> made_dirs_;
    std::map<unsigned long, int> fs_fds_;  // st_dev -> an open folder on that file system (sync thread only)
    StageClock clock_{"durable", 1};
    double sync_ms_ = 0, rename_ms_ = 0, folder_ms_ = 0;
    std::size_t rounds_ = 0, files_ = 0, largest_ = 0;
    double bytes_ = 0;
    std::thread thread_;
};

}  // namespace cli
