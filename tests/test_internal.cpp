// The core's internal interface as the filters use it: the CPU side's one parallel-for; and the workspace
// state behind blocking CUDA calls (their tagged results).
#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core_support.hpp"
#include "core/parallel_for.hpp"
#if IMGHIST_TEST_WITH_CUDA
#include <cuda_runtime.h>

#include "cuda/runtime/workspace.hpp"
#endif

namespace {

/// The (threads, parts) of every parallel_for while in scope.
struct ObservedCalls {
    static std::vector<std::pair<int, int>>& calls() {
        static std::vector<std::pair<int, int>> c;
        return c;
    }
    static std::mutex& mutex() {
        static std::mutex m;
        return m;
    }
    static void record(int threads, int parts) {
        std::lock_guard<std::mutex> lock(mutex());
        calls().emplace_back(threads, parts);
    }
    ObservedCalls() {
        calls().clear();
        imghist::detail::set_parallel_for_observer(&record);
    }
    ~ObservedCalls() { imghist::detail::set_parallel_for_observer(nullptr); }
};

}  // namespace

TEST_CASE("parallel_for: every index once, in at most `threads` contiguous parts", "[core][internal][cpu]") {
    for (int n : {0, 1, 7, 1000, 4099})
        for (int threads : {0, 1, 3, 64}) {
            INFO("n = " << n << ", threads = " << threads);
            ObservedCalls observed;
            std::vector<int> seen(static_cast<std::size_t>(n), 0);
            std::mutex m;
            std::vector<std::pair<int, int>> ranges;
            imghist::detail::parallel_for(n, threads, [&](int b, int e) {
                for (int i = b; i < e; ++i) ++seen[static_cast<std::size_t>(i)];
                std::lock_guard<std::mutex> lock(m);
                ranges.emplace_back(b, e);
            });
            for (int i = 0; i < n; ++i) REQUIRE(seen[static_cast<std::size_t>(i)] == 1);
            if (n == 0) {
                CHECK(ranges.empty());
                continue;
            }
            REQUIRE(observed.calls().size() == 1);
            CHECK(observed.calls()[0].first == threads);
            const int parts = observed.calls()[0].second;
            CHECK(parts >= 1);
            CHECK(parts <= n);
            if (threads > 0) CHECK(parts <= threads);
            CHECK(static_cast<int>(ranges.size()) <= parts);
            for (const auto& [b, e] : ranges) CHECK(b < e);
        }
}

TEST_CASE("parallel_for: an exception of one part is rethrown after all parts ran", "[core][internal][cpu]") {
    std::atomic<int> ran{0};
    bool thrown = false;
    try {
        imghist::detail::parallel_for(64, 4, [&](int b, int e) {
            ran += e - b;
            if (b == 0) throw std::runtime_error("part 0 failed");
        });
    } catch (const std::runtime_error& e) {
        thrown = std::string(e.what()) == "part 0 failed";
    }
    CHECK(thrown);
    CHECK(ran.load() == 64);  // the other parts still ran to the end
    // The pool is usable afterwards.
    std::atomic<int> sum{0};
    imghist::detail::parallel_for(100, 4, [&](int b, int e) {
        for (int i = b; i < e; ++i) sum += i;
    });
    CHECK(sum.load() == 4950);
}

TEST_CASE("parallel_for: a nested call runs on the calling worker as one part", "[core][internal][cpu]") {
    ObservedCalls observed;
    std::atomic<int> inner{0};
    imghist::detail::parallel_for(4, 4, [&](int b, int e) {
        for (int i = b; i < e; ++i)
            imghist::detail::parallel_for(10, 4, [&](int ib, int ie) { inner += ie - ib; });
    });
    CHECK(inner.load() == 40);
    // The outer call, then one per outer index, each one part: the pool's workers and the job's calling
    // thread run nested calls themselves (a second job would wait for the first to end: a deadlock).
    REQUIRE(observed.calls().size() == 5);
    for (std::size_t i = 1; i < observed.calls().size(); ++i) CHECK(observed.calls()[i].second == 1);
}

