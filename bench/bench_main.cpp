// imghist-bench — GPU histogram benchmark: our kernel against CUB, NPP, the read limit and two classic
// kernels, on every workload and data set, in one process. See bench/README.md.
#include <cuda_runtime.h>

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

#include "imghist/imghist.hpp"

#include "baselines.hpp"
#include "classic_kernels.hpp"
#include "common.hpp"
#include "datagen.hpp"
#include "json.hpp"
#include "npp_dyn.hpp"
#include "workloads.hpp"

namespace bench {
namespace {

constexpr int kExitNoDevice = 2;
constexpr int kExitUsage = 64;

// ---- options ------------------------------------------------------------------------------------------------

struct Options {
    std::vector<const Workload*> workloads;
    std::vector<Data> data;
    std::vector<std::size_t> sizes;
    bool workloads_given = false, data_given = false, sizes_given = false;
    TimingConfig timing;
    int batch = 1000;
    bool classic = true, npp = true, cub = true, check = true;
    std::string json, image, npp_lib;
    int device = 0;
    double time_limit_s = 0;
    bool sweep = false;
    std::vector<int> sw_threads{128, 256, 512, 768, 1024}, sw_vectors{1, 2, 4, 8}, sw_bpsm{1, 2, 3, 4, 6, 8, 12, 16},
        sw_copies{1, 8, 16, 32};
    std::vector<int> sw_tiles{0};  ///< KiB per tile; 0 = the tuning table's
    std::vector<int> sw_block{0};  ///< KiB per block for images smaller than a full grid; 0 = the table's
    int tile_kib = 0;              ///< table mode: tile-size override for our kernel (0 = the tuning table's)
};

const char* kUsage = R"(usage: imghist-bench [options]            (also: imghist bench [options])

Times, on the same device buffer and in one process, for each workload, size and data set: our kernel
(imghist::CudaHistogrammer), CUB's DeviceHistogram, NPP's nppiHistogramEven (when the library is found at
run time), a read-only kernel over the same bytes (the limit), and two classic kernels (8-bit gray only).
Prints one table (GB/s of input; %lim = ours / read limit; xCUB = ours / CUB) and the goals it checks.

selection
  --workloads LIST   comma-separated, or "all" (default):
                     u8 u8-64 u8c3 u8c4 u16-1024 u16-4096 u16-65536 i32-1024 f32-256 batch
  --data LIST        uniform,constant,gauss4,gauss32,photo or "all" (default)
  --sizes LIST       frames (640x480, 1080p, 4K, 8K, 16K or WxH pixels of the workload's type) or input
                     bytes per image (1M, 256M; a bare number means MiB);
                     default 640x480,1080p,4K,8K,256M
  --batch N          images in the batch workload (default 1000, 640x480 8-bit each)
  --quick            a fast subset: u8,u8c4,u16-4096,i32-1024,f32-256,batch x uniform,photo x 1M,256M
  --list             print the workloads and data sets and exit
measurement
  --reps N           timed runs per measurement, median reported (default 21, at least 20 recommended)
  --warmup N         untimed runs first (default 3)
  --flush-l2         evict the L2 cache before every timed run (default: off; data up to ~L2 size then
                     comes from L2, as it would in a pipeline)
  --no-cub --no-npp --no-classic --no-check   skip columns / the result check against CUB
  --npp-lib PATH     libnppist.so file or directory to try first
  --image PATH       photograph for the "photo" data set (default: samples/images/astronaut.png, searched)
  --device N         CUDA device ordinal (default 0)
  --time-limit S     stop starting new cases after S seconds (table and JSON keep what was measured)
output
  --json FILE        also write every number as JSON
shape sweep
  --sweep            instead of the table: time our kernel under every launch shape of the grid below
                     (defaults: --workloads u8 --data uniform,photo --sizes 256M) and explain the winner
  --sweep-threads L  threads per block      (default 128,256,512,768,1024)
  --sweep-vectors L  16-byte loads in flight per thread (default 1,2,4,8)
  --sweep-bpsm L     blocks per SM          (default 1,2,3,4,6,8,12,16; shapes over 2048 threads/SM skipped)
  --sweep-copies L   privatized copies of each bin (default 1,8,16,32)
  --sweep-tiles L    KiB per scheduling tile (default: the tuning table's)
  --sweep-blockk L   fewest KiB of input per block (small images: their block count), default the table's
                     In every --sweep-* list, 0 means the tuning table's value.
  --tile-kib N       table mode: run our kernel with N KiB scheduling tiles instead of the table's

exit status: 0 done; 1 a result differed from CUB or our call failed; 2 no CUDA device; 64 bad usage
)";

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (!item.empty()) out.push_back(item);
    }
    return out;
}

[[noreturn]] void usage_error(const std::string& msg) {
    std::fprintf(stderr, "imghist-bench: %s\n(run with --help for the options)\n", msg.c_str());
    std::exit(kExitUsage);
}

std::size_t parse_size(const std::string& s) {
    if (s == "1080p") return frame_size(1920, 1080);
    if (s == "4K" || s == "4k") return frame_size(3840, 2160);
    if (s == "8K" || s == "8k") return frame_size(7680, 4320);
    if (s == "16K" || s == "16k") return frame_size(15360, 8640);
    {
        unsigned w = 0, h = 0;
        char tail = 0;
        if (std::sscanf(s.c_str(), "%ux%u%c", &w, &h, &tail) == 2) {
            if (w == 0 || h == 0 || w > 0xFFFFFF || h > 0xFFFFFF) usage_error("bad frame size '" + s + "'");
            return frame_size(w, h);
        }
    }
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || v <= 0) usage_error("bad size '" + s + "'");
    std::string unit(end);
    double mult = 1 << 20;
    if (unit == "K" || unit == "k" || unit == "KiB") mult = 1 << 10;
    else if (unit == "G" || unit == "g" || unit == "GiB") mult = 1 << 30;
    else if (unit == "B") mult = 1;
    else if (!(unit.empty() || unit == "M" || unit == "m" || unit == "MiB")) usage_error("bad size unit in '" + s + "'");
    return static_cast<std::size_t>(v * mult);
}

