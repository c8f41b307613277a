// batch_filters_bench — the batch filters (imghist/batch_filters.hpp) on device batches against their peers in the
// same process: a loop of our single-image calls, a device copy, the uniform batch of the same pixel count.
//
//   batch_filters_bench [--runs N] [--json FILE] [--quick]
//
// Workloads (8-bit gray, device-resident, one stream; the targets in the notes):
//   equalize/256x640x480   equalize_hist_batch on a uniform (256, 480, 640) batch vs a loop of equalize_hist calls
//                          (target >= 5x; torchvision's batched equalize on the same tensor: bench/peers/
//                          torchvision_equalize.py, target >= 10x its time)
//   equalize/64x1080p      equalize_hist_batch on a uniform (64, 1080, 1920) batch vs a device copy: the fraction
//                          of the copy's bandwidth, each image read twice and written once (target >= 0.60)
//   equalize/varshape256   256 images from 320x240 to 1920x1080 as a list vs a uniform batch of the same pixel
//                          count, time per pixel (target <= 1.3)
//   otsu/256x640x480       threshold_batch(Otsu) with the levels on the device vs a loop of threshold calls writing
//                          their level to the device (target >= 5x)
//   clahe/64x1080p         clahe_batch (8x8 tiles, clip 2) vs a loop of Clahe::apply (target >= 3x)
// Device timings: CUDA events around the enqueue of the whole batch (or loop) on one stream, after warm-up, median
// of --runs runs (>= 21). Data: uniform bytes, gauss sigma 32, constant, a tiled photograph (camera.png).
#include <cuda_runtime.h>

#include <opencv2/core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "imghist/batch_filters.hpp"
#include "imghist/buffer.hpp"

#include "bench_support.hpp"

namespace {

using bench_support::check;
using bench_support::time_device;

struct Args {
    int runs = 30;
    std::string json;
    bool quick = false;
};

/// `n` bytes of a data set: rows of `width` for the photograph's tiling.
void fill(std::vector<std::uint8_t>& v, std::size_t width, const std::string& dist) {
    if (dist == "constant") {
        std::fill(v.begin(), v.end(), std::uint8_t(94));
        return;
    }
    if (dist == "photo") {
        static const cv::Mat tile = bench_support::load_photo_tile("batch_filters_bench");
        for (std::size_t i = 0; i < v.size(); ++i) {
            const std::size_t y = i / width, x = i % width;
            v[i] = tile.at<std::uint8_t>(static_cast<int>(y % tile.rows), static_cast<int>(x % tile.cols));
        }
        return;
    }
    cv::Mat m(1, static_cast<int>(v.size()), CV_8UC1, v.data());
    cv::RNG rng(12345);
    if (dist == "uniform") rng.fill(m, cv::RNG::UNIFORM, 0, 256);
    else rng.fill(m, cv::RNG::NORMAL, 128, 32);
}

/// A device buffer of `bytes` with a data set in it.
struct DeviceBytes {
    imghist::DeviceBuffer buf;
    DeviceBytes(std::size_t bytes, std::size_t width, const std::string& dist) : buf(bytes) {
        std::vector<std::uint8_t> host(bytes);
        fill(host, width, dist);
        buf.upload(host.data(), bytes);
    }
    void* data() { return buf.data(); }
};

/// A packed uniform batch of n images of w x h at `base`.
imghist::ImageBatch uniform(void* base, int n, int w, int h) {
    return imghist::ImageBatch::uniform(imghist::ImageView::device(base, w, h), static_cast<std::size_t>(n));
}

/// Image i of a packed uniform batch.
imghist::ImageView image(void* base, int i, int w, int h) {
    return imghist::ImageView::device(static_cast<std::uint8_t*>(base) + static_cast<std::size_t>(i) * w * h, w, h);
}

struct Row {
    std::string workload, data;
    double ms = 0, ref_ms = 0, ratio = 0;
    std::string vs;
};

}  // namespace

