// The folder run's one queue (jobs/pipeline/work_queue.hpp, pipeline.hpp), without a GPU: the CPU
// workers and stand-in batch workers that take files in batches through the same interface a GPU uses
// (pipeline/batch_worker.hpp). Every file gets exactly one output, equal to the CPU path's; a batch worker
// that fails to start leaves the run to the CPU workers with a note; a slow set-up never delays a run the CPU
// workers finish; --device cuda's CPU workers take only what the GPU hands them; and the end-of-run rule gives a
// batch worker the share with which every worker finishes together (against a brute-force search).
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "io/fileio.hpp"
#include "pipeline/batch_worker.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/tuning.hpp"
#include "pipeline/work_queue.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// ---- the end-of-run rule against a brute-force search ------------------------------------------------------

/// The claim with which this worker and the others finish closest together, searched over every claim.
std::size_t searched_share(std::size_t left, std::size_t most, double rate, std::size_t backlog, double others_rate,
                           std::size_t others_backlog) {
    std::size_t best = 0;
    double best_gap = 1e300;
    for (std::size_t x = 0; x <= std::min(left, most); ++x) {
        const double mine = static_cast<double>(backlog + x) / rate;
        const double theirs = static_cast<double>(left - x + others_backlog) / others_rate;
        const double gap = std::abs(mine - theirs);
        if (gap < best_gap - 1e-12) {
            best_gap = gap;
            best = x;
        }
    }
    return best;
}

}  // namespace

TEST_CASE("work queue: a batch worker's claim near the end makes every worker finish together", "[pipeline]") {
    // Rates not measured yet: a full batch (or what is left).
    CHECK(cli::batch_share(1000, 128, 0, 0, 0, 500, 0) == 128);
    CHECK(cli::batch_share(1000, 128, 3000, 0, 0, 0, 0) == 128);
    CHECK(cli::batch_share(50, 128, 0, 0, 0, 0, 0) == 50);
    // Many files left: a full batch.
    CHECK(cli::batch_share(100000, 128, 3000, 256, 0.05, 600, 16) == 128);
    // Near the end: within one file of the claim a search over every claim finds best.
    for (std::size_t left : {10u, 40u, 100u, 300u, 700u})
        for (double rate : {500.0, 3000.0, 6000.0})
            for (std::size_t backlog : {0u, 64u, 256u})
                for (double others : {100.0, 600.0, 2000.0}) {
                    INFO("left " << left << " rate " << rate << " backlog " << backlog << " others " << others);
                    const std::size_t got = cli::batch_share(left, 128, rate, backlog, 0, others, 8);
                    const std::size_t want = searched_share(left, 128, rate, backlog, others, 8);
                    CHECK(got + 1 >= want);
                    CHECK(got <= want + 1);
                }
    // A worker whose own batch would end after everyone else is done takes nothing.
    CHECK(cli::batch_share(20, 128, 3000, 0, 0.5, 600, 0) == 0);
    // Holding more than its share already: nothing.
    CHECK(cli::batch_share(30, 128, 1000, 500, 0, 1000, 0) == 0);
}