std::vector<int> parse_ints(const std::string& s, bool allow_zero = false) {
    std::vector<int> v;
    for (const auto& x : split(s)) {
        char* end = nullptr;
        long n = std::strtol(x.c_str(), &end, 10);
        if (x.empty() || *end || n < 0 || n > (1 << 20) || (n == 0 && !allow_zero)) usage_error("bad number '" + x + "'");
        v.push_back(static_cast<int>(n));
    }
    return v;
}

std::string size_label(std::size_t bytes) {
    char buf[32];
    if (is_frame(bytes)) {
        const unsigned w = static_cast<unsigned>((bytes >> 24) & 0xFFFFFF), h = static_cast<unsigned>(bytes & 0xFFFFFF);
        if (w == 1920 && h == 1080) return "1080p";
        if (w == 3840 && h == 2160) return "4K";
        if (w == 7680 && h == 4320) return "8K";
        std::snprintf(buf, sizeof buf, "%ux%u", w, h);
        return buf;
    }
    if (bytes % (1u << 30) == 0) std::snprintf(buf, sizeof buf, "%zuG", bytes >> 30);
    else if (bytes % (1u << 20) == 0) std::snprintf(buf, sizeof buf, "%zuM", bytes >> 20);
    else if (bytes % (1u << 10) == 0) std::snprintf(buf, sizeof buf, "%zuK", bytes >> 10);
    else std::snprintf(buf, sizeof buf, "%zuB", bytes);
    return buf;
}

