// imghist-bench — the output: the device header, the table rows and the JSON record (bench/README.md
// documents the format).
#include "report.hpp"

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

#include "bench_args.hpp"

namespace bench {

std::string fmt(const Timing& t, double bytes, int width) {
    char buf[32];
    if (!t.ok) std::snprintf(buf, sizeof buf, "%*s", width, t.error.empty() ? "n/a" : "err");
    else std::snprintf(buf, sizeof buf, "%*.1f", width, t.gbps(bytes));
    return buf;
}

void print_header_row() {
    std::printf("%-9s %-8s %-7s | %8s %8s %7s %5s %5s | %7s %7s %7s | %7s %7s | %-5s %-14s %s\n", "workload", "data",
                "size", "ours us", "block us", "ours", "%lim", "xCUB", "CUB", "NPP", "limit", "atomics", "smem-1B", "check", "goal",
                "kernel (threads x vectors, blocks/SM, copies)");
    std::printf("%s\n", std::string(162, '-').c_str());
}

void print_row(const Row& r) {
    const double b = static_cast<double>(r.bytes);
    std::string size = r.w->batch ? std::to_string(r.images) + "im" : size_label(r.target_bytes);
    if (!r.skipped.empty()) {
        std::printf("%-9s %-8s %-7s | skipped: %s\n", r.w->name, to_string(r.d), size.c_str(), r.skipped.c_str());
        std::fflush(stdout);
        return;
    }
    char us[32], bus[32], pct[16], xc[16];
    if (r.ours.ok) std::snprintf(us, sizeof us, "%8.1f", r.ours.median_ms * 1e3);
    else std::snprintf(us, sizeof us, "%8s", "err");
    if (r.blocking.ok) std::snprintf(bus, sizeof bus, "%8.1f", r.blocking.median_ms * 1e3);
    else std::snprintf(bus, sizeof bus, "%8s", "-");
    if (r.ours.ok && r.limit.ok) std::snprintf(pct, sizeof pct, "%5.1f", r.pct_limit());
    else std::snprintf(pct, sizeof pct, "%5s", "-");
    if (r.ours.ok && r.cub.ok) std::snprintf(xc, sizeof xc, "%5.2f", r.x_cub());
    else std::snprintf(xc, sizeof xc, "%5s", "-");
    std::string goal = r.goal.empty() ? "" : r.goal + (r.goal_state == 1 ? " ok" : " MISS");
    std::string kernel = r.kernel;
    if (r.ours.ok) {
        char sh[64];
        std::snprintf(sh, sizeof sh, " (%dx%d, %d, %d, %dK)", r.shape.threads, r.shape.vectors, r.shape.blocks_per_sm,
                      r.shape.copies, r.shape.tile_bytes / 1024);
        kernel += sh;
    } else if (!r.ours.error.empty()) {
        kernel = "error: " + r.ours.error;
    }
    std::string cub = fmt(r.cub, b);
    if (r.w->batch && r.cub.ok) cub += "*";
    std::printf("%-9s %-8s %-7s | %s %s %s %s %s | %s %s %s | %s %s | %-5s %-14s %s\n", r.w->name, to_string(r.d),
                size.c_str(), us, bus, fmt(r.ours, b).c_str(), pct, xc, cub.c_str(), fmt(r.npp, b).c_str(),
                fmt(r.limit, b).c_str(), fmt(r.atomics, b).c_str(), fmt(r.smem, b).c_str(), r.check.c_str(),
                goal.c_str(), kernel.c_str());
    std::fflush(stdout);
}


void json_shape(Json& j, const char* key, const imghist::detail::LaunchShape& sh) {
    j.begin_object(key)
        .kv("threads", sh.threads)
        .kv("vectors", sh.vectors)
        .kv("blocks_per_sm", sh.blocks_per_sm)
        .kv("copies", sh.copies)
        .kv("tile_bytes", sh.tile_bytes)
        .end_object();
}

void json_timing(Json& j, const char* key, const Timing& t, double bytes) {
    if (!t.ok && t.error.empty()) {
        j.null(key);
        return;
    }
    j.begin_object(key);
    j.kv("ok", t.ok);
    if (t.ok) {
        j.kv("gbps", t.gbps(bytes)).kv("median_ms", t.median_ms).kv("min_ms", t.min_ms).kv("runs", t.runs);
    } else {
        j.kv("error", t.error);
    }
    if (!t.note.empty()) j.kv("note", t.note);
    j.end_object();
}

void json_header(Json& j, const Context& cx) {
    j.kv("tool", "imghist-bench").kv("library_version", imghist::version()).kv("date_utc", now_utc());
    j.kv("command", cx.command);
    j.begin_object("device")
        .kv("ordinal", cx.dev.ordinal)
        .kv("name", cx.dev.name)
        .kv("compute_capability", std::to_string(cx.dev.cc_major) + "." + std::to_string(cx.dev.cc_minor))
        .kv("sms", cx.dev.sms)
        .kv("sm_clock_mhz", cx.dev.sm_clock_mhz)
        .kv("memory_clock_mhz", cx.dev.mem_clock_mhz)
        .kv("memory_bus_bits", cx.dev.bus_bits)
        .kv("peak_memory_gbps", cx.dev.peak_gbps)
        .kv("l2_bytes", cx.dev.l2_bytes)
        .kv("driver", version_string(cx.dev.driver))
        .kv("runtime", version_string(cx.dev.runtime))
        .end_object();
    j.kv("npp", cx.npp.available() ? cx.npp.description() : std::string("n/a: ") + cx.npp.why());
    if (!cx.npp.disabled().empty()) j.kv("npp_disabled", cx.npp.disabled());
    j.kv("photo", cx.photo.ok() ? cx.photo.path : cx.photo_note);
    j.begin_object("options")
        .kv("reps", cx.opt.timing.reps)
        .kv("warmup", cx.opt.timing.warmup)
        .kv("flush_l2", cx.opt.timing.flush_l2)
        .kv("timing", "CUDA events around each call; median of the runs; GB/s = input bytes / median")
        .end_object();
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream f(path);
    f << text << '\n';
    if (!f) std::fprintf(stderr, "imghist-bench: cannot write %s\n", path.c_str());
    else std::printf("JSON written to %s\n", path.c_str());
}

void print_device(const Context& cx) {
    const DeviceInfo& d = cx.dev;
    std::printf("imghist-bench %s — %s — %s\n", imghist::version(), now_utc().c_str(), cx.command.c_str());
    std::printf("device %d: %s, compute %d.%d, %d SMs, SM clock %d MHz, memory clock %d MHz x %d bit "
                "(peak %.0f GB/s), L2 %.0f MiB\n",
                d.ordinal, d.name.c_str(), d.cc_major, d.cc_minor, d.sms, d.sm_clock_mhz, d.mem_clock_mhz, d.bus_bits,
                d.peak_gbps, d.l2_bytes / 1048576.0);
    std::printf("driver %s, runtime %s; NPP %s; photo %s\n", version_string(d.driver).c_str(),
                version_string(d.runtime).c_str(),
                cx.npp.available() ? cx.npp.description().c_str() : ("n/a (" + cx.npp.why() + ")").c_str(),
                cx.photo.ok() ? cx.photo.path.c_str() : cx.photo_note.c_str());
    if (!cx.npp.disabled().empty()) std::printf("NPP entry points disabled: %s\n", cx.npp.disabled().c_str());
    std::printf("timing: CUDA events around each call, %d warm-up + median of %d runs%s\n", cx.opt.timing.warmup,
                cx.opt.timing.reps, cx.opt.timing.flush_l2 ? ", L2 flushed before each run" : "");
}

}  // namespace bench
