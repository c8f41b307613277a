// The Auto backend for host images (src/core/policy/backend_choice.hpp): its rule, driven with chosen timings.
// The library's answers are the same on both backends (the other test files check that case by case); what
// is tested here is which backend the rule picks.
#include <catch2/catch.hpp>

#include <utility>
#include <vector>

#include "core/policy/backend_choice.hpp"

using imghist::detail::HostRoute;
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
        const HostRoute b = ch.choose(c);
        REQUIRE((b == HostRoute::Cpu || b == HostRoute::Cuda));
        on_cuda += b == HostRoute::Cuda;
        ch.record(c, b, b == HostRoute::Cuda ? cuda_s : cpu_s);
    }
    return on_cuda;
}
}  // namespace

TEST_CASE("backend choice: settles on the faster backend after measuring both", "[core][backend]") {
    BackendChooser ch;
    const HostCallClass c = frame(1920 * 1080);
    // Settling visits CUDA, then the CPU, each for 1 + kSamples calls: the first call of a visit is not kept
    // (a first CUDA call pays for the context, the CPU's first for waking its workers).
    for (HostRoute r : {HostRoute::Cuda, HostRoute::Cpu})
        for (int k = 0; k <= BackendChooser::kSamples; ++k) {
            CHECK(ch.choose(c) == r);
            ch.record(c, r, k == 0 ? 5e-3 : (r == HostRoute::Cuda ? 2e-4 : 4e-4));
        }
    // CUDA's typical time (2e-4) beats the CPU's (4e-4): calls 6-105 all run on CUDA but the rechecks, two
    // CPU calls each from calls 8, 16, 32 and 64.
    CHECK(drive(ch, c, 100, 4e-4, 2e-4) == 92);

    // The CPU faster: every call but the settling ones and the rechecks (two calls each from 8, 16, 32, 64,
    // 127 and 255) runs on it.
    BackendChooser ch2;
    const int settle = 2 * (BackendChooser::kSamples + 1);
    const int cuda_calls = drive(ch2, c, settle + 2 * BackendChooser::kRecheckEvery, 1e-4, 3e-4);
    CHECK(cuda_calls == BackendChooser::kSamples + 1 + 6 * BackendChooser::kRecheckCalls);
}

TEST_CASE("backend choice: a lucky timing costs at most one call on the slower backend", "[core][backend]") {
    // CUDA takes 1 ms; the CPU usually 3 ms, now and then 0.5 ms. Once the CPU has three timings, one lucky
    // timing among its recent four does not move its lower median below CUDA's.
    BackendChooser ch;
    const HostCallClass c = frame(3840 * 2160);
    CHECK(drive(ch, c, 3, 3e-3, 1e-3) == 3);  // calls 0-2: CUDA's visit, 1 ms kept twice
    CHECK(ch.choose(c) == HostRoute::Cpu);    // calls 3-5: the CPU's visit, its first call not kept
    ch.record(c, HostRoute::Cpu, 3e-3);
    CHECK(ch.choose(c) == HostRoute::Cpu);
    ch.record(c, HostRoute::Cpu, 0.5e-3);     // lucky
    CHECK(ch.choose(c) == HostRoute::Cpu);
    ch.record(c, HostRoute::Cpu, 3e-3);
    // CPU {0.5, 3} ms: its lower median is the lucky 0.5 ms, so the CPU runs once more (call 6)...
    CHECK(ch.choose(c) == HostRoute::Cpu);
    ch.record(c, HostRoute::Cpu, 3e-3);
    // ...and its third timing (3 ms) makes its lower median 3 ms: back to CUDA (call 7).
    CHECK(drive(ch, c, 1, 3e-3, 1e-3) == 1);
    CHECK(ch.choose(c) == HostRoute::Cpu);    // calls 8-9: a recheck visits the CPU
    ch.record(c, HostRoute::Cpu, 3e-3);       // not kept
    CHECK(ch.choose(c) == HostRoute::Cpu);
    ch.record(c, HostRoute::Cpu, 0.5e-3);     // lucky again: CPU {0.5, 3, 3, 0.5}, lower median 0.5 ms
    CHECK(ch.choose(c) == HostRoute::Cpu);    // one call (10)
    ch.record(c, HostRoute::Cpu, 3e-3);       // {3, 3, 3, 0.5}: lower median 3 ms
    CHECK(drive(ch, c, 5, 3e-3, 1e-3) == 5);  // calls 11-15 on CUDA
}

TEST_CASE("backend choice: a recheck re-judges a backend whose speed changed", "[core][backend]") {
    BackendChooser ch;
    const HostCallClass c = frame(8 << 20);
    drive(ch, c, 6, 1e-3, 2e-3);  // the CPU wins at first
    CHECK(ch.choose(c) == HostRoute::Cpu);
    ch.record(c, HostRoute::Cpu, 1e-3);
    // Now the CPU is busy (10 ms a call) and CUDA still takes 2 ms: within a few CPU timings of 10 ms the
    // CPU's typical time rises above CUDA's, and the rechecks keep CUDA's timing fresh.
    const int n = BackendChooser::kRecheckEvery * 2;
    const int on_cuda = drive(ch, c, n, 10e-3, 2e-3);
    CHECK(on_cuda > n / 2);
}