Options parse(int argc, char** argv) {
    Options o;
    auto need = [&](int& i) -> std::string {
        if (i + 1 >= argc) usage_error(std::string("missing value after ") + argv[i]);
        return argv[++i];
    };
    bool quick = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::fputs(kUsage, stdout);
            std::exit(0);
        } else if (a == "--list") {
            std::printf("workloads:\n");
            for (const auto& w : all_workloads()) std::printf("  %-10s %s\n", w.name, w.description);
            std::printf("data sets: uniform constant gauss4 gauss32 photo (sigma in bins)\n");
            std::exit(0);
        } else if (a == "--workloads") {
            o.workloads_given = true;
            for (const auto& n : split(need(i))) {
                if (n == "all") {
                    for (const auto& w : all_workloads()) o.workloads.push_back(&w);
                    continue;
                }
                const Workload* found = nullptr;
                for (const auto& w : all_workloads())
                    if (n == w.name) found = &w;
                if (!found) usage_error("unknown workload '" + n + "' (see --list)");
                o.workloads.push_back(found);
            }
        } else if (a == "--data") {
            o.data_given = true;
            for (const auto& n : split(need(i))) {
                if (n == "all") {
                    o.data = all_data();
                    continue;
                }
                bool ok = false;
                for (Data d : all_data())
                    if (n == to_string(d)) { o.data.push_back(d); ok = true; }
                if (!ok) usage_error("unknown data set '" + n + "' (see --list)");
            }
        } else if (a == "--sizes") {
            o.sizes_given = true;
            for (const auto& n : split(need(i))) o.sizes.push_back(parse_size(n));
        } else if (a == "--batch") {
            o.batch = parse_ints(need(i)).at(0);
        } else if (a == "--quick") {
            quick = true;
        } else if (a == "--reps") {
            o.timing.reps = parse_ints(need(i)).at(0);
        } else if (a == "--warmup") {
            const std::string v = need(i);
            o.timing.warmup = v == "0" ? 0 : parse_ints(v).at(0);
        } else if (a == "--flush-l2") {
            o.timing.flush_l2 = true;
        } else if (a == "--no-cub") {
            o.cub = false;
        } else if (a == "--no-npp") {
            o.npp = false;
        } else if (a == "--no-classic") {
            o.classic = false;
        } else if (a == "--no-check") {
            o.check = false;
        } else if (a == "--npp-lib") {
            o.npp_lib = need(i);
        } else if (a == "--image") {
            o.image = need(i);
        } else if (a == "--device") {
            const std::string v = need(i);
            o.device = v == "0" ? 0 : parse_ints(v).at(0);
        } else if (a == "--time-limit") {
            o.time_limit_s = std::atof(need(i).c_str());
        } else if (a == "--json") {
            o.json = need(i);
        } else if (a == "--sweep") {
            o.sweep = true;
        } else if (a == "--sweep-threads") {
            o.sw_threads = parse_ints(need(i), true);
        } else if (a == "--sweep-vectors") {
            o.sw_vectors = parse_ints(need(i), true);
        } else if (a == "--sweep-bpsm") {
            o.sw_bpsm = parse_ints(need(i), true);
        } else if (a == "--sweep-copies") {
            o.sw_copies = parse_ints(need(i), true);
        } else if (a == "--sweep-blockk") {
            o.sw_block = parse_ints(need(i), true);
        } else if (a == "--sweep-tiles") {
            o.sw_tiles = parse_ints(need(i), true);
            for (int t : o.sw_tiles)
                if (t > 1024) usage_error("--sweep-tiles: tiles are at most 1024 KiB");
        } else if (a == "--tile-kib") {
            const auto v = parse_ints(need(i));
            if (v.size() != 1 || v[0] > 1024) usage_error("--tile-kib takes one size from 1 to 1024 (KiB)");
            o.tile_kib = v[0];
        } else {
            usage_error("unknown option '" + a + "'");
        }
    }
    auto find = [](const char* n) {
        for (const auto& w : all_workloads())
            if (std::strcmp(w.name, n) == 0) return &w;
        return static_cast<const Workload*>(nullptr);
    };
    if (quick) {
        if (!o.workloads_given)
            for (const char* n : {"u8", "u8c4", "u16-4096", "i32-1024", "f32-256", "batch"}) o.workloads.push_back(find(n));
        if (!o.data_given) o.data = {Data::Uniform, Data::Photo};
        if (!o.sizes_given) o.sizes = {frame_size(640, 480), frame_size(1920, 1080), 256u << 20};
    }
    if (o.sweep) {
        if (o.workloads.empty()) o.workloads.push_back(find("u8"));
        if (o.data.empty()) o.data = {Data::Uniform, Data::Photo};
        if (o.sizes.empty()) o.sizes = {256u << 20};
    }
    if (o.workloads.empty())
        for (const auto& w : all_workloads()) o.workloads.push_back(&w);
    if (o.data.empty()) o.data = all_data();
    if (o.sizes.empty())
        o.sizes = {frame_size(640, 480), frame_size(1920, 1080), frame_size(3840, 2160), frame_size(7680, 4320),
                   256u << 20};
    if (o.timing.reps < 1) usage_error("--reps must be >= 1");
    if (o.batch < 1) usage_error("--batch must be >= 1");
    return o;
}

// ---- device information -------------------------------------------------------------------------------------