int main(int argc, char** argv) {
    Args args;
    const int usage_exit = bench_support::parse_options(
        argc, argv, "[--runs N] [--json FILE] [--quick]",
        [&](const std::string& a, const std::function<std::string()>& next) {
            if (a == "--runs") args.runs = std::max(21, std::atoi(next().c_str()));
            else if (a == "--json") args.json = next();
            else if (a == "--quick") args.quick = true;
            else return false;
            return true;
        });
    if (usage_exit >= 0) return usage_exit;
    if (args.quick) args.runs = 21;
    if (!imghist::cuda_available()) {
        std::fprintf(stderr, "batch_filters_bench: no CUDA device\n");
        return 3;
    }
    const std::string device = imghist::cuda_device_name(0);
    std::printf("device: %s, runs %d\n\n", device.c_str(), args.runs);
    cudaStream_t stream;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    imghist::FilterOptions o;
    o.backend = imghist::Backend::Cuda;
    o.stream = reinterpret_cast<imghist::Stream>(stream);
    std::vector<Row> rows;
    auto add = [&](const std::string& w, const std::string& d, double ms, double ref_ms, double ratio, const std::string& vs) {
        rows.push_back(Row{w, d, ms, ref_ms, ratio, vs});
    };
    const std::vector<std::string> dists =
        args.quick ? std::vector<std::string>{"uniform", "photo"}
                   : std::vector<std::string>{"uniform", "gauss32", "constant", "photo"};
    int* d_levels = nullptr;
    check(cudaMalloc(&d_levels, 256 * sizeof(int)), "malloc");

    // 256 x 640x480: equalize and Otsu against a loop of single calls.
    {
        const int n = 256, w = 640, h = 480;
        const std::size_t bytes = static_cast<std::size_t>(n) * w * h;
        imghist::DeviceBuffer out(bytes);
        for (const std::string& dist : dists) {
            DeviceBytes in(bytes, w, dist);
            const double batch_ms = time_device(args.runs, stream, [&] {
                imghist::equalize_hist_batch(uniform(in.data(), n, w, h), uniform(out.data(), n, w, h), o);
            });
            const double loop_ms = time_device(args.runs, stream, [&] {
                for (int i = 0; i < n; ++i) imghist::equalize_hist(image(in.data(), i, w, h), image(out.data(), i, w, h), o);
            });
            add("equalize/256x640x480", dist, batch_ms, loop_ms, loop_ms / batch_ms, "loop of equalize_hist (>= 5)");
            const double otsu_ms = time_device(args.runs, stream, [&] {
                imghist::threshold_batch(uniform(in.data(), n, w, h), uniform(out.data(), n, w, h), 0, 255,
                                         imghist::ThresholdType::Binary, imghist::AutoThreshold::Otsu, o, d_levels);
            });
            const double otsu_loop_ms = time_device(args.runs, stream, [&] {
                for (int i = 0; i < n; ++i)
                    imghist::threshold(image(in.data(), i, w, h), image(out.data(), i, w, h), 0, 255,
                                       imghist::ThresholdType::Binary, imghist::AutoThreshold::Otsu, o, d_levels + i);
            });
            add("otsu/256x640x480", dist, otsu_ms, otsu_loop_ms, otsu_loop_ms / otsu_ms, "loop of threshold (>= 5)");
        }
    }

    // 64 x 1080p: equalize against a device copy (three transfers: two reads, one write).
    {
        const int n = 64, w = 1920, h = 1080;
        const std::size_t bytes = static_cast<std::size_t>(n) * w * h;
        imghist::DeviceBuffer out(bytes);
        for (const std::string& dist : dists) {
            DeviceBytes in(bytes, w, dist);
            const double copy_ms = time_device(args.runs, stream, [&] {
                check(cudaMemcpyAsync(out.data(), in.data(), bytes, cudaMemcpyDeviceToDevice, stream), "copy");
            });
            const double ms = time_device(args.runs, stream, [&] {
                imghist::equalize_hist_batch(uniform(in.data(), n, w, h), uniform(out.data(), n, w, h), o);
            });
            // The copy moves 2 x bytes in copy_ms; the batch moves 3 x bytes in ms.
            add("equalize/64x1080p", dist, ms, copy_ms, (3.0 * bytes / ms) / (2.0 * bytes / copy_ms),
                "fraction of a copy's bandwidth, 3 transfers (>= 0.60)");
        }
    }

    // 256 images of mixed sizes as a list, against a uniform batch of the same pixel count.
    {
        const int sizes[][2] = {{320, 240}, {640, 480}, {800, 600}, {1024, 768}, {1280, 720}, {1600, 900}, {1920, 1080}};
        std::vector<std::pair<int, int>> dims;
        std::size_t total = 0;
        for (int i = 0; i < 256; ++i) {
            const auto& s = sizes[(i * 5 + i / 7) % 7];
            dims.push_back({s[0], s[1]});
            total += static_cast<std::size_t>(s[0]) * s[1];
        }
        const int uw = 1024, uh = static_cast<int>(total / 256 / uw);
        const std::size_t ubytes = static_cast<std::size_t>(256) * uw * uh;
        imghist::DeviceBuffer vout(total), uout(ubytes);
        for (const std::string& dist : dists) {
            DeviceBytes vin(total, 1024, dist), uin(ubytes, uw, dist);
            std::vector<imghist::ImageView> src, dst;
            std::size_t at = 0;
            for (const auto& [w, h] : dims) {
                src.push_back(imghist::ImageView::device(static_cast<std::uint8_t*>(vin.data()) + at, w, h));
                dst.push_back(imghist::ImageView::device(static_cast<std::uint8_t*>(vout.data()) + at, w, h));
                at += static_cast<std::size_t>(w) * h;
            }
            const imghist::ImageBatch vs = imghist::ImageBatch::list(src), vd = imghist::ImageBatch::list(dst);
            const double var_ms = time_device(args.runs, stream, [&] { imghist::equalize_hist_batch(vs, vd, o); });
            const double uni_ms = time_device(args.runs, stream, [&] {
                imghist::equalize_hist_batch(uniform(uin.data(), 256, uw, uh), uniform(uout.data(), 256, uw, uh), o);
            });
            const double per_pixel = (var_ms / static_cast<double>(total)) / (uni_ms / static_cast<double>(ubytes));
            add("equalize/varshape256", dist, var_ms, uni_ms, per_pixel,
                "time per pixel vs uniform 256x" + std::to_string(uw) + "x" + std::to_string(uh) + " (<= 1.3)");
        }
    }

    // 64 x 1080p CLAHE (8x8 tiles, clip 2) against a loop of single calls.
    {
        const int n = 64, w = 1920, h = 1080;
        const std::size_t bytes = static_cast<std::size_t>(n) * w * h;
        imghist::DeviceBuffer out(bytes);
        const imghist::Clahe clahe(2.0, 8, 8);
        for (const std::string dist : {"photo", "uniform"}) {
            DeviceBytes in(bytes, w, dist);
            const double ms = time_device(args.runs, stream, [&] {
                imghist::clahe_batch(clahe, uniform(in.data(), n, w, h), uniform(out.data(), n, w, h), o);
            });
            const double loop_ms = time_device(args.runs, stream, [&] {
                for (int i = 0; i < n; ++i) clahe.apply(image(in.data(), i, w, h), image(out.data(), i, w, h), o);
            });
            add("clahe/64x1080p", dist, ms, loop_ms, loop_ms / ms, "loop of Clahe::apply (>= 3)");
        }
    }

    std::printf("%-22s %-9s %10s %10s %8s  %s\n", "workload", "data", "ms", "peer ms", "ratio", "peer (target)");
    for (const Row& r : rows)
        std::printf("%-22s %-9s %10.3f %10.3f %8.2f  %s\n", r.workload.c_str(), r.data.c_str(), r.ms, r.ref_ms, r.ratio,
                    r.vs.c_str());
    if (!args.json.empty()) {
        FILE* f = bench_support::open_json(args.json);
        if (!f) return 1;
        std::fprintf(f, "{\n  \"device\": \"%s\",\n  \"runs\": %d,\n  \"results\": [\n", device.c_str(), args.runs);
        bench_support::write_json_results(f, rows, [](FILE* out, const Row& r) {
            std::fprintf(out,
                         "    {\"workload\": \"%s\", \"data\": \"%s\", \"ms\": %.6f, \"peer_ms\": %.6f, \"ratio\": %.4f, "
                         "\"peer\": \"%s\"}",
                         r.workload.c_str(), r.data.c_str(), r.ms, r.ref_ms, r.ratio, r.vs.c_str());
        });
    }
    cudaFree(d_levels);
    cudaStreamDestroy(stream);
    return 0;
}
