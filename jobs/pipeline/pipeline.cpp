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
#include "pipeline/durable_writer.hpp"
#include "pipeline/trace.hpp"
#include "pipeline/tuning.hpp"
#include "pipeline/work_queue.hpp"

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
    struct stat st {};  ///< valid when `stat_ok`
    bool stat_ok = false;
};

/// The visible entries of an open folder, sorted, each classified through the folder's descriptor (so
/// the classification does not depend on the path's length).
std::vector<Entry> list_folder(DIR* d) {
    std::vector<Entry> entries;
    while (dirent* e = readdir(d)) {
        Entry en{e->d_name};
        if (en.name.empty() || en.name[0] == '.') continue;  // hidden files, and our own temporaries
        en.stat_ok = fstatat(dirfd(d), en.name.c_str(), &en.st, 0) == 0;
        en.folder = en.stat_ok && S_ISDIR(en.st.st_mode);
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
            // A FIFO, socket or device with an image's name: reading it could block forever. (An entry that
            // cannot be stat()ed, such as a dangling link, stays: its read names the problem.)
            const std::string kind = e.stat_ok ? special_file_kind(static_cast<unsigned>(e.st.st_mode)) : "";
            if (!kind.empty())
                std::fprintf(stderr, "imghist: %s: is %s, not a regular file; skipped\n", full.c_str(), kind.c_str());
            else
                out.push_back(InputFile{full, rel, e.st.st_dev, e.st.st_ino, e.stat_ok});
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

/// Once a GPU has begun its set-up, a CPU worker yields the cores to the GPUs' host threads (their set-up,
/// reading, the host part of decoding and encoding, writing): one of those threads waiting for a core stalls a
/// whole device, while a CPU worker waiting for one delays one file. The calling thread's nice value goes up by
/// 10 (Linux: setpriority on a thread id); where that is refused, the worker keeps its priority.
void yield_cores_to_gpus() {
    const int nice_increment = 10, nice_max = 19;
    const auto tid = static_cast<id_t>(gettid());
    errno = 0;
    const int now = getpriority(PRIO_PROCESS, tid);
    if (errno == 0) setpriority(PRIO_PROCESS, tid, std::min(nice_max, now + nice_increment));
}

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


using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

// Batch worker threads of the process: a set-up may outlive its run (the run does not wait for it), and a
// normal exit must not tear down the CUDA runtime under it (wait_for_batch_threads).
std::mutex g_batch_m;
std::condition_variable g_batch_cv;
int g_batch_threads = 0;
std::atomic<bool> g_batch_started{false};

struct BatchThread {
    BatchThread() {
        std::lock_guard<std::mutex> l(g_batch_m);
        ++g_batch_threads;
    }
    ~BatchThread() {
        std::lock_guard<std::mutex> l(g_batch_m);
        --g_batch_threads;
        g_batch_cv.notify_all();
    }
};

class PipelineRun;

/// What a run shares with its batch threads, which may outlive it.
struct BatchLaunch {
    BatchLaunch(std::size_t files, int cpu_workers, bool cpu_takes_files)
        : queue(files, cpu_workers, cpu_takes_files, hardware_threads()) {}
    WorkQueue queue;
    std::shared_ptr<BatchPlan> plan;
    std::mutex m;
    PipelineRun* run = nullptr;  ///< null once the run is over: say nothing, touch nothing of it
    bool verbose = false;
    std::vector<std::string> summaries;
    std::vector<std::pair<std::string, std::size_t>> taken;  ///< each joined worker's name and files
    void note(const std::string& line, bool always);
};

/// One run of run_pipeline: CPU workers and batch workers over one WorkQueue, outputs through one
/// DurableWriter. finish() is where every item ends, failed or done.
class PipelineRun {
public:
    PipelineRun(std::vector<Item>& items, const Stages& stages, const RunOptions& opt);
    // The items outlive the run: none may keep a share of this run's budget.
    ~PipelineRun() {
        for (Item& it : items_) it.memory = MemoryReservation();
    }
    Summary run();

    // What a batch worker reaches through RunAccess (WorkerAccess below).
    std::vector<Item*> claim(int id, std::size_t most, const BatchStats& s);
    bool load_for_batch(Item& it);
    void to_cpu(Item& it, int from) { launch_->queue.hand_to_cpu(static_cast<std::size_t>(&it - items_.data()), from); }
    void store(Item& it);
    void finish(Item& it);
    void say(const std::string& line);

private:
    void cpu_worker(int rank);
    void cpu_file(Item& it, bool handed, const Device& d, const std::string& name);
    void log_done(const Item& it);
    template <class Fn>
    void guarded(Item& it, const char* step, Fn&& fn);
    Device cpu_device(int rank) const;
    void warm_up_gpus();
    void launch_batch_workers();
    void trace_summary(double wall_ms) const;

    std::vector<Item>& items_;
    const Stages& stages_;
    const RunOptions& opt_;
    const Clock::time_point t0_;
    const int threads_;
    /// RunOptions::max_memory. A CPU worker binds the item it takes to it (cpu_file); the share is given back
    /// when the output is handed to the writer (store) or the item ends (finish).
    MemoryBudget budget_;
    const std::vector<Device> devices_;
    std::mutex log_mutex_;
    std::atomic<std::size_t> done_{0}, failed_{0};
    Progress progress_;
    std::shared_ptr<BatchLaunch> launch_;
    DurableWriter writer_;
    std::map<int, std::mutex> gpu_locks_;  // GPUs of CPU workers (images decoded on the host): one operation at a time
    std::vector<std::thread> warm_ups_;
    StageClock cpu_clock_;
    StageClock cpu_load_{"  read+decode", 0}, cpu_process_{"  process", 0}, cpu_store_{"  encode+write", 0};
};

void BatchLaunch::note(const std::string& line, bool always) {
    std::lock_guard<std::mutex> l(m);
    if (run && (always || verbose)) run->say(line);
}

/// RunAccess for batch worker `id`: a view of the run that is valid while the worker has joined.
class WorkerAccess final : public RunAccess {
public:
    WorkerAccess(PipelineRun& run, int id) : run_(run), id_(id) {}
    std::vector<Item*> claim(std::size_t most, const BatchStats& s) override { return run_.claim(id_, most, s); }
    bool load(Item& it) override { return run_.load_for_batch(it); }
    void to_cpu(Item& it) override { run_.to_cpu(it, id_); }
    void store(Item& it) override { run_.store(it); }
    void finish(Item& it) override { run_.finish(it); }

private:
    PipelineRun& run_;
    const int id_;
};

DurableWriter::Options writer_options(const RunOptions& opt) {
    const PipelineTuning t = pipeline_tuning();
    DurableWriter::Options o;
    o.sync = t.sync;
    o.sync_threads = t.sync_threads;
    o.pending = t.pending;
    o.make_parent_dirs = opt.make_parent_dirs;
    return o;
}

PipelineRun::PipelineRun(std::vector<Item>& items, const Stages& stages, const RunOptions& opt)
    : items_(items),
      stages_(stages),
      opt_(opt),
      t0_(Clock::now()),
      // No more CPU workers than there are files.
      threads_(static_cast<int>(std::min<std::size_t>(
          opt.threads > 0 ? static_cast<std::size_t>(opt.threads) : static_cast<std::size_t>(hardware_threads()),
          std::max<std::size_t>(1, items.size())))),
      budget_(opt.max_memory),
      devices_(stages.batch || opt.devices.empty() ? std::vector<Device>{Device{}} : opt.devices),
      progress_(items.size(), opt.progress && !opt.quiet && !tracing()),
      launch_(std::make_shared<BatchLaunch>(items.size(), threads_, !stages.batch || stages.batch->cpu_takes_files)),
      writer_(writer_options(opt)),
      cpu_clock_("cpu workers", threads_) {
    for (const Device& d : devices_)
        if (d.cuda()) gpu_locks_[d.ordinal];
    launch_->plan = stages.batch;
    launch_->run = this;
    launch_->verbose = opt.verbose;
}

void PipelineRun::say(const std::string& line) {
    std::lock_guard<std::mutex> l(log_mutex_);
    progress_.clear();
    std::fprintf(stderr, "imghist: %s\n", line.c_str());
}

void PipelineRun::finish(Item& it) {
    it.image = Image();
    it.planes = JpegPlanes();
    it.jpeg = Bytes();
    it.encoded = Bytes();
    it.memory.release();  // after its memory is freed
    std::lock_guard<std::mutex> l(log_mutex_);
    if (!it.error.empty() && run_counts().interrupted) return;  // its temporary was removed: unfinished
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
        for (const auto& [step, ms] : it.stage_ms)
            t += std::string(t.empty() ? "" : ", ") + step + " " + std::to_string(static_cast<int>(ms + 0.5)) + " ms";
        std::fprintf(stderr, "imghist: %s: %s (%s)\n", it.input.path.c_str(), t.c_str(),
                     it.worker.empty() ? opt_.verbose_device.c_str() : it.worker.c_str());
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

// Every message names the file: library errors that do not are prefixed with the input's name. A null `step`
// records no time: the item may be another thread's once `fn` returns.
template <class Fn>
void PipelineRun::guarded(Item& it, const char* step, Fn&& fn) {
    try {
        const auto start = Clock::now();
        fn();
        if (step) it.stage_ms.emplace_back(step, ms_between(start, Clock::now()));
    } catch (const std::exception& e) {
        it.error = file_message(display_name(it.input.path), e, it.output.empty() ? "" : display_name(it.output, true));
    }
}

/// Encodes the output and hands it to the durable writer; the item ends when its round has made it durable.
void PipelineRun::store(Item& it) {
    if (!stages_.encode) {
        finish(it);
        return;
    }
    Bytes b;
    guarded(it, "encode", [&] {
        b = stages_.encode(it);
        it.image = Image();
        it.planes = JpegPlanes();
        it.encoded = Bytes();
    });
    if (!it.error.empty()) {
        finish(it);
        return;
    }
    // The item's share of the memory budget leaves it here: once write() has queued the file, its round may
    // end the item on the sync thread before write() returns, and nothing here touches the item after that.
    // The share is given back once the writer has the bytes (it writes them before returning).
    MemoryReservation share = std::move(it.memory);
    bool queued = false;
    guarded(it, nullptr, [&] {
        writer_.write(it.output, b.data(), b.size(), [this, &it](const std::string& error) {
            if (!error.empty()) it.error = error;
            finish(it);
        });
        queued = true;
    });
    Bytes().swap(b);
    share.release();
    if (!queued) finish(it);  // writing the temporary failed: nothing is pending
}

Device PipelineRun::cpu_device(int rank) const {
    Device d = devices_[static_cast<std::size_t>(rank) % devices_.size()];
    if (!d.cuda()) d.cpu_threads = threads_ > 1 ? 1 : 0;  // parallel over images, not within one
    return d;
}

// The CPU path of one file. A handed-over item was loaded by a batch worker: its kept bytes (Item::jpeg) are
// decoded here, or its pixels are ready.
void PipelineRun::cpu_file(Item& it, bool handed, const Device& d, const std::string& name) {
    if (it.worker.empty()) it.worker = name;
    // The file's share of the memory budget. The decoder takes it from the header, before the pixels are
    // allocated, and this worker waits there while the budget has no room; it holds no other share then,
    // and neither do files waiting in the queue, so the files holding the budget never wait on it. A file a
    // batch worker decoded already is counted at once, without waiting: its memory is spent.
    if (opt_.max_memory) it.memory = MemoryReservation(&budget_);
    if (handed && it.jpeg.empty() && opt_.max_memory) {
        std::uint64_t decoded = it.image.bytes();
        for (const JpegPlane& p : it.planes.planes) decoded += p.data.size();
        it.memory.set_may_wait(false);
        guarded(it, nullptr, [&] { it.memory.ensure(in_flight_bytes(decoded, 0), display_name(it.input.path)); });
        it.memory.set_may_wait(true);
        if (!it.error.empty()) {
            finish(it);
            return;
        }
    }
    if (!handed) {
        StageTimer t(cpu_load_, StageClock::Busy);
        guarded(it, "read+decode", [&] { stages_.load(it); });
    } else if (!it.jpeg.empty() && launch_->plan && launch_->plan->decode_kept) {
        StageTimer t(cpu_load_, StageClock::Busy);
        guarded(it, "decode", [&] { launch_->plan->decode_kept(it); });
    }
    if (it.error.empty()) {
        StageTimer t(cpu_process_, StageClock::Busy);
        if (d.cuda()) {
            std::lock_guard<std::mutex> l(gpu_locks_.at(d.ordinal));
            guarded(it, "process", [&] { stages_.process(it, d); });
        } else {
            guarded(it, "process", [&] { stages_.process(it, d); });
        }
    }
    if (!it.error.empty()) {
        finish(it);
        return;
    }
    StageTimer t(cpu_store_, StageClock::Busy);
    store(it);
}

void PipelineRun::cpu_worker(int rank) {
    const Device d = cpu_device(rank);
    const std::string name = describe(d);
    bool yielded = false;
    StageTimer timer(cpu_clock_);
    while (const auto taken = launch_->queue.next_for_cpu(rank)) {
        timer.to(StageClock::Busy);
        if (!yielded && launch_->queue.batch_started()) {
            yield_cores_to_gpus();
            yielded = true;
        }
        const auto start = Clock::now();
        cpu_file(items_[taken->file], taken->handed, d, name);
        launch_->queue.cpu_finished(ms_between(start, Clock::now()) / 1e3);
        cpu_clock_.add_count(1);
        timer.to(StageClock::WaitIn);
    }
}

std::vector<Item*> PipelineRun::claim(int id, std::size_t most, const BatchStats& s) {
    std::vector<Item*> out;
    for (std::size_t i : launch_->queue.claim(id, most, s.rate, s.backlog, s.latency_s, s.host_cores, s.host_threads))
        out.push_back(&items_[i]);
    return out;
}

bool PipelineRun::load_for_batch(Item& it) {
    guarded(it, "read", [&] { launch_->plan->load(it); });
    if (it.error.empty()) return true;
    finish(it);
    return false;
}

/// Creates each GPU's context and this run's workspace on it while the first files are read (together a good
/// part of a second); an error here surfaces again, per file, in the real calls. It holds the GPU's lock, so
/// the first operation there waits for it rather than doing the same at once.
void PipelineRun::warm_up_gpus() {
    for (auto& [ordinal, lock] : gpu_locks_) {
        warm_ups_.emplace_back([ordinal = ordinal, &lock = lock] {
            std::lock_guard<std::mutex> held(lock);
            try {
                std::uint8_t tiny[64 * 64] = {};
                const imghist::ImageView v = imghist::ImageView::host(tiny, 64, 64);
                imghist::FilterOptions fo;
                fo.backend = imghist::Backend::Cuda;
                fo.device = ordinal;
                imghist::equalize_hist(v, v, fo);
            } catch (const std::exception&) {
            }
        });
    }
}

// The batch threads: one that finds the devices (loading the driver takes a while), then one per device that
// sets it up and, when files are still left, runs it. They hold `launch` (which outlives the run); the run
// itself only while a worker has joined (the run waits for those).
void PipelineRun::launch_batch_workers() {
    g_batch_started = true;
    std::shared_ptr<BatchLaunch> launch = launch_;
    // Registered before any CPU worker starts (with --device cuda they wait for the GPUs from the first file),
    // unless the plan starts the devices only when the CPU workers' first files say a GPU is worth starting.
    const double wait_s = launch->plan->start_when_cpu_needs_s;
    const int first_probe = wait_s > 0 ? -1 : launch->queue.batch_starting();  // finding the devices holds a core
    std::thread([launch, first_probe, wait_s] {
        BatchThread alive;
        const bool always = launch->plan->say_unavailable;
        std::string why = "not needed: every file was taken";
        int probe = first_probe;
        bool worth = true;
        if (wait_s > 0) {
            worth = launch->queue.cpu_time_left_exceeds(wait_s);
            if (worth) probe = launch->queue.batch_starting();
            else why = "not needed: the CPU workers finish the files sooner than a GPU starts";
        }
        std::vector<Device> devices;
        if (worth && launch->queue.files_left()) devices = launch->plan->devices(why);
        trace_line("batch devices: " + std::to_string(devices.size()) + (devices.empty() ? " (" + why + ")" : ""));
        if (devices.empty()) launch->note("no GPU takes files in this run (" + why + "); the CPU workers take them", always);
        for (const Device& d : devices) {
            const int id = launch->queue.batch_starting();
            std::thread([launch, d, id, always] {
                BatchThread alive_too;
                std::unique_ptr<BatchWorker> w;
                std::string failure;
                bool ok = false;
                try {
                    w = launch->plan->make(d);
                    ok = w->start([launch] { return launch->queue.files_left(); }, failure);
                } catch (const std::exception& e) {
                    failure = user_message(e);
                }
                const std::string name = w ? w->name() : describe(d);
                if (!ok) {
                    if (failure != "not needed") launch->note(name + ": " + failure + "; its files go to the CPU workers", always);
                    launch->queue.batch_left(id);
                    return;
                }
                if (!launch->queue.batch_joined(id)) return;  // the run is over (or has nothing left): not touched
                PipelineRun* run = nullptr;
                {
                    std::lock_guard<std::mutex> l(launch->m);
                    run = launch->run;  // set while a worker may join: the run waits for joined workers
                }
                WorkerAccess access(*run, id);
                w->run(access);
                {
                    std::lock_guard<std::mutex> l(launch->m);
                    for (const std::string& line : w->summary()) launch->summaries.push_back(line);
                    launch->taken.emplace_back(name, launch->queue.batch_taken(id));
                }
                launch->queue.batch_left(id);
            }).detach();
        }
        if (probe >= 0) launch->queue.batch_left(probe);
    }).detach();
}

void PipelineRun::trace_summary(double wall_ms) const {
    if (!tracing()) return;
    std::string split = "CPU workers " + std::to_string(launch_->queue.cpu_taken());
    for (const auto& [name, n] : launch_->taken) split += ", " + name + " " + std::to_string(n);
    char head[256];
    std::snprintf(head, sizeof head, "run: %zu files in %.3f s (%.0f files/s); ", items_.size(), wall_ms / 1e3,
                  wall_ms > 0 ? items_.size() / (wall_ms / 1e3) : 0.0);
    trace_line(head + split + "; " + describe(pipeline_tuning()));
    trace_line(cpu_clock_.summary(wall_ms, "files"));
    for (const StageClock* c : {&cpu_load_, &cpu_process_, &cpu_store_})
        trace_line(c->name() + ": " + std::to_string(c->ms(StageClock::Busy) / 1e3) + " s");
    trace_line(writer_.summary(wall_ms));
    for (const std::string& line : launch_->summaries) trace_line(line);
}

Summary PipelineRun::run() {
    warm_up_gpus();
    if (stages_.batch && !items_.empty()) launch_batch_workers();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads_; ++t) workers.emplace_back([this, t] {
            name_this_thread("ih:cpu" + std::to_string(t));
            cpu_worker(t);
        });
    for (auto& th : workers) th.join();
    // The CPU workers end once no file is left and no batch worker that joined is still at work.
    launch_->queue.close();
    {
        std::lock_guard<std::mutex> l(launch_->m);
        launch_->run = nullptr;
    }
    for (auto& th : warm_ups_) th.join();
    const auto processed = Clock::now();
    writer_.finish();
    const double wall = ms_between(t0_, Clock::now());
    if (tracing())
        trace_line("run: workers done at " + std::to_string(ms_between(t0_, processed)) + " ms, last output durable at " +
                   std::to_string(wall) + " ms");
    trace_summary(wall);
    Summary s;
    s.done = done_;
    s.failed = failed_;
    s.seconds = wall / 1e3;
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

void wait_for_batch_threads() {
    std::unique_lock<std::mutex> l(g_batch_m);
    g_batch_cv.wait(l, [] { return g_batch_threads == 0; });
}

bool batch_threads_started() { return g_batch_started.load(); }

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
