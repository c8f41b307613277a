#include "pipeline/pipeline.hpp"

#include <dirent.h>
#include <glob.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "io/codecs/codec.hpp"
#include "io/errors.hpp"
#include "io/fileio.hpp"
#include "io/limits.hpp"
#include "imghist/filters.hpp"
#include "io/parallel.hpp"

namespace cli {

Shard parse_shard(const std::string& s) {
    Shard sh;
    auto slash = s.find('/');
    try {
        if (slash == std::string::npos) throw std::invalid_argument(s);
        std::size_t u1 = 0, u2 = 0;
        sh.k = std::stoi(s.substr(0, slash), &u1);
        sh.n = std::stoi(s.substr(slash + 1), &u2);
        if (u1 != slash || u2 != s.size() - slash - 1) throw std::invalid_argument(s);
    } catch (const std::exception&) {
        fail_usage("--shard: expected K/N (e.g. 3/8), got '" + s + "'");
    }
    if (sh.n < 1 || sh.k < 1 || sh.k > sh.n) fail_usage("--shard " + s + ": need 1 <= K <= N");
    return sh;
}

bool in_shard(const std::string& rel, const Shard& shard) {
    if (shard.n <= 1) return true;
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : rel) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return static_cast<int>(h % static_cast<std::uint64_t>(shard.n)) == shard.k - 1;
}

namespace {

bool is_image_name(const std::string& name) {
    return format_from_extension(extension_of(name)) != Format::Unknown;
}

bool has_wildcard(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

/// Device and inode of a folder: how the walk recognises a folder it is already inside.
using DirId = std::pair<dev_t, ino_t>;

[[noreturn]] void too_deep(const std::string& folder) {
    fail_io(folder, "its path is " + std::to_string(folder.size()) + " bytes long and its entries' paths reach PATH_MAX (" +
                        std::to_string(PATH_MAX) + " bytes), which imghist cannot open; nothing processed "
                        "(run imghist from a folder nearer to it)");
}

struct Entry {
    std::string name;
    bool folder = false;
};

/// The visible entries of an open folder, sorted, each classified through the folder's descriptor (so
/// the classification does not depend on the path's length).
std::vector<Entry> list_folder(DIR* d) {
    std::vector<Entry> entries;
    while (dirent* e = readdir(d)) {
        Entry en{e->d_name};
        if (en.name.empty() || en.name[0] == '.') continue;  // hidden files, and our own temporaries
        struct stat st {};
        en.folder = fstatat(dirfd(d), en.name.c_str(), &st, 0) == 0 && S_ISDIR(st.st_mode);
        entries.push_back(std::move(en));
    }
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
    return entries;
}

// `ancestors` holds the folders from the root down to this one: a symbolic link back to any of them is a
// loop, reported and not followed (a link to a folder elsewhere is followed, as find -L does). A folder
// whose entries' paths would reach PATH_MAX fails the run before anything is processed: its files could
// not be opened by name, and leaving them out silently would look like success.
void walk(const std::string& root, const std::string& rel_dir, bool recursive, std::vector<InputFile>& out,
          std::set<DirId>& ancestors, std::vector<std::string>* unsupported) {
    std::string dir = rel_dir.empty() ? root : root + "/" + rel_dir;
    if (dir.size() + 2 >= PATH_MAX) too_deep(dir);
    struct stat dst {};
    if (stat(dir.c_str(), &dst) != 0) fail_io(dir, "cannot list folder");
    const DirId id{dst.st_dev, dst.st_ino};
    if (!ancestors.insert(id).second) {
        std::fprintf(stderr, "imghist: %s: symbolic link loop (a folder that contains it), not followed\n", dir.c_str());
        return;
    }
    DIR* d = opendir(dir.c_str());
    if (!d) fail_io(dir, "cannot list folder");
    const std::vector<Entry> entries = list_folder(d);
    closedir(d);
    for (const Entry& e : entries) {
        std::string rel = rel_dir.empty() ? e.name : rel_dir + "/" + e.name;
        std::string full = root + "/" + rel;
        if (e.folder) {
            if (recursive) walk(root, rel, recursive, out, ancestors, unsupported);
        } else if (is_image_name(e.name)) {
            if (full.size() >= PATH_MAX) too_deep(dir);
            // A FIFO, socket or device with an image's name: reading it could block forever.
            const std::string kind = special_file_kind(full);
            if (!kind.empty())
                std::fprintf(stderr, "imghist: %s: is %s, not a regular file; skipped\n", full.c_str(), kind.c_str());
            else
                out.push_back(InputFile{full, rel});
        } else if (unsupported) {
            unsupported->push_back(rel);
        }
    }
    ancestors.erase(id);
}

std::string base_name(const std::string& p) {
    auto s = p.find_last_of('/');
    return s == std::string::npos ? p : p.substr(s + 1);
}

std::string strip_slashes(std::string p) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    return p;
}

}  // namespace

