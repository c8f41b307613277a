// host_bench — the host (cv::Mat) calls of gpuhist against OpenCV's own functions, in one process, on the
// CPU backend by default. Built with and without CUDA.
//
//   host_bench [--sizes 640x480,1920x1080,3840x2160] [--runs N] [--threads N] [--data photo,uniform]
//              [--clock wall|cpu] [--backend cpu|auto|cuda] [--json FILE]
//
// Rows, for each size and data set (8-bit images):
//   calcHist/gray      gpuhist::calcHist(&gray, 1, {0}, noArray(), hist, 1, {256}, {{0, 256}}) against
//                      cv::calcHist with the same arguments
//   calcHist/bgr-ch1   the same for channel 1 of a BGR image
//   calcHist/bgr-3ch   every channel of a BGR image: gpuhist::calcHist(bgr, hist) (one pass, a column per
//                      channel) against three cv::calcHist calls, one per channel, as cv2 users write it
//   equalizeHist       gpuhist::equalizeHist against cv::equalizeHist, gray
//   otsu               gpuhist::threshold(gray, dst, 0, 255, THRESH_BINARY | THRESH_OTSU) against cv::threshold
//   clahe              gpuhist::createCLAHE(2, 8x8)->apply against cv::createCLAHE(2, 8x8)->apply, gray
// Data: "photo" tiles a shipped photograph (camera.png in gray, coffee.png in colour),
// and "uniform" is uniform random bytes (the hard case for a histogram's counters).
//
// Method: each pair's outputs are compared first (identical; CLAHE is within one grey level of cv::CLAHE by
// design, and the differing pixels are counted). Then, after three warm-up calls of each, ours and OpenCV's
// run alternately --runs times (which goes first swaps every run), so that both see the same machine state;
// the wall time of each call (steady clock) is kept, and the table shows the medians, the ratio OpenCV / ours
// (above 1: ours is faster) and the fastest call of each. Both use cv::getNumThreads() threads (--threads sets
// cv::setNumThreads). On a shared machine, compare medians of many runs and look at the minima too; there
// --clock cpu (the process's CPU time per call instead of wall time) with --threads 1 measures each call's
// work without the time spent waiting for a core.
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include "io/opencv_image.hpp"  // imghist_io's decoders, for the shipped photographs

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "gpuhist/gpuhist.hpp"

namespace {

struct Args {
    std::vector<cv::Size> sizes{{640, 480}, {1920, 1080}, {3840, 2160}};
    std::vector<std::string> data{"photo", "uniform"};
    int runs = 31;
    int threads = 0;  // 0: OpenCV's default
    bool cpu_clock = false;
    imghist::Backend backend = imghist::Backend::Cpu;
    std::string json;
};

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, sep);)
        if (!item.empty()) out.push_back(item);
    return out;
}

[[noreturn]] void usage(const char* argv0, const std::string& problem) {
    if (!problem.empty()) std::fprintf(stderr, "host_bench: %s\n", problem.c_str());
    std::fprintf(stderr,
                 "usage: %s [--sizes WxH,...] [--runs N] [--threads N] [--data photo,uniform] [--clock wall|cpu] "
                 "[--backend cpu|auto|cuda] [--json FILE]\n",
                 argv0);
    std::exit(problem.empty() ? 0 : 2);
}

