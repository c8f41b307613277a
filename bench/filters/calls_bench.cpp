// calls_bench — wall time of the user-facing calls at the frame sizes people have, as a program sees it
// (validation, launches, transfers and the wait included), beside OpenCV's CPU functions on the same host.
//
//   calls_bench [--sizes 640x480,1080p,4K,8K,16K] [--reps N] [--device-only] [--json FILE]
//
// Rows, for each size (8-bit gray, uniform random data — the hard case for a histogram):
//   hist/view-blocking     imghist::calc_hist(device view): counts in a host Histogram when it returns
//   hist/gpumat+wait       gpuhist::calcHist(GpuMat -> GpuMat) + cudaStreamSynchronize
//   hist/gpumat-enqueue    gpuhist::calcHist(GpuMat -> GpuMat) alone: the host's part of an asynchronous call
//                          (the stream is drained after each run, outside the time)
//   equalize/gpumat+wait   gpuhist::equalizeHist(GpuMat) + cudaStreamSynchronize
//   equalize/gpumat-enqueue  gpuhist::equalizeHist(GpuMat) alone, as above
//   otsu/gpumat            gpuhist::threshold(GpuMat, THRESH_BINARY | THRESH_OTSU), which returns the value
//                          (dst is written in stream order after it returns)
//   otsu/gpumat+wait       the same + cudaStreamSynchronize: dst written too
//   {hist,equalize,otsu}/mat-auto   the cv::Mat -> cv::Mat call with the default backend choice (these and
//                          the rows below are left out with --device-only)
//   {hist,equalize,otsu}/mat-cpu, /mat-cuda   the same with setBackend(Cpu) / setBackend(Cuda)
//   {hist,equalize,otsu}/opencv     cv::calcHist, cv::equalizeHist, cv::threshold(OTSU) (all OpenCV threads)
// Host clock (steady_clock) around each call, warm-up first, median of the runs. Every output is checked
// against OpenCV's before timing.
#include <cuda_runtime.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpuhist/gpuhist.hpp"
#include "imghist/filters.hpp"

namespace {

struct Frame {
    std::string label;
    int width, height;
};

struct Result {
    std::string call, size;
    double us;
    int runs;
    std::string note;
};

/// after() runs after each op(), outside the time.
template <class Op, class After>
double median_us(Op&& op, After&& after, int reps, int& runs) {
    for (int i = 0; i < 3; ++i) {
        op();
        after();
    }
    std::vector<double> t;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) {
        const auto a = std::chrono::steady_clock::now();
        op();
        t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
        after();
        // Long calls: stop after ~2 s of runs, but take at least 7.
        if (i >= 6 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > 2.0) break;
    }
    std::sort(t.begin(), t.end());
    runs = static_cast<int>(t.size());
    return t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
}

void check(bool ok, const std::string& what) {
    if (!ok) {
        std::fprintf(stderr, "calls_bench: result differs from OpenCV: %s\n", what.c_str());
        std::exit(1);
    }
}

