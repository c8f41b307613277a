// Shared test support: one list of cases, run on every backend present.
//
// IMGHIST_BACKEND_CASE("name", "[tags]") { ... uses `backend` ... } defines two Catch2 test cases, "name
// [cpu]" and "name [cuda]", from one body. The CUDA one prints the skip marker and returns when no CUDA
// device exists; ctest's SKIP_REGULAR_EXPRESSION (set by imghist_add_catch_test) then reports it as skipped.
#pragma once

#include <catch2/catch.hpp>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "imghist/imghist.hpp"

namespace imghist_test {

constexpr const char* kSkipMarker = "IMGHIST-SKIP";

/// The source tree (for samples/images): $IMGHIST_SOURCE_DIR where the tests run from a relocated bundle
/// (scripts/bundle_gpu.sh), else the tree this build came from.
inline std::string source_dir() {
    const char* env = std::getenv("IMGHIST_SOURCE_DIR");
    return env && *env ? std::string(env) : std::string(IMGHIST_SOURCE_DIR);
}

/// True when the test may use CUDA; otherwise prints the skip marker (once per test case).
inline bool cuda_or_skip() {
    if (imghist::cuda_available()) return true;
    std::printf("%s: no CUDA device available, CUDA case skipped\n", kSkipMarker);
    std::fflush(stdout);
    return false;
}

/// Waits until the device work a test helper enqueued on the legacy default stream is done, so that the helper's
/// data are complete on the device when it returns. A test that goes on with a stream of its own
/// (cudaStreamNonBlocking) is not ordered after that stream, and a pageable cudaMemcpy or a cudaMemset may return
/// before its bytes reach the device: without the wait, a library call on the test's stream could read an upload
/// before it lands, or write an output that the helper's fill then overwrites.
inline void device_ready() { REQUIRE(cudaDeviceSynchronize() == cudaSuccess); }

/// Runs `f`; returns the exception of type E it throws, or nothing when it returns normally.
template <class E, class F>
std::optional<E> thrown(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e;
    }
    return std::nullopt;
}

/// Host memory with a chosen alignment offset, so views can start at any byte address.
struct HostBuffer {
    std::vector<std::uint8_t> storage;
    std::uint8_t* ptr = nullptr;
    HostBuffer() = default;
    explicit HostBuffer(std::size_t bytes, std::size_t align_offset = 0) { resize(bytes, align_offset); }
    void resize(std::size_t bytes, std::size_t align_offset = 0) {
        storage.assign(bytes + 64 + align_offset, 0);
        auto base = reinterpret_cast<std::uintptr_t>(storage.data());
        std::uintptr_t aligned = (base + 63) & ~std::uintptr_t(63);
        ptr = reinterpret_cast<std::uint8_t*>(aligned + align_offset);
    }
};

}  // namespace imghist_test

#define IMGHIST_CAT2(a, b) a##b
#define IMGHIST_CAT(a, b) IMGHIST_CAT2(a, b)
#define IMGHIST_BACKEND_CASE_IMPL(fn, name, tags)                                                           \
    static void fn(imghist::Backend backend);                                                              \
    TEST_CASE(name " [cpu]", tags "[cpu]") { fn(imghist::Backend::Cpu); }                                  \
    TEST_CASE(name " [cuda]", tags "[cuda]") {                                                             \
        if (imghist_test::cuda_or_skip()) fn(imghist::Backend::Cuda);                                      \
    }                                                                                                       \
    static void fn(imghist::Backend backend)
#define IMGHIST_BACKEND_CASE(name, tags) IMGHIST_BACKEND_CASE_IMPL(IMGHIST_CAT(imghist_case_, __LINE__), name, tags)

/// For tests that exist only on CUDA.
#define IMGHIST_REQUIRE_CUDA_OR_SKIP()                                                                      \
    do {                                                                                                    \
        if (!imghist_test::cuda_or_skip()) return;                                                         \
    } while (0)
