#include "pipeline/pipeline.hpp"

#include <dirent.h>
#include <glob.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
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

// `ancestors` holds the folders from the root down to this one: a symbolic link back to any of them is a
// loop, reported and not followed (a link to a folder elsewhere is followed, as find -L does).
void walk(const std::string& root, const std::string& rel_dir, bool recursive, std::vector<InputFile>& out,
          std::set<DirId>& ancestors, std::vector<std::string>* unsupported) {
    std::string dir = rel_dir.empty() ? root : root + "/" + rel_dir;
    struct stat dst {};
    if (stat(dir.c_str(), &dst) != 0) fail_io(dir, "cannot list folder");
    const DirId id{dst.st_dev, dst.st_ino};
    if (!ancestors.insert(id).second) {
        std::fprintf(stderr, "imghist: %s: symbolic link loop (a folder that contains it), not followed\n", dir.c_str());
        return;
    }
    DIR* d = opendir(dir.c_str());
    if (!d) fail_io(dir, "cannot list folder");
    std::vector<std::string> names;
    while (dirent* e = readdir(d)) {
        std::string n = e->d_name;
        if (n.empty() || n[0] == '.') continue;  // hidden files, and our own temporaries
        names.push_back(n);
    }
    closedir(d);
    std::sort(names.begin(), names.end());
    for (auto& n : names) {
        std::string rel = rel_dir.empty() ? n : rel_dir + "/" + n;
        std::string full = root + "/" + rel;
        if (is_directory(full)) {
            if (recursive) walk(root, rel, recursive, out, ancestors, unsupported);
        } else if (is_image_name(n)) {
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
    Progress(std::size_t total, bool enabled) : total_(total), enabled_(enabled && isatty(2)) {}
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
}  // namespace

Summary run_pipeline(std::vector<Item>& items, const Stages& stages, const RunOptions& opt) {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    const int threads = opt.threads > 0 ? opt.threads : hardware_threads();
    const std::vector<Device> devices = opt.devices.empty() ? std::vector<Device>{Device{}} : opt.devices;

    std::mutex log_mutex;
    std::atomic<std::size_t> done{0}, failed{0};
    Progress progress(items.size(), opt.progress && !opt.quiet);

    auto finish = [&](Item& it) {
        std::lock_guard<std::mutex> l(log_mutex);
        if (!it.error.empty()) {
            ++failed;
            progress.clear();
            std::fprintf(stderr, "imghist: %s\n", it.error.c_str());
        } else {
            ++done;
            if (opt.verbose) {
                progress.clear();
                std::string t;
                const char* names[] = {"read+decode", "process", "encode+write"};
                for (std::size_t k = 0; k < it.stage_ms.size() && k < 3; ++k)
                    t += std::string(k ? ", " : "") + names[k] + " " + std::to_string(static_cast<int>(it.stage_ms[k] + 0.5)) + " ms";
                std::fprintf(stderr, "imghist: %s: %s (%s)\n", it.input.path.c_str(), t.c_str(), opt.verbose_device.c_str());
            }
            if (!it.note.empty()) {
                // Notes are results (e.g. the threshold): stdout, unless the image itself goes there.
                progress.clear();
                std::FILE* f = it.output == "-" ? stderr : stdout;
                if (opt.prefix_notes)
                    std::fprintf(f, "%s: %s\n", it.input.path.c_str(), it.note.c_str());
                else
                    std::fprintf(f, "%s\n", it.note.c_str());
                std::fflush(f);
            }
        }
        progress.draw(done, failed, std::chrono::duration<double>(clock::now() - t0).count());
    };
    // Every message names the file: library errors that do not are prefixed with the input's name.
    auto guarded = [&](Item& it, auto&& fn) {
        try {
            const auto start = clock::now();
            fn();
            it.stage_ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - start).count());
        } catch (const std::exception& e) {
            std::string msg = e.what();
            std::string name = display_name(it.input.path);
            if (msg.rfind(name, 0) != 0 && (it.output.empty() || msg.rfind(display_name(it.output, true), 0) != 0))
                msg = name + ": " + msg;
            it.error = msg;
        }
    };

    // Two small queues of item indices; the capacity bounds images in memory. A batch stage needs two
    // batches queued: one for the GPU to work on, one being filled by the readers.
    const bool batched = static_cast<bool>(stages.process_batch);
    const std::size_t batch = static_cast<std::size_t>(std::max(1, stages.batch));
    std::size_t gpu_workers = 0;
    for (auto& d : devices)
        if (d.cuda()) gpu_workers += static_cast<std::size_t>(batched ? std::max(1, stages.workers_per_gpu) : kWorkersPerGpu);
    std::size_t cap = static_cast<std::size_t>(threads) * 2 + 2;
    if (batched) cap = std::max(cap, (gpu_workers + 1) * batch);
    BoundedQueue<std::size_t> to_process(cap), to_store(cap);
    std::atomic<std::size_t> next_load{0};

    std::vector<std::thread> loaders, processors, storers;
    std::atomic<int> loaders_left{threads};
    for (int t = 0; t < threads; ++t)
        loaders.emplace_back([&] {
            for (;;) {
                std::size_t i = next_load.fetch_add(1);
                if (i >= items.size()) break;
                Item& it = items[i];
                guarded(it, [&] { stages.load(it); });
                if (!it.error.empty()) {
                    finish(it);
                    continue;
                }
                if (batched && !it.gpu) {
                    // Not for the batch stage: straight to the store threads, which process it on the CPU. (Through
                    // the GPU workers' queue it would wait for their start-up.)
                    it.deferred = true;
                    to_store.push(i);
                    continue;
                }
                to_process.push(i);
            }
            if (--loaders_left == 0) to_process.close();
        });
    // GPU workers: Stages::workers_per_gpu per GPU with a batch stage, one otherwise; the CPU backend gets as
    // many workers as there are threads.
    std::vector<std::pair<Device, int>> workers;  // device, and the worker's rank among that GPU's workers
    for (auto& d : devices) {
        if (d.cuda()) {
            const int per_gpu = batched ? std::max(1, stages.workers_per_gpu) : kWorkersPerGpu;
            for (int t = 0; t < per_gpu; ++t) workers.emplace_back(d, t);
        } else {
            Device one = d;
            one.cpu_threads = threads > 1 ? 1 : 0;  // parallel over images, not within one
            for (int t = 0; t < threads; ++t) workers.emplace_back(one, 0);
        }
    }
    // A GPU's workers warm up one after the other: measured on an H100, two workers warming up together
    // made the first one ready 0.5 s later than one alone (they contend in the driver), while the GPU could
    // already be working. Worker k starts its warm-up once worker k-1 of its GPU is ready (or has left).
    std::mutex ready_mutex;
    std::condition_variable ready_cv;
    std::map<int, int> ready_per_gpu;
    std::atomic<std::size_t> taken{0};  // items the GPU workers took from the queue
    std::atomic<int> processors_left{static_cast<int>(workers.size())};
    for (const auto& [d, rank] : workers)
        processors.emplace_back([&, d = d, rank = rank] {
            // Create the GPU's context and this thread's filter workspace now, while the first images are
            // still being decoded (together they take a good part of a second); an error here surfaces
            // again, per file, in the real calls.
            if (d.cuda() && rank > 0) {
                {
                    std::unique_lock<std::mutex> l(ready_mutex);
                    ready_cv.wait(l, [&] { return ready_per_gpu[d.ordinal] >= rank; });
                }
                // A later worker pays only with work left for it: its warm-up takes about as long as four
                // batches (H100), and the run's end would wait for it.
                if (batched && items.size() <= taken.load() + 4 * batch) {
                    {
                        std::lock_guard<std::mutex> l(ready_mutex);
                        ++ready_per_gpu[d.ordinal];  // the next worker decides for itself
                    }
                    ready_cv.notify_all();
                    if (--processors_left == 0) to_store.close();
                    return;
                }
            }
            // A batch stage's worker starts its GPU only once a file for it is queued (the first one is, a few
            // milliseconds into the run): a run whose files all take the CPU path (other formats, JPEGs the GPU
            // does not take) does not wait at its end for a GPU's start-up (0.9 s on an H100).
            if (d.cuda() && batched && !to_process.wait_nonempty()) {
                {
                    std::lock_guard<std::mutex> l(ready_mutex);
                    ++ready_per_gpu[d.ordinal];
                }
                ready_cv.notify_all();
                if (stages.trace) stages.trace("worker on " + describe(d) + ": no file for the GPU in this run, not started");
                if (--processors_left == 0) to_store.close();
                return;
            }
            const auto started = clock::now();
            double library_ms = 0;
            if (d.cuda()) {
                // The library's part and the batch stage's (nvJPEG handles and states) side by side.
                std::thread library([&] {
                    const auto lt = clock::now();
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
                    library_ms = std::chrono::duration<double, std::milli>(clock::now() - lt).count();
                });
                if (stages.warm_up) {
                    try {
                        stages.warm_up(d);
                    } catch (const std::exception&) {
                    }
                }
                library.join();
                {
                    std::lock_guard<std::mutex> l(ready_mutex);
                    ++ready_per_gpu[d.ordinal];
                }
                ready_cv.notify_all();
            }
            auto ms = [](clock::time_point a, clock::time_point b) {
                return std::chrono::duration<double, std::milli>(b - a).count();
            };
            const auto ready = clock::now();
            if (batched && d.cuda()) {
                // Batches: items the batch stage does not take go straight to the store threads.
                double waited = 0, busy = 0;
                std::size_t batches = 0, images = 0;
                for (;;) {
                    const auto asked = clock::now();
                    std::vector<std::size_t> got = to_process.pop_batch(batch);
                    taken += got.size();
                    waited += ms(asked, clock::now());
                    if (got.empty()) break;
                    // Only the batch stage's items are queued here (the loaders send the others to the store
                    // threads directly).
                    std::vector<Item*> gpu;
                    for (std::size_t i : got) gpu.push_back(&items[i]);
                    const auto start = clock::now();
                    std::string batch_error;
                    try {
                        stages.process_batch(gpu, d);
                    } catch (const std::exception& e) {
                        batch_error = e.what();  // the whole batch failed (e.g. the GPU ran out of memory)
                    }
                    const double batch_ms = ms(start, clock::now());
                    busy += batch_ms;
                    ++batches;
                    images += gpu.size();
                    if (!batch_error.empty()) {
                        // The GPU failed as a whole (out of memory, a driver error): the batch's files that still
                        // have their bytes go through the CPU codecs instead, as in a CPU run.
                        std::lock_guard<std::mutex> l(log_mutex);
                        progress.clear();
                        std::fprintf(stderr, "imghist: %s: GPU batch failed (%s); its files go through the CPU codecs\n",
                                     describe(d).c_str(), batch_error.c_str());
                    }
                    for (Item* it : gpu) {
                        if (!batch_error.empty() && it->error.empty() && !it->jpeg.empty()) {
                            if (stages.decode_kept) {
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
                        to_store.push(static_cast<std::size_t>(it - items.data()));
                    }
                }
                if (stages.trace) {
                    char line[256];
                    std::snprintf(line, sizeof line,
                                  "worker on %s: start-up %.1f ms (library %.1f ms; from the run's start %.1f ms), "
                                  "%zu batches, %zu images, waiting for input %.1f ms, batch work %.1f ms, ended at %.1f ms",
                                  describe(d).c_str(), ms(started, ready), library_ms, ms(t0, ready), batches, images, waited, busy,
                                  ms(t0, clock::now()));
                    stages.trace(line);
                }
                if (--processors_left == 0) to_store.close();
                return;
            }
            while (auto i = to_process.pop()) {
                Item& it = items[*i];
                it.deferred = false;  // processed here
                guarded(it, [&] { stages.process(it, d); });
                if (!it.error.empty() || !stages.store) {
                    it.image = Image();
                    finish(it);
                    continue;
                }
                to_store.push(*i);
            }
            if (--processors_left == 0) to_store.close();
        });
    // Deferred items (batch runs) are processed here on the CPU backend, one image per thread.
    Device cpu_one{imghist::Backend::Cpu, -1};
    cpu_one.cpu_threads = threads > 1 ? 1 : 0;
    const bool storing = stages.store || batched;
    for (int t = 0; t < (storing ? threads : 0); ++t)
        storers.emplace_back([&] {
            while (auto i = to_store.pop()) {
                Item& it = items[*i];
                if (it.deferred && !it.jpeg.empty() && stages.decode_kept) guarded(it, [&] { stages.decode_kept(it); });
                if (it.deferred && it.error.empty()) guarded(it, [&] { stages.process(it, cpu_one); });
                if (it.error.empty() && stages.store) guarded(it, [&] { stages.store(it); });
                it.image = Image();
                it.planes = JpegPlanes();
                it.jpeg = Bytes();
                it.encoded = Bytes();
                finish(it);
            }
        });
    if (!storing) to_store.close();
    for (auto& th : loaders) th.join();
    const auto loaded = clock::now();
    for (auto& th : processors) th.join();
    const auto processed = clock::now();
    for (auto& th : storers) th.join();
    if (stages.trace) {
        auto at = [&](clock::time_point t) { return std::to_string(std::chrono::duration<double, std::milli>(t - t0).count()); };
        stages.trace("run: reading done at " + at(loaded) + " ms, processing at " + at(processed) + " ms, writing at " +
                     at(clock::now()) + " ms");
    }

    Summary s;
    s.done = done;
    s.failed = failed;
    s.seconds = std::chrono::duration<double>(clock::now() - t0).count();
    {
        std::lock_guard<std::mutex> l(log_mutex);
        progress.draw(done, failed, s.seconds, true);
    }
    return s;
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
