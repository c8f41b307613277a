// The core's internal interface as the filters use it: the CPU side's one parallel-for.
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core_support.hpp"
#include "imghist/internal/parallel_for.hpp"

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
