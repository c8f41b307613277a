// Internal: the Auto backend for host images, chosen from wall times measured in this process.
//
// Why measured and not a rule: whether the GPU pays for a host image depends on what the host is (PCIe
// generation, pageable or pinned memory, how many CPU threads the caller allows) as much as on the image.
// On one H100 host a 640x480 histogram was 7x faster through the GPU, while at 4K an equalization lost to
// the CPU because the pageable upload and download cost more than the work; another host orders them
// differently. Both backends give bit-identical answers, so the library may run either and keep the faster.
//
// Rule: every call of an operation on a host image falls into a class (operation, sample type, channels,
// size rounded to a power of two, pinned or not). A class's first calls alternate between CUDA and the CPU
// until each backend has `kSamples` timings, not counting its first call in the class, which pays one-time
// costs (a first CUDA call's context, the CPU pool's first wake-up, a new destination's first touch).
// Afterwards the backend with the lower typical time runs: the lower median of its last `kRecent` timings,
// so one lucky (or unlucky) call does not decide. The other backend runs once more at calls 8, 16, 32 and 64
// of the class and then every `kRecheckEvery`-th call, so a host whose load changes is re-judged. Measured on
// H100 hosts, whose CPU times vary several-fold from one machine start to the next: with the recent best
// and rechecks every 128th call only, 4K equalizations settled on CUDA (889 us) while the warm CPU took
// 689 us. Changing the CPU thread count restarts the class. The table is bounded by the number of classes
// (a few thousand entries at most).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "imghist/histogram.hpp"
#include "imghist/internal/checks.hpp"
#include "imghist/internal/export.hpp"

namespace imghist::detail {

/// What a call does with a host image: its cost on each backend differs (a histogram only reads the image;
/// a point filter reads it and writes an image back; CLAHE does much more work per pixel on the CPU).
enum class HostWork : std::uint8_t { Histogram, PointFilter, Clahe };

struct HostCallClass {
    HostWork work = HostWork::Histogram;
    SampleType type = SampleType::U8;
    int channels = 1;
    std::size_t bytes = 0;  ///< bytes of the image (row bytes x height)
    bool pinned = false;    ///< page-locked host memory (faster uploads)
    int cpu_threads = 0;    ///< the CPU backend's thread setting for this call (0 = all)
};

class IMGHIST_INTERNAL BackendChooser {
public:
    static constexpr int kSamples = 2;         ///< timings per backend before the choice settles (after its first)
    static constexpr int kRecent = 4;          ///< the lower median of this many recent timings judges a backend
    static constexpr int kRecheckEvery = 128;  ///< one run of the other backend per this many calls
    /// Whether call `call` (0-based, in its class) runs the other backend: 8, 16, 32, 64, then every
    /// kRecheckEvery-th.
    static constexpr bool is_recheck(std::uint64_t call) {
        return call == 8 || call == 16 || call == 32 || call == 64 || call % kRecheckEvery == kRecheckEvery - 1;
    }

    /// The backend to run this call on (Cpu or Cuda).
    Backend choose(const HostCallClass& c);
    /// The measured wall time of a call of class c that ran on `used`.
    void record(const HostCallClass& c, Backend used, double seconds);
    /// Forgets every measurement.
    void reset();

private:
    struct Timings {
        double recent[kRecent];
        int seen = 0;   ///< calls recorded, the first (not kept) included
        int count = 0;  ///< timings kept (not capped)
        double typical() const;  ///< the lower median of the kept recent timings
    };
    struct Entry {
        Timings t[2];  ///< [0] CPU, [1] CUDA
        int cpu_threads = 0;
        std::uint64_t calls = 0;
    };
    static std::uint32_t key_of(const HostCallClass& c);

    std::mutex mutex_;
    std::unordered_map<std::uint32_t, Entry> entries_;
};

/// The process-wide chooser used by every Auto call on a host image.
IMGHIST_INTERNAL BackendChooser& host_backend_chooser();

/// Whether `p` points into page-locked host memory (the CUDA backend asks the runtime; false without CUDA).
IMGHIST_INTERNAL bool host_memory_is_pinned(const void* p) noexcept;

/// Runs run(backend) on the backend for (requested, img); for an Auto request on a host image with a CUDA
/// device present, on the backend the chooser picks, recording the call's wall time.
template <class Run>
void run_on_chosen_backend(Backend requested, const ImageView& img, HostWork work, int cpu_threads, Run&& run) {
    const Backend resolved = resolve_backend(requested, img);
    if (requested != Backend::Auto || resolved != Backend::Cuda || img.location != Location::Host) {
        run(resolved);
        return;
    }
    HostCallClass c;
    c.work = work;
    c.type = img.type;
    c.channels = img.channels;
    c.bytes = img.row_bytes() * static_cast<std::size_t>(img.height);
    c.pinned = host_memory_is_pinned(img.data);
    c.cpu_threads = cpu_threads;
    BackendChooser& chooser = host_backend_chooser();
    const Backend b = chooser.choose(c);
    const auto t0 = std::chrono::steady_clock::now();
    run(b);
    chooser.record(c, b, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace imghist::detail
