#include "pipeline/durable_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "io/errors.hpp"
#include "io/parallel.hpp"

namespace cli {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::string sync_error(const std::string& path, int err) {
    return display_name(path, true) + ": cannot make the output durable: " + std::strerror(err);
}

/// fsync of a file or folder by name; EINVAL (a file system without the call) counts as done.
int sync_path(const std::string& path, bool folder) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (folder ? O_DIRECTORY : 0));
    if (fd < 0) return errno;
    const int rc = folder ? ::fsync(fd) : ::fdatasync(fd);
    const int err = rc != 0 && errno != EINVAL ? errno : 0;
    ::close(fd);
    return err;
}

}  // namespace

DurableWriter::DurableWriter(const Options& o) : opt_(o), thread_([this] { sync_loop(); }) {}

DurableWriter::~DurableWriter() {
    try {
        finish();
    } catch (...) {
    }
    for (auto& [dev, fd] : fs_fds_) ::close(fd);
}

void DurableWriter::write(const std::string& path, const void* bytes, std::size_t size, Done done) {
    if (path == "-") {
        write_file_atomic(path, bytes, size);
        done("");
        return;
    }
    if (opt_.make_parent_dirs) {
        const std::string dir = parent_dir(path);
        std::lock_guard<std::mutex> l(dirs_m_);
        if (made_dirs_.insert(dir).second) make_dirs(dir);
    }
    OutputFile f(path);
    f.write(bytes, size);
    Entry e{f.release(), size, std::move(done)};
    std::unique_lock<std::mutex> l(m_);
    room_.wait(l, [&] { return pending_.size() < opt_.pending || finishing_; });
    pending_.push_back(std::move(e));
    work_.notify_one();
}

void DurableWriter::finish() {
    {
        std::lock_guard<std::mutex> l(m_);
        if (finishing_ && !thread_.joinable()) return;
        finishing_ = true;
    }
    work_.notify_all();
    room_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void DurableWriter::sync_loop() {
    name_this_thread("ih:sync");
    StageTimer timer(clock_);
    for (;;) {
        std::vector<Entry> batch;
        {
            std::unique_lock<std::mutex> l(m_);
            work_.wait(l, [&] { return !pending_.empty() || finishing_; });
            if (pending_.empty()) break;
            batch.swap(pending_);
        }
        room_.notify_all();
        timer.to(StageClock::Busy);
        round(batch);
        timer.to(StageClock::WaitIn);
    }
}

void DurableWriter::round(std::vector<Entry>& batch) {
    std::vector<std::string> errors(batch.size());
    auto t = Clock::now();
    make_durable(batch, errors);
    sync_ms_ += ms_since(t);
    t = Clock::now();
    std::set<std::string> folders;
    for (std::size_t k = 0; k < batch.size(); ++k) {
        PendingFile& f = batch[k].file;
        if (!errors[k].empty()) {
            discard(f);
            continue;
        }
        try {
            rename_into_place(f);
            folders.insert(parent_dir(f.path));
        } catch (const std::exception& e) {
            errors[k] = user_message(e);
        }
    }
    rename_ms_ += ms_since(t);
    // The renames are durable once their folders are (best effort, as OutputFile::commit: some file systems
    // refuse fsync on a folder, and the files are complete either way).
    t = Clock::now();
    for (const std::string& dir : folders) sync_path(dir, true);
    folder_ms_ += ms_since(t);
    ++rounds_;
    files_ += batch.size();
    largest_ = std::max(largest_, batch.size());
    clock_.add_count(batch.size());
    for (std::size_t k = 0; k < batch.size(); ++k) {
        bytes_ += static_cast<double>(batch[k].bytes);
        batch[k].done(errors[k]);
    }
}

int DurableWriter::filesystem_fd(const std::string& dir) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) return -1;
    auto it = fs_fds_.find(static_cast<unsigned long>(st.st_dev));
    if (it != fs_fds_.end()) return it->second;
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) fs_fds_[static_cast<unsigned long>(st.st_dev)] = fd;
    return fd;
}

void DurableWriter::make_durable(std::vector<Entry>& batch, std::vector<std::string>& errors) {
    // One file alone (a single output, or a round of a slow producer): its own sync, which is never more work
    // than a whole file system's.
    if (opt_.sync == PipelineTuning::Sync::Fdatasync || batch.size() == 1) {
        fdatasync_each(batch, errors);
        return;
    }
    // One syncfs per file system: it writes back and flushes everything dirty there, our temporaries
    // included, in one journal commit and one cache flush. The descriptor stays open for the run, so a
    // write error anywhere on that file system since then is reported.
    std::map<int, std::vector<std::size_t>> by_fs;
    std::map<std::string, int> dir_fd;
    for (std::size_t k = 0; k < batch.size(); ++k) {
        const std::string dir = parent_dir(batch[k].file.path);
        auto it = dir_fd.find(dir);
        const int fd = it != dir_fd.end() ? it->second : (dir_fd[dir] = filesystem_fd(dir));
        by_fs[fd].push_back(k);
    }
    for (auto& [fd, members] : by_fs) {
        if (fd >= 0 && ::syncfs(fd) == 0) continue;
        // The file system or the call failed: each file on its own, so that only the failed ones fail.
        std::vector<Entry*> some;
        for (std::size_t k : members) some.push_back(&batch[k]);
        std::vector<int> errs(some.size(), 0);
        parallel_for(some.size(), opt_.sync_threads, [&](std::size_t j) { errs[j] = sync_path(some[j]->file.tmp, false); });
        for (std::size_t j = 0; j < members.size(); ++j)
            if (errs[j]) errors[members[j]] = sync_error(batch[members[j]].file.path, errs[j]);
    }
}

void DurableWriter::fdatasync_each(std::vector<Entry>& batch, std::vector<std::string>& errors) {
    std::vector<int> errs(batch.size(), 0);
    parallel_for(batch.size(), opt_.sync_threads, [&](std::size_t k) { errs[k] = sync_path(batch[k].file.tmp, false); });
    for (std::size_t k = 0; k < batch.size(); ++k)
        if (errs[k]) errors[k] = sync_error(batch[k].file.path, errs[k]);
}

std::string DurableWriter::summary(double wall_ms) const {
    char line[400];
    std::snprintf(line, sizeof line,
                  "%s; %zu rounds, %.0f files per round (largest %zu), %.1f MB; %s %.2f s, renames %.2f s, folders %.2f s",
                  clock_.summary(wall_ms, "files").c_str(), rounds_, rounds_ ? static_cast<double>(files_) / rounds_ : 0.0,
                  largest_, bytes_ / 1e6, opt_.sync == PipelineTuning::Sync::Syncfs ? "syncfs" : "fdatasync",
                  sync_ms_ / 1e3, rename_ms_ / 1e3, folder_ms_ / 1e3);
    return line;
}

}  // namespace cli
