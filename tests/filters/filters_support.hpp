// Test helpers for the filters: generated images (size classes, ROI offsets, five distributions), device
// copies that keep the host ROI's misalignment, and exact comparisons. References always come from
// OpenCV (or from a plain loop written here), never from the code under test.
#pragma once

#include <cuda_runtime.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include "io/opencv_image.hpp"  // imghist_io's decoders, for the shipped photographs

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gpuhist/gpuhist.hpp"
#include "opencv_reference.hpp"
#include "support.hpp"

namespace filters_test {

using imghist::Backend;

/// The five data distributions of the test plan.
enum class Dist { Uniform, Constant, Gauss4, Gauss32, Photo };
inline const char* name(Dist d) {
    switch (d) {
        case Dist::Uniform: return "uniform";
        case Dist::Constant: return "constant";
        case Dist::Gauss4: return "gauss4";
        case Dist::Gauss32: return "gauss32";
        case Dist::Photo: return "photo";
    }
    return "?";
}
/// IMGHIST_TEST_SHAPES_ONLY=1 (set by scripts/run_gpu_suite.sh for the compute-sanitizer steps, where every
/// launch costs about a hundred times more, and by scripts/fuzz.sh for the suite under ASan+UBSan): the cases
/// keep every size class but run two of the five distributions and two ROI offsets, since what the sanitizers
/// look for (out-of-bounds and uninitialised accesses, races) depends on shapes and alignment far more than on
/// values; lists a test writes out itself go through sampled() (below) for the same reason. Plain runs use the
/// full lists (CI's CUDA and CPU-only configurations).
inline bool shapes_only() {
    static const bool on = [] {
        const char* e = std::getenv("IMGHIST_TEST_SHAPES_ONLY");
        return e != nullptr && *e != '\0' && *e != '0';
    }();
    return on;
}
/// A list of case values as the test writes it; under IMGHIST_TEST_SHAPES_ONLY its first and last entries only.
template <class T>
std::vector<T> sampled(const std::vector<T>& all) {
    if (!shapes_only() || all.size() <= 2) return all;
    return {all.front(), all.back()};
}
template <class T>
std::vector<T> sampled(std::initializer_list<T> all) {
    return sampled(std::vector<T>(all));
}
/// A list of values that change neither which kernels run nor how they read and write (parameters of the
/// same table, pixel distributions on one path); under IMGHIST_TEST_SHAPES_ONLY its first entry only.
template <class T>
std::vector<T> sampled_first(const std::vector<T>& all) {
    if (!shapes_only() || all.empty()) return all;
    return {all.front()};
}
template <class T>
std::vector<T> sampled_first(std::initializer_list<T> all) {
    return sampled_first(std::vector<T>(all));
}
/// The channel numbers 0 .. channels-1, sampled().
inline std::vector<int> sampled_channels(int channels) {
    std::vector<int> c(static_cast<std::size_t>(channels));
    for (int k = 0; k < channels; ++k) c[static_cast<std::size_t>(k)] = k;
    return sampled(c);
}

inline const std::vector<Dist>& all_dists() {
    static const std::vector<Dist> d{Dist::Uniform, Dist::Constant, Dist::Gauss4, Dist::Gauss32, Dist::Photo};
    static const std::vector<Dist> quick{Dist::Uniform, Dist::Photo};
    return shapes_only() ? quick : d;
}

/// Size classes: single pixel, tiny odd, one row, one column, small, odd medium, VGA.
struct Size2 {
    int w, h;
};
inline const std::vector<Size2>& size_classes() {
    static const std::vector<Size2> s{{1, 1}, {7, 3}, {257, 1}, {1, 131}, {64, 64}, {333, 127}, {640, 480}};
    return s;
}
/// Frames for the frame-size cases: 1080p and 4096x2304. On the device, 1080p gray takes the one-launch
/// filters (fused_kernels.cuh) and larger frames the two-kernel path by default; scripts/run_gpu_suite.sh
/// also runs every case with the one-launch path off and with it on for every size, where 4096x2304 goes
/// past the segments each thread keeps in registers, so its second pass re-reads. The CPU backend has no
/// path that starts above 1080p, so it takes 1080p only; IMGHIST_TEST_SHAPES_ONLY keeps 4096x2304 only.
inline std::vector<Size2> frame_sizes(Backend backend) {
    if (backend == Backend::Cpu) return {{1920, 1080}};
    if (shapes_only()) return {{4096, 2304}};
    return {{1920, 1080}, {4096, 2304}};
}
/// ROI x-offsets in elements: -1 means a fresh continuous image; others cut a ROI from a wider parent.
inline const std::vector<int>& roi_offsets() {
    static const std::vector<int> o{-1, 0, 1, 3, 13};
    static const std::vector<int> quick{-1, 13};
    return shapes_only() ? quick : o;
}

/// One of the shipped photographs (samples/images) as stored, 8-bit gray or colour (in OpenCV's channel
/// order, BGR). Read with imghist_io's decoders (cli::read_cv_mat), so that the test needs no OpenCV
/// imgcodecs; the decoders have their own tests against imgcodecs and PIL (tests/cli). The files are part of
/// the repository: a missing or unreadable one fails the test instead of being replaced by something else.
inline cv::Mat sample_photo(const std::string& name) {
    const std::string path = imghist_test::source_dir() + "/samples/images/" + name;
    INFO("photograph " << path);
    const cv::Mat m = cli::read_cv_mat(path);
    REQUIRE((m.type() == CV_8UC1 || m.type() == CV_8UC3));
    return m;
}

/// A photograph (camera.png in gray, coffee.png in colour) of the given channels.
inline cv::Mat photo(int channels) {
    static cv::Mat gray, color;
    if (gray.empty() || color.empty()) {
        gray = sample_photo("camera.png");
        color = sample_photo("coffee.png");
    }
    if (channels == 1) return gray;
    if (channels == 3) return color;
    cv::Mat bgra;
    cv::cvtColor(color, bgra, cv::COLOR_BGR2BGRA);
    // Give alpha some content so that copying it is checked.
    for (int y = 0; y < bgra.rows; ++y)
        for (int x = 0; x < bgra.cols; ++x) bgra.at<cv::Vec4b>(y, x)[3] = static_cast<std::uint8_t>((x * 7 + y * 3) & 255);
    return bgra;
}

/// Fills `m` (any depth of 8U / 16U / 32F) with a distribution; values cover the depth's range.
inline void fill(cv::Mat& m, Dist d, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int depth = m.depth();
    const double scale = depth == CV_16U ? 257.0 : 1.0;
    const double top = depth == CV_16U ? 65535.0 : 255.0;
    if (d == Dist::Photo) {
        cv::Mat p = photo(m.channels());
        cv::Mat tiled(m.rows, m.cols, p.type());
        for (int y = 0; y < m.rows; ++y)
            for (int x = 0; x < m.cols; ++x)
                std::memcpy(tiled.ptr(y) + x * p.elemSize(), p.ptr(y % p.rows) + (x % p.cols) * p.elemSize(), p.elemSize());
        if (depth == CV_8U) tiled.copyTo(m);
        else if (depth == CV_16U) tiled.convertTo(m, CV_16U, 257.0, 0.0);  // full 16-bit range, still smooth
        else tiled.convertTo(m, CV_32F, 1.0, 0.25);
        return;
    }
    std::uniform_real_distribution<double> uni(0.0, top + 1.0);
    std::normal_distribution<double> g4(top * 0.45, 4.0 * scale), g32(top * 0.55, 32.0 * scale);
    const double constant = std::floor(top * 0.37);
    const int n = m.cols * m.channels();
    for (int y = 0; y < m.rows; ++y)
        for (int i = 0; i < n; ++i) {
            double v = 0;
            switch (d) {
                case Dist::Uniform: v = uni(rng); break;
                case Dist::Constant: v = constant; break;
                case Dist::Gauss4: v = g4(rng); break;
                case Dist::Gauss32: v = g32(rng); break;
                default: break;
            }
            if (depth == CV_32F) {
                m.ptr<float>(y)[i] = static_cast<float>(std::clamp(v, 0.0, 256.0));
            } else {
                v = std::clamp(std::floor(v), 0.0, top);
                if (depth == CV_8U) m.ptr<std::uint8_t>(y)[i] = static_cast<std::uint8_t>(v);
                else m.ptr<std::uint16_t>(y)[i] = static_cast<std::uint16_t>(v);
            }
        }
}

/// An image of the given size; with x_offset >= 0 a ROI starting x_offset elements into a wider parent
/// (so rows are padded and the first byte is unaligned), with -1 a continuous image.
inline cv::Mat make_image(int w, int h, int type, Dist d, std::uint64_t seed, int x_offset = -1) {
    if (x_offset < 0) {
        cv::Mat m(h, w, type);
        fill(m, d, seed);
        return m;
    }
    cv::Mat parent(h, w + x_offset + 5, type);
    fill(parent, d, seed);
    return parent(cv::Rect(x_offset, 0, w, h));
}

/// The frame cases: each size of frame_sizes(backend), continuous and as a ROI, gray and colour, as a
/// Dist::Photo image made with the next `seed` (which counts up); `check` gets each under an INFO naming it.
template <class Check>
void for_each_frame(Backend backend, std::uint64_t& seed, Check&& check) {
    for (const Size2& s : frame_sizes(backend))
        for (int xo : {-1, 7})
            for (int cn : {1, 3}) {
                const cv::Mat src = make_image(s.w, s.h, CV_8UC(cn), Dist::Photo, seed++, xo);
                INFO(s.w << "x" << s.h << " offset " << xo << " channels " << cn);
                check(src);
            }
}

/// Two well-separated modes plus noise (Otsu's home ground); `depth` 8U or 16U.
inline cv::Mat bimodal(int w, int h, int depth, std::uint64_t seed, double m1 = 60, double m2 = 180, double sd = 15) {
    cv::Mat m(h, w, CV_MAKETYPE(depth, 1));
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> a(m1, sd), b(m2, sd);
    std::bernoulli_distribution pick(0.35);
    const double s = depth == CV_16U ? 257.0 : 1.0, top = depth == CV_16U ? 65535.0 : 255.0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const double v = std::clamp(std::floor((pick(rng) ? a(rng) : b(rng)) * s), 0.0, top);
            if (depth == CV_8U) m.at<std::uint8_t>(y, x) = static_cast<std::uint8_t>(v);
            else m.at<std::uint16_t>(y, x) = static_cast<std::uint16_t>(v);
        }
    return m;
}

