// imghist-bench — the shape sweep: our kernel under every launch shape of a grid, and why the winner wins.
#include "modes.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "baselines.hpp"
#include "measure.hpp"
#include "report.hpp"

namespace bench {
namespace {

const char* kSweepLesson = R"(
Why one shape beats another (read the columns "KiB/SM in flight" and "smem/SM" next to GB/s):
 * Loads in flight. DRAM answers after several hundred nanoseconds; to stream at full bandwidth each SM
   must keep about  bandwidth x latency / SMs  bytes requested and not yet returned (printed above as the
   rough need). A thread holds `vectors` 16-byte loads in flight, so the SM holds
   threads x resident blocks x vectors x 16 bytes. Shapes below the need are latency-bound, whatever their
   histogram does; beyond it more loads buy nothing and cost registers.
 * Occupancy. Resident blocks per SM are capped by threads (threads x blocks <= the SM's thread limit), by
   registers, and by shared memory: every block owns copies x bins x 4 bytes of counters. Asking for more
   blocks than fit silently gives fewer ("used" columns show what the library chose).
 * Bank conflicts and contention. Shared memory has 32 banks of 4 bytes. With one copy, lanes of a warp
   whose samples fall in different bins of the same bank wait for each other, and lanes with the same bin
   serialise on the atomic; uniform data suffers the first, constant data the second. Giving each lane its
   own bank (32 copies laid out bin-major, copy = lane) removes both at the price of 32x the shared memory
   and a longer merge at the end. Fewer copies trade conflicts for occupancy.
 * Fixed costs. Zeroing and merging copies x bins counters per block is paid once per block: large copies,
   many blocks and small images make it visible; the persistent grid (blocks = SMs x blocks/SM) keeps it
   proportional to the GPU, not to the image.
)";

}  // namespace

int run_sweep(Context& cx) {
    const DeviceInfo& d = cx.dev;
    const auto t0 = std::chrono::steady_clock::now();
    auto over_time = [&] {
        return cx.opt.time_limit_s > 0 &&
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > cx.opt.time_limit_s;
    };
    int skipped_for_time = 0;
    // Rough bytes each SM must keep in flight: peak bandwidth x ~700 ns DRAM latency under load / SMs.
    const double need_kib = d.peak_gbps * 1e9 * 700e-9 / d.sms / 1024.0;
    Json j;
    j.begin_object();
    json_header(j, cx);
    j.kv("rough_bytes_in_flight_needed_per_sm", need_kib * 1024.0);
    j.begin_array("sweeps");
    for (const Workload* w : cx.opt.workloads) {
        if (w->batch) {
            std::printf("sweep: the batch workload is not swept (sweep the single-image workloads)\n");
            continue;
        }
        for (std::size_t size : cx.opt.sizes) {
            for (Data dset : cx.opt.data) {
                if (dset == Data::Photo && !cx.photo.ok()) {
                    std::printf("sweep %s photo: skipped, %s\n", w->name, cx.photo_note.c_str());
                    continue;
                }
                if (over_time()) {
                    std::printf("sweep %s %s: skipped, time limit reached\n", w->name, to_string(dset));
                    continue;
                }
                const Geometry g = geometry_for(*w, size);
                cx.host.resize(g.bytes);
                generate(*w, dset, cx.photo, g.width, g.height, 0, cx.host.data());
                upload(cx, g.bytes);
                const std::size_t counters = static_cast<std::size_t>(w->channels) * w->bins;
                const std::size_t pixels = static_cast<std::size_t>(g.width) * g.height;
                cx.out_ours.reserve(counters * 4);
                cx.out_cub.reserve(counters * 4);
                const void* in = cx.input.get();
                const cudaStream_t s = cx.stream;
                const auto view = imghist::ImageView::device(in, g.width, g.height, w->type, w->channels);
                const auto spec = imghist::BinSpec::even(w->bins, w->low, w->high);
                imghist::DeviceHistogramView out{};
                out.counts = cx.out_ours.get();
                out.type = imghist::CountType::U32;
                const double bytes = static_cast<double>(g.bytes);

                Timing limit = time_op([&] { read_limit(in, g.bytes, cx.sink.as<unsigned>(), s); }, s, cx.opt.timing);
                std::vector<unsigned> ref;
                const Timing cub = time_cub(cx, *w, in, pixels, s);
                if (cub.ok) ref = download(cx.out_cub, counters);
                imghist::detail::set_launch_shape(*cx.hg, {});
                Timing def = time_op([&] { cx.hg->compute(view, spec, out, s); }, s, cx.opt.timing);
                const auto def_shape = imghist::detail::last_launch_shape(*cx.hg);

                std::printf("\nshape sweep: %s (%s), data %s, %s (%dx%d); read limit %s GB/s, CUB %s GB/s\n", w->name,
                            w->description, to_string(dset), size_label(size).c_str(), g.width, g.height,
                            fmt(limit, bytes, 1).c_str(), fmt(cub, bytes, 1).c_str());
                std::printf("default shape (%dx%d, %d blocks/SM, %d copies, %d KiB tiles, grid %d, kernel %s): %s GB/s, "
                            "%.2f us; read limit %.2f us, CUB %.2f us\n",
                            def_shape.threads, def_shape.vectors, def_shape.blocks_per_sm, def_shape.copies,
                            def_shape.tile_bytes / 1024, def_shape.max_blocks, imghist::detail::last_kernel(*cx.hg).c_str(),
                            fmt(def, bytes, 1).c_str(), def.median_ms * 1e3, limit.median_ms * 1e3, cub.median_ms * 1e3);
                std::printf("each SM needs roughly %.0f KiB in flight to stream at peak bandwidth\n\n", need_kib);
                std::printf("%7s %7s %5s %6s %5s %5s | %7s %7s %5s %6s %5s %5s | %8s %8s %6s | %9s %8s | %s\n", "threads",
                            "vectors", "b/SM", "copies", "tileK", "blkK", "used:th", "vec", "b/SM", "copies", "tileK",
                            "grid", "us", "GB/s", "%lim", "KiB/SM fl", "smem/SM", "check");

                struct Entry {
                    imghist::detail::LaunchShape req, used;
                    Timing t;
                    std::string check;
                };
                std::vector<Entry> entries;
                for (int th : cx.opt.sw_threads)
                    for (int bpsm : cx.opt.sw_bpsm) {
                        if (static_cast<long long>(th) * bpsm > d.max_threads_per_sm) continue;
                        for (int vec : cx.opt.sw_vectors)
                            for (int cp : cx.opt.sw_copies)
                                for (int tk : cx.opt.sw_tiles)
                                for (int bk : cx.opt.sw_block) {
                                if (over_time()) {
                                    ++skipped_for_time;
                                    continue;
                                }
                                Entry e;
                                e.req = {th, vec, bpsm, cp, 0, tk * 1024, bk * 1024};
                                imghist::detail::set_launch_shape(*cx.hg, e.req);
                                e.t = time_op([&] { cx.hg->compute(view, spec, out, s); }, s, cx.opt.timing);
                                e.used = imghist::detail::last_launch_shape(*cx.hg);
                                e.check = "-";
                                if (e.t.ok && !ref.empty()) {
                                    e.check = compare_counts(download(cx.out_ours, counters), ref);
                                    if (e.check != "ok") cx.failures = true;
                                }
                                const double fl_kib =
                                    e.used.threads * double(e.used.blocks_per_sm) * e.used.vectors * 16.0 / 1024.0;
                                const double smem_kib = double(e.used.copies) * counters * 4.0 * e.used.blocks_per_sm / 1024.0;
                                char pct[16] = "-";
                                if (e.t.ok && limit.ok) std::snprintf(pct, sizeof pct, "%.1f", 100.0 * limit.median_ms / e.t.median_ms);
                                if (e.t.ok) {
                                    std::printf("%7d %7d %5d %6d %5d %5d | %7d %7d %5d %6d %5d %5d | %8.2f %8.1f %6s | %9.1f "
                                                "%8.1f | %s\n",
                                                th, vec, bpsm, cp, tk, bk, e.used.threads, e.used.vectors,
                                                e.used.blocks_per_sm, e.used.copies, e.used.tile_bytes / 1024,
                                                e.used.max_blocks, e.t.median_ms * 1e3, e.t.gbps(bytes), pct, fl_kib,
                                                smem_kib, e.check.c_str());
                                } else {
                                    std::printf("%7d %7d %5d %6d %5d %5d | rejected: %s\n", th, vec, bpsm, cp, tk, bk,
                                                e.t.error.c_str());
                                }
                                std::fflush(stdout);
                                entries.push_back(e);
                            }
                    }
                imghist::detail::set_launch_shape(*cx.hg, {});
                if (skipped_for_time) std::printf("(time limit reached: %d shapes not run)\n", skipped_for_time);

                std::vector<const Entry*> ok;
                for (const auto& e : entries)
                    if (e.t.ok && e.check.rfind("DIFF", 0) != 0) ok.push_back(&e);
                std::sort(ok.begin(), ok.end(), [](const Entry* a, const Entry* b) { return a->t.median_ms < b->t.median_ms; });
                std::printf("\nbest shapes (%s, %s):\n", w->name, to_string(dset));
                for (std::size_t i = 0; i < ok.size() && i < 5; ++i) {
                    const Entry& e = *ok[i];
                    std::printf("  %zu. %d threads x %d vectors, %d blocks/SM, %d copies, %d KiB tiles: %.1f GB/s "
                                "(%.1f%% of limit)\n",
                                i + 1, e.used.threads, e.used.vectors, e.used.blocks_per_sm, e.used.copies,
                                e.used.tile_bytes / 1024,
                                e.t.gbps(bytes), limit.ok ? 100.0 * limit.median_ms / e.t.median_ms : 0.0);
                }
                if (!ok.empty() && def.ok)
                    std::printf("  default shape reaches %.1f%% of the best\n", 100.0 * ok.front()->t.median_ms / def.median_ms);

                j.begin_object();
                j.kv("workload", w->name).kv("data", to_string(dset)).kv("size", size_label(size));
                j.kv("bytes", static_cast<unsigned long long>(g.bytes));
                json_timing(j, "read_limit", limit, bytes);
                json_timing(j, "cub", cub, bytes);
                json_timing(j, "default", def, bytes);
                json_shape(j, "default_shape", def_shape);
                j.begin_array("shapes");
                for (const auto& e : entries) {
                    j.begin_object();
                    json_shape(j, "requested", e.req);
                    json_shape(j, "used", e.used);
                    json_timing(j, "timing", e.t, bytes);
                    j.kv("check_vs_cub", e.check);
                    j.end_object();
                }
                j.end_array();
                j.end_object();
            }
        }
    }
    j.end_array();
    j.end_object();
    std::fputs(kSweepLesson, stdout);
    if (!cx.opt.json.empty()) write_file(cx.opt.json, j.str());
    return cx.failures ? 1 : 0;
}

}  // namespace bench
