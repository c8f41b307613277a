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
    // Settling alternates CUDA, CPU, ... until each has kSamples timings after its first call, which is not
    // kept (a first CUDA call pays for the context).
    CHECK(ch.choose(c) == Backend::Cuda);
    ch.record(c, Backend::Cuda, 5e-3);
    CHECK(ch.choose(c) == Backend::Cpu);
    ch.record(c, Backend::Cpu, 4e-3);
    for (int k = 0; k < BackendChooser::kSamples; ++k) {
        CHECK(ch.choose(c) == Backend::Cuda);
        ch.record(c, Backend::Cuda, 2e-4);
        CHECK(ch.choose(c) == Backend::Cpu);
        ch.record(c, Backend::Cpu, 4e-4);
    }
    // CUDA's typical time (2e-4) beats the CPU's (4e-4): calls 6-105 all run on CUDA but the rechecks at 8,
    // 16, 32 and 64.
    CHECK(drive(ch, c, 100, 4e-4, 2e-4) == 96);

    // The CPU faster: every call but the settling ones and the rechecks (8, 16, 32, 64, 127, 255) runs on it.
    BackendChooser ch2;
    const int settle = 2 * (BackendChooser::kSamples + 1);
    const int cuda_calls = drive(ch2, c, settle + 2 * BackendChooser::kRecheckEvery, 1e-4, 3e-4);
    CHECK(cuda_calls == BackendChooser::kSamples + 1 + 6);
}

TEST_CASE("backend choice: a lucky timing costs at most one call on the slower backend", "[core][backend]") {
    // CUDA takes 1 ms; the CPU usually 3 ms, now and then 0.5 ms. Once the CPU has three timings, one lucky
    // timing among its recent four does not move its lower median below CUDA's.
    BackendChooser ch;
    const HostCallClass c = frame(3840 * 2160);
    drive(ch, c, 2, 3e-3, 1e-3);  // the first calls, not kept
    CHECK(ch.choose(c) == Backend::Cuda);
    ch.record(c, Backend::Cuda, 1e-3);
    CHECK(ch.choose(c) == Backend::Cpu);
    ch.record(c, Backend::Cpu, 0.5e-3);  // lucky
    CHECK(ch.choose(c) == Backend::Cuda);
    ch.record(c, Backend::Cuda, 1e-3);
    CHECK(ch.choose(c) == Backend::Cpu);
    ch.record(c, Backend::Cpu, 3e-3);
    // CPU {0.5, 3} ms: its lower median is the lucky 0.5 ms, so with two timings the CPU is tried...
    CHECK(ch.choose(c) == Backend::Cpu);
    ch.record(c, Backend::Cpu, 3e-3);
    // ...and the third (3 ms) makes its lower median 3 ms: back to CUDA.
    CHECK(drive(ch, c, 1, 3e-3, 1e-3) == 1);  // call 7
    CHECK(ch.choose(c) == Backend::Cpu);      // call 8: a recheck
    ch.record(c, Backend::Cpu, 0.5e-3);       // lucky again: CPU {0.5, 3, 3, 0.5}, lower median 0.5 ms
    CHECK(ch.choose(c) == Backend::Cpu);      // one call
    ch.record(c, Backend::Cpu, 3e-3);         // {3, 3, 3, 0.5}: lower median 3 ms
    CHECK(drive(ch, c, 6, 3e-3, 1e-3) == 6);  // calls 10-15 on CUDA
}

TEST_CASE("backend choice: a recheck re-judges a backend whose speed changed", "[core][backend]") {
    BackendChooser ch;
    const HostCallClass c = frame(8 << 20);
    drive(ch, c, 6, 1e-3, 2e-3);  // the CPU wins at first
    CHECK(ch.choose(c) == Backend::Cpu);
    ch.record(c, Backend::Cpu, 1e-3);
    // Now the CPU is busy (10 ms a call) and CUDA still takes 2 ms: within a few CPU timings of 10 ms the
    // CPU's typical time rises above CUDA's, and the rechecks keep CUDA's timing fresh.
    const int n = BackendChooser::kRecheckEvery * 2;
    const int on_cuda = drive(ch, c, n, 10e-3, 2e-3);
    CHECK(on_cuda > n / 2);
}

TEST_CASE("backend choice: settling timings that paid one-time costs are re-judged early", "[core][backend]") {
    // Both kept CPU settling calls were cold (3 ms); warm, the CPU takes 1 ms and CUDA 2 ms. The early
    // rechecks at calls 8 and 16 measure the warm CPU; after the second its lower median is 1 ms.
    BackendChooser ch;
    const HostCallClass c = frame(3840 * 2160);
    drive(ch, c, 6, 3e-3, 2e-3);
    CHECK(drive(ch, c, 2, 1e-3, 2e-3) == 2);   // calls 6-7: CUDA, the settled winner
    CHECK(ch.choose(c) == Backend::Cpu);      // call 8: a recheck (CPU {3, 3, 1} ms: still CUDA after it)
    ch.record(c, Backend::Cpu, 1e-3);
    CHECK(drive(ch, c, 7, 1e-3, 2e-3) == 7);  // calls 9-15
    CHECK(ch.choose(c) == Backend::Cpu);      // call 16: a recheck (CPU {3, 3, 1, 1} ms: lower median 1 ms)
    ch.record(c, Backend::Cpu, 1e-3);
    CHECK(drive(ch, c, 7, 1e-3, 2e-3) == 0);  // calls 17-23: the CPU
}

TEST_CASE("backend choice: classes are separate, and a new thread budget restarts one", "[core][backend]") {
    BackendChooser ch;
    const HostCallClass small = frame(640 * 480), big = frame(7680 * 4320);
    drive(ch, small, 6, 1e-3, 1e-4);  // CUDA wins small
    drive(ch, big, 6, 1e-3, 5e-3);    // the CPU wins big
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