/// Exact equality of two images of the same type, bit for bit (floats compared as bytes).
inline bool identical(const cv::Mat& a, const cv::Mat& b, std::string* where = nullptr) {
    if (a.size() != b.size() || a.type() != b.type()) {
        if (where) *where = "shape/type differ";
        return false;
    }
    const std::size_t row = a.cols * a.elemSize();
    for (int y = 0; y < a.rows; ++y)
        if (std::memcmp(a.ptr(y), b.ptr(y), row) != 0) {
            if (where) {
                for (std::size_t i = 0; i < row; ++i)
                    if (a.ptr(y)[i] != b.ptr(y)[i]) {
                        *where = "first difference at row " + std::to_string(y) + ", byte " + std::to_string(i) + ": " +
                                 std::to_string(a.ptr(y)[i]) + " vs " + std::to_string(b.ptr(y)[i]);
                        break;
                    }
            }
            return false;
        }
    return true;
}

#define FILTERS_REQUIRE_IDENTICAL(a, b)              \
    do {                                             \
        std::string where_;                          \
        const bool same_ = filters_test::identical((a), (b), &where_); \
        INFO(where_);                                \
        REQUIRE(same_);                              \
    } while (0)

/// Selects the backend for cv::Mat inputs for the scope.
struct BackendScope {
    explicit BackendScope(Backend b) { gpuhist::setBackend(b); }
    ~BackendScope() { gpuhist::setBackend(Backend::Auto); }
};

