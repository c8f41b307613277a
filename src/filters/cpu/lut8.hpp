// imghist filters — 8-bit tables applied to runs of interleaved samples on the CPU: the inner loop of every
// 8-bit point filter of the CPU backend (equalization, thresholds, stretch, matching, apply_lut).
#pragma once

#include <cstddef>
#include <cstdint>

#include "imghist/filters.hpp"

namespace imghist::detail {

/// How a run's results are stored. Streaming: non-temporal stores, which write whole cache lines to memory
/// without reading them first and without keeping them in the caches — for passes over images much larger
/// than the caches, where a normal store costs a read of the line it fills (a third of the traffic).
enum class Lut8Store : std::uint8_t { Cached, Streaming };
// Which one a pass takes is the policy's choice (policy::lut_stream_min_bytes).

/// dst[i] = luts[i % channels][src[i]] for i < n: a run that starts at a pixel boundary, channels 1..4.
/// src may equal dst (in place); the two must not overlap otherwise. Takes the fastest implementation the
/// CPU runs (checked once); `store` is a hint (only the vector implementation streams).
void lut8_run(const std::uint8_t* src, std::uint8_t* dst, std::size_t n, const Lut8* luts, int channels,
              Lut8Store store = Lut8Store::Cached) noexcept;

// The implementations lut8_run chooses from (separately for the tests, which compare them).
/// Any CPU: byte lookups from copies of the tables the stores cannot alias (one channel: eight per step).
void lut8_run_portable(const std::uint8_t* src, std::uint8_t* dst, std::size_t n, const Lut8* luts,
                       int channels) noexcept;
/// Whether this build has the AVX-512 VBMI implementation and this CPU (and its OS) runs it.
bool lut8_vbmi_supported() noexcept;
/// AVX-512 VBMI: each table in four registers, 64 lookups per two byte-permutes; only if supported.
void lut8_run_vbmi(const std::uint8_t* src, std::uint8_t* dst, std::size_t n, const Lut8* luts, int channels,
                   Lut8Store store = Lut8Store::Cached) noexcept;

}  // namespace imghist::detail