bool is_batch(const std::vector<std::string>& args) {
    if (args.size() != 1) return true;
    return is_directory(args[0]) || (has_wildcard(args[0]) && !path_exists(args[0]));
}

std::vector<InputFile> collect_inputs(const std::vector<std::string>& args, bool recursive,
                                      std::vector<std::string>* unsupported) {
    std::vector<InputFile> out;
    for (const std::string& raw : args) {
        std::string a = strip_slashes(raw);
        if (is_directory(a)) {
            std::set<DirId> ancestors;
            walk(a, "", recursive, out, ancestors, unsupported);
        } else if (path_exists(a) || a == "-") {
            out.push_back(InputFile{a, base_name(a)});
        } else if (has_wildcard(a)) {
            glob_t g{};
            int rc = glob(a.c_str(), 0, nullptr, &g);
            if (rc == 0)
                for (std::size_t i = 0; i < g.gl_pathc; ++i) {
                    std::string p = g.gl_pathv[i];
                    if (!is_directory(p)) out.push_back(InputFile{p, base_name(p)});
                }
            globfree(&g);
            if (rc != 0) fail_io(a, "no file matches this pattern");
        } else {
            fail_io(a, "no such file or folder");
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const InputFile& x, const InputFile& y) { return x.rel < y.rel; });
    std::set<std::string> seen;
    std::vector<InputFile> unique;
    for (auto& f : out)
        if (seen.insert(f.path).second) unique.push_back(f);
    return unique;
}

