// The Auto backend for host images (libimghist/internal/imghist/internal/backend_choice.hpp): its rule, driven with chosen timings.
// The library's answers are the same on both backends (the other test files check that case by case); what
// is tested here is which backend the rule picks.
#include <catch2/catch.hpp>

#include "imghist/internal/backend_choice.hpp"

using imghist::Backend;
using imghist::detail::BackendChooser;
using imghist::detail::HostCallClass;
using imghist::detail::HostWork;

namespace {
HostCallClass frame(std::size_t bytes, int threads = 0) {
    HostCallClass c;
    c.work = HostWork::PointFilter;
    c.bytes = bytes;
    c.cpu_threads = threads;
    return c;
}

/// Runs `calls` calls of class c, each "taking" cpu_s or cuda_s; returns how many ran on CUDA.
int drive(BackendChooser& ch, const HostCallClass& c, int calls, double cpu_s, double cuda_s) {
    int on_cuda = 0;
    for (int i = 0; i < calls; ++i) {
        const Backend b = ch.choose(c);
        REQUIRE((b == Backend::Cpu || b == Backend::Cuda));
        on_cuda += b == Backend::Cuda;
        ch.record(c, b, b == Backend::Cuda ? cuda_s : cpu_s);
    }
    return on_cuda;
}
}  // namespace

TEST_CASE("backend choice: settles on the faster backend after measuring both", "[core][backend]") {
    BackendChooser ch;
    const HostCallClass c = frame(1920 * 1080);
    // Settling alternates CUDA, CPU, CUDA, CPU.
    CHECK(ch.choose(c) == Backend::Cuda);
    ch.record(c, Backend::Cuda, 5e-3);  // a first CUDA call that paid for the context
    CHECK(ch.choose(c) == Backend::Cpu);
    ch.record(c, Backend::Cpu, 4e-4);
    CHECK(ch.choose(c) == Backend::Cuda);
    ch.record(c, Backend::Cuda, 2e-4);
    CHECK(ch.choose(c) == Backend::Cpu);
    ch.record(c, Backend::Cpu, 4e-4);
    // CUDA's best (2e-4) beats the CPU's (4e-4): the expensive first call does not count against it. Calls
    // 4-103: all on CUDA but the rechecks at 8, 16, 32 and 64.
    CHECK(drive(ch, c, 100, 4e-4, 2e-4) == 96);

    // The CPU faster: every call but the rechecks runs on the CPU (calls 8, 16, 32, 64, 127 and 255).
    BackendChooser ch2;
    const int cuda_calls = drive(ch2, c, 4 + 2 * BackendChooser::kRecheckEvery, 1e-4, 3e-4);
    CHECK(cuda_calls == BackendChooser::kSamples + 6);
}

TEST_CASE("backend choice: settling timings that paid one-time costs are re-judged early", "[core][backend]") {
    // Both CPU settling calls were cold (3 ms); warm, the CPU takes 1 ms and CUDA 2 ms. The early recheck
    // at call 8 measures the warm CPU, and from then on the CPU runs.
    BackendChooser ch;
    const HostCallClass c = frame(3840 * 2160);
    drive(ch, c, 4, 3e-3, 2e-3);
    CHECK(drive(ch, c, 4, 1e-3, 2e-3) == 4);  // calls 4-7: CUDA, the settled winner
    CHECK(ch.choose(c) == Backend::Cpu);     // call 8: the recheck
    ch.record(c, Backend::Cpu, 1e-3);
    CHECK(drive(ch, c, 7, 1e-3, 2e-3) == 0);  // calls 9-15: the CPU
}

TEST_CASE("backend choice: a recheck re-judges a backend whose speed changed", "[core][backend]") {
    BackendChooser ch;
    const HostCallClass c = frame(8 << 20);
    drive(ch, c, 4, 1e-3, 2e-3);  // the CPU wins at first
    CHECK(ch.choose(c) == Backend::Cpu);
    ch.record(c, Backend::Cpu, 1e-3);
    // Now the CPU is busy (10 ms a call) and CUDA still takes 2 ms: within kRecent CPU timings of 10 ms the
    // CPU's recent best rises above CUDA's, and the rechecks keep CUDA's timing fresh.
    const int n = BackendChooser::kRecheckEvery * 2;
    const int on_cuda = drive(ch, c, n, 10e-3, 2e-3);
    CHECK(on_cuda > n / 2);
}

TEST_CASE("backend choice: classes are separate, and a new thread budget restarts one", "[core][backend]") {
    BackendChooser ch;
    const HostCallClass small = frame(640 * 480), big = frame(7680 * 4320);
    drive(ch, small, 4, 1e-3, 1e-4);  // CUDA wins small
    drive(ch, big, 4, 1e-3, 5e-3);    // the CPU wins big
    CHECK(ch.choose(small) == Backend::Cuda);
    CHECK(ch.choose(big) == Backend::Cpu);
    HostCallClass other = small;
    other.work = HostWork::Histogram;  // another operation: not measured yet, so CUDA is measured first
    CHECK(ch.choose(other) == Backend::Cuda);
    HostCallClass pinned = big;
    pinned.pinned = true;
    CHECK(ch.choose(pinned) == Backend::Cuda);
    HostCallClass one_thread = big;
    one_thread.cpu_threads = 1;  // the CPU timings were taken with all threads
    CHECK(ch.choose(one_thread) == Backend::Cuda);
    ch.reset();
    CHECK(ch.choose(big) == Backend::Cuda);
}
