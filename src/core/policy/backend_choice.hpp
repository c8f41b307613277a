// Internal: the Auto backend for host images, chosen from wall times measured in this process.
//
// Why measured and not a rule: whether the GPU pays for a host image depends on what the host is (PCIe
// generation, pageable or pinned memory, how many CPU threads the caller allows) as much as on the image: a
// small histogram may be several times faster through the GPU on one host while a 4K equalization loses to
// the CPU there, its pageable upload and download costing more than the work, and another host orders them
// differently. Both backends give bit-identical answers, so the library may run either and keep the faster.
//
// Routes: a call runs on the CPU, or on the device (a host image goes up, the result comes back). Filters
// whose table comes from the image's own histogram (equalization, Otsu and Triangle thresholds) have a third
// route: the device counts (the image goes up, only the histogram comes back) and the CPU derives the table
// and applies it. That halves the PCIe traffic of a large image and leaves the CPU the cheap part (a table
// pass runs at memory speed, a byte histogram an order of magnitude slower, so the histogram is most of a
// large equalization on either backend). On the counting route a large pageable image
// (policy::Constants::split_min_bytes) is counted by the device and CPU threads at once
// (split_histogram_to_host: a quarter of the threads pack rows for the copy engine while the others count the
// rest); plain histograms of such images (calc_hist) take that route too, as a third beside the two.
//
// Rule: every call of an operation on a host image falls into a class (operation, sample type, channels,
// size rounded down to a power of two, pinned or not). Routes are measured in visits of consecutive calls,
// and the first call of a visit is not kept: it pays the switch (the first CUDA call's context, the CPU
// pool's workers waking after the device had the work, a destination's first touch), which can cost a fast
// route more than the slower route's whole call (docs/DESIGN.md section 5: Auto alternating routes call by
// call). A class's first calls visit its routes in order (CUDA, the counting route where the operation has
// one, then the CPU), each until it has `kSamples` kept timings. Afterwards the route with the lower typical
// time runs: the lower median of its last `kRecent` timings, so one lucky (or unlucky) call does not decide.
// From calls 8, 16, 32 and 64 of the class (those after settling: a class of three routes settles in calls
// 0-8) and then every `kRecheckEvery`-th call, each other route is visited again for two calls (one kept), so
// a host whose load changes is re-judged. Changing the CPU thread count restarts the class. The table is
// bounded by the number of classes (a few thousand entries at most). The policy's trace override
// (IMGHIST_AUTO_TRACE=1) writes every choice to stderr, with the class and each route's typical time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "imghist/histogram.hpp"
#include "core/checks.hpp"

namespace imghist::detail {

/// What a call does with a host image: its cost on each backend differs (a histogram only reads the image;
/// a point filter reads it and writes an image back; a histogram filter counts the image first and then
/// applies a table made from its histogram; CLAHE does much more work per pixel on the CPU; the histogram of
/// one channel of a multi-channel image counts a fraction of the samples on the CPU, all of them on the
/// device).
enum class HostWork : std::uint8_t { Histogram, PointFilter, HistogramFilter, Clahe, ChannelHistogram };

/// How a call on a host image runs (see above): on the CPU; on the device, the image up and the result
/// back; or, for HostWork::HistogramFilter only, counted on the device and finished on the CPU.
enum class HostRoute : std::uint8_t { Cpu, Cuda, CudaCount };

struct HostCallClass {
    HostWork work = HostWork::Histogram;
    SampleType type = SampleType::U8;
    int channels = 1;
    std::size_t bytes = 0;  ///< bytes of the image (row bytes x height)
    bool pinned = false;    ///< page-locked host memory (faster uploads)
    int cpu_threads = 0;    ///< the CPU backend's thread setting for this call (0 = all)
    bool count_route = false;  ///< HostRoute::CudaCount is offered (histogram filters; large plain histograms)
};

class BackendChooser {
public:
    static constexpr int kSamples = 2;         ///< kept timings per route before the choice settles
    static constexpr int kRecent = 4;          ///< the lower median of this many recent timings judges a route
    static constexpr int kRecheckEvery = 128;  ///< one recheck of the other routes per this many calls
    static constexpr int kRecheckCalls = 2;    ///< calls of a recheck's visit to a route (the first not kept)
    /// Whether call `call` (0-based, in its class) starts a recheck of the other routes: 8, 16, 32, 64, then
    /// every kRecheckEvery-th.
    static constexpr bool is_recheck(std::uint64_t call) {
        return call == 8 || call == 16 || call == 32 || call == 64 || call % kRecheckEvery == kRecheckEvery - 1;
    }