namespace {

template <class T>
class BoundedQueue {
public:
    explicit BoundedQueue(std::size_t cap) : cap_(cap) {}
    void push(T v) {
        std::unique_lock<std::mutex> l(m_);
        not_full_.wait(l, [&] { return q_.size() < cap_; });
        q_.push_back(std::move(v));
        // All: the waiters may want different amounts (one item, or a whole batch).
        not_empty_.notify_all();
    }
    std::optional<T> pop() {
        std::unique_lock<std::mutex> l(m_);
        not_empty_.wait(l, [&] { return !q_.empty() || closed_; });
        if (q_.empty()) return std::nullopt;
        T v = std::move(q_.front());
        q_.pop_front();
        not_full_.notify_one();
        return v;
    }
    /// Waits until an item is queued or the queue is closed; true when an item is there (nothing is taken).
    bool wait_nonempty() {
        std::unique_lock<std::mutex> l(m_);
        not_empty_.wait(l, [&] { return !q_.empty() || closed_; });
        return !q_.empty();
    }
    /// Waits until `n` items are queued or the queue is closed; returns up to `n` (none: closed and empty).
    std::vector<T> pop_batch(std::size_t n) {
        std::unique_lock<std::mutex> l(m_);
        not_empty_.wait(l, [&] { return q_.size() >= n || q_.size() >= cap_ || closed_; });
        std::vector<T> out;
        while (!q_.empty() && out.size() < n) {
            out.push_back(std::move(q_.front()));
            q_.pop_front();
        }
        not_full_.notify_all();
        return out;
    }
    void close() {
        std::lock_guard<std::mutex> l(m_);
        closed_ = true;
        not_empty_.notify_all();
    }

private:
    std::size_t cap_;
    std::deque<T> q_;
    bool closed_ = false;
    std::mutex m_;
    std::condition_variable not_empty_, not_full_;
};

/// Width of the terminal on stderr (80 when it cannot be read).
std::size_t terminal_columns() {
    winsize ws{};
    if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return 80;
}

class Progress {
public:
    Progress(std::size_t total, bool enabled) : total_(total), enabled_(enabled && isatty(2)) {
        run_counts().progress_bar = enabled_;
    }
    /// One line, fitted to the terminal's width (read at every update, so resizing works): the bar shrinks,
    /// then goes, and the text is cut, so the line never wraps (a wrapped line would start a new line at
    /// every update).
    void draw(std::size_t done, std::size_t failed, double secs, bool final = false) {
        if (!enabled_) return;
        std::size_t n = done + failed;
        double rate = secs > 0 ? n / secs : 0;
        double eta = rate > 0 ? (total_ - n) / rate : 0;
        char info[160];
        std::snprintf(info, sizeof info, " %zu/%zu  %.1f img/s  ETA %.0fs%s", n, total_, rate, eta,
                      failed ? (" (" + std::to_string(failed) + " failed)").c_str() : "");
        const std::size_t cols = terminal_columns();
        const std::size_t room = cols > 1 ? cols - 1 : 0;  // the last column would wrap on some terminals
        std::string line;
        const std::size_t text = std::strlen(info);
        if (room >= text + 2 + 10) {
            const std::size_t width = std::min<std::size_t>(30, room - text - 2);
            const std::size_t fill = total_ ? n * width / total_ : width;
            line = "[" + std::string(fill, '=');
            if (fill < width) line += '>' + std::string(width - fill - 1, ' ');
            line += "]";
        }
        line += info;
        if (line.size() > room) line.resize(room);
        std::fprintf(stderr, "\r%s\033[K", line.c_str());
        if (final) std::fputc('\n', stderr);
        std::fflush(stderr);
        drawn_ = true;
    }
    /// Clears the bar before another line is printed.
    void clear() {
        if (enabled_ && drawn_) std::fputs("\r\033[K", stderr);
    }

private:
    std::size_t total_;
    bool enabled_;
    bool drawn_ = false;
};

}  // namespace

namespace {
// One host thread per GPU: measured on an H200 host, four threads per GPU made a folder run slower
// (0.50 s instead of 0.35 s for 120 JPEGs), as their staging buffers and transfers compete.
constexpr int kWorkersPerGpu = 1;

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

/// One run of run_pipeline: loader threads -> to_process -> device workers -> to_store -> store threads.
/// Each step below is one kind of thread's loop; finish() is where every item ends, failed or done.
class PipelineRun {
public:
    PipelineRun(std::vector<Item>& items, const Stages& stages, const RunOptions& opt)
        : items_(items),
          stages_(stages),
          opt_(opt),
          t0_(Clock::now()),
          // No stage needs more threads than there are files.
          threads_(static_cast<int>(std::min<std::size_t>(
              opt.threads > 0 ? static_cast<std::size_t>(opt.threads) : static_cast<std::size_t>(hardware_threads()),
              std::max<std::size_t>(1, items.size())))),
          budget_(opt.max_memory),
          devices_(opt.devices.empty() ? std::vector<Device>{Device{}} : opt.devices),
          progress_(items.size(), opt.progress && !opt.quiet),
          batched_(static_cast<bool>(stages.process_batch)),
          batch_(static_cast<std::size_t>(std::max(1, stages.batch))),
          to_process_(queue_capacity()),
          to_store_(queue_capacity()),
          loaders_left_(threads_) {}
    // The items outlive the run: none may keep a share of this run's budget.
    ~PipelineRun() {
        for (Item& it : items_) it.memory = MemoryReservation();
    }

