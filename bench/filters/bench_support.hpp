// What the filter benchmarks (filters_bench, batch_filters_bench) share: CUDA error checks, median timings on the
// device and the host, the shipped photograph behind the "photo" data set, and the JSON report's frame. One copy,
// so both benchmarks time, load and report the same way and their numbers stay comparable.
#pragma once

#include <cuda_runtime.h>

#include <opencv2/core.hpp>
#include "io/opencv_image.hpp"  // imghist_io's decoders, for the shipped photograph

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace bench_support {

inline void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(e));
        std::exit(2);
    }
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Median milliseconds of `fn` enqueued on `stream`, timed with CUDA events.
inline double time_device(int runs, cudaStream_t stream, const std::function<void()>& fn) {
    cudaEvent_t a, b;
    check(cudaEventCreate(&a), "event");
    check(cudaEventCreate(&b), "event");
    for (int i = 0; i < 3; ++i) fn();
    check(cudaStreamSynchronize(stream), "warm-up");
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
        check(cudaEventRecord(a, stream), "record");
        fn();
        check(cudaEventRecord(b, stream), "record");
        check(cudaEventSynchronize(b), "sync");
        float t = 0;
        check(cudaEventElapsedTime(&t, a, b), "elapsed");
        ms.push_back(t);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return median(ms);
}

/// Median milliseconds of a blocking host call.
inline double time_host(int runs, const std::function<void()>& fn, int warm = 1) {
    for (int i = 0; i < warm; ++i) fn();
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        fn();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return median(ms);
}

/// camera.png ($IMGHIST_SAMPLES_DIR, as a bundle's env.sh sets it, or samples/images above the working
/// directory; 8-bit gray), read with imghist_io's decoders. Missing, it is an error naming `program`: the photo
/// data set must be the photograph.
inline cv::Mat load_photo_tile(const char* program) {
    std::vector<std::string> paths;
    if (const char* dir = std::getenv("IMGHIST_SAMPLES_DIR")) paths.push_back(std::string(dir) + "/camera.png");
    for (const char* p : {"samples/images/camera.png", "../samples/images/camera.png", "../../samples/images/camera.png"})
        paths.push_back(p);
    for (const std::string& p : paths) {
        try {
            cv::Mat m = cli::read_cv_mat(p);
            if (m.type() == CV_8UC1) return m;
        } catch (const std::exception&) {
            // not there (or not readable): the next place
        }
    }
    std::fprintf(stderr, "%s: samples/images/camera.png not found (set IMGHIST_SAMPLES_DIR)\n", program);
    std::exit(2);
}

/// Reads argv's options: `take(option, next)` sets one (next() yields its value, empty past the end) and returns
/// false for one it does not know. Returns -1 when all were taken, else main's exit code after printing `usage`:
/// 0 for --help or -h, 64 for anything else.
template <class Take>
int parse_options(int argc, char** argv, const char* usage, Take take) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const std::function<std::string()> next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (!take(a, next)) {
            std::printf("usage: %s %s\n", argv[0], usage);
            return a == "--help" || a == "-h" ? 0 : 64;
        }
    }
    return -1;
}

/// `path` opened for writing a JSON report, or null (and a message) when it cannot be.
inline FILE* open_json(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f) std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return f;
}

/// Ends a JSON report whose header (up to `"results": [`) is already in `f`: one line per row, written by
/// `print_row(f, row)` without its separator, then the closing brackets; closes `f`.
template <class Rows, class PrintRow>
void write_json_results(FILE* f, const Rows& rows, PrintRow print_row) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
        print_row(f, rows[i]);
        std::fprintf(f, "%s\n", i + 1 < rows.size() ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    std::fclose(f);
}

}  // namespace bench_support