/// A device copy of a host image that keeps its ROI placement (so the device view is misaligned the same
/// way), viewed as a GpuMat; or an output of a given shape. Complete on the device when constructed.
struct DeviceMat {
    imghist::DeviceImage store;
    cv::cuda::GpuMat mat;

    DeviceMat() = default;
    /// Uploads the whole parent of `host` (a ROI or a whole image) and views the ROI at the same place, so
    /// the device view has the same misalignment and the same surroundings as the host one.
    explicit DeviceMat(const cv::Mat& host) {
        cv::Size whole;
        cv::Point ofs;
        host.locateROI(whole, ofs);
        cv::Mat parent = host;
        parent.adjustROI(ofs.y, whole.height - host.rows - ofs.y, ofs.x, whole.width - host.cols - ofs.x);
        const auto type = imghist::sample_type_from_cv_depth(host.depth());
        store.create(parent.cols, parent.rows, type, host.channels());
        store.upload(imghist::view_of(parent));
        mat = gpuhist::asGpuMat(store)(cv::Rect(ofs.x, ofs.y, host.cols, host.rows));
        imghist_test::device_ready();
    }
    /// An uninitialised device image of rows x cols x type, viewed at x-offset `xo`.
    DeviceMat(int rows, int cols, int type, int xo) {
        store.create(cols + xo, rows, imghist::sample_type_from_cv_depth(CV_MAT_DEPTH(type)), CV_MAT_CN(type));
        cudaMemset2D(store.data(), store.pitch(), 0xCD, (cols + xo) * CV_ELEM_SIZE(type), rows);
        mat = gpuhist::asGpuMat(store)(cv::Rect(xo, 0, cols, rows));
        imghist_test::device_ready();
    }
};