int positive(const char* argv0, const std::string& option, const std::string& v) {
    char* end = nullptr;
    const long n = std::strtol(v.c_str(), &end, 10);
    if (end == v.c_str() || *end != '\0' || n < 1 || n > 100000) usage(argv0, option + " takes a number from 1 to 100000");
    return static_cast<int>(n);
}

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string opt = argv[i];
        if (opt == "-h" || opt == "--help") usage(argv[0], "");
        if (i + 1 >= argc) usage(argv[0], opt + " needs a value");
        const std::string v = argv[++i];
        if (opt == "--sizes") {
            a.sizes.clear();
            for (const std::string& s : split(v, ',')) {
                int w = 0, h = 0;
                char extra = 0;
                if (std::sscanf(s.c_str(), "%dx%d%c", &w, &h, &extra) != 2 || w < 1 || h < 1 || w > 65536 || h > 65536)
                    usage(argv[0], "bad size '" + s + "' (WxH)");
                a.sizes.emplace_back(w, h);
            }
        } else if (opt == "--data") {
            a.data = split(v, ',');
            for (const std::string& d : a.data)
                if (d != "photo" && d != "uniform") usage(argv[0], "unknown data set '" + d + "'");
        } else if (opt == "--runs") {
            a.runs = positive(argv[0], opt, v);
        } else if (opt == "--threads") {
            a.threads = positive(argv[0], opt, v);
        } else if (opt == "--clock") {
            if (v != "wall" && v != "cpu") usage(argv[0], "--clock takes wall or cpu");
            a.cpu_clock = v == "cpu";
        } else if (opt == "--backend") {
            try {
                a.backend = imghist::parse_backend(v);
            } catch (const imghist::Error& e) {
                usage(argv[0], e.what());
            }
        } else if (opt == "--json") {
            a.json = v;
        } else {
            usage(argv[0], "unknown option " + opt);
        }
    }
    if (a.sizes.empty() || a.data.empty()) usage(argv[0], "nothing to measure");
    return a;
}

std::string cpu_name() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
        }
    return "unknown CPU";
}

/// A shipped photograph (8-bit gray or BGR) read with imghist_io's decoders, from $IMGHIST_SAMPLES_DIR or
/// samples/images above the working directory. Missing, it is an error: the photo data set must be one.
cv::Mat photo_tile(int channels) {
    const std::string name = channels == 1 ? "camera.png" : "coffee.png";
    std::vector<std::string> paths;
    if (const char* dir = std::getenv("IMGHIST_SAMPLES_DIR")) paths.push_back(std::string(dir) + "/" + name);
    for (const char* up : {"", "../", "../../", "../../../"}) paths.push_back(std::string(up) + "samples/images/" + name);
    for (const std::string& p : paths) {
        try {
            const cv::Mat m = cli::read_cv_mat(p);
            if (m.channels() == channels && m.depth() == CV_8U) return m;
        } catch (const std::exception&) {
            // not there (or not readable): the next place
        }
    }
    std::fprintf(stderr, "host_bench: samples/images/%s not found (set IMGHIST_SAMPLES_DIR)\n", name.c_str());
    std::exit(2);
}