    /// The route to run this call on (Cpu or Cuda; CudaCount too where the class offers it).
    HostRoute choose(const HostCallClass& c);
    /// The measured wall time of a call of class c that ran on `used`.
    void record(const HostCallClass& c, HostRoute used, double seconds);
    /// Forgets every measurement.
    void reset();

private:
    struct Timings {
        double recent[kRecent];
        int count = 0;  ///< timings kept (not capped)
        double typical() const;  ///< the lower median of the kept recent timings
    };
    struct Entry {
        Timings t[3];  ///< indexed by HostRoute
        int cpu_threads = 0;
        std::uint64_t calls = 0;
        int last_route = -1;  ///< the route of the last recorded call (-1: none yet): a switch is not kept
        HostRoute recheck_queue[2 * kRecheckCalls] = {};  ///< a recheck's calls still to run, in order
        int recheck_left = 0, recheck_next = 0;
    };
    static std::uint32_t key_of(const HostCallClass& c);
    HostRoute choose_locked(const HostCallClass& c);
    /// The policy's trace override: every choice is written to stderr with the class and each route's typical time.
    static bool trace_enabled();
    void trace(const HostCallClass& c, HostRoute r);

    std::mutex mutex_;
    std::unordered_map<std::uint32_t, Entry> entries_;
};

/// The process-wide chooser used by every Auto call on a host image.
BackendChooser& host_backend_chooser();

/// Whether `p` points into page-locked host memory (the CUDA backend asks the runtime; false without CUDA).
bool host_memory_is_pinned(const void* p) noexcept;

/// Runs run(route) on the route for (requested, img, work): the requested backend's own route (Backend::Cpu:
/// the CPU; Backend::Cuda or a device image: the device), and for an Auto request on a host image with a
/// CUDA device present the route the chooser picks among CUDA, the counting route (where `count_route`)
/// and the CPU, recording the call's wall time.
template <class Run>
void run_on_chosen_route(Backend requested, const ImageView& img, HostWork work, int cpu_threads, bool count_route,
                         Run&& run) {
    const Backend resolved = resolve_backend(requested, img);
    if (requested != Backend::Auto || resolved != Backend::Cuda || img.location != Location::Host) {
        run(resolved == Backend::Cpu ? HostRoute::Cpu : HostRoute::Cuda);
        return;
    }
    HostCallClass c;
    c.work = work;
    c.type = img.type;
    c.channels = img.channels;
    c.bytes = img.row_bytes() * static_cast<std::size_t>(img.height);
    c.pinned = host_memory_is_pinned(img.data);
    c.cpu_threads = cpu_threads;
    c.count_route = count_route;
    BackendChooser& chooser = host_backend_chooser();
    const HostRoute r = chooser.choose(c);
    const auto t0 = std::chrono::steady_clock::now();
    run(r);
    chooser.record(c, r, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

/// The counting route's histogram of a validated host image, added into `hist` (whose shape matches): on the
/// device, and for a large pageable image on the device and CPU threads at once (options.cpu_threads is
/// the budget).
void count_route_histogram(const ImageView& image, Histogram& hist, const Options& options);

/// run_on_chosen_route for work with the two routes of the two backends: run(Backend::Cpu or Backend::Cuda).
template <class Run>
void run_on_chosen_backend(Backend requested, const ImageView& img, HostWork work, int cpu_threads, Run&& run) {
    run_on_chosen_route(requested, img, work, cpu_threads, false,
                        [&](HostRoute r) { run(r == HostRoute::Cpu ? Backend::Cpu : Backend::Cuda); });
}

}  // namespace imghist::detail
