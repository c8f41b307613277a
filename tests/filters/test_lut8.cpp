// The CPU's 8-bit table pass (src/filters/cpu/lut8.cpp, reached through the white-box library): both implementations, and the
// vector one's streaming stores, against a plain loop, over every run length to 300 (the vector
// implementation's whole blocks, masked heads and tails and channel phases), 1-4 channels, sources 0, 1, 13
// and 63 bytes past a 64-byte boundary (destinations at other offsets), in place and not.
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "filters/cpu/lut8.hpp"
#include "support.hpp"

namespace {

using imghist::detail::Lut8Store;

/// impl(src, dst, n, luts, channels): one implementation of the pass.
template <class Impl>
void check_impl(Impl&& impl) {
    std::mt19937 rng(77);
    imghist::Lut8 luts[4];
    for (auto& l : luts)
        for (auto& e : l) e = static_cast<std::uint8_t>(rng());
    for (int channels = 1; channels <= 4; ++channels)
        for (std::size_t n = 0; n <= 300; ++n)
            for (std::size_t offset : {std::size_t(0), std::size_t(1), std::size_t(13), std::size_t(63)}) {
                imghist_test::HostBuffer src(n + 64, offset), dst(n + 64, (offset * 7) % 64);
                for (std::size_t i = 0; i < n + 64; ++i) src.ptr[i] = static_cast<std::uint8_t>(rng());
                for (std::size_t i = 0; i < n + 64; ++i) dst.ptr[i] = 0xA5;
                std::vector<std::uint8_t> expected(n);
                for (std::size_t i = 0; i < n; ++i) expected[i] = luts[i % channels][src.ptr[i]];
                INFO(channels << " channels, " << n << " bytes, offset " << offset);
                impl(src.ptr, dst.ptr, n, luts, channels);
                REQUIRE(std::vector<std::uint8_t>(dst.ptr, dst.ptr + n) == expected);
                for (std::size_t i = n; i < n + 64; ++i) REQUIRE(dst.ptr[i] == 0xA5);  // nothing past the run
                impl(src.ptr, src.ptr, n, luts, channels);  // in place
                REQUIRE(std::vector<std::uint8_t>(src.ptr, src.ptr + n) == expected);
            }
}

}  // namespace

TEST_CASE("CPU table pass, portable implementation, equals a plain loop", "[filters][lut8][cpu]") {
    check_impl([](const std::uint8_t* s, std::uint8_t* d, std::size_t n, const imghist::Lut8* l, int c) {
        imghist::detail::lut8_run_portable(s, d, n, l, c);
    });
}

TEST_CASE("CPU table pass, AVX-512 VBMI implementation, equals a plain loop", "[filters][lut8][cpu]") {
    if (!imghist::detail::lut8_vbmi_supported()) {
        std::printf("%s: this CPU has no AVX-512 VBMI (or this build no x86-64 vector code), case skipped\n",
                    imghist_test::kSkipMarker);
        return;
    }
    check_impl([](const std::uint8_t* s, std::uint8_t* d, std::size_t n, const imghist::Lut8* l, int c) {
        imghist::detail::lut8_run_vbmi(s, d, n, l, c, Lut8Store::Cached);
    });
    check_impl([](const std::uint8_t* s, std::uint8_t* d, std::size_t n, const imghist::Lut8* l, int c) {
        imghist::detail::lut8_run_vbmi(s, d, n, l, c, Lut8Store::Streaming);
    });
}

TEST_CASE("CPU table pass, the dispatching entry, equals a plain loop", "[filters][lut8][cpu]") {
    for (Lut8Store store : {Lut8Store::Cached, Lut8Store::Streaming})
        check_impl([store](const std::uint8_t* s, std::uint8_t* d, std::size_t n, const imghist::Lut8* l, int c) {
            imghist::detail::lut8_run(s, d, n, l, c, store);
        });
}
