// Internal: the device's share of the rows when the device and CPU threads count one large pageable image
// together (the counting route of Auto, backend_choice.hpp; split_histogram_to_host does the counting).
//
// Per kind of call (size class, sample type, channels, thread budget): after each call the rates the two
// sides reached (rows per second: the device's from the job's start to the end of its last copy, the CPU
// threads' to the last band's end) give the share at which both would finish together, and the stored
// share moves halfway to it, so one noisy call moves it a little. It starts at
// policy::kConstants.split_first_share and stays within the constants' bounds.
#pragma once

#include <cstddef>

#include "imghist/image.hpp"

namespace imghist::detail::policy {

struct SplitKind {
    std::size_t bytes = 0;  ///< the image's bytes (classed by powers of two)
    SampleType type = SampleType::U8;
    int channels = 1;
    int threads = 1;        ///< the CPU thread budget of the call
};

/// Whether a pageable host image of `bytes` bytes is large enough for the device and CPU threads to count it
/// together (at most `staging_bytes`, what the pinned chunks hold: beyond, the CPU's counting and the
/// packing for the copy engine compete for the host's memory and the split loses to the device alone).
bool split_worthwhile(std::size_t bytes, std::size_t staging_bytes);
/// The device's share of the rows for a call of this kind.
double split_share(const SplitKind& kind);
/// What a call of this kind measured: the device counted device_rows in device_s, the CPU threads
/// cpu_rows in cpu_s.
void record_split(const SplitKind& kind, double device_rows, double device_s, double cpu_rows, double cpu_s);

}  // namespace imghist::detail::policy
