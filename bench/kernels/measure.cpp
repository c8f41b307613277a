// imghist-bench — one measured case (see measure.hpp).
#include "measure.hpp"

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
#include "classic_kernels.hpp"
#include "bench_args.hpp"

namespace bench {

std::string compare_counts(const std::vector<unsigned>& a, const std::vector<unsigned>& b) {
    if (a.size() != b.size()) return "DIFF";
    std::size_t n = 0;
    for (std::size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
    return n == 0 ? "ok" : "DIFF" + std::to_string(n);
}

std::vector<unsigned> download(const DevMem& m, std::size_t count) {
    std::vector<unsigned> h(count);
    BENCH_CUDA(cudaMemcpy(h.data(), m.get(), count * sizeof(unsigned), cudaMemcpyDeviceToHost));
    return h;
}

void set_goal(Row& r) {
    const Workload& w = *r.w;
    if (w.batch) {
        char g[32];
        std::snprintf(g, sizeof g, ">=%.0f%%lim", w.goal_pct);
        r.goal = g;
        r.goal_state = r.ours.ok && r.limit.ok && r.pct_limit() >= w.goal_pct ? 1 : 0;
        return;
    }
    if (r.target_bytes == (256u << 20) && w.goal_pct > 0) {
        char g[32];
        std::snprintf(g, sizeof g, ">=%.0f%%lim%s", w.goal_pct, w.goal_not_slower_than_cub ? ",>=CUB" : "");
        r.goal = g;
        bool met = r.ours.ok && r.limit.ok && r.pct_limit() >= w.goal_pct;
        if (w.goal_not_slower_than_cub) met = met && r.cub.ok && r.x_cub() >= 1.0;
        r.goal_state = met ? 1 : 0;
    } else if (is_frame(r.target_bytes) && w.goal_pct > 0 && std::strcmp(w.name, "i32-1024") != 0 &&
               std::strcmp(w.name, "u8-64") != 0 && std::strcmp(w.name, "u16-65536") != 0) {
        // Frame sizes: at least 1.25x CUB's speed (kernel time, same buffer).
        r.goal = ">=1.25xCUB";
        r.goal_state = r.ours.ok && r.cub.ok && r.x_cub() >= 1.25 ? 1 : 0;
    } else if (r.target_bytes == (1u << 20) && std::strcmp(w.name, "u8") == 0) {
        r.goal = "<=CUB/2 time";
        r.goal_state = r.ours.ok && r.cub.ok && r.x_cub() >= 2.0 ? 1 : 0;
    }
}

/// Our kernel's shape in table mode: the tuning table's, or its tile size overridden by --tile-kib.
namespace {
imghist::detail::LaunchShape table_shape(const Context& cx) {
    imghist::detail::LaunchShape sh;
    sh.tile_bytes = cx.opt.tile_kib * 1024;
    return sh;
}
}  // namespace

/// CUB's DeviceHistogram on one image at `in` into cx.out_cub: its temporary storage is sized by a first
/// query call, then the call is timed. Not ok (with CUB's message) where CUB rejects the request.
Timing time_cub(Context& cx, const Workload& w, const void* in, std::size_t pixels, cudaStream_t s) {
    Timing t;
    std::size_t tb = 0;
    const cudaError_t e = cub_histogram(w, in, pixels, cx.out_cub.as<unsigned>(), nullptr, tb, s);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        t.error = std::string("CUB: ") + cudaGetErrorString(e);
        return t;
    }
    cx.cub_temp.reserve(tb);
    return time_op(
        [&] {
            std::size_t t2 = tb;
            BENCH_CUDA(cub_histogram(w, in, pixels, cx.out_cub.as<unsigned>(), cx.cub_temp.get(), t2, s));
        },
        s, cx.opt.timing);
}

// Measures every column of one case whose input is already on the device.
void measure_single(Context& cx, Row& r) {
    const Workload& w = *r.w;
    const std::size_t counters = static_cast<std::size_t>(w.channels) * w.bins;
    const std::size_t pixels = static_cast<std::size_t>(r.width) * r.height;
    const void* in = cx.input.get();
    const auto view = imghist::ImageView::device(in, r.width, r.height, w.type, w.channels);
    const auto spec = imghist::BinSpec::even(w.bins, w.low, w.high);
    cx.out_ours.reserve(counters * 4);
    cx.out_cub.reserve(counters * 4);
    cx.out_npp.reserve(counters * 4);
    cx.out_classic.reserve(counters * 4);
    imghist::DeviceHistogramView out{};
    out.counts = cx.out_ours.get();
    out.type = imghist::CountType::U32;
    const cudaStream_t s = cx.stream;
    const TimingConfig& tc = cx.opt.timing;

    imghist::detail::set_launch_shape(*cx.hg, table_shape(cx));
    r.ours = time_op([&] { cx.hg->compute(view, spec, out, s); }, s, tc);
    if (r.ours.ok) {
        r.kernel = imghist::detail::last_kernel(*cx.hg);
        r.shape = imghist::detail::last_launch_shape(*cx.hg);
    } else {
        cx.failures = true;
    }
    std::vector<unsigned> ours_h;
    if (r.ours.ok) ours_h = download(cx.out_ours, counters);
    // The blocking user call on the same image: validation, launch, the result in host memory, the wait.
    {
        imghist::Histogram h;
        r.blocking = time_wall([&] { h = imghist::calc_hist(view, spec); }, tc);
        if (r.blocking.ok && !ours_h.empty() && cx.opt.check) {
            std::size_t diff = 0;
            for (std::size_t i = 0; i < counters; ++i) diff += h.counts[i] != ours_h[i];
            if (diff != 0) {
                r.check = "blocking DIFF" + std::to_string(diff);
                cx.failures = true;
            }
        }
    }

    r.limit = time_op([&] { read_limit(in, r.bytes, cx.sink.as<unsigned>(), s); }, s, tc);

    std::vector<unsigned> cub_h;
    if (cx.opt.cub) {
        r.cub = time_cub(cx, w, in, pixels, s);
        if (r.cub.ok && cx.opt.check) cub_h = download(cx.out_cub, counters);
        if (!cub_h.empty() && r.ours.ok) {
            r.check = compare_counts(ours_h, cub_h);
            if (r.check != "ok") cx.failures = true;
        }
    }

    if (cx.opt.npp && cx.npp.supports(w)) {
        try {
            const std::size_t pitch = static_cast<std::size_t>(r.width) * imghist::sample_size(w.type) * w.channels;
            cx.npp_temp.reserve(std::max<std::size_t>(1, cx.npp.buffer_size(w, r.width, r.height, s)));
            r.npp = time_op(
                [&] {
                    cx.npp.run(w, in, r.width, r.height, pitch, cx.out_npp.as<int>(), cx.npp_temp.get(), s);
                },
                s, tc);
            if (r.npp.ok && !cub_h.empty()) {
                r.npp_check = compare_counts(download(cx.out_npp, counters), cub_h);
                if (r.npp_check != "ok") cx.failures = true;
            }
        } catch (const std::exception& e) {
            r.npp.ok = false;
            r.npp.error = e.what();
        }
    }

    if (cx.opt.classic && w.classic) {
        TimingConfig slow = tc;
        slow.slow_run_ms = 25.0;  // the teaching kernels may take long on low-entropy data
        const auto* bytes = static_cast<const std::uint8_t*>(in);
        // Each teaching kernel's counts must equal ours (which were checked against CUB above).
        auto check_classic = [&](const Timing& t, const char* which) {
            if (!t.ok || ours_h.empty() || !cx.opt.check) return;
            const std::string c = compare_counts(download(cx.out_classic, counters), ours_h);
            if (c != "ok") {
                r.check = std::string(which) + " " + c;
                cx.failures = true;
            }
        };
        r.atomics = time_op([&] { classic_global_atomics(bytes, pixels, cx.out_classic.as<unsigned>(), w.bins, s); },
                            s, slow);
        check_classic(r.atomics, "atomics");
        r.smem = time_op([&] { classic_shared_bytes(bytes, pixels, cx.out_classic.as<unsigned>(), w.bins, s); },
                         s, slow);
        check_classic(r.smem, "smem-1B");
    }
}

void measure_batch(Context& cx, Row& r) {
    const Workload& w = *r.w;
    const int n = r.images;
    const std::size_t img_bytes = static_cast<std::size_t>(r.width) * r.height;
    const auto* base = static_cast<const std::uint8_t*>(cx.input.get());
    const std::size_t counters = static_cast<std::size_t>(n) * w.bins;
    cx.out_ours.reserve(counters * 4);
    cx.out_cub.reserve(counters * 4);
    std::vector<imghist::ImageView> views(n);
    std::vector<imghist::DeviceHistogramView> outs(n);
    for (int i = 0; i < n; ++i) {
        views[i] = imghist::ImageView::device(base + i * img_bytes, r.width, r.height, w.type, 1);
        outs[i].counts = cx.out_ours.as<unsigned>() + static_cast<std::size_t>(i) * w.bins;
        outs[i].type = imghist::CountType::U32;
    }
    const auto spec = imghist::BinSpec::even(w.bins, w.low, w.high);
    const cudaStream_t s = cx.stream;
    const TimingConfig& tc = cx.opt.timing;

    imghist::detail::set_launch_shape(*cx.hg, table_shape(cx));
    r.ours = time_op([&] { cx.hg->compute_batch(views.data(), views.size(), spec, outs.data(), s); }, s, tc);
    if (r.ours.ok) {
        r.kernel = imghist::detail::last_kernel(*cx.hg);
        r.shape = imghist::detail::last_launch_shape(*cx.hg);
    } else {
        cx.failures = true;
    }
    r.limit = time_op([&] { read_limit(base, r.bytes, cx.sink.as<unsigned>(), s); }, s, tc);
    if (cx.opt.cub) {
        std::size_t tb = 0;
        cudaError_t e = cub_histogram(w, base, img_bytes, cx.out_cub.as<unsigned>(), nullptr, tb, s);
        if (e == cudaSuccess) {
            cx.cub_temp.reserve(tb);
            r.cub = time_op(
                [&] {
                    for (int i = 0; i < n; ++i) {
                        std::size_t t2 = tb;
                        BENCH_CUDA(cub_histogram(w, base + i * img_bytes, img_bytes,
                                                 cx.out_cub.as<unsigned>() + static_cast<std::size_t>(i) * w.bins,
                                                 cx.cub_temp.get(), t2, s));
                    }
                },
                s, tc);
            r.cub.note = "one CUB call per image";
        } else {
            (void)cudaGetLastError();
            r.cub.error = std::string("CUB: ") + cudaGetErrorString(e);
        }
        if (r.cub.ok && r.ours.ok && cx.opt.check) {
            r.check = compare_counts(download(cx.out_ours, counters), download(cx.out_cub, counters));
            if (r.check != "ok") cx.failures = true;
        }
    }
}

void upload(Context& cx, std::size_t bytes) {
    cx.input.reserve(bytes);
    BENCH_CUDA(cudaMemcpy(cx.input.get(), cx.host.data(), bytes, cudaMemcpyHostToDevice));
}

}  // namespace bench