TEST_CASE("work queue: every file is taken once; a starting batch worker holds a core; cuda mode waits for it", "[pipeline]") {
    SECTION("CPU workers and a batch worker share the files") {
        cli::WorkQueue q(1000, 4, true);
        const int gpu = q.batch_starting();
        CHECK(q.cpu_allowed() == 3);  // its set-up runs on one core
        REQUIRE(q.batch_joined(gpu));
        std::vector<int> seen(1000, 0);
        std::mutex m;
        std::vector<std::thread> threads;
        for (int r = 0; r < 4; ++r)
            threads.emplace_back([&, r] {
                while (auto t = q.next_for_cpu(r)) {
                    std::lock_guard<std::mutex> l(m);
                    ++seen[t->file];
                    q.cpu_finished(0.001);
                }
            });
        threads.emplace_back([&] {
            for (;;) {
                const auto got = q.claim(gpu, 32, 0, 0, 0, 1.5);  // its threads use 1.5 cores: two CPU places
                if (got.empty()) break;
                std::lock_guard<std::mutex> l(m);
                for (std::size_t f : got) ++seen[f];
            }
            q.batch_left(gpu);
        });
        for (auto& th : threads) th.join();
        for (std::size_t f = 0; f < seen.size(); ++f) {
            INFO("file " << f);
            CHECK(seen[f] == 1);
        }
    }
    SECTION("a running batch worker takes as many CPU places as its host threads use") {
        cli::WorkQueue q(100, 8, true);
        const int gpu = q.batch_starting();
        REQUIRE(q.batch_joined(gpu));
        CHECK(q.cpu_allowed() == 8);  // not measured yet
        q.claim(gpu, 4, 0, 0, 0, 2.3);
        CHECK(q.cpu_allowed() == 5);
        q.batch_left(gpu);
        CHECK(q.cpu_allowed() == 8);
    }
    SECTION("a running batch worker takes a CPU place per host thread, or the cores they use if more") {
        cli::WorkQueue q(100, 16, true);
        const int a = q.batch_starting(), b = q.batch_starting();
        CHECK(q.cpu_allowed() == 14);
        REQUIRE(q.batch_joined(a));
        REQUIRE(q.batch_joined(b));
        q.claim(a, 4, 0, 0, 0, 2.3, 5);  // five threads using 2.3 cores: five places
        CHECK(q.cpu_allowed() == 11);
        q.claim(b, 4, 0, 0, 0, 6.2, 5);  // five threads and nvJPEG's own using 6.2 cores: seven places
        CHECK(q.cpu_allowed() == 4);
        q.batch_left(a);
        CHECK(q.cpu_allowed() == 9);
        q.claim(b, 4, 0, 0, 0, 20.0, 5);  // more than the workers: none is allowed, none below zero
        CHECK(q.cpu_allowed() == 0);
    }
    SECTION("fewer CPU workers than cores: they use the cores the GPUs leave, at most their number") {
        cli::WorkQueue q(100, 8, true, 32);  // --threads 8 on 32 cores
        const int a = q.batch_starting(), b = q.batch_starting();
        REQUIRE(q.batch_joined(a));
        REQUIRE(q.batch_joined(b));
        q.claim(a, 4, 0, 0, 0, 3.0, 9);
        CHECK(q.cpu_allowed() == 8);  // 32 - 9 cores left
        q.claim(b, 4, 0, 0, 0, 3.0, 9);
        CHECK(q.cpu_allowed() == 8);  // 14 left
        q.claim(b, 4, 0, 0, 0, 26.0, 9);
        CHECK(q.cpu_allowed() == 0);  // 32 - 9 - 26 < 0
    }
    SECTION("a GPU that hands most of its files to the CPU workers keeps only the cores it measures") {
        cli::WorkQueue q(100, 16, true);
        const int gpu = q.batch_starting();
        REQUIRE(q.batch_joined(gpu));
        const auto got = q.claim(gpu, 10, 0, 0, 0, 2.5, 9);
        REQUIRE(got.size() == 10);
        CHECK(q.cpu_allowed() == 7);  // nothing handed yet: a core per host thread
        for (int k = 0; k < 5; ++k) q.hand_to_cpu(got[static_cast<std::size_t>(k)], gpu);
        CHECK(q.cpu_allowed() == 7);  // half of its files: still its own work
        q.hand_to_cpu(got[5], gpu);
        CHECK(q.cpu_allowed() == 13);  // most: the CPU workers do the rest of its work; its 2.5 cores stay
    }
    SECTION("--device cuda: the CPU workers take fresh files only once no batch worker is left") {
        cli::WorkQueue q(10, 2, false);
        const int gpu = q.batch_starting();
        std::atomic<int> taken{0};
        std::thread cpu([&] {
            while (q.next_for_cpu(0)) ++taken;
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        CHECK(taken == 0);  // waiting for the GPU
        q.hand_to_cpu(3);   // but what it hands over is taken at once
        for (int k = 0; k < 100 && taken == 0; ++k) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        CHECK(taken == 1);
        q.batch_left(gpu);  // its set-up failed: the CPU takes everything
        cpu.join();
        CHECK(taken == 11);
    }
    SECTION("a batch worker ready after the files are all taken does not join") {
        cli::WorkQueue q(3, 2, true);
        const int gpu = q.batch_starting();
        while (q.files_left()) q.next_for_cpu(0);
        CHECK_FALSE(q.batch_joined(gpu));
    }
}

// ---- runs with stand-in batch workers --------------------------------------------------------------------

namespace {

/// A folder of small text files; the job reverses each file's bytes into the output.
struct Folder {
    fs::path dir, in, out;
    std::vector<cli::Item> items;
    explicit Folder(int files) {
        char tmpl[] = "/tmp/imghist-folder-XXXXXX";
        REQUIRE(mkdtemp(tmpl) != nullptr);
        dir = tmpl;
        in = dir / "in";
        out = dir / "out";
        fs::create_directories(in);
        for (int k = 0; k < files; ++k) {
            const std::string name = "f" + std::to_string(1000 + k) + ".txt";
            std::ofstream(in / name) << "file " << k << " of " << files << std::string(static_cast<std::size_t>(k % 7), '!');
            cli::Item it;
            it.index = items.size();
            it.input = cli::InputFile{(in / name).string(), name};
            it.output = (out / name).string();
            items.push_back(std::move(it));
        }
    }
    ~Folder() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    static std::string read(const fs::path& p) {
        std::ifstream f(p, std::ios::binary);
        std::stringstream ss;
        ss << f.rdbuf();
        return ss.str();
    }
    /// Every input has exactly its reversed bytes as output, and nothing else is in the output folder.
    void check_outputs() const {
        std::set<std::string> names;
        for (const auto& e : fs::directory_iterator(out)) names.insert(e.path().filename().string());
        CHECK(names.size() == items.size());
        for (const cli::Item& it : items) {
            INFO(it.input.rel);
            std::string want = read(it.input.path);
            std::reverse(want.begin(), want.end());
            CHECK(read(it.output) == want);
            CHECK(it.error.empty());
        }
    }
};

/// `slow`: each file's operation takes 2 ms (a run that outlasts a short set-up).
cli::Stages text_stages(bool slow = false) {
    cli::Stages st;
    st.load = [](cli::Item& it) { it.jpeg = cli::read_file(it.input.path); };
    st.process = [slow](cli::Item& it, const cli::Device&) {
        if (slow) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        it.encoded.assign(it.jpeg.rbegin(), it.jpeg.rend());
        it.jpeg = cli::Bytes();
    };
    st.encode = [](cli::Item& it) { return it.encoded; };
    return st;
}

/// A stand-in for a GPU: takes files in batches through RunAccess; each file it keeps goes through the same
/// steps as on the CPU, odd-numbered ones (when `hand_back`) go to the CPU workers.
class FakeWorker final : public cli::BatchWorker {
public:
    FakeWorker(std::chrono::milliseconds setup, bool fails, bool hand_back, std::atomic<std::size_t>& took)
        : setup_(setup), fails_(fails), hand_back_(hand_back), took_(took) {}
    std::string name() const override { return "fake"; }
    bool start(const std::function<bool()>& wanted, std::string& why) override {
        const auto until = Clock::now() + setup_;
        while (Clock::now() < until)
            if (!wanted()) {
                why = "not needed";
                return false;
            } else {
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
        if (fails_) why = "the device said no";
        return !fails_;
    }
    void run(cli::RunAccess& run) override {
        std::size_t held = 0;
        for (;;) {
            cli::BatchStats s;
            s.backlog = held;
            const std::vector<cli::Item*> batch = run.claim(16, s);
            if (batch.empty()) break;
            for (cli::Item* it : batch) {
                if (!run.load(*it)) continue;
                if (hand_back_ && it->index % 2 == 1) {
                    run.to_cpu(*it);
                    continue;
                }
                it->encoded.assign(it->jpeg.rbegin(), it->jpeg.rend());
                it->jpeg = cli::Bytes();
                it->worker = "fake";
                ++took_;
                run.store(*it);
            }
        }
    }
    std::vector<std::string> summary() const override { return {}; }

private:
    std::chrono::milliseconds setup_;
    bool fails_, hand_back_;
    std::atomic<std::size_t>& took_;
};

std::shared_ptr<cli::BatchPlan> fake_plan(std::chrono::milliseconds setup, bool fails, bool hand_back, bool cpu_takes,
                                          std::atomic<std::size_t>& took) {
    auto plan = std::make_shared<cli::BatchPlan>();
    plan->devices = [](std::string&) { return std::vector<cli::Device>{cli::Device{imghist::Backend::Cuda, 0}}; };
    plan->make = [setup, fails, hand_back, &took](const cli::Device&) {
        return std::make_unique<FakeWorker>(setup, fails, hand_back, took);
    };
    plan->load = [](cli::Item& it) { it.jpeg = cli::read_file(it.input.path); };
    plan->cpu_takes_files = cpu_takes;
    plan->say_unavailable = true;
    return plan;
}

cli::RunOptions options(int threads) {
    cli::RunOptions o;
    o.threads = threads;
    o.quiet = true;
    o.progress = false;
    o.make_parent_dirs = true;
    o.devices = {cli::Device{}};
    return o;
}

/// A folder of `files` for two CPU workers and the stand-in batch worker of fake_plan (same arguments);
/// `took` counts the files the stand-in kept. `slow` as text_stages.
struct FakeRun {
    Folder folder;
    std::atomic<std::size_t> took{0};
    cli::Stages stages;
    FakeRun(int files, std::chrono::milliseconds setup, bool fails, bool hand_back, bool cpu_takes, bool slow = false)
        : folder(files), stages(text_stages(slow)) {
        stages.batch = fake_plan(setup, fails, hand_back, cpu_takes, took);
    }
    cli::Summary run() { return cli::run_pipeline(folder.items, stages, options(2)); }
};

/// stderr of `fn`, captured through a file.
template <class Fn>
std::string captured_stderr(Fn&& fn) {
    std::fflush(stderr);
    char tmpl[] = "/tmp/imghist-stderr-XXXXXX";
    const int fd = mkstemp(tmpl);
    REQUIRE(fd >= 0);
    const int saved = dup(2);
    dup2(fd, 2);
    fn();
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    const std::string text = Folder::read(tmpl);
    unlink(tmpl);
    return text;
}

}  // namespace

TEST_CASE("folder run: CPU workers and a batch worker give every file exactly one output, the CPU path's", "[pipeline]") {
    FakeRun r(500, std::chrono::milliseconds(0), false, true, true);
    const cli::Summary s = r.run();
    CHECK(s.done == 500);
    CHECK(s.failed == 0);
    r.folder.check_outputs();
    // Both kinds of worker did files, and the odd ones the batch worker handed back were done on the CPU.
    std::size_t by_fake = 0;
    for (const cli::Item& it : r.folder.items) {
        by_fake += it.worker == "fake";
        if (it.worker == "fake") CHECK(it.index % 2 == 0);
    }
    CHECK(by_fake == r.took.load());
    CHECK(by_fake > 0);
    CHECK(by_fake < 500);
}

TEST_CASE("folder run: a batch worker that fails to start leaves the run to the CPU workers, with a note", "[pipeline]") {
    for (bool cpu_takes : {true, false}) {  // --device auto / all, and --device cuda
        INFO("CPU workers take files: " << cpu_takes);
        // Slow: 60 files of 2 ms on 2 threads outlast the 10 ms set-up.
        FakeRun r(60, std::chrono::milliseconds(10), true, false, cpu_takes, true);
        cli::Summary s;
        const std::string err = captured_stderr([&] { s = r.run(); });
        INFO(err);
        CHECK(s.done == 60);
        CHECK(r.took == 0);
        r.folder.check_outputs();
        CHECK(err.find("imghist: fake: the device said no; its files go to the CPU workers") != std::string::npos);
    }
}

TEST_CASE("folder run: a run the CPU workers finish does not wait for a batch worker's set-up", "[pipeline]") {
    // The stand-in's set-up would take 10 s; the run ends as soon as its files are durable, and the worker
    // never touches them. (The real GPU's set-up is about 1 s.)
    FakeRun r(8, std::chrono::milliseconds(10000), false, false, true);
    const auto t0 = Clock::now();
    const cli::Summary s = r.run();
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    CHECK(s.done == 8);
    CHECK(seconds < 3.0);
    CHECK(r.took == 0);
    r.folder.check_outputs();
}

TEST_CASE("work queue: auto's GPU start waits for the CPU workers' first files and their time for the rest", "[pipeline]") {
    cli::WorkQueue q(100, 2, true);
    std::atomic<int> answer{-1};
    std::thread asker([&] { answer = q.cpu_time_left_exceeds(0.3) ? 1 : 0; });
    const auto a = q.next_for_cpu(0), b = q.next_for_cpu(1);
    REQUIRE(a);
    REQUIRE(b);
    q.cpu_finished(0.01);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(answer == -1);  // one file per worker first
    q.cpu_finished(0.01);
    asker.join();
    CHECK(answer == 1);                           // 98 files at 10 ms on 2 workers: 0.49 s
    CHECK_FALSE(q.cpu_time_left_exceeds(0.6));
    while (q.next_for_cpu(0)) q.cpu_finished(0.01);
    CHECK_FALSE(q.cpu_time_left_exceeds(0.0));    // nothing left
}

TEST_CASE("folder run: a plan that starts devices only when worth it leaves a short run to the CPU", "[pipeline]") {
    FakeRun r(40, std::chrono::milliseconds(0), false, false, true);
    std::atomic<int> probed{0};
    r.stages.batch->devices = [&probed](std::string&) {
        ++probed;
        return std::vector<cli::Device>{cli::Device{imghist::Backend::Cuda, 0}};
    };
    r.stages.batch->start_when_cpu_needs_s = 60;  // far longer than 40 small files take
    const cli::Summary s = r.run();
    CHECK(s.done == 40);
    CHECK(r.took == 0);
    r.folder.check_outputs();
    cli::wait_for_batch_threads();  // the batch thread has decided
    CHECK(probed == 0);
}

TEST_CASE("folder run: CPU workers lower their priority once a batch worker starts its set-up, and only then", "[pipeline]") {
    const auto thread_nice = [] {
        errno = 0;
        const int n = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
        REQUIRE(errno == 0);
        return n;
    };
    const int base = thread_nice();
    for (bool starts : {true, false}) {
        INFO("a batch worker starts: " << starts);
        // 40 slow files: the two CPU workers take them all before the stand-in's 200 ms set-up ends.
        FakeRun r(40, std::chrono::milliseconds(200), false, false, true, true);
        if (!starts) r.stages.batch->start_when_cpu_needs_s = 60;  // never worth it for 40 files
        std::mutex m;
        std::set<int> seen;  // the nice values of the threads that processed files
        const auto process = r.stages.process;
        r.stages.process = [&, process](cli::Item& it, const cli::Device& d) {
            {
                std::lock_guard<std::mutex> l(m);
                seen.insert(thread_nice());
            }
            process(it, d);
        };
        const cli::Summary s = r.run();
        cli::wait_for_batch_threads();
        CHECK(s.done == 40);
        CHECK(r.took == 0);
        r.folder.check_outputs();
        CHECK(seen == std::set<int>{starts ? std::min(19, base + 10) : base});
        CHECK(thread_nice() == base);  // the caller's own thread is left as it was
    }
}

TEST_CASE("folder run: with --device cuda the CPU workers take only what the batch worker hands them", "[pipeline]") {
    FakeRun r(200, std::chrono::milliseconds(100), false, true, false);
    const cli::Summary s = r.run();
    CHECK(s.done == 200);
    r.folder.check_outputs();
    CHECK(r.took == 100);
    for (const cli::Item& it : r.folder.items) CHECK((it.worker == "fake") == (it.index % 2 == 0));
}

TEST_CASE("folder pipeline tuning: --pipeline's keys, defaults and refusals", "[pipeline]") {
    const cli::PipelineTuning d = cli::parse_tuning("");
    CHECK(d.batch == 128);
    CHECK(d.depth == 4);
    CHECK(d.writers == 4);
    CHECK(d.sync == cli::PipelineTuning::Sync::Syncfs);
    CHECK(d.fast_exit);
    CHECK_FALSE(d.blocking_wait);  // the driver's choice: the threads waiting for a GPU keep a core each anyway
    CHECK(cli::spin_wait(d, true, 16, 1));
    CHECK(cli::spin_wait(d, true, 10, 1));              // two cores for each of the decoder and the 4 encoders
    CHECK_FALSE(cli::spin_wait(d, true, 8, 1));         // a small host: they sleep
    CHECK(cli::spin_wait(d, true, 32, 2));              // --device all: every GPU's threads count
    CHECK_FALSE(cli::spin_wait(d, true, 16, 2));
    CHECK_FALSE(cli::spin_wait(d, false, 64, 1));       // a GPU that only decodes for the CPU workers
    CHECK_FALSE(cli::spin_wait(cli::parse_tuning("wait=block"), true, 64, 1));
    CHECK_FALSE(cli::spin_wait(cli::parse_tuning("encoders=8"), true, 16, 1));
    const cli::PipelineTuning t = cli::parse_tuning("batch=256,encoders=6,sync=fdatasync,exit=normal,,pending=64");
    CHECK(t.batch == 256);
    CHECK(t.encoders == 6);
    CHECK(t.sync == cli::PipelineTuning::Sync::Fdatasync);
    CHECK_FALSE(t.fast_exit);
    CHECK(t.pending == 64);
    CHECK(cli::describe(cli::parse_tuning(cli::describe(t))) == cli::describe(t));
    CHECK_THROWS_WITH(cli::parse_tuning("batchsize=3"), Catch::Contains("unknown key 'batchsize'"));
    CHECK_THROWS_WITH(cli::parse_tuning("batch=0"), Catch::Contains("batch=0") && Catch::Contains("from 1 to 1024"));
    CHECK_THROWS_WITH(cli::parse_tuning("depth=two"), Catch::Contains("depth=two"));
    CHECK_THROWS_WITH(cli::parse_tuning("sync=fsync"), Catch::Contains("syncfs or fdatasync"));
    CHECK_THROWS_WITH(cli::parse_tuning("batch"), Catch::Contains("expected key=value"));
}
