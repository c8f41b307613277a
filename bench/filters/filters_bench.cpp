// filters_bench — throughput of the gpuhist filters against OpenCV's CPU implementations.
//
//   filters_bench [--mib N] [--runs N] [--cpu-runs N] [--json FILE] [--quick]
//
// Workloads (8-bit gray; default 256 MiB = 16384 x 16384 for the point operations, 7680 x 4320 for CLAHE):
//   equalize/device    gpuhist::equalizeHist on GpuMat views, device-resident (histogram, table, apply)
//   otsu/device        gpuhist::thresholdAsync(... THRESH_BINARY | THRESH_OTSU), device-resident
//   copy/device        cudaMemcpyAsync device-to-device of the same bytes: the read+write limit
//   hist/device, lut/device, threshold/device   the parts of those pipelines alone
//   equalize/mat       gpuhist::equalizeHist cv::Mat -> cv::Mat (pinned staging, PCIe both ways)
//   equalize/mat-pin   the same with cv::Mats in page-locked memory (gpuhist::createPinnedMat): no staging
//   clahe/device, clahe/mat, clahe/opencv   CLAHE 8K (clip 40, 8x8 tiles) on the GPU and with cv::CLAHE
//   equalize/opencv, otsu/opencv            cv::equalizeHist, cv::threshold(OTSU) on the same image
//   stretch/device     gpuhist::stretchContrast(2%, 1%) on GpuMat views (device histogram -> one apply kernel
//                      that derives the table from the counts in every block), vs copy/device
//   match/device       imghist::match_to_histogram to a fixed target histogram (a gauss sigma 32 image's), the
//                      batch-normalisation use: device histogram -> apply kernel deriving the table
//   multiotsu5/device  gpuhist::thresholdMultiOtsu with 5 classes: histogram, threshold search on the device
//                      (one block), label pass; the call waits and returns the thresholds
//   multiotsu5/search  the host search alone (imghist::multiotsu_thresholds, the CPU backend's), for reference
//   The same four at 1920 x 1080 ("1080p" rows): per-image latency, the image size where launch and the
//   histogram's round trip to the host dominate.
// Device timings: CUDA events around each call, after warm-up, median of --runs runs (>= 21).
// Host timings (cv::Mat paths and OpenCV): steady clock, median. Data: uniform, gauss sigma 32, constant,
// photo (a tiled photograph: samples/images/camera.png).
#include <cuda_runtime.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gpuhist/gpuhist.hpp"
#include "imghist/filters.hpp"

#include "bench_support.hpp"