cv::Mat make_input(const std::string& data, cv::Size size, int channels) {
    cv::Mat m(size, CV_8UC(channels));
    if (data == "uniform") {
        cv::RNG rng(12345 + channels);
        rng.fill(m, cv::RNG::UNIFORM, 0, 256);
        return m;
    }
    const cv::Mat tile = photo_tile(channels);
    for (int y = 0; y < m.rows; ++y)
        for (int x = 0; x < m.cols; x += tile.cols)
            std::memcpy(m.ptr(y) + x * channels, tile.ptr(y % tile.rows),
                        static_cast<std::size_t>(std::min(tile.cols, m.cols - x)) * channels);
    return m;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Timing {
    double ours_ms = 0, cv_ms = 0, ours_min = 0, cv_min = 0;
};

double process_cpu_ms() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

/// Warm-up, then `runs` alternating calls (the first of each pair swaps every run).
Timing time_pair(const std::function<void()>& ours, const std::function<void()>& theirs, int runs, bool cpu_clock) {
    for (int i = 0; i < 3; ++i) {
        ours();
        theirs();
    }
    std::vector<double> a, b;
    auto clock_ms = [cpu_clock](const std::function<void()>& f) {
        if (cpu_clock) {
            const double t0 = process_cpu_ms();
            f();
            return process_cpu_ms() - t0;
        }
        const auto t0 = std::chrono::steady_clock::now();
        f();
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };
    for (int i = 0; i < runs; ++i) {
        if (i % 2 == 0) {
            a.push_back(clock_ms(ours));
            b.push_back(clock_ms(theirs));
        } else {
            b.push_back(clock_ms(theirs));
            a.push_back(clock_ms(ours));
        }
    }
    return {median(a), median(b), *std::min_element(a.begin(), a.end()), *std::min_element(b.begin(), b.end())};
}

struct Row {
    std::string op, size, data;
    Timing t;
    std::string check;
    bool ok = true;
};

bool same(const cv::Mat& a, const cv::Mat& b) {
    if (a.size() != b.size() || a.type() != b.type()) return false;
    for (int y = 0; y < a.rows; ++y)
        if (std::memcmp(a.ptr(y), b.ptr(y), a.cols * a.elemSize()) != 0) return false;
    return true;
}

/// The rows of one size and data set.
std::vector<Row> measure(const std::string& data, cv::Size size, int runs, bool cpu_clock) {
    const std::string label = std::to_string(size.width) + "x" + std::to_string(size.height);
    const cv::Mat gray = make_input(data, size, 1), bgr = make_input(data, size, 3);
    std::vector<Row> rows;
    auto add = [&](const std::string& op, bool ok, const std::string& check, const std::function<void()>& ours,
                   const std::function<void()>& theirs) {
        Row r{op, label, data, time_pair(ours, theirs, runs, cpu_clock), check, ok};
        std::fprintf(stderr, "  %-17s %-10s %-8s ours %9.3f ms  OpenCV %9.3f ms\n", op.c_str(), label.c_str(),
                     data.c_str(), r.t.ours_ms, r.t.cv_ms);
        rows.push_back(r);
    };
    const int hist_size[] = {256};
    const float range[] = {0, 256};
    const float* ranges[] = {range};
    cv::Mat h1, h2;
    for (int channel : {-1, 1}) {  // -1: the gray image's channel 0
        const cv::Mat& src = channel < 0 ? gray : bgr;
        const int ch[] = {std::max(channel, 0)};
        auto ours = [&] { gpuhist::calcHist(&src, 1, ch, cv::noArray(), h1, 1, hist_size, ranges); };
        auto theirs = [&] { cv::calcHist(&src, 1, ch, cv::noArray(), h2, 1, hist_size, ranges); };
        ours();
        theirs();
        const bool ok = same(h1, h2);
        add(channel < 0 ? "calcHist/gray" : "calcHist/bgr-ch1", ok, ok ? "identical" : "MISMATCH", ours, theirs);
    }
    {
        cv::Mat per_channel[3];
        auto ours = [&] { gpuhist::calcHist(bgr, h1); };
        auto theirs = [&] {
            for (int c = 0; c < 3; ++c) cv::calcHist(&bgr, 1, &c, cv::noArray(), per_channel[c], 1, hist_size, ranges);
        };
        ours();
        theirs();
        cv::Mat joined;
        cv::hconcat(per_channel, 3, joined);
        const bool ok = same(h1, joined);
        add("calcHist/bgr-3ch", ok, ok ? "identical" : "MISMATCH", ours, theirs);
    }
    cv::Mat d1, d2;
    {
        auto ours = [&] { gpuhist::equalizeHist(gray, d1); };
        auto theirs = [&] { cv::equalizeHist(gray, d2); };
        ours();
        theirs();
        const bool ok = same(d1, d2);
        add("equalizeHist", ok, ok ? "identical" : "MISMATCH", ours, theirs);
    }
    {
        double t1 = 0, t2 = 0;
        auto ours = [&] { t1 = gpuhist::threshold(gray, d1, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU); };
        auto theirs = [&] { t2 = cv::threshold(gray, d2, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU); };
        ours();
        theirs();
        const bool ok = t1 == t2 && same(d1, d2);
        add("otsu", ok, ok ? "identical (t = " + std::to_string(static_cast<int>(t1)) + ")" : "MISMATCH", ours, theirs);
    }
    {
        const cv::Ptr<gpuhist::CLAHE> mine = gpuhist::createCLAHE(2.0, cv::Size(8, 8));
        const cv::Ptr<cv::CLAHE> ref = cv::createCLAHE(2.0, cv::Size(8, 8));
        auto ours = [&] { mine->apply(gray, d1); };
        auto theirs = [&] { ref->apply(gray, d2); };
        ours();
        theirs();
        cv::Mat diff;
        cv::absdiff(d1, d2, diff);
        double max_diff = 0;
        cv::minMaxLoc(diff, nullptr, &max_diff);
        const int differing = cv::countNonZero(diff);
        const bool ok = max_diff <= 1;
        char note[96];
        if (differing == 0)
            std::snprintf(note, sizeof note, "identical");
        else
            std::snprintf(note, sizeof note, "%s: %.3f%% of pixels differ, by up to %d",
                          ok ? "within 1 level" : "MISMATCH", 100.0 * differing / static_cast<double>(diff.total()),
                          static_cast<int>(max_diff));
        add("clahe", ok, note, ours, theirs);
    }
    return rows;
}

std::string json_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) >= 0x20) out += c;
    }
    return out;
}