    Summary run();

private:
    int workers_per_gpu() const { return batched_ ? std::max(1, stages_.workers_per_gpu) : kWorkersPerGpu; }
    /// Two small queues of item indices; the capacity bounds images in memory. A batch stage needs two
    /// batches queued: one for the GPU to work on, one being filled by the readers.
    std::size_t queue_capacity() const;
    void finish(Item& it);
    void log_done(const Item& it);
    template <class Fn>
    void guarded(Item& it, Fn&& fn);
    void load_loop();
    std::vector<std::pair<Device, int>> device_workers() const;
    void device_worker(const Device& d, int rank);
    bool gpu_worker_starts(const Device& d, int rank);
    double warm_up_gpu(const Device& d);
    void batch_loop(const Device& d, Clock::time_point started, double library_ms);
    void end_batch(std::vector<Item*>& gpu, const std::string& batch_error, double batch_ms);
    void item_loop(const Device& d);
    void store_loop();
    void mark_ready(int ordinal);
    void processor_left();

    std::vector<Item>& items_;
    const Stages& stages_;
    const RunOptions& opt_;
    const Clock::time_point t0_;
    const int threads_;
    MemoryBudget budget_;  ///< RunOptions::max_memory; the items' shares (Item::memory) are released in finish()
    const std::vector<Device> devices_;
    std::mutex log_mutex_;
    std::atomic<std::size_t> done_{0}, failed_{0};
    Progress progress_;
    const bool batched_;
    const std::size_t batch_;
    BoundedQueue<std::size_t> to_process_, to_store_;
    std::atomic<std::size_t> next_load_{0};
    std::atomic<int> loaders_left_;
    std::atomic<int> processors_left_{0};
    // A GPU's workers warm up one after the other: measured on an H100, two workers warming up together
    // made the first one ready 0.5 s later than one alone (they contend in the driver), while the GPU could
    // already be working. Worker k starts its warm-up once worker k-1 of its GPU is ready (or has left).
    std::mutex ready_mutex_;
    std::condition_variable ready_cv_;
    std::map<int, int> ready_per_gpu_;
    std::atomic<std::size_t> taken_{0};  // items the GPU workers took from the queue
};

std::size_t PipelineRun::queue_capacity() const {
    std::size_t gpu_workers = 0;
    for (auto& d : devices_)
        if (d.cuda()) gpu_workers += static_cast<std::size_t>(workers_per_gpu());
    std::size_t cap = static_cast<std::size_t>(threads_) * 2 + 2;
    if (batched_) cap = std::max(cap, (gpu_workers + 1) * batch_);
    return cap;
}

void PipelineRun::finish(Item& it) {
    it.memory.release();
    std::lock_guard<std::mutex> l(log_mutex_);
    if (!it.error.empty()) {
        ++failed_;
        ++run_counts().failed;
        progress_.clear();
        std::fprintf(stderr, "imghist: %s\n", it.error.c_str());
    } else {
        ++done_;
        ++run_counts().done;
        log_done(it);
    }
    progress_.draw(done_, failed_, std::chrono::duration<double>(Clock::now() - t0_).count());
}

void PipelineRun::log_done(const Item& it) {
    if (opt_.verbose) {
        progress_.clear();
        std::string t;
        const char* names[] = {"read+decode", "process", "encode+write"};
        for (std::size_t k = 0; k < it.stage_ms.size() && k < 3; ++k)
            t += std::string(k ? ", " : "") + names[k] + " " + std::to_string(static_cast<int>(it.stage_ms[k] + 0.5)) + " ms";
        std::fprintf(stderr, "imghist: %s: %s (%s)\n", it.input.path.c_str(), t.c_str(), opt_.verbose_device.c_str());
    }
    if (!it.note.empty()) {
        // Notes are results (e.g. the threshold): stdout, unless the image itself goes there. One line each:
        // the file's name is escaped (a name may hold a line break).
        progress_.clear();
        std::FILE* f = it.output == "-" ? stderr : stdout;
        errno = 0;
        const int written = opt_.prefix_notes ? std::fprintf(f, "%s: %s\n", text_name(it.input.path).c_str(), it.note.c_str())
                                              : std::fprintf(f, "%s\n", it.note.c_str());
        if ((std::fflush(f) != 0 || written < 0) && f == stdout) stdout_failed(errno);
    }
}

// Every message names the file: library errors that do not are prefixed with the input's name.
template <class Fn>
void PipelineRun::guarded(Item& it, Fn&& fn) {
    try {
        const auto start = Clock::now();
        fn();
        it.stage_ms.push_back(ms_between(start, Clock::now()));
    } catch (const std::exception& e) {
        it.error = file_message(display_name(it.input.path), e, it.output.empty() ? "" : display_name(it.output, true));
    }
}

void PipelineRun::load_loop() {
    for (;;) {
        std::size_t i = next_load_.fetch_add(1);
        if (i >= items_.size()) break;
        Item& it = items_[i];
        if (opt_.max_memory) it.memory = MemoryReservation(&budget_);
        guarded(it, [&] { stages_.load(it); });
        if (!it.error.empty()) {
            finish(it);
            continue;
        }
        if (batched_ && !it.gpu) {
            // Not for the batch stage: straight to the store threads, which process it on the CPU. (Through
            // the GPU workers' queue it would wait for their start-up.)
            it.deferred = true;
            to_store_.push(i);
            continue;
        }
        to_process_.push(i);
    }
    if (--loaders_left_ == 0) to_process_.close();
}

// GPU workers: Stages::workers_per_gpu per GPU with a batch stage, one otherwise; the CPU backend gets as
// many workers as there are threads.
std::vector<std::pair<Device, int>> PipelineRun::device_workers() const {
    std::vector<std::pair<Device, int>> workers;  // device, and the worker's rank among that GPU's workers
    for (auto& d : devices_) {
        if (d.cuda()) {
            for (int t = 0; t < workers_per_gpu(); ++t) workers.emplace_back(d, t);
        } else {
            Device one = d;
            one.cpu_threads = threads_ > 1 ? 1 : 0;  // parallel over images, not within one
            for (int t = 0; t < threads_; ++t) workers.emplace_back(one, 0);
        }
    }
    return workers;
}

void PipelineRun::mark_ready(int ordinal) {
    {
        std::lock_guard<std::mutex> l(ready_mutex_);
        ++ready_per_gpu_[ordinal];
    }
    ready_cv_.notify_all();
}

void PipelineRun::processor_left() {
    if (--processors_left_ == 0) to_store_.close();
}

/// Whether a GPU worker starts at all (it has left, counted as ready, when not).
bool PipelineRun::gpu_worker_starts(const Device& d, int rank) {
    if (rank > 0) {
        {
            std::unique_lock<std::mutex> l(ready_mutex_);
            ready_cv_.wait(l, [&] { return ready_per_gpu_[d.ordinal] >= rank; });
        }
        // A later worker pays only with work left for it: its warm-up takes about as long as four batches
        // (H100), and the run's end would wait for it.
        if (batched_ && items_.size() <= taken_.load() + 4 * batch_) {
            mark_ready(d.ordinal);  // the next worker decides for itself
            return false;
        }
    }
    // A batch stage's worker starts its GPU only once a file for it is queued (the first one is, a few
    // milliseconds into the run): a run whose files all take the CPU path (other formats, JPEGs the GPU
    // does not take) does not wait at its end for a GPU's start-up (0.9 s on an H100).
    if (batched_ && !to_process_.wait_nonempty()) {
        mark_ready(d.ordinal);
        if (stages_.trace) stages_.trace("worker on " + describe(d) + ": no file for the GPU in this run, not started");
        return false;
    }
    return true;
}

/// Creates the GPU's context and this thread's filter workspace now, while the first images are still
/// being decoded (together they take a good part of a second); an error here surfaces again, per file, in
/// the real calls. The library's part and the batch stage's (nvJPEG handles and states) run side by side.
/// Returns the library's part in milliseconds.
double PipelineRun::warm_up_gpu(const Device& d) {
    double library_ms = 0;
    std::thread library([&] {
        const auto lt = Clock::now();
        try {
            imghist::CudaHistogrammer warm(d.ordinal);
            std::uint8_t tiny[64 * 64] = {};
            const imghist::ImageView v = imghist::ImageView::host(tiny, 64, 64);
            imghist::FilterOptions fo;
            fo.backend = imghist::Backend::Cuda;
            fo.device = d.ordinal;
            imghist::equalize_hist(v, v, fo);
        } catch (const std::exception&) {
        }
        library_ms = ms_between(lt, Clock::now());
    });
    if (stages_.warm_up) {
        try {
            stages_.warm_up(d);
        } catch (const std::exception&) {
        }
    }
    library.join();
    mark_ready(d.ordinal);
    return library_ms;
}

void PipelineRun::device_worker(const Device& d, int rank) {
    if (d.cuda() && !gpu_worker_starts(d, rank)) {
        processor_left();
        return;
    }
    const auto started = Clock::now();
    const double library_ms = d.cuda() ? warm_up_gpu(d) : 0;
    if (batched_ && d.cuda())
        batch_loop(d, started, library_ms);
    else
        item_loop(d);
    processor_left();
}

// Batches: items the batch stage does not take went straight to the store threads (load_loop).
void PipelineRun::batch_loop(const Device& d, Clock::time_point started, double library_ms) {
    const auto ready = Clock::now();
    double waited = 0, busy = 0;
    std::size_t batches = 0, images = 0;
    for (;;) {
        const auto asked = Clock::now();
        std::vector<std::size_t> got = to_process_.pop_batch(batch_);
        taken_ += got.size();
        waited += ms_between(asked, Clock::now());
        if (got.empty()) break;
        std::vector<Item*> gpu;
        for (std::size_t i : got) gpu.push_back(&items_[i]);
        const auto start = Clock::now();
        std::string batch_error;
        try {
            stages_.process_batch(gpu, d);
        } catch (const std::exception& e) {
            batch_error = user_message(e);  // the whole batch failed (e.g. the GPU ran out of memory)
        }
        const double batch_ms = ms_between(start, Clock::now());
        busy += batch_ms;
        ++batches;
        images += gpu.size();
        if (!batch_error.empty()) {
            std::lock_guard<std::mutex> l(log_mutex_);
            progress_.clear();
            std::fprintf(stderr, "imghist: %s: GPU batch failed (%s); its files go through the CPU codecs\n",
                         describe(d).c_str(), batch_error.c_str());
        }
        end_batch(gpu, batch_error, batch_ms);
    }
    if (stages_.trace) {
        char line[256];
        std::snprintf(line, sizeof line,
                      "worker on %s: start-up %.1f ms (library %.1f ms; from the run's start %.1f ms), "
                      "%zu batches, %zu images, waiting for input %.1f ms, batch work %.1f ms, ended at %.1f ms",
                      describe(d).c_str(), ms_between(started, ready), library_ms, ms_between(t0_, ready), batches,
                      images, waited, busy, ms_between(t0_, Clock::now()));
        stages_.trace(line);
    }
}

/// Hands a finished batch's items on. When the GPU failed as a whole (out of memory, a driver error), the
/// batch's files that still have their bytes go through the CPU codecs instead, as in a CPU run.
void PipelineRun::end_batch(std::vector<Item*>& gpu, const std::string& batch_error, double batch_ms) {
    for (Item* it : gpu) {
        if (!batch_error.empty() && it->error.empty() && !it->jpeg.empty()) {
            if (stages_.decode_kept) {
                it->deferred = true;
                it->encoded = Bytes();
            } else {
                it->error = display_name(it->input.path) + ": " + batch_error;
            }
        }
        it->stage_ms.push_back(batch_ms);
        if (!it->error.empty()) {
            it->image = Image();
            it->jpeg = Bytes();
            it->encoded = Bytes();
            finish(*it);
            continue;
        }
        to_store_.push(static_cast<std::size_t>(it - items_.data()));
    }
}

void PipelineRun::item_loop(const Device& d) {
    while (auto i = to_process_.pop()) {
        Item& it = items_[*i];
        it.deferred = false;  // processed here
        guarded(it, [&] { stages_.process(it, d); });
        if (!it.error.empty() || !stages_.store) {
            it.image = Image();
            finish(it);
            continue;
        }
        to_store_.push(*i);
    }
}

// Deferred items (batch runs) are processed here on the CPU backend, one image per thread.
void PipelineRun::store_loop() {
    Device cpu_one{imghist::Backend::Cpu, -1};
    cpu_one.cpu_threads = threads_ > 1 ? 1 : 0;
    while (auto i = to_store_.pop()) {
        Item& it = items_[*i];
        if (it.deferred && !it.jpeg.empty() && stages_.decode_kept) guarded(it, [&] { stages_.decode_kept(it); });
        if (it.deferred && it.error.empty()) guarded(it, [&] { stages_.process(it, cpu_one); });
        if (it.error.empty() && stages_.store) guarded(it, [&] { stages_.store(it); });
        it.image = Image();
        it.planes = JpegPlanes();
        it.jpeg = Bytes();
        it.encoded = Bytes();
        finish(it);
    }
}

Summary PipelineRun::run() {
    std::vector<std::thread> loaders, processors, storers;
    for (int t = 0; t < threads_; ++t) loaders.emplace_back([this] { load_loop(); });
    const auto workers = device_workers();
    processors_left_ = static_cast<int>(workers.size());
    for (const auto& [d, rank] : workers) processors.emplace_back([this, d = d, rank = rank] { device_worker(d, rank); });
    const bool storing = stages_.store || batched_;
    for (int t = 0; t < (storing ? threads_ : 0); ++t) storers.emplace_back([this] { store_loop(); });
    if (!storing) to_store_.close();
    for (auto& th : loaders) th.join();
    const auto loaded = Clock::now();
    for (auto& th : processors) th.join();
    const auto processed = Clock::now();
    for (auto& th : storers) th.join();
    if (stages_.trace) {
        auto at = [&](Clock::time_point t) { return std::to_string(ms_between(t0_, t)); };
        stages_.trace("run: reading done at " + at(loaded) + " ms, processing at " + at(processed) + " ms, writing at " +
                      at(Clock::now()) + " ms");
    }
    Summary s;
    s.done = done_;
    s.failed = failed_;
    s.seconds = std::chrono::duration<double>(Clock::now() - t0_).count();
    {
        std::lock_guard<std::mutex> l(log_mutex_);
        progress_.draw(done_, failed_, s.seconds, true);
    }
    if (opt_.verbose) {
        rusage ru{};
        if (getrusage(RUSAGE_SELF, &ru) == 0)  // ru_maxrss: KiB on Linux
            std::fprintf(stderr, "imghist: peak memory %s (resident); memory budget %s (--max-memory)\n",
                         format_bytes(static_cast<std::uint64_t>(ru.ru_maxrss) * 1024).c_str(),
                         opt_.max_memory ? format_bytes(opt_.max_memory).c_str() : "none");
    }
    return s;
}

}  // namespace