namespace {

using bench_support::check;
using bench_support::median;
using bench_support::time_device;
using bench_support::time_host;

struct Args {
    double mib = 256;
    int runs = 30;
    int cpu_runs = 5;
    std::string json;
    bool quick = false;
};

const cv::Mat& photo_tile() {
    static const cv::Mat tile = bench_support::load_photo_tile("filters_bench");
    return tile;
}

void fill(cv::Mat& m, const std::string& dist) {
    if (dist == "constant") {
        m.setTo(94);
        return;
    }
    if (dist == "photo") {
        const cv::Mat& t = photo_tile();
        for (int y = 0; y < m.rows; ++y) {
            const std::uint8_t* src = t.ptr(y % t.rows);
            std::uint8_t* dst = m.ptr(y);
            for (int x = 0; x < m.cols; x += t.cols) std::memcpy(dst + x, src, std::min(t.cols, m.cols - x));
        }
        return;
    }
    cv::RNG rng(12345);
    if (dist == "uniform") rng.fill(m, cv::RNG::UNIFORM, 0, 256);
    else rng.fill(m, cv::RNG::NORMAL, 128, 32);
}

struct Row {
    std::string workload, data, device;
    double ms = 0, gpix = 0, gbs = 0, vs = 0;  // vs: ratio to the reference named in note
    std::string note;
};

/// One result: `pixels` processed and `moved_bytes` of memory traffic in `ms` milliseconds.
Row make_row(const std::string& workload, const std::string& data, const std::string& device, double ms,
             double pixels, double moved_bytes, double vs, const std::string& note) {
    Row r;
    r.workload = workload;
    r.data = data;
    r.device = device;
    r.ms = ms;
    r.gpix = pixels / (ms * 1e-3) / 1e9;
    r.gbs = moved_bytes / (ms * 1e-3) / 1e9;
    r.vs = vs;
    r.note = note;
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    Args args;
    const int usage_exit = bench_support::parse_options(
        argc, argv, "[--mib N] [--runs N] [--cpu-runs N] [--json FILE] [--quick]",
        [&](const std::string& a, const std::function<std::string()>& next) {
            if (a == "--mib") args.mib = std::atof(next().c_str());
            else if (a == "--runs") args.runs = std::max(21, std::atoi(next().c_str()));
            else if (a == "--cpu-runs") args.cpu_runs = std::max(1, std::atoi(next().c_str()));
            else if (a == "--json") args.json = next();
            else if (a == "--quick") args.quick = true;
            else return false;
            return true;
        });
    if (usage_exit >= 0) return usage_exit;
    if (args.quick) {
        args.mib = std::min(args.mib, 64.0);
        args.runs = std::min(args.runs, 21);
        args.cpu_runs = std::min(args.cpu_runs, 3);
    }
    if (!imghist::cuda_available()) {
        std::fprintf(stderr, "filters_bench: no CUDA device\n");
        return 3;
    }
    const std::string device = imghist::cuda_device_name(0);
    std::printf("device: %s\n", device.c_str());

    // A square-ish 8-bit image of about --mib MiB, width a multiple of 256.
    const std::size_t bytes = static_cast<std::size_t>(args.mib * 1024 * 1024);
    const int width = 16384;
    const int height = static_cast<int>(std::max<std::size_t>(1, bytes / width));
    const double pixels = static_cast<double>(width) * height;
    std::printf("image: %d x %d u8 (%.1f MiB); CLAHE: 7680 x 4320; runs: %d device, %d host\n\n", width, height,
                pixels / 1048576.0, args.runs, args.cpu_runs);

    cudaStream_t stream;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    const imghist::Stream s = reinterpret_cast<imghist::Stream>(stream);
    gpuhist::DeviceImage src_store(width, height), dst_store(width, height);
    cv::cuda::GpuMat src = gpuhist::asGpuMat(src_store), dst = gpuhist::asGpuMat(dst_store);
    gpuhist::DeviceImage hist_store(256, 1, imghist::SampleType::I32, 1);
    cv::cuda::GpuMat hist = gpuhist::asGpuMat(hist_store);
    int* d_thresh = nullptr;
    check(cudaMalloc(&d_thresh, sizeof(int)), "malloc");
    cv::Mat host(height, width, CV_8UC1), host_out(height, width, CV_8UC1);
    imghist::PinnedBuffer pin_in_store, pin_out_store;

    std::vector<Row> rows;
    const std::vector<std::string> dists = {"uniform", "gauss32", "constant", "photo"};
    // The target of match/*: the histogram of a gauss sigma 32 image (one channel, 256 bins).
    imghist::Histogram target = imghist::Histogram::zeros(imghist::BinSpec::u8(), 1);
    {
        cv::Mat g(1024, 1024, CV_8UC1);
        fill(g, "gauss32");
        for (int y = 0; y < g.rows; ++y)
            for (int x = 0; x < g.cols; ++x) ++target.channel(0)[g.at<std::uint8_t>(y, x)];
    }
    // The read+write limit: a device-to-device copy of the same bytes.
    auto copy = [&] {
        if (src.isContinuous() && dst.isContinuous())
            check(cudaMemcpyAsync(dst.data, src.data, static_cast<std::size_t>(width) * height,
                                  cudaMemcpyDeviceToDevice, stream), "copy");
        else
            check(cudaMemcpy2DAsync(dst.data, dst.step, src.data, src.step, width, height, cudaMemcpyDeviceToDevice,
                                    stream), "copy");
    };
    // Half a second of copies before the first measurement, so that the first data set is not timed while
    // the GPU's clocks are still rising.
    for (const auto t0 = std::chrono::steady_clock::now();
         std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(500);) {
        for (int i = 0; i < 20; ++i) copy();
        check(cudaStreamSynchronize(stream), "warm-up");
    }
    for (const std::string& dist : dists) {
        fill(host, dist);
        src_store.upload(imghist::view_of(host));
        const double copy_ms = time_device(args.runs, stream, copy);
        // The parts of the device-resident pipelines, timed alone.
        const double hist_ms = time_device(args.runs, stream, [&] { gpuhist::calcHist(src, hist, s); });
        imghist::Lut8 lut;
        for (int v = 0; v < 256; ++v) lut[v] = static_cast<std::uint8_t>(255 - v);
        imghist::FilterOptions fo;
        fo.backend = imghist::Backend::Cuda;
        fo.stream = s;
        const double lut_ms = time_device(args.runs, stream, [&] {
            imghist::apply_lut(imghist::view_of(src), imghist::view_of(dst), &lut, fo);
        });
        const double thr_ms = time_device(args.runs, stream, [&] {
            gpuhist::thresholdAsync(src, dst, 100, 255, cv::THRESH_BINARY, nullptr, s);
        });
        const double eq_ms = time_device(args.runs, stream, [&] { gpuhist::equalizeHist(src, dst, s); });
        const double otsu_ms = time_device(args.runs, stream, [&] {
            gpuhist::thresholdAsync(src, dst, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU, d_thresh, s);
        });
        gpuhist::setBackend(imghist::Backend::Cuda);
        const double mat_ms = time_host(args.cpu_runs, [&] { gpuhist::equalizeHist(host, host_out, s); });
        gpuhist::setBackend(imghist::Backend::Auto);
        cv::Mat pin_in = gpuhist::createPinnedMat(pin_in_store, height, width, CV_8UC1);
        cv::Mat pin_out = gpuhist::createPinnedMat(pin_out_store, height, width, CV_8UC1);
        host.copyTo(pin_in);
        gpuhist::setBackend(imghist::Backend::Cuda);
        const double pinned_ms = time_host(args.cpu_runs, [&] { gpuhist::equalizeHist(pin_in, pin_out, s); });
        gpuhist::setBackend(imghist::Backend::Auto);
        const double cv_eq_ms = time_host(args.cpu_runs, [&] { cv::equalizeHist(host, host_out); });
        cv::Mat tmp;
        const double cv_otsu_ms = time_host(args.cpu_runs, [&] {
            cv::threshold(host, tmp, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU);
        });
        auto add = [&](const std::string& w, double ms, double moved_bytes, double vs, const std::string& note) {
            rows.push_back(make_row(w, dist, device, ms, pixels, moved_bytes, vs, note));
        };
        add("copy/device", copy_ms, 2 * pixels, 1.0, "read+write limit");
        add("hist/device", hist_ms, pixels, copy_ms / hist_ms, "gpuhist::calcHist alone, vs copy");
        add("lut/device", lut_ms, 2 * pixels, copy_ms / lut_ms, "table apply alone, vs copy");
        add("threshold/device", thr_ms, 2 * pixels, copy_ms / thr_ms, "fixed threshold alone, vs copy");
        add("equalize/device", eq_ms, 2 * pixels, copy_ms / eq_ms, "vs copy");
        add("otsu/device", otsu_ms, 2 * pixels, copy_ms / otsu_ms, "vs copy");
        add("equalize/mat", mat_ms, pixels, cv_eq_ms / mat_ms, "vs cv::equalizeHist; GB/s = input bytes");
        add("equalize/mat-pin", pinned_ms, pixels, cv_eq_ms / pinned_ms, "pinned cv::Mat in and out; GB/s = input bytes");
        add("equalize/opencv", cv_eq_ms, pixels, 1.0, "cv::equalizeHist");
        add("otsu/opencv", cv_otsu_ms, pixels, 1.0, "cv::threshold OTSU");
        const double st_ms = time_device(args.runs, stream, [&] { gpuhist::stretchContrast(src, dst, 2, 1, gpuhist::EQUALIZE_LUMA, s); });
        const double match_ms = time_device(args.runs, stream, [&] {
            imghist::match_to_histogram(imghist::view_of(src), imghist::view_of(dst), target, fo);
        });
        const double mo_ms = time_device(args.runs, stream, [&] {
            if (dist != "constant") gpuhist::thresholdMultiOtsu(src, dst, 5, s);
        });
        add("stretch/device", st_ms, 2 * pixels, copy_ms / st_ms, "2%/1%, vs copy");
        add("match/device", match_ms, 2 * pixels, copy_ms / match_ms, "to a fixed histogram, vs copy");
        if (dist != "constant")  // one level: no 5-class split exists
            add("multiotsu5/device", mo_ms, 2 * pixels, copy_ms / mo_ms, "5 classes incl. search, vs copy");
    }

    // Equalization, Otsu, stretch, matching and 5-class multi-Otsu per 1080p and 4K frame (device-resident,
    // photo and uniform data).
    for (const auto& [fw, fh, frame] : {std::tuple{1920, 1080, "1080p"}, std::tuple{3840, 2160, "4K"}}) {
        const double px = static_cast<double>(fw) * fh;
        gpuhist::DeviceImage a(fw, fh), b(fw, fh);
        cv::cuda::GpuMat ga = gpuhist::asGpuMat(a), gb = gpuhist::asGpuMat(b);
        cv::Mat img(fh, fw, CV_8UC1);
        imghist::FilterOptions fo;
        fo.backend = imghist::Backend::Cuda;
        fo.stream = s;
        for (const std::string dist : {"photo", "uniform"}) {
            fill(img, dist);
            a.upload(imghist::view_of(img));
            const double copy_ms = time_device(args.runs, stream, [&] {
                check(cudaMemcpy2DAsync(gb.data, gb.step, ga.data, ga.step, fw, fh, cudaMemcpyDeviceToDevice, stream), "copy");
            });
            const double eq_ms = time_device(args.runs, stream, [&] { gpuhist::equalizeHist(ga, gb, gpuhist::EQUALIZE_LUMA, s); });
            const double otsu_ms = time_device(args.runs, stream, [&] {
                gpuhist::threshold(ga, gb, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU, s);
            });
            const double st_ms = time_device(args.runs, stream, [&] { gpuhist::stretchContrast(ga, gb, 2, 1, gpuhist::EQUALIZE_LUMA, s); });
            const double match_ms = time_device(args.runs, stream, [&] {
                imghist::match_to_histogram(imghist::view_of(ga), imghist::view_of(gb), target, fo);
            });
            const double mo_ms = time_device(args.runs, stream, [&] { gpuhist::thresholdMultiOtsu(ga, gb, 5, s); });
            const cv::Mat hist1 = [&] {
                cv::Mat h;
                cv::calcHist(std::vector<cv::Mat>{img}, {0}, cv::Mat(), h, {256}, {0.f, 256.f});
                return h;
            }();
            std::vector<std::uint64_t> h64(256);
            for (int v = 0; v < 256; ++v) h64[v] = static_cast<std::uint64_t>(hist1.at<float>(v));
            const double search_ms = time_host(args.runs, [&] { imghist::multiotsu_thresholds(h64.data(), 256, 5); }, 3);
            auto add = [&](const std::string& w, double ms, double moved, double vs, const std::string& note) {
                rows.push_back(make_row(w, dist, device, ms, px, moved, vs, note));
            };
            const std::string f = frame;
            add("copy/" + f, copy_ms, 2 * px, 1.0, "read+write limit at " + f);
            add("equalize/" + f, eq_ms, 2 * px, copy_ms / eq_ms, "vs copy");
            add("otsu/" + f, otsu_ms, 2 * px, copy_ms / otsu_ms, "THRESH_OTSU incl. the wait for the level, vs copy");
            add("stretch/" + f, st_ms, 2 * px, copy_ms / st_ms, "2%/1%, vs copy");
            add("match/" + f, match_ms, 2 * px, copy_ms / match_ms, "to a fixed histogram, vs copy");
            add("multiotsu5/" + f, mo_ms, 2 * px, copy_ms / mo_ms,
                f == "1080p" ? "5 classes incl. search; target < 0.050 ms" : "5 classes incl. search");
            add("multiotsu5/search", search_ms, px, mo_ms / search_ms, "host search alone (the CPU backend's; not in the device call)");
        }
    }

    // CLAHE 8K.
    {
        const int cw = 7680, ch = 4320;
        cv::Mat img(ch, cw, CV_8UC1), out(ch, cw, CV_8UC1), ref;
        fill(img, "photo");
        gpuhist::DeviceImage a(cw, ch), b(cw, ch);
        a.upload(imghist::view_of(img));
        cv::cuda::GpuMat ga = gpuhist::asGpuMat(a), gb = gpuhist::asGpuMat(b);
        cv::Ptr<gpuhist::CLAHE> ours = gpuhist::createCLAHE(40.0, cv::Size(8, 8));
        cv::Ptr<cv::CLAHE> theirs = cv::createCLAHE(40.0, cv::Size(8, 8));
        const double dev_ms = time_device(args.runs, stream, [&] { ours->apply(ga, gb, s); });
        gpuhist::setBackend(imghist::Backend::Cuda);
        const double mat_ms = time_host(args.cpu_runs, [&] { ours->apply(img, out, s); });
        gpuhist::setBackend(imghist::Backend::Auto);
        const double cv_ms = time_host(args.cpu_runs, [&] { theirs->apply(img, ref); });
        const double px = static_cast<double>(cw) * ch;
        auto add = [&](const std::string& w, double ms, double vs, const std::string& note) {
            rows.push_back(make_row(w, "photo", device, ms, px, px, vs, note));
        };
        add("clahe/device", dev_ms, cv_ms / dev_ms, "vs cv::CLAHE");
        add("clahe/mat", mat_ms, cv_ms / mat_ms, "vs cv::CLAHE");
        add("clahe/opencv", cv_ms, 1.0, "cv::CLAHE, " + std::to_string(cv::getNumThreads()) + " threads");
    }

    std::printf("%-18s %-9s %10s %10s %10s %9s  %s\n", "workload", "data", "ms", "Gpixel/s", "GB/s", "ratio", "note");
    for (const Row& r : rows)
        std::printf("%-18s %-9s %10.3f %10.1f %10.1f %9.2f  %s\n", r.workload.c_str(), r.data.c_str(), r.ms, r.gpix,
                    r.gbs, r.vs, r.note.c_str());
    if (!args.json.empty()) {
        FILE* f = bench_support::open_json(args.json);
        if (!f) return 1;
        std::fprintf(f, "{\n  \"device\": \"%s\",\n  \"width\": %d, \"height\": %d, \"runs\": %d, \"host_runs\": %d,\n  \"results\": [\n",
                     device.c_str(), width, height, args.runs, args.cpu_runs);
        bench_support::write_json_results(f, rows, [](FILE* out, const Row& r) {
            std::fprintf(out,
                         "    {\"workload\": \"%s\", \"data\": \"%s\", \"ms\": %.6f, \"gpixel_s\": %.3f, \"gb_s\": %.3f, "
                         "\"ratio\": %.4f, \"note\": \"%s\"}",
                         r.workload.c_str(), r.data.c_str(), r.ms, r.gpix, r.gbs, r.vs, r.note.c_str());
        });
    }
    cudaFree(d_thresh);
    cudaStreamDestroy(stream);
    return 0;
}