// A blocking calc_hist of a device image returns once every word of its page-locked result carries the call's
// tag (the last block stores (tag << 32) | count). Tags count up per buffer from 1 over a zeroed buffer: a new
// buffer, one a result without tags was written into (the slot's counter is then 0), and the count's wrap make
// the next tagged call zero the buffer first. The steps plant words that carry exactly the tag the next call
// gets, with counts no image has: a call that did not zero them would return those counts at once.
TEST_CASE("blocking calls: tagged results through a growing buffer and the tag's wrap", "[core][internal][cuda]") {
    if (!imghist_test::cuda_or_skip()) return;
#if IMGHIST_TEST_WITH_CUDA
    using namespace imghist_test;
    cudaStream_t s = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    struct StreamGone {
        cudaStream_t s;
        ~StreamGone() {
            cudaStreamSynchronize(s);
            cudaStreamDestroy(s);
        }
    } gone{s};
    int device = 0;
    REQUIRE(cudaGetDevice(&device) == cudaSuccess);

    TestImage a(641, 37, SampleType::U8, 1), b(641, 37, SampleType::U8, 1);
    fill_dist<std::uint8_t>(a, Dist::Uniform, 11, 255);
    fill_dist<std::uint8_t>(b, Dist::Normal, 12, 255);
    const DeviceCopy da(a.view), db(b.view);
    imghist::Options o;
    o.backend = Backend::Cuda;
    o.stream = s;
    auto run = [&](const DeviceCopy& d, const TestImage& h, const imghist::BinSpec& spec) {
        const Histogram got = imghist::calc_hist(d.view, spec, o);
        const Histogram ref = plain_reference(h.view, spec);
        CAPTURE(spec.bins);
        REQUIRE(got.counts == ref.counts);
        REQUIRE(got.out_of_range == ref.out_of_range);
    };
    // The workspace the calls run in: the caller's stream's (the lease's lock is recursive for this thread).
    imghist::detail::WorkspaceLease ws =
        imghist::detail::acquire_workspace(device, reinterpret_cast<imghist::Stream>(s));
    using imghist::detail::PinnedSlot;
    std::uint32_t& last = ws->pinned_counter(PinnedSlot::Result);
    const imghist::BinSpec narrow = imghist::BinSpec::even(16, 0, 256), wide = imghist::BinSpec::u8();
    auto plant = [&](std::uint32_t tag) {  // every word of the buffer as a result tagged `tag` with counts of 7
        auto* w = static_cast<std::uint64_t*>(ws->pinned_buffer(PinnedSlot::Result, sizeof(std::uint64_t)));
        for (std::size_t i = 0; i < ws->pinned_size(PinnedSlot::Result) / sizeof(std::uint64_t); ++i)
            w[i] = (static_cast<std::uint64_t>(tag) << 32) | 7u;
    };

    run(db, b, narrow);  // a new buffer: tag 1
    CHECK(last == 1u);
    run(da, a, wide);  // the buffer grows: tag 1 again
    CHECK(last == 1u);
    run(db, b, wide);
    CHECK(last == 2u);
    last = 0xFFFFFFFEu;  // as after 2^32 - 2 calls
    run(da, a, wide);
    CHECK(last == 0xFFFFFFFFu);
    plant(1u);
    run(db, b, wide);  // the wrap: the buffer zeroed, tag 1
    CHECK(last == 1u);
    run(da, a, narrow);
    CHECK(last == 2u);
    last = 0u;  // as after a result without tags (a streamed host image's copy, an image of 2^32 samples)
    plant(1u);
    run(db, b, wide);
    CHECK(last == 1u);
    run(da, a, wide);
    CHECK(last == 2u);
#endif
}