TEST_CASE("backend choice: settling timings that paid one-time costs are re-judged early", "[core][backend]") {
    // Both kept CPU settling calls were cold (3 ms); warm, the CPU takes 1 ms and CUDA 2 ms. The early
    // rechecks from calls 8 and 16 measure the warm CPU; after the second its lower median is 1 ms.
    BackendChooser ch;
    const HostCallClass c = frame(3840 * 2160);
    drive(ch, c, 6, 3e-3, 2e-3);
    CHECK(drive(ch, c, 2, 1e-3, 2e-3) == 2);  // calls 6-7: CUDA, the settled winner
    CHECK(drive(ch, c, 2, 1e-3, 2e-3) == 0);  // calls 8-9: a recheck; CPU {3, 3, 1} ms: still CUDA after it
    CHECK(drive(ch, c, 6, 1e-3, 2e-3) == 6);  // calls 10-15
    CHECK(drive(ch, c, 2, 1e-3, 2e-3) == 0);  // calls 16-17: a recheck; CPU {3, 3, 1, 1} ms: lower median 1 ms
    CHECK(drive(ch, c, 7, 1e-3, 2e-3) == 0);  // calls 18-24: the CPU
}

TEST_CASE("backend choice: classes are separate, and a new thread budget restarts one", "[core][backend]") {
    BackendChooser ch;
    const HostCallClass small = frame(640 * 480), big = frame(7680 * 4320);
    drive(ch, small, 6, 1e-3, 1e-4);  // CUDA wins small
    drive(ch, big, 6, 1e-3, 5e-3);    // the CPU wins big
    CHECK(ch.choose(small) == HostRoute::Cuda);
    CHECK(ch.choose(big) == HostRoute::Cpu);
    HostCallClass other = small;
    other.work = HostWork::Histogram;  // another operation: not measured yet, so CUDA is measured first
    CHECK(ch.choose(other) == HostRoute::Cuda);
    HostCallClass pinned = big;
    pinned.pinned = true;
    CHECK(ch.choose(pinned) == HostRoute::Cuda);
    HostCallClass one_thread = big;
    one_thread.cpu_threads = 1;  // the CPU timings were taken with all threads
    CHECK(ch.choose(one_thread) == HostRoute::Cuda);
    ch.reset();
    CHECK(ch.choose(big) == HostRoute::Cuda);
}

TEST_CASE("backend choice: a class with the counting route measures three and rechecks the others in turn", "[core][backend]") {
    // Equalizing an 8K frame on an H100 host: the device route (image up and back) 2.2 ms, the CPU 2.4 ms,
    // counting on the device and finishing on the CPU 1.5 ms.
    BackendChooser ch;
    HostCallClass c = frame(7680 * 4320);
    c.work = HostWork::HistogramFilter;
    c.count_route = true;
    auto time_of = [](HostRoute r) { return r == HostRoute::Cpu ? 2.4e-3 : r == HostRoute::Cuda ? 2.2e-3 : 1.5e-3; };
    // Settling visits the three routes in order, CUDA first, each for 1 + kSamples calls.
    int call = 0;
    for (HostRoute r : {HostRoute::Cuda, HostRoute::CudaCount, HostRoute::Cpu})
        for (int k = 0; k <= BackendChooser::kSamples; ++k) {
            CHECK(ch.choose(c) == r);
            ch.record(c, r, time_of(r));
            ++call;
        }
    // Then the counting route, but at the rechecks (8 fell in the settling; 16, 32, 64, 127, 255), each of
    // which visits the two others for two calls each.
    std::vector<std::pair<int, HostRoute>> others;
    for (; call < 300; ++call) {
        const HostRoute r = ch.choose(c);
        if (r != HostRoute::CudaCount) others.emplace_back(call, r);
        ch.record(c, r, time_of(r));
    }
    const std::vector<std::pair<int, HostRoute>> expected = {
        {16, HostRoute::Cuda},  {17, HostRoute::Cuda},  {18, HostRoute::Cpu},  {19, HostRoute::Cpu},
        {32, HostRoute::Cuda},  {33, HostRoute::Cuda},  {34, HostRoute::Cpu},  {35, HostRoute::Cpu},
        {64, HostRoute::Cuda},  {65, HostRoute::Cuda},  {66, HostRoute::Cpu},  {67, HostRoute::Cpu},
        {127, HostRoute::Cuda}, {128, HostRoute::Cuda}, {129, HostRoute::Cpu}, {130, HostRoute::Cpu},
        {255, HostRoute::Cuda}, {256, HostRoute::Cuda}, {257, HostRoute::Cpu}, {258, HostRoute::Cpu}};
    CHECK(others == expected);

    // The counting route slows down to 5 ms: its third slow timing moves its lower median to 5 ms, and the
    // device route, the faster of the two others, takes over (no recheck falls in calls 300-319).
    int on_cuda = 0;
    for (int i = 0; i < 20; ++i) {
        const HostRoute r = ch.choose(c);
        on_cuda += r == HostRoute::Cuda;
        ch.record(c, r, r == HostRoute::CudaCount ? 5e-3 : time_of(r));
    }
    CHECK(on_cuda == 17);

    // A class without the counting route never takes it (every call of the other tests checks that too).
    HostCallClass lut = c;
    lut.work = HostWork::PointFilter;
    lut.count_route = false;
    for (int i = 0; i < 40; ++i) {
        const HostRoute r = ch.choose(lut);
        REQUIRE(r != HostRoute::CudaCount);
        ch.record(lut, r, 1e-3);
    }
}