struct DeviceInfo {
    std::string name;
    int ordinal = 0, cc_major = 0, cc_minor = 0, sms = 0, sm_clock_mhz = 0, mem_clock_mhz = 0, bus_bits = 0;
    int max_threads_per_sm = 2048;
    long long l2_bytes = 0, smem_per_sm = 0;
    double peak_gbps = 0;  // 2 (DDR) x memory clock x bus width
    int driver = 0, runtime = 0;
};

DeviceInfo query_device(int dev) {
    DeviceInfo d;
    d.ordinal = dev;
    cudaDeviceProp p{};
    BENCH_CUDA(cudaGetDeviceProperties(&p, dev));
    d.name = p.name;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.sms = p.multiProcessorCount;
    d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
    d.l2_bytes = p.l2CacheSize;
    d.smem_per_sm = static_cast<long long>(p.sharedMemPerMultiprocessor);
    d.bus_bits = p.memoryBusWidth;
    int khz = 0;
    cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev);
    d.sm_clock_mhz = khz / 1000;
    cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev);
    d.mem_clock_mhz = khz / 1000;
    d.peak_gbps = 2.0 * khz * 1e3 * (d.bus_bits / 8.0) / 1e9;
    cudaDriverGetVersion(&d.driver);
    cudaRuntimeGetVersion(&d.runtime);
    return d;
}