bool write_json(const std::string& path, const std::vector<Row>& rows, const std::string& cpu, int threads,
                const Args& a) {
    std::ofstream f(path);
    f << "{\n  \"cpu\": \"" << json_escape(cpu) << "\",\n  \"threads\": " << threads << ",\n  \"opencv\": \""
      << CV_VERSION << "\",\n  \"backend\": \"" << imghist::to_string(a.backend) << "\",\n  \"clock\": \""
      << (a.cpu_clock ? "process cpu" : "wall") << "\",\n  \"runs\": " << a.runs << ",\n  \"results\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        char buf[512];
        std::snprintf(buf, sizeof buf,
                      "    {\"op\": \"%s\", \"size\": \"%s\", \"data\": \"%s\", \"ours_ms\": %.4f, \"opencv_ms\": %.4f, "
                      "\"ratio\": %.3f, \"ours_min_ms\": %.4f, \"opencv_min_ms\": %.4f, \"check\": \"%s\"}%s\n",
                      r.op.c_str(), r.size.c_str(), r.data.c_str(), r.t.ours_ms, r.t.cv_ms, r.t.cv_ms / r.t.ours_ms,
                      r.t.ours_min, r.t.cv_min, json_escape(r.check).c_str(), i + 1 < rows.size() ? "," : "");
        f << buf;
    }
    f << "  ]\n}\n";
    f.close();
    return static_cast<bool>(f);
}

}  // namespace

int main(int argc, char** argv) {
    const Args args = parse(argc, argv);
    if (args.threads > 0) cv::setNumThreads(args.threads);
    gpuhist::setBackend(args.backend);
    const std::string cpu = cpu_name();
    const int threads = cv::getNumThreads();
    std::fprintf(stderr, "host_bench: %s, %d threads, OpenCV %s, backend %s, %d runs\n", cpu.c_str(), threads,
                 CV_VERSION, imghist::to_string(args.backend), args.runs);
    std::vector<Row> rows;
    try {
        for (const cv::Size& s : args.sizes)
            for (const std::string& d : args.data) {
                const std::vector<Row> r = measure(d, s, args.runs, args.cpu_clock);
                rows.insert(rows.end(), r.begin(), r.end());
            }
    } catch (const cv::Exception& e) {
        std::fprintf(stderr, "host_bench: %s\n", e.what());
        return 1;
    }
    std::printf("host_bench: %s, %d threads (cv::getNumThreads), OpenCV %s, backend %s, %s time, median of %d "
                "alternating runs\n",
                cpu.c_str(), threads, CV_VERSION, imghist::to_string(args.backend),
                args.cpu_clock ? "process CPU" : "wall", args.runs);
    std::printf("%-17s %-10s %-8s %10s %10s %7s %10s %10s  %s\n", "op", "size", "data", "ours ms", "OpenCV ms",
                "ratio", "ours min", "OpenCV min", "check");
    bool all_ok = true;
    for (const Row& r : rows) {
        std::printf("%-17s %-10s %-8s %10.3f %10.3f %7.2f %10.3f %10.3f  %s\n", r.op.c_str(), r.size.c_str(),
                    r.data.c_str(), r.t.ours_ms, r.t.cv_ms, r.t.cv_ms / r.t.ours_ms, r.t.ours_min, r.t.cv_min,
                    r.check.c_str());
        all_ok = all_ok && r.ok;
    }
    std::printf("ratio: OpenCV's median / ours (above 1: ours is faster)\n");
    if (!args.json.empty() && !write_json(args.json, rows, cpu, threads, args)) {
        std::fprintf(stderr, "host_bench: cannot write %s\n", args.json.c_str());
        return 1;
    }
    return all_ok ? 0 : 1;
}