Summary run_pipeline(std::vector<Item>& items, const Stages& stages, const RunOptions& opt) {
    RunCounts& counts = run_counts();
    counts.done = 0;
    counts.failed = 0;
    counts.skipped = opt.skipped;
    counts.total = items.size() + opt.skipped;
    return PipelineRun(items, stages, opt).run();
}

std::string summary_line(const Summary& s) {
    char buf[256];
    std::size_t n = s.done + s.failed;
    std::snprintf(buf, sizeof buf, "done %zu, failed %zu, skipped %zu in %.2f s (%.1f images/s)", s.done, s.failed,
                  s.skipped, s.seconds, s.seconds > 0 ? n / s.seconds : 0.0);
    std::string line = buf;
    if (!s.unsupported.empty()) {
        const std::size_t shown = std::min<std::size_t>(5, s.unsupported.size());
        line += "; skipped " + std::to_string(s.unsupported.size()) + " unsupported: ";
        for (std::size_t i = 0; i < shown; ++i) line += (i ? ", " : "") + s.unsupported[i];
        if (shown < s.unsupported.size()) line += ", ... (" + std::to_string(s.unsupported.size() - shown) + " more)";
    }
    return line;
}

std::string nothing_processed(const Summary& s, std::size_t outside_shard) {
    if (s.done || s.failed || s.skipped || outside_shard) return {};
    if (s.unsupported.empty()) return "nothing processed: no image files found";
    return "nothing processed: none of the " + std::to_string(s.unsupported.size()) +
           " files found is in a format imghist reads (PNG, JPEG, TIFF, WebP, BMP, TGA, PNM)";
}

}  // namespace cli
