// imghist-bench — the table mode: every workload x data set x size, one row each (measure.cpp), printed and
// recorded as JSON (report.cpp).
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

#include "measure.hpp"
#include "report.hpp"

namespace bench {

int run_table(Context& cx) {
    const auto t0 = std::chrono::steady_clock::now();
    auto over_time = [&] {
        return cx.opt.time_limit_s > 0 &&
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > cx.opt.time_limit_s;
    };
    std::printf("\nGB/s of input bytes. %%lim = ours / read-only kernel; xCUB = CUB time / ours (>1: we are faster);\n"
                "atomics, smem-1B = classic kernels (8-bit gray only); * = one CUB call per image (batch).\n\n");
    print_header_row();
    std::vector<Row> rows;
    int skipped_for_time = 0;
    for (const Workload* w : cx.opt.workloads) {
        std::vector<std::size_t> sizes = w->batch ? std::vector<std::size_t>{0} : cx.opt.sizes;
        for (std::size_t size : sizes) {
            for (Data d : cx.opt.data) {
                Row r;
                r.w = w;
                r.d = d;
                if (over_time()) {
                    ++skipped_for_time;
                    continue;
                }
                if (w->batch) {
                    r.width = 640;
                    r.height = 480;
                    r.images = cx.opt.batch;
                    r.bytes = static_cast<std::size_t>(r.images) * r.width * r.height;
                    r.target_bytes = r.bytes;
                } else {
                    const Geometry g = geometry_for(*w, size);
                    r.width = g.width;
                    r.height = g.height;
                    r.bytes = g.bytes;
                    r.target_bytes = size;
                }
                if (d == Data::Photo && !cx.photo.ok()) {
                    r.skipped = "no photograph (" + cx.photo_note + ")";
                } else {
                    try {
                        cx.host.resize(r.bytes);
                        if (w->batch)
                            generate(*w, d, cx.photo, r.width, static_cast<std::size_t>(r.height) * r.images, r.height,
                                     cx.host.data());
                        else
                            generate(*w, d, cx.photo, r.width, r.height, 0, cx.host.data());
                        upload(cx, r.bytes);
                        if (w->batch) measure_batch(cx, r);
                        else measure_single(cx, r);
                        set_goal(r);
                    } catch (const std::exception& e) {
                        r.skipped = e.what();
                        cx.failures = true;
                    }
                }
                print_row(r);
                rows.push_back(std::move(r));
            }
        }
    }
    if (skipped_for_time) std::printf("(time limit reached: %d cases not run)\n", skipped_for_time);

    // goals summary
    int met = 0, missed = 0;
    std::string missed_list;
    for (const Row& r : rows) {
        if (r.goal_state == 1) ++met;
        if (r.goal_state == 0) {
            ++missed;
            missed_list += std::string("  ") + r.w->name + " " + to_string(r.d) + " " +
                           (r.w->batch ? std::to_string(r.images) + "im" : size_label(r.target_bytes)) + ": goal " +
                           r.goal + ", got " + (r.ours.ok ? std::to_string(r.pct_limit()).substr(0, 5) + "% of limit, x" +
                                                                std::to_string(r.x_cub()).substr(0, 4) + " CUB"
                                                          : "error") +
                           "\n";
        }
    }
    std::printf("\ngoals: %d met, %d missed%s\n%s", met, missed, missed ? ":" : "", missed_list.c_str());
    int compared = 0;
    for (const Row& r : rows) compared += r.check != "-" ? 1 : 0;
    std::printf("check: ours vs CUB (and NPP and the teaching kernels where measured) on %d of %zu cases; %s\n",
                compared, rows.size(), cx.failures ? "FAILURES above (DIFF/err)" : "no difference");

    if (!cx.opt.json.empty()) {
        Json j;
        j.begin_object();
        json_header(j, cx);
        j.begin_array("results");
        for (const Row& r : rows) {
            const double b = static_cast<double>(r.bytes);
            j.begin_object();
            j.kv("workload", r.w->name).kv("description", r.w->description).kv("type", imghist::to_string(r.w->type));
            j.kv("channels", r.w->channels).kv("bins", r.w->bins).kv("low", r.w->low).kv("high", r.w->high);
            j.kv("data", to_string(r.d)).kv("size", r.w->batch ? std::to_string(r.images) + "im" : size_label(r.target_bytes));
            j.kv("bytes", static_cast<unsigned long long>(r.bytes)).kv("width", r.width).kv("height", r.height);
            j.kv("images", r.images);
            if (!r.skipped.empty()) {
                j.kv("skipped", r.skipped);
                j.end_object();
                continue;
            }
            json_timing(j, "ours", r.ours, b);
            json_timing(j, "blocking_call", r.blocking, b);
            if (r.ours.ok) {
                j.kv("kernel", r.kernel);
                json_shape(j, "shape", r.shape);
            }
            json_timing(j, "cub", r.cub, b);
            json_timing(j, "npp", r.npp, b);
            json_timing(j, "read_limit", r.limit, b);
            json_timing(j, "classic_global_atomics", r.atomics, b);
            json_timing(j, "classic_shared_bytes", r.smem, b);
            if (r.ours.ok && r.limit.ok) j.kv("pct_of_limit", r.pct_limit());
            if (r.ours.ok && r.cub.ok) j.kv("x_cub", r.x_cub());
            j.kv("check_vs_cub", r.check).kv("npp_check_vs_cub", r.npp_check);
            if (r.goal_state >= 0) j.begin_object("goal").kv("text", r.goal).kv("met", r.goal_state == 1).end_object();
            j.end_object();
        }
        j.end_array();
        j.begin_object("goals").kv("met", met).kv("missed", missed).end_object();
        j.kv("failures", cx.failures);
        j.end_object();
        write_file(cx.opt.json, j.str());
    }
    return cx.failures ? 1 : 0;
}

}  // namespace bench
