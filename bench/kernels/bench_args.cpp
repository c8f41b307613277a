// imghist-bench — command-line options: parsing and the usage text.
#include "bench_args.hpp"

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
#include <utility>
#include <vector>

namespace bench {
namespace {

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

/// The list a --sweep-* option of one launch-shape parameter sets (its values may be 0: the tuning table's),
/// or nullptr for any other option.
std::vector<int>* sweep_list(Options& o, const std::string& option) {
    const std::pair<const char*, std::vector<int> Options::*> lists[] = {
        {"--sweep-threads", &Options::sw_threads}, {"--sweep-vectors", &Options::sw_vectors},
        {"--sweep-bpsm", &Options::sw_bpsm},       {"--sweep-copies", &Options::sw_copies},
        {"--sweep-blockk", &Options::sw_block},
    };
    for (const auto& [name, list] : lists)
        if (option == name) return &(o.*list);
    return nullptr;
}

}  // namespace

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
        } else if (std::vector<int>* list = sweep_list(o, a)) {
            *list = parse_ints(need(i), true);
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

}  // namespace bench
