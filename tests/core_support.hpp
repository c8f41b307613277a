// Test helpers for the core library: image builders, the two references (OpenCV and a plain loop), and
// running one request on either backend with the image placed at the same alignment on host and device.
#pragma once

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "imghist/imghist.hpp"
#include "imghist/opencv.hpp"
#include "support.hpp"

namespace imghist_test {

using imghist::Backend;
using imghist::BinSpec;
using imghist::Histogram;
using imghist::ImageView;
using imghist::SampleType;

/// A host image in its own buffer: rows `pitch` bytes apart, first byte at a chosen offset from a
/// 64-byte boundary (so views can start at any alignment).
struct TestImage {
    HostBuffer buf;
    ImageView view;

    TestImage() = default;
    TestImage(int w, int h, SampleType t, int channels, std::size_t pitch = 0, std::size_t offset = 0) {
        const std::size_t row = static_cast<std::size_t>(w) * channels * imghist::sample_size(t);
        if (pitch == 0) pitch = row;
        buf.resize(pitch * std::max(h, 1) + 64, offset);
        view = ImageView::host(buf.ptr, w, h, t, channels, pitch);
    }
    template <class T>
    T* row(int y) { return reinterpret_cast<T*>(buf.ptr + static_cast<std::size_t>(y) * view.pitch); }
    template <class T, class F>
    void fill(F&& f) {  // f(x, y, c) -> T
        for (int y = 0; y < view.height; ++y)
            for (int x = 0; x < view.width; ++x)
                for (int c = 0; c < view.channels; ++c) row<T>(y)[x * view.channels + c] = static_cast<T>(f(x, y, c));
    }
};

enum class Dist { Uniform, Normal, Binomial, Poisson, Exponential, Constant };
inline const char* dist_name(Dist d) {
    switch (d) {
        case Dist::Uniform: return "uniform";
        case Dist::Normal: return "normal";
        case Dist::Binomial: return "binomial";
        case Dist::Poisson: return "poisson";
        case Dist::Exponential: return "exponential";
        case Dist::Constant: return "constant";
    }
    return "?";
}

/// Random sample of a distribution scaled to [0, maxv], clamped.
inline double draw(Dist d, std::mt19937_64& rng, double maxv) {
    switch (d) {
        case Dist::Uniform: return std::uniform_real_distribution<double>(0, maxv + 1)(rng);
        case Dist::Normal: return std::normal_distribution<double>(maxv / 2, maxv / 8)(rng);
        case Dist::Binomial: return std::binomial_distribution<int>(static_cast<int>(std::min(maxv, 1e6)), 0.3)(rng);
        case Dist::Poisson: return std::poisson_distribution<int>(maxv / 10)(rng);
        case Dist::Exponential: return std::exponential_distribution<double>(8.0 / maxv)(rng);
        case Dist::Constant: return maxv * 0.6;
    }
    return 0;
}

template <class T>
void fill_dist(TestImage& img, Dist d, std::uint64_t seed, double maxv) {
    std::mt19937_64 rng(seed);
    img.fill<T>([&](int, int, int) {
        double v = std::floor(draw(d, rng, maxv));
        return static_cast<T>(std::clamp(v, 0.0, maxv));
    });
}

/// Independent plain-loop reference of the binning rule (as cv::calcHist defines it).
inline Histogram plain_reference(const ImageView& img, const BinSpec& spec, const ImageView* mask = nullptr) {
    Histogram h = Histogram::zeros(spec, img.channels);
    const double a = spec.bins / (spec.high - spec.low);
    const double b = -a * spec.low;
    for (int y = 0; y < img.height; ++y) {
        const unsigned char* row = img.row(y);
        for (int x = 0; x < img.width; ++x) {
            if (mask && mask->row(y)[x] == 0) continue;
            for (int c = 0; c < img.channels; ++c) {
                const unsigned char* p = row + (static_cast<std::size_t>(x) * img.channels + c) * img.sample_bytes();
                double v = 0;
                switch (img.type) {
                    case SampleType::U8: v = *p; break;
                    case SampleType::U16: { std::uint16_t t; std::memcpy(&t, p, 2); v = t; break; }
                    case SampleType::I32: { std::int32_t t; std::memcpy(&t, p, 4); v = t; break; }
                    case SampleType::F32: { float t; std::memcpy(&t, p, 4); v = t; break; }
                }
                if (std::isnan(v) || v < spec.low || v >= spec.high) {
                    h.out_of_range[c]++;
                    continue;
                }
                int idx = static_cast<int>(std::floor(v * a + b));
                idx = std::min(std::max(idx, 0), spec.bins - 1);
                h.counts[static_cast<std::size_t>(c) * spec.bins + idx]++;
            }
        }
    }
    return h;
}

inline bool opencv_can(SampleType t) { return t != SampleType::I32; }

/// cv::calcHist, one call per channel, counts converted from CV_32F (exact below 2^24 per bin).
inline std::vector<std::uint64_t> opencv_reference(const ImageView& img, const BinSpec& spec, const ImageView* mask = nullptr) {
    std::vector<std::uint64_t> out(static_cast<std::size_t>(img.channels) * spec.bins, 0);
    if (img.empty()) return out;
    cv::Mat m(img.height, img.width, CV_MAKETYPE(imghist::cv_depth(img.type), img.channels), const_cast<void*>(img.data), img.pitch);
    cv::Mat cm;
    if (mask) cm = cv::Mat(mask->height, mask->width, CV_8UC1, const_cast<void*>(mask->data), mask->pitch);
    const float range[] = {static_cast<float>(spec.low), static_cast<float>(spec.high)};
    const float* ranges[] = {range};
    for (int c = 0; c < img.channels; ++c) {
        cv::Mat hist;
        const int channels[] = {c};
        const int size[] = {spec.bins};
        cv::calcHist(&m, 1, channels, cm, hist, 1, size, ranges, true, false);
        for (int b = 0; b < spec.bins; ++b)
            out[static_cast<std::size_t>(c) * spec.bins + b] = static_cast<std::uint64_t>(hist.at<float>(b));
    }
    return out;
}

/// A host view's bytes copied to the device at the same alignment modulo 64, complete there when constructed
/// (device_ready).
struct DeviceCopy {
    imghist::DeviceBuffer buf;
    ImageView view;
    explicit DeviceCopy(const ImageView& h) {
        view = h;
        view.location = imghist::Location::Device;
        if (h.empty() || h.data == nullptr) return;
        auto p = reinterpret_cast<std::uintptr_t>(h.data);
        const std::uintptr_t start = p & ~std::uintptr_t(63);
        const std::size_t bytes = (p - start) + h.pitch * (h.height - 1) + h.row_bytes();
        buf.reserve(bytes);
        buf.upload(reinterpret_cast<const void*>(start), bytes);
        view.data = static_cast<const unsigned char*>(buf.data()) + (p - start);
        imghist_test::device_ready();
    }
};

/// calc_hist on the given backend. For CUDA the image (and mask) are first copied to device memory at the
/// same alignment, so the kernels see exactly the ROI geometry the host view has.
inline Histogram run_backend(Backend backend, const ImageView& img, const BinSpec& spec, const ImageView* mask = nullptr) {
    imghist::Options opt;
    opt.backend = backend;
    if (backend == Backend::Cpu) {
        if (mask) opt.mask = *mask;
        return imghist::calc_hist(img, spec, opt);
    }
    DeviceCopy di(img);
    std::optional<DeviceCopy> dm;
    if (mask) {
        dm.emplace(*mask);
        opt.mask = dm->view;
    }
    return imghist::calc_hist(di.view, spec, opt);
}

/// Compares a backend's result with the plain loop (and with OpenCV where OpenCV defines the answer).
inline void check_against_references(Backend backend, const ImageView& img, const BinSpec& spec,
                                     const ImageView* mask = nullptr, bool with_opencv = true) {
    const Histogram got = run_backend(backend, img, spec, mask);
    const Histogram ref = plain_reference(img, spec, mask);
    CAPTURE(img.width, img.height, img.channels, imghist::to_string(img.type), img.pitch, spec.bins, spec.low, spec.high);
    REQUIRE(got.channels == img.channels);
    REQUIRE(got.backend == backend);
    REQUIRE(got.counts == ref.counts);
    REQUIRE(got.out_of_range == ref.out_of_range);
    if (with_opencv && opencv_can(img.type)) {
        const auto cvref = opencv_reference(img, spec, mask);
        REQUIRE(got.counts == cvref);
    }
}

}  // namespace imghist_test