inline cv::Mat download(const cv::cuda::GpuMat& g) {
    cv::Mat m(g.rows, g.cols, g.type());
    const cudaError_t e = cudaMemcpy2D(m.data, m.step, g.data, g.step, g.cols * g.elemSize(), g.rows, cudaMemcpyDeviceToHost);
    REQUIRE(e == cudaSuccess);
    return m;
}

/// Runs a filter through the cv::Mat path on `backend`, and for CUDA also through the GpuMat path with the
/// input and output at different misalignments; every result must equal `expected` exactly.
template <class MatFn, class GpuFn>
inline void check_op(Backend backend, const cv::Mat& src, const cv::Mat& expected, MatFn&& mat_fn, GpuFn&& gpu_fn) {
    {
        BackendScope scope(backend);
        cv::Mat dst;
        mat_fn(src, dst);
        FILTERS_REQUIRE_IDENTICAL(dst, expected);
    }
    if (backend == Backend::Cuda) {
        DeviceMat in(src);
        for (int xo : {0, 5}) {
            DeviceMat out(src.rows, src.cols, src.type(), xo);
            gpu_fn(in.mat, out.mat);
            REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
            FILTERS_REQUIRE_IDENTICAL(download(out.mat), expected);
        }
    }
}

/// The code of the cv::Exception `f` throws (OpenCV's cv::Error codes), 0 when it throws none.
template <class F>
int cv_error_code(F&& f) {
    const std::optional<cv::Exception> e = imghist_test::thrown<cv::Exception>(std::forward<F>(f));
    return e ? e->code : 0;
}

/// A 1 x N 8-bit image whose histogram is `h` (levels in ascending order).
inline cv::Mat image_with(const std::vector<std::uint64_t>& h) {
    std::uint64_t n = 0;
    for (auto c : h) n += c;
    cv::Mat m(1, static_cast<int>(n), CV_8UC1);
    int x = 0;
    for (int v = 0; v < 256; ++v)
        for (std::uint64_t k = 0; k < h[static_cast<std::size_t>(v)]; ++k) m.at<std::uint8_t>(0, x++) = static_cast<std::uint8_t>(v);
    return m;
}

}  // namespace filters_test