std::string now_utc() {
    std::time_t t = std::time(nullptr);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

// ---- one measured case --------------------------------------------------------------------------------------

struct Row {
    const Workload* w = nullptr;
    Data d = Data::Uniform;
    std::size_t target_bytes = 0, bytes = 0;
    int width = 0, height = 0, images = 1;
    Timing ours, cub, npp, limit, atomics, smem;
    Timing blocking;  ///< wall time of the blocking user call imghist::calcHist(device view), host clock
    std::string kernel, check = "-", npp_check = "-", skipped;
    imghist::CudaHistogrammer::Shape shape{};
    std::string goal;   // e.g. ">=90%lim"
    int goal_state = -1;  // -1 no goal, 0 missed, 1 met
    double pct_limit() const { return ours.ok && limit.ok ? 100.0 * limit.median_ms / ours.median_ms : 0.0; }
    double x_cub() const { return ours.ok && cub.ok ? cub.median_ms / ours.median_ms : 0.0; }
};

std::string fmt(const Timing& t, double bytes, int width = 7) {
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

/// Compares two channel-major count arrays; "ok" or "DIFF n" (n bins differ).
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

struct Context {
    Options opt;
    std::string command;  // the command line, for the record
    DeviceInfo dev;
    cudaStream_t stream = nullptr;
    imghist::CudaHistogrammer* hg = nullptr;
    NppHistogram npp;
    Photo photo;
    std::string photo_note;
    DevMem input, sink, out_ours, out_cub, out_npp, out_classic, cub_temp, npp_temp;
    std::vector<unsigned char> host;
    bool failures = false;
};

/// Our kernel's shape in table mode: the tuning table's, or its tile size overridden by --tile-kib.
imghist::CudaHistogrammer::Shape table_shape(const Context& cx) {
    imghist::CudaHistogrammer::Shape sh;
    sh.tile_bytes = cx.opt.tile_kib * 1024;
    return sh;
}

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

    cx.hg->set_shape(table_shape(cx));
    r.ours = time_op([&] { cx.hg->compute(view, spec, out, s); }, s, tc);
    if (r.ours.ok) {
        r.kernel = cx.hg->last_kernel();
        r.shape = cx.hg->last_shape();
    } else {
        cx.failures = true;
    }
    std::vector<unsigned> ours_h;
    if (r.ours.ok) ours_h = download(cx.out_ours, counters);
    // The blocking user call on the same image: validation, launch, the result in host memory, the wait.
    {
        imghist::Histogram h;
        r.blocking = time_wall([&] { h = imghist::calcHist(view, spec); }, tc);
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

    cx.hg->set_shape(table_shape(cx));
    r.ours = time_op([&] { cx.hg->computeBatch(views.data(), views.size(), spec, outs.data(), s); }, s, tc);
    if (r.ours.ok) {
        r.kernel = cx.hg->last_kernel();
        r.shape = cx.hg->last_shape();
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

// ---- JSON ---------------------------------------------------------------------------------------------------

void json_shape(Json& j, const char* key, const imghist::CudaHistogrammer::Shape& sh) {
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

// ---- the table ----------------------------------------------------------------------------------------------

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

// ---- the shape sweep ----------------------------------------------------------------------------------------

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
                cx.hg->set_shape({});
                Timing def = time_op([&] { cx.hg->compute(view, spec, out, s); }, s, cx.opt.timing);
                const auto def_shape = cx.hg->last_shape();

                std::printf("\nshape sweep: %s (%s), data %s, %s (%dx%d); read limit %s GB/s, CUB %s GB/s\n", w->name,
                            w->description, to_string(dset), size_label(size).c_str(), g.width, g.height,
                            fmt(limit, bytes, 1).c_str(), fmt(cub, bytes, 1).c_str());
                std::printf("default shape (%dx%d, %d blocks/SM, %d copies, %d KiB tiles, grid %d, kernel %s): %s GB/s, "
                            "%.2f us; read limit %.2f us, CUB %.2f us\n",
                            def_shape.threads, def_shape.vectors, def_shape.blocks_per_sm, def_shape.copies,
                            def_shape.tile_bytes / 1024, def_shape.max_blocks, cx.hg->last_kernel().c_str(),
                            fmt(def, bytes, 1).c_str(), def.median_ms * 1e3, limit.median_ms * 1e3, cub.median_ms * 1e3);
                std::printf("each SM needs roughly %.0f KiB in flight to stream at peak bandwidth\n\n", need_kib);
                std::printf("%7s %7s %5s %6s %5s %5s | %7s %7s %5s %6s %5s %5s | %8s %8s %6s | %9s %8s | %s\n", "threads",
                            "vectors", "b/SM", "copies", "tileK", "blkK", "used:th", "vec", "b/SM", "copies", "tileK",
                            "grid", "us", "GB/s", "%lim", "KiB/SM fl", "smem/SM", "check");

                struct Entry {
                    imghist::CudaHistogrammer::Shape req, used;
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
                                cx.hg->set_shape(e.req);
                                e.t = time_op([&] { cx.hg->compute(view, spec, out, s); }, s, cx.opt.timing);
                                e.used = cx.hg->last_shape();
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
                cx.hg->set_shape({});
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

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
    using namespace bench;
    Context cx;
    cx.opt = parse(argc, argv);
    cx.command = "imghist-bench";
    for (int i = 1; i < argc; ++i) cx.command += std::string(" ") + argv[i];
    // NPP is probed first: its self-test runs in a forked child, which must happen before this process
    // initialises CUDA.
    if (cx.opt.npp && !cx.opt.sweep) cx.npp.load_checked(cx.opt.npp_lib, cx.opt.device);

    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        std::fprintf(stderr, "imghist-bench: no CUDA device available (%s); nothing to measure.\n",
                     e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return kExitNoDevice;
    }
    if (cx.opt.device < 0 || cx.opt.device >= count) {
        std::fprintf(stderr, "imghist-bench: device %d does not exist (%d found)\n", cx.opt.device, count);
        return kExitUsage;
    }
    try {
        BENCH_CUDA(cudaSetDevice(cx.opt.device));
        cx.dev = query_device(cx.opt.device);
        // A blocking stream: ordered after any legacy-default-stream work a library call may issue.
        BENCH_CUDA(cudaStreamCreate(&cx.stream));
        cx.sink.reserve(64);
        BENCH_CUDA(cudaMemset(cx.sink.get(), 0, 64));

        std::string why;
        for (const auto& p : photo_candidates(cx.opt.image, argv[0])) {
            if (load_photo(p, cx.photo, why)) break;
        }
        if (!cx.photo.ok()) cx.photo_note = "not found (" + why + "); use --image";


        imghist::CudaHistogrammer hg(cx.opt.device);
        cx.hg = &hg;
        print_device(cx);
        const int rc = cx.opt.sweep ? run_sweep(cx) : run_table(cx);
        cx.hg = nullptr;
        cudaStreamSynchronize(cx.stream);
        cudaStreamDestroy(cx.stream);
        return rc;
    } catch (const imghist::Error& err) {
        std::fprintf(stderr, "imghist-bench: %s (%s)\n", err.what(), imghist::to_string(err.code()));
        return err.code() == imghist::ErrorCode::NoDevice ? kExitNoDevice : 1;
    } catch (const std::exception& err) {
        std::fprintf(stderr, "imghist-bench: %s\n", err.what());
        return 1;
    }
}