bool parse_frame(const std::string& s, Frame& f) {
    f.label = s;
    if (s == "1080p") f.width = 1920, f.height = 1080;
    else if (s == "4K") f.width = 3840, f.height = 2160;
    else if (s == "8K") f.width = 7680, f.height = 4320;
    else if (s == "16K") f.width = 15360, f.height = 8640;
    else if (std::sscanf(s.c_str(), "%dx%d", &f.width, &f.height) != 2 || f.width <= 0 || f.height <= 0) return false;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<Frame> frames;
    int reps = 201;
    bool device_only = false;
    std::string json;
    std::string sizes = "640x480,1080p,4K,8K,16K";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) std::exit(64);
            return argv[++i];
        };
        if (a == "--sizes") sizes = next();
        else if (a == "--reps") reps = std::max(7, std::atoi(next().c_str()));
        else if (a == "--json") json = next();
        else if (a == "--device-only") device_only = true;
        else {
            std::printf("usage: %s [--sizes 640x480,1080p,4K,8K,16K] [--reps N] [--device-only] [--json FILE]\n",
                        argv[0]);
            return a == "--help" || a == "-h" ? 0 : 64;
        }
    }
    for (std::size_t p = 0; p <= sizes.size();) {
        const std::size_t q = std::min(sizes.find(',', p), sizes.size());
        Frame f;
        if (!parse_frame(sizes.substr(p, q - p), f)) {
            std::fprintf(stderr, "bad size '%s'\n", sizes.substr(p, q - p).c_str());
            return 64;
        }
        frames.push_back(f);
        p = q + 1;
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        std::fprintf(stderr, "calls_bench: no CUDA device\n");
        return 2;
    }
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, 0);
    std::printf("device: %s; OpenCV %s with %d threads; host clock, median of up to %d runs\n\n", prop.name,
                CV_VERSION, cv::getNumThreads(), reps);
    cudaStream_t stream = nullptr;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);

    std::vector<Result> results;
    auto add = [&](const std::string& call, const Frame& f, double us, int runs, const std::string& note = "") {
        results.push_back({call, f.label, us, runs, note});
        std::printf("%-22s %-8s %10.1f us  (%d runs) %s\n", call.c_str(), f.label.c_str(), us, runs, note.c_str());
        std::fflush(stdout);
    };

    for (const Frame& f : frames) {
        cv::Mat src(f.height, f.width, CV_8UC1), dst(f.height, f.width, CV_8UC1), ref;
        cv::RNG rng(12345);
        rng.fill(src, cv::RNG::UNIFORM, 0, 256);
        imghist::DeviceImage dsrc_store, ddst_store, dhist_store;
        cv::cuda::GpuMat dsrc = gpuhist::createDeviceMat(dsrc_store, f.height, f.width, CV_8UC1);
        cv::cuda::GpuMat ddst = gpuhist::createDeviceMat(ddst_store, f.height, f.width, CV_8UC1);
        cv::cuda::GpuMat dhist = gpuhist::createDeviceMat(dhist_store, 1, 256, CV_32SC1);
        dsrc_store.upload(imghist::view_of(src));
        // Times one call (median of up to `reps` runs) and records it.
        auto time_call = [&](const std::string& call, auto&& op) {
            int runs = 0;
            const double us = median_us(op, [] {}, reps, runs);
            add(call, f, us, runs);
        };
        // The same for an asynchronous call's host part: the stream drains after each run, untimed.
        auto time_enqueue = [&](const std::string& call, auto&& op) {
            int runs = 0;
            const double us = median_us(op, [&] { cudaStreamSynchronize(stream); }, reps, runs);
            add(call, f, us, runs);
        };

        // OpenCV references.
        cv::Mat ref_hist, ref_eq, ref_otsu;
        double ref_otsu_level = 0;
        {
            const int ch = 0, bins = 256;
            const float range[] = {0.f, 256.f};
            const float* ranges[] = {range};
            cv::calcHist(&src, 1, &ch, cv::Mat(), ref_hist, 1, &bins, ranges);
            cv::equalizeHist(src, ref_eq);
            ref_otsu_level = cv::threshold(src, ref_otsu, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU);
        }

        // Device-resident, blocking.
        const imghist::ImageView view = imghist::view_of(dsrc);
        {
            const imghist::Histogram h = imghist::calc_hist(view);
            for (int b = 0; b < 256; ++b) check(h.counts[b] == static_cast<std::uint64_t>(ref_hist.at<float>(b)), "calcHist(view)");
            time_call("hist/view-blocking", [&] { (void)imghist::calc_hist(view); });
        }
        {
            gpuhist::calcHist(dsrc, dhist, imghist::Stream(stream));
            cudaStreamSynchronize(stream);
            cv::Mat h(1, 256, CV_32SC1);
            dhist_store.download(h.data, h.step, nullptr);
            for (int b = 0; b < 256; ++b) check(h.at<int>(b) == static_cast<int>(ref_hist.at<float>(b)), "calcHist(GpuMat)");
            time_call("hist/gpumat+wait", [&] {
                    gpuhist::calcHist(dsrc, dhist, imghist::Stream(stream));
                    cudaStreamSynchronize(stream);
                });
            time_enqueue("hist/gpumat-enqueue", [&] { gpuhist::calcHist(dsrc, dhist, imghist::Stream(stream)); });
        }
        auto same = [&](const cv::Mat& a, const cv::Mat& b) { return cv::countNonZero(a != b) == 0; };
        auto download = [&](imghist::DeviceImage& store) {
            cv::Mat m(f.height, f.width, CV_8UC1);
            store.download(m.data, m.step, nullptr);
            return m;
        };
        {
            gpuhist::equalizeHist(dsrc, ddst, imghist::Stream(stream));
            cudaStreamSynchronize(stream);
            check(same(download(ddst_store), ref_eq), "equalizeHist(GpuMat)");
            time_call("equalize/gpumat+wait", [&] {
                    gpuhist::equalizeHist(dsrc, ddst, imghist::Stream(stream));
                    cudaStreamSynchronize(stream);
                });
            time_enqueue("equalize/gpumat-enqueue",
                         [&] { gpuhist::equalizeHist(dsrc, ddst, imghist::Stream(stream)); });
        }
        {
            const double t = gpuhist::threshold(dsrc, ddst, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU,
                                                imghist::Stream(stream));
            cudaStreamSynchronize(stream);  // the pass that writes dst completes in stream order
            check(t == ref_otsu_level, "threshold(GpuMat, OTSU) level");
            check(same(download(ddst_store), ref_otsu), "threshold(GpuMat, OTSU)");
            time_call("otsu/gpumat", [&] {
                    (void)gpuhist::threshold(dsrc, ddst, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU,
                                             imghist::Stream(stream));
                });
            time_call("otsu/gpumat+wait", [&] {
                    (void)gpuhist::threshold(dsrc, ddst, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU,
                                             imghist::Stream(stream));
                    cudaStreamSynchronize(stream);
                });
        }
        cudaStreamSynchronize(stream);
        if (device_only) {
            std::printf("\n");
            continue;
        }

        // Host cv::Mat -> cv::Mat, per backend, and OpenCV.
        const struct {
            const char* name;
            gpuhist::Backend b;
        } backends[] = {{"mat-auto", gpuhist::Backend::Auto}, {"mat-cpu", gpuhist::Backend::Cpu},
                        {"mat-cuda", gpuhist::Backend::Cuda}};
        for (const auto& be : backends) {
            gpuhist::setBackend(be.b);
            cv::Mat h;
            gpuhist::calcHist(src, h);
            check(same(h, ref_hist), std::string("calcHist(Mat) ") + be.name);
            time_call(std::string("hist/") + be.name, [&] { gpuhist::calcHist(src, h); });
            gpuhist::equalizeHist(src, dst);
            check(same(dst, ref_eq), std::string("equalizeHist(Mat) ") + be.name);
            time_call(std::string("equalize/") + be.name, [&] { gpuhist::equalizeHist(src, dst); });
            gpuhist::threshold(src, dst, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU);
            check(same(dst, ref_otsu), std::string("threshold(Mat) ") + be.name);
            time_call(std::string("otsu/") + be.name, [&] {
                    (void)gpuhist::threshold(src, dst, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU);
                });
        }
        gpuhist::setBackend(gpuhist::Backend::Auto);
        {
            const int ch = 0, bins = 256;
            const float range[] = {0.f, 256.f};
            const float* ranges[] = {range};
            cv::Mat h;
            time_call("hist/opencv", [&] { cv::calcHist(&src, 1, &ch, cv::Mat(), h, 1, &bins, ranges); });
            time_call("equalize/opencv", [&] { cv::equalizeHist(src, dst); });
            time_call("otsu/opencv", [&] {
                    (void)cv::threshold(src, dst, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU);
                });
        }
        std::printf("\n");
    }
    if (!json.empty()) {
        FILE* fj = std::fopen(json.c_str(), "w");
        if (!fj) {
            std::fprintf(stderr, "cannot write %s\n", json.c_str());
            return 1;
        }
        std::fprintf(fj, "{\n  \"device\": \"%s\", \"opencv_threads\": %d,\n  \"results\": [\n", prop.name,
                     cv::getNumThreads());
        for (std::size_t i = 0; i < results.size(); ++i)
            std::fprintf(fj, "    {\"call\": \"%s\", \"size\": \"%s\", \"us\": %.3f, \"runs\": %d}%s\n",
                         results[i].call.c_str(), results[i].size.c_str(), results[i].us, results[i].runs,
                         i + 1 < results.size() ? "," : "");
        std::fprintf(fj, "  ]\n}\n");
        std::fclose(fj);
    }
    cudaStreamDestroy(stream);
    return 0;
}
