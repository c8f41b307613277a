// Filters against OpenCV, pixel for pixel: equalizeHist (gray, luma, per channel), threshold (five types,
// fixed / Otsu / Triangle), CLAHE, calcHist; both backends; cv::Mat and GpuMat paths; every size class,
// ROI offset and distribution of the test plan.
#include <cuda_runtime.h>

#include <array>
#include <cfloat>
#include <cmath>
#include <limits>

#include "filters_support.hpp"
#include "imghist/filters.hpp"
#include "core/policy/backend_choice.hpp"  // the Auto chooser: a fresh start for the routes test
#include "filters/internal.hpp"  // set_parallel_for_observer: what reached the CPU backend

using namespace filters_test;

namespace {

const int kThresholdTypes[] = {cv::THRESH_BINARY, cv::THRESH_BINARY_INV, cv::THRESH_TRUNC, cv::THRESH_TOZERO,
                               cv::THRESH_TOZERO_INV};

/// gpuhist::threshold against cv::threshold for one call on `backend`, through the cv::Mat path and, on the
/// device, the GpuMat path: the same image and the same returned level. Returns cv::threshold's level.
double check_threshold(Backend backend, const cv::Mat& src, double thresh, double maxval, int type) {
    cv::Mat expected;
    const double level = cv::threshold(src, expected, thresh, maxval, type);
    INFO("type " << type << ": cv::threshold gives " << level);
    double got = std::numeric_limits<double>::quiet_NaN();
    check_op(backend, src, expected,
             [&](const cv::Mat& a, cv::Mat& b) { got = gpuhist::threshold(a, b, thresh, maxval, type); },
             [&](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) {
                 REQUIRE(gpuhist::threshold(a, b, thresh, maxval, type) == level);
             });
    REQUIRE(got == level);
    return level;
}

}  // namespace

// ---- equalizeHist ------------------------------------------------------------------------------------------------

IMGHIST_BACKEND_CASE("equalizeHist matches cv::equalizeHist: size classes x ROI offsets x distributions", "[filters][equalize]") {
    std::uint64_t seed = 1;
    for (const Size2& s : size_classes())
        for (int xo : roi_offsets())
            for (Dist d : all_dists()) {
                const cv::Mat src = make_image(s.w, s.h, CV_8UC1, d, seed++, xo);
                cv::Mat expected;
                cv::equalizeHist(src, expected);
                INFO(s.w << "x" << s.h << " offset " << xo << " " << name(d));
                check_op(backend, src, expected, [](const cv::Mat& a, cv::Mat& b) { gpuhist::equalizeHist(a, b); },
                         [](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) { gpuhist::equalizeHist(a, b); });
            }
}

IMGHIST_BACKEND_CASE("equalizeHist of constant images returns the image (OpenCV's special case)", "[filters][equalize]") {
    for (int v : {0, 1, 77, 254, 255}) {
        for (const Size2& s : size_classes()) {
            const cv::Mat src(s.h, s.w, CV_8UC1, cv::Scalar(v));
            cv::Mat expected;
            cv::equalizeHist(src, expected);
            REQUIRE(cv::countNonZero(expected != v) == 0);  // the rule itself, checked on OpenCV
            check_op(backend, src, expected, [](const cv::Mat& a, cv::Mat& b) { gpuhist::equalizeHist(a, b); },
                     [](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) { gpuhist::equalizeHist(a, b); });
        }
    }
    // Two values only, one pixel of the second: the scale's denominator is 1.
    cv::Mat src(17, 9, CV_8UC1, cv::Scalar(40));
    src.at<std::uint8_t>(16, 8) = 41;
    cv::Mat expected;
    cv::equalizeHist(src, expected);
    check_op(backend, src, expected, [](const cv::Mat& a, cv::Mat& b) { gpuhist::equalizeHist(a, b); },
             [](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) { gpuhist::equalizeHist(a, b); });
}

IMGHIST_BACKEND_CASE("equalizeHist in place", "[filters][equalize]") {
    const cv::Mat src = make_image(333, 127, CV_8UC1, Dist::Gauss32, 5);
    cv::Mat expected;
    cv::equalizeHist(src, expected);
    {
        BackendScope scope(backend);
        cv::Mat inplace = src.clone();
        gpuhist::equalizeHist(inplace, inplace);
        FILTERS_REQUIRE_IDENTICAL(inplace, expected);
    }
    if (backend == Backend::Cuda) {
        DeviceMat d(src);
        gpuhist::equalizeHist(d.mat, d.mat);
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        FILTERS_REQUIRE_IDENTICAL(download(d.mat), expected);
    }
}

IMGHIST_BACKEND_CASE("color equalizeHist: luma and per-channel modes match OpenCV compositions", "[filters][equalize][color]") {
    std::uint64_t seed = 100;
    for (int cn : {3, 4})
        for (const Size2& s : size_classes())
            for (int xo : sampled({-1, 1}))
                for (Dist d : all_dists()) {
                    const cv::Mat src = make_image(s.w, s.h, CV_8UC(cn), d, seed++, xo);
                    INFO(cn << " channels, " << s.w << "x" << s.h << " offset " << xo << " " << name(d));
                    const cv::Mat luma = opencv_equalize_luma(src);
                    check_op(backend, src, luma,
                             [](const cv::Mat& a, cv::Mat& b) { gpuhist::equalizeHist(a, b, gpuhist::EQUALIZE_LUMA); },
                             [](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) {
                                 gpuhist::equalizeHist(a, b, gpuhist::EQUALIZE_LUMA);
                             });
                    const cv::Mat per = opencv_equalize_per_channel(src);
                    check_op(backend, src, per,
                             [](const cv::Mat& a, cv::Mat& b) { gpuhist::equalizeHist(a, b, gpuhist::EQUALIZE_PER_CHANNEL); },
                             [](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) {
                                 gpuhist::equalizeHist(a, b, gpuhist::EQUALIZE_PER_CHANNEL);
                             });
                }
}

IMGHIST_BACKEND_CASE("luma equalization over every 24-bit colour matches cvtColor + equalizeHist", "[filters][equalize][color]") {
    // 4096 x 4096 pixels, one per BGR triple: the YCrCb round trip is checked for every colour.
    cv::Mat all(4096, 4096, CV_8UC3);
    for (int y = 0; y < 4096; ++y)
        for (int x = 0; x < 4096; ++x) {
            const std::uint32_t c = static_cast<std::uint32_t>(y) * 4096 + x;
            all.at<cv::Vec3b>(y, x) = cv::Vec3b(c & 255, (c >> 8) & 255, (c >> 16) & 255);
        }
    const cv::Mat expected = opencv_equalize_luma(all);
    check_op(backend, all, expected, [](const cv::Mat& a, cv::Mat& b) { gpuhist::equalizeHist(a, b); },
             [](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) { gpuhist::equalizeHist(a, b); });
}

// ---- threshold -----------------------------------------------------------------------------------------------------

IMGHIST_BACKEND_CASE("threshold with a fixed value matches cv::threshold over types depths channels and edge thresholds", "[filters][threshold]") {
    struct Case {
        int depth;
        std::vector<double> thresholds, maxvals;
    };
    const std::vector<Case> cases{
        {CV_8U, {-5.0, -0.5, 0.0, 100.7, 127.0, 254.0, 254.9, 255.0, 300.0}, {255.0, 100.4, 100.5, 300.0, -3.0}},
        {CV_16U, {-1.0, 0.0, 1000.3, 32767.0, 65534.0, 65535.0, 70000.0}, {65535.0, 4095.5, 70000.0, -1.0}},
        {CV_32F, {-1.0, 0.0, 99.5, 128.25, 256.0}, {1.0, 255.0, 0.5}},
    };
    std::uint64_t seed = 300;
    for (const Case& c : cases)
        for (int cn : {1, 3})
            for (int xo : sampled({-1, 3})) {
                const cv::Mat src = make_image(97, 41, CV_MAKETYPE(c.depth, cn), Dist::Uniform, seed++, xo);
                for (int type : kThresholdTypes)
                    for (double t : sampled(c.thresholds))
                        for (double m : sampled(c.maxvals)) {
                            INFO("depth " << c.depth << " cn " << cn << " type " << type << " t " << t << " maxval " << m);
                            check_threshold(backend, src, t, m, type);
                        }
            }
}

IMGHIST_BACKEND_CASE("Otsu threshold on 8-bit images matches cv::threshold over sizes offsets distributions and bimodal images", "[filters][threshold][otsu]") {
    std::uint64_t seed = 500;
    for (const Size2& s : size_classes())
        for (int xo : sampled({-1, 1, 13}))
            for (Dist d : all_dists()) {
                const cv::Mat src = make_image(s.w, s.h, CV_8UC1, d, seed++, xo);
                INFO(s.w << "x" << s.h << " offset " << xo << " " << name(d) << " (Otsu)");
                for (int type : kThresholdTypes) check_threshold(backend, src, 0, 255, type | cv::THRESH_OTSU);
            }
    // Bimodal images of several separations and weights: the threshold must fall between the modes.
    for (int i = 0; i < 12; ++i) {
        const cv::Mat src = bimodal(301, 97, CV_8U, seed++, 40 + 5 * i, 150 + 7 * i, 6 + i);
        const double r = check_threshold(backend, src, 0, 200, cv::THRESH_BINARY | cv::THRESH_OTSU);
        REQUIRE(r > 40 + 5 * i);
        REQUIRE(r < 150 + 7 * i);
    }
}

// Frames (frame_sizes: which device path each takes), continuous and as ROIs.
IMGHIST_BACKEND_CASE("equalizeHist and Otsu / Triangle thresholds on frames up to 4096x2304 match OpenCV", "[filters][equalize][threshold][frames]") {
    std::uint64_t seed = 700;
    for_each_frame(backend, seed, [&](const cv::Mat& src) {
        const bool gray = src.channels() == 1;
        const cv::Mat expected = gray ? [&] { cv::Mat e; cv::equalizeHist(src, e); return e; }()
                                      : opencv_equalize_per_channel(src);
        check_op(backend, src, expected,
                 [](const cv::Mat& a, cv::Mat& b) { gpuhist::equalizeHist(a, b, gpuhist::EQUALIZE_PER_CHANNEL); },
                 [](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) {
                     gpuhist::equalizeHist(a, b, gpuhist::EQUALIZE_PER_CHANNEL);
                 });
        if (!gray) return;
        for (int automatic : {cv::THRESH_OTSU, cv::THRESH_TRIANGLE})
            check_threshold(backend, src, 0, 200, cv::THRESH_TOZERO_INV | automatic);
    });
}

IMGHIST_BACKEND_CASE("Otsu threshold on 16-bit images matches cv::threshold", "[filters][threshold][otsu]") {
    std::uint64_t seed = 700;
    for (Dist d : all_dists())
        for (int xo : sampled({-1, 2})) {
            const cv::Mat src = make_image(211, 53, CV_16UC1, d, seed++, xo);
            INFO(name(d) << " offset " << xo);
            check_threshold(backend, src, 0, 65535, cv::THRESH_BINARY | cv::THRESH_OTSU);
        }
    check_threshold(backend, bimodal(160, 90, CV_16U, seed++), 0, 1000, cv::THRESH_TOZERO | cv::THRESH_OTSU);
}

IMGHIST_BACKEND_CASE("Triangle threshold matches cv::threshold", "[filters][threshold][triangle]") {
    std::uint64_t seed = 900;
    for (const Size2& s : size_classes())
        for (int xo : sampled({-1, 7}))
            for (Dist d : all_dists()) {
                const cv::Mat src = make_image(s.w, s.h, CV_8UC1, d, seed++, xo);
                INFO(s.w << "x" << s.h << " " << name(d) << " (Triangle)");
                for (int type : kThresholdTypes) check_threshold(backend, src, 0, 255, type | cv::THRESH_TRIANGLE);
            }
    // Skewed histograms to both sides exercise the flipped branch.
    for (int i = 0; i < 8; ++i) {
        const cv::Mat src = bimodal(128, 64, CV_8U, seed++, i < 4 ? 30 : 220, i < 4 ? 90 : 160, 4 + 3 * i);
        check_threshold(backend, src, 0, 255, cv::THRESH_BINARY | cv::THRESH_TRIANGLE);
    }
}

// ---- Auto on host images: every route ------------------------------------------------------------------------------

TEST_CASE("Auto on host images: every route of the histogram filters gives OpenCV's result", "[filters][auto][cuda]") {
    IMGHIST_REQUIRE_CUDA_OR_SKIP();
    // A class new to the chooser visits its routes in order, kSamples + 1 calls each (backend_choice.hpp):
    // for a histogram filter the device, counting on the device with the CPU's table pass, and the CPU. So
    // the first calls of each operation and shape below run every route, and each must give OpenCV's answer.
    imghist::detail::host_backend_chooser().reset();
    const int calls = 3 * (imghist::detail::BackendChooser::kSamples + 1);
    std::uint64_t seed = 4100;
    for (const Size2& s : {Size2{640, 480}, Size2{333, 127}})
        for (int xo : sampled({-1, 7})) {
            INFO(s.w << "x" << s.h << " offset " << xo);
            const cv::Mat gray = make_image(s.w, s.h, CV_8UC1, Dist::Gauss32, seed++, xo);
            const cv::Mat color = make_image(s.w, s.h, CV_8UC3, Dist::Uniform, seed++, xo);
            const cv::Mat deep = make_image(s.w, s.h, CV_16UC1, Dist::Gauss32, seed++, xo);
            cv::Mat eq, eq_color = opencv_equalize_per_channel(color), otsu, otsu16, tri;
            cv::equalizeHist(gray, eq);
            const double t_otsu = cv::threshold(gray, otsu, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU);
            const double t_otsu16 = cv::threshold(deep, otsu16, 0, 65535, cv::THRESH_TOZERO | cv::THRESH_OTSU);
            const double t_tri = cv::threshold(gray, tri, 0, 200, cv::THRESH_BINARY_INV | cv::THRESH_TRIANGLE);
            for (int i = 0; i < calls; ++i) {
                INFO("call " << i);
                cv::Mat out;
                gpuhist::equalizeHist(gray, out);
                FILTERS_REQUIRE_IDENTICAL(out, eq);
                gpuhist::equalizeHist(color, out, gpuhist::EQUALIZE_PER_CHANNEL);
                FILTERS_REQUIRE_IDENTICAL(out, eq_color);
                REQUIRE(gpuhist::threshold(gray, out, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU) == t_otsu);
                FILTERS_REQUIRE_IDENTICAL(out, otsu);
                REQUIRE(gpuhist::threshold(deep, out, 0, 65535, cv::THRESH_TOZERO | cv::THRESH_OTSU) == t_otsu16);
                FILTERS_REQUIRE_IDENTICAL(out, otsu16);
                REQUIRE(gpuhist::threshold(gray, out, 0, 200, cv::THRESH_BINARY_INV | cv::THRESH_TRIANGLE) == t_tri);
                FILTERS_REQUIRE_IDENTICAL(out, tri);
            }
        }
}

// ---- the imghist:: tables on histograms, against OpenCV on images built from them -------------------------------

namespace {
/// An image whose histogram is `h` (values laid out in order, row-major, one row).
cv::Mat image_of_hist(const std::vector<std::uint64_t>& h, int depth) {
    std::uint64_t total = 0;
    for (auto c : h) total += c;
    cv::Mat m(1, static_cast<int>(total), CV_MAKETYPE(depth, 1));
    int x = 0;
    for (std::size_t v = 0; v < h.size(); ++v)
        for (std::uint64_t k = 0; k < h[v]; ++k, ++x) {
            if (depth == CV_8U) m.at<std::uint8_t>(0, x) = static_cast<std::uint8_t>(v);
            else m.at<std::uint16_t>(0, x) = static_cast<std::uint16_t>(v);
        }
    return m;
}
}  // namespace

TEST_CASE("imghist tables from random histograms equal OpenCV's results on matching images", "[filters][tables]") {
    std::mt19937_64 rng(42);
    for (int iter = 0; iter < 300; ++iter) {
        std::vector<std::uint64_t> h(256, 0);
        const int kind = iter % 5;
        const int nonzero = kind == 0 ? 1 : (kind == 1 ? 2 : static_cast<int>(rng() % 256) + 1);
        for (int k = 0; k < nonzero; ++k) h[rng() % 256] += 1 + rng() % (kind == 4 ? 5000 : 60);
        const cv::Mat img = image_of_hist(h, CV_8U);
        cv::Mat eq;
        cv::equalizeHist(img, eq);
        const imghist::Lut8 lut = imghist::equalize_table(h.data());
        for (int x = 0; x < img.cols; ++x) REQUIRE(lut[img.at<std::uint8_t>(0, x)] == eq.at<std::uint8_t>(0, x));
        cv::Mat tmp;
        REQUIRE(imghist::otsu_threshold(h.data()) == cv::threshold(img, tmp, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU));
        REQUIRE(imghist::triangle_threshold(h.data()) == cv::threshold(img, tmp, 0, 255, cv::THRESH_BINARY | cv::THRESH_TRIANGLE));
    }
    for (int iter = 0; iter < 40; ++iter) {
        std::vector<std::uint64_t> h(65536, 0);
        const int nonzero = iter < 5 ? iter + 1 : 50 + static_cast<int>(rng() % 500);
        for (int k = 0; k < nonzero; ++k) h[rng() % 65536] += 1 + rng() % 40;
        const cv::Mat img = image_of_hist(h, CV_16U);
        cv::Mat tmp;
        REQUIRE(imghist::otsu_threshold(h.data(), 65536) ==
                cv::threshold(img, tmp, 0, 65535, cv::THRESH_BINARY | cv::THRESH_OTSU));
    }
    // threshold_table against cv::threshold on the image of all 256 values.
    cv::Mat ramp(1, 256, CV_8UC1);
    for (int v = 0; v < 256; ++v) ramp.at<std::uint8_t>(0, v) = static_cast<std::uint8_t>(v);
    for (int type : kThresholdTypes)
        for (double t : {-3.0, 0.0, 17.5, 200.0, 254.0, 255.0, 999.0})
            for (double m : {255.0, 7.5, 400.0}) {
                cv::Mat out;
                cv::threshold(ramp, out, t, m, type);
                const imghist::Lut8 lut = imghist::threshold_table(t, m, static_cast<imghist::ThresholdType>(type));
                for (int v = 0; v < 256; ++v) REQUIRE(lut[v] == out.at<std::uint8_t>(0, v));
            }
}

// ---- CLAHE --------------------------------------------------------------------------------------------------------

namespace {
struct ClaheStats {
    double max_diff = 0;
    long long differing = 0, total = 0;
};
ClaheStats compare_clahe(const cv::Mat& got, const cv::Mat& expected) {
    ClaheStats s;
    cv::Mat g64, e64, diff;
    got.convertTo(g64, CV_64F);
    expected.convertTo(e64, CV_64F);
    cv::absdiff(g64, e64, diff);
    cv::minMaxLoc(diff, nullptr, &s.max_diff);
    s.differing = cv::countNonZero(diff);
    s.total = static_cast<long long>(got.total());
    return s;
}
}  // namespace

IMGHIST_BACKEND_CASE("CLAHE is within one grey level of cv::CLAHE and identical on most pixels", "[filters][clahe]") {
    struct Geometry {
        int w, h, gx, gy;
    };
    // Multiples of the grid and not (OpenCV then pads with BORDER_REFLECT_101, by a full tile where one
    // direction already was a multiple), tiny images whose padding exceeds the image, 1x1 grids.
    const std::vector<Geometry> geos{{640, 480, 8, 8}, {333, 127, 8, 8}, {640, 481, 8, 8}, {641, 480, 8, 8},
                                     {100, 60, 3, 5},  {5, 3, 8, 8},     {1, 1, 2, 2},     {64, 64, 1, 1},
                                     {257, 129, 16, 16}};
    long long differing = 0, total = 0;
    std::uint64_t seed = 1200;
    for (int depth : {CV_8U, CV_16U})
        for (const Geometry& g : geos)
            for (double clip : {0.0, 1.0, 2.0, 40.0})
                for (Dist d : sampled({Dist::Uniform, Dist::Gauss4, Dist::Photo, Dist::Constant})) {
                    if (depth == CV_16U && (d == Dist::Constant || clip == 1.0)) continue;
                    // Alternately a continuous image and a ROI with parent pixels to its right and below
                    // (cv::CLAHE pads from those before reflecting).
                    const bool roi = (seed % 2) == 0;
                    cv::Mat src;
                    if (roi) {
                        cv::Mat parent = make_image(g.w + 9, g.h + 6, CV_MAKETYPE(depth, 1), d, seed++);
                        src = parent(cv::Rect(3, 2, g.w, g.h));
                    } else {
                        src = make_image(g.w, g.h, CV_MAKETYPE(depth, 1), d, seed++);
                    }
                    cv::Ptr<cv::CLAHE> ref = cv::createCLAHE(clip, cv::Size(g.gx, g.gy));
                    cv::Mat expected;
                    ref->apply(src, expected);
                    cv::Ptr<gpuhist::CLAHE> ours = gpuhist::createCLAHE(clip, cv::Size(g.gx, g.gy));
                    INFO("depth " << depth << " " << g.w << "x" << g.h << " grid " << g.gx << "x" << g.gy << " clip " << clip
                                  << " " << name(d) << (roi ? " ROI" : ""));
                    std::vector<cv::Mat> results;
                    {
                        BackendScope scope(backend);
                        cv::Mat dst;
                        ours->apply(src, dst);
                        results.push_back(dst);
                    }
                    if (backend == Backend::Cuda) {
                        DeviceMat in(src), out(src.rows, src.cols, src.type(), 1);
                        ours->apply(in.mat, out.mat);
                        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
                        results.push_back(download(out.mat));
                    }
                    for (const cv::Mat& r : results) {
                        const ClaheStats s = compare_clahe(r, expected);
                        REQUIRE(s.max_diff <= 1.0);
                        differing += s.differing;
                        total += s.total;
                    }
                    // Both paths of one backend agree exactly with each other.
                    if (results.size() == 2) FILTERS_REQUIRE_IDENTICAL(results[0], results[1]);
                }
    INFO("pixels differing by one grey level: " << differing << " of " << total);
    REQUIRE(differing * 100 <= total);  // identical on at least 99% of pixels
    std::printf("CLAHE: %lld of %lld pixels differ from cv::CLAHE by one grey level\n", differing, total);
}

IMGHIST_BACKEND_CASE("CLAHE in place equals CLAHE into a new image", "[filters][clahe]") {
    const cv::Mat src = make_image(300, 200, CV_8UC1, Dist::Photo, 77);
    cv::Ptr<gpuhist::CLAHE> c = gpuhist::createCLAHE(3.0, cv::Size(4, 6));
    BackendScope scope(backend);
    cv::Mat out, inplace = src.clone();
    c->apply(src, out);
    c->apply(inplace, inplace);
    FILTERS_REQUIRE_IDENTICAL(inplace, out);
    // The cv::CLAHE interface (InputArray / OutputArray) reaches the same code.
    cv::Ptr<cv::CLAHE> base = c;
    cv::Mat via_base;
    base->apply(src, via_base);
    FILTERS_REQUIRE_IDENTICAL(via_base, out);
    REQUIRE(base->getTilesGridSize() == cv::Size(4, 6));
    REQUIRE(base->getClipLimit() == 3.0);
}

// ---- calcHist -----------------------------------------------------------------------------------------------------

namespace {
cv::Mat opencv_hist(const cv::Mat& src, int channel, int bins, float lo, float hi, const cv::Mat& mask) {
    const int channels[] = {channel};
    const int sizes[] = {bins};
    const float range[] = {lo, hi};
    const float* ranges[] = {range};
    cv::Mat h;
    cv::calcHist(&src, 1, channels, mask, h, 1, sizes, ranges);
    return h;  // bins x 1, CV_32F
}
}  // namespace

IMGHIST_BACKEND_CASE("the shipped photographs give OpenCV's results: equalize, Otsu, Triangle, calcHist",
                     "[filters][photos]") {
    for (const char* file : {"camera.png", "astronaut.png", "coffee.png"}) {
        cv::Mat color = sample_photo(file);
        if (color.channels() == 1) cv::cvtColor(color, color, cv::COLOR_GRAY2BGR);  // as imread(IMREAD_COLOR)
        cv::Mat gray;
        cv::cvtColor(color, gray, cv::COLOR_BGR2GRAY);
        INFO(file << " " << color.cols << "x" << color.rows);
        cv::Mat expected;
        cv::equalizeHist(gray, expected);
        check_op(backend, gray, expected, [](const cv::Mat& a, cv::Mat& b) { gpuhist::equalizeHist(a, b); },
                 [](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) { gpuhist::equalizeHist(a, b); });
        check_op(backend, color, opencv_equalize_luma(color),
                 [](const cv::Mat& a, cv::Mat& b) { gpuhist::equalizeHist(a, b, gpuhist::EQUALIZE_LUMA); },
                 [](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) { gpuhist::equalizeHist(a, b, gpuhist::EQUALIZE_LUMA); });
        check_op(backend, color, opencv_equalize_per_channel(color),
                 [](const cv::Mat& a, cv::Mat& b) { gpuhist::equalizeHist(a, b, gpuhist::EQUALIZE_PER_CHANNEL); },
                 [](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) {
                     gpuhist::equalizeHist(a, b, gpuhist::EQUALIZE_PER_CHANNEL);
                 });
        for (int method : {cv::THRESH_OTSU, cv::THRESH_TRIANGLE}) check_threshold(backend, gray, 0, 255, cv::THRESH_BINARY | method);
        BackendScope scope(backend);
        for (int bins : {256, 64}) {
            cv::Mat ours;
            gpuhist::calcHist(color, ours, bins, 0.f, 256.f);
            REQUIRE(ours.cols == 3);
            for (int c = 0; c < 3; ++c) FILTERS_REQUIRE_IDENTICAL(ours.col(c).clone(), opencv_hist(color, c, bins, 0.f, 256.f, cv::Mat()));
        }
    }
}

IMGHIST_BACKEND_CASE("calcHist (cv::Mat) returns what cv::calcHist returns", "[filters][calchist]") {
    std::uint64_t seed = 1500;
    struct Spec {
        int bins;
        float lo, hi;
    };
    const std::vector<Spec> specs{{256, 0, 256}, {64, 0, 256}, {10, 20, 200}, {1, 0, 256}, {100, 0.5f, 255.5f}};
    for (int depth : {CV_8U, CV_16U, CV_32F})
        for (int cn : {1, 3, 4})
            for (int xo : sampled({-1, 2})) {
                const cv::Mat src = make_image(131, 37, CV_MAKETYPE(depth, cn), Dist::Gauss32, seed++, xo);
                cv::Mat mask = make_image(131, 37, CV_8UC1, Dist::Uniform, seed++) > 100;
                for (const Spec& sp : specs)
                    for (bool use_mask : {false, true}) {
                        const float scale = depth == CV_16U ? 257.f : 1.f;
                        const float lo = sp.lo * scale, hi = sp.hi * scale;
                        const cv::Mat m = use_mask ? mask : cv::Mat();
                        BackendScope scope(backend);
                        cv::Mat ours;
                        gpuhist::calcHist(src, ours, sp.bins, lo, hi, m);
                        REQUIRE(ours.type() == CV_32F);
                        REQUIRE(ours.rows == sp.bins);
                        REQUIRE(ours.cols == cn);
                        for (int c = 0; c < cn; ++c) {
                            INFO("depth " << depth << " cn " << cn << " bins " << sp.bins << " mask " << use_mask);
                            FILTERS_REQUIRE_IDENTICAL(ours.col(c).clone(), opencv_hist(src, c, sp.bins, lo, hi, m));
                        }
                    }
            }
}

TEST_CASE("calcHist (GpuMat) matches cv::calcHist as CV_32SC1 rows", "[filters][calchist][cuda]") {
    IMGHIST_REQUIRE_CUDA_OR_SKIP();
    std::uint64_t seed = 1600;
    for (int cn : {1, 3, 4})
        for (const Size2& s : size_classes())
            for (int xo : sampled({-1, 1, 13}))
                for (Dist d : all_dists()) {
                    const cv::Mat src = make_image(s.w, s.h, CV_8UC(cn), d, seed++, xo);
                    const cv::Mat mask = make_image(s.w, s.h, CV_8UC1, Dist::Uniform, seed++, xo) > 128;
                    DeviceMat dsrc(src), dmask(mask);
                    for (int bins : {256, 64}) {
                        for (bool use_mask : {false, true}) {
                            DeviceMat dh(cn, bins, CV_32SC1, 0);
                            if (use_mask) gpuhist::calcHist(dsrc.mat, dh.mat, bins, 0.f, 256.f, dmask.mat);
                            else if (bins == 256) gpuhist::calcHist(dsrc.mat, dh.mat);
                            else gpuhist::calcHist(dsrc.mat, dh.mat, bins, 0.f, 256.f);
                            REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
                            const cv::Mat h = download(dh.mat);
                            for (int c = 0; c < cn; ++c) {
                                cv::Mat ref = opencv_hist(src, c, bins, 0.f, 256.f, use_mask ? mask : cv::Mat());
                                cv::Mat ref32;
                                ref.reshape(1, 1).convertTo(ref32, CV_32S);
                                INFO(cn << " channels " << s.w << "x" << s.h << " " << name(d) << " bins " << bins << " mask " << use_mask);
                                FILTERS_REQUIRE_IDENTICAL(h.row(c).clone(), ref32);
                            }
                        }
                    }
                    // The mask overload in cv::cuda::calcHist's argument order.
                    DeviceMat dh(cn, 256, CV_32SC1, 0);
                    gpuhist::calcHist(dsrc.mat, dmask.mat, dh.mat);
                    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
                    const cv::Mat hm = download(dh.mat);
                    for (int c = 0; c < cn; ++c) {
                        cv::Mat ref32;
                        opencv_hist(src, c, 256, 0.f, 256.f, mask).reshape(1, 1).convertTo(ref32, CV_32S);
                        FILTERS_REQUIRE_IDENTICAL(hm.row(c).clone(), ref32);
                    }
                }
}

// ---- OpenCV's calling conventions: InputArray / OutputArray, cv::setNumThreads -----------------------------------

namespace {

/// All pixels of `m` outside `roi` equal `value` (a destination view must not write beyond itself).
bool outside_is(const cv::Mat& m, const cv::Rect& roi, int value) {
    cv::Mat probe = m.clone();
    probe(roi).setTo(value);
    return cv::countNonZero(probe.reshape(1) != value) == 0;
}

/// What reached the filters' CPU loops: the thread counts parallel_for was given and the parts it ran.
struct ParallelLog {
    static std::vector<std::pair<int, int>>& calls() {
        static std::vector<std::pair<int, int>> c;
        return c;
    }
    static void record(int threads, int parts) { calls().emplace_back(threads, parts); }
    ParallelLog() {
        calls().clear();
        imghist::detail::set_parallel_for_observer(&record);
    }
    ~ParallelLog() { imghist::detail::set_parallel_for_observer(nullptr); }
};

/// cv::setNumThreads for the scope, restored to OpenCV's default afterwards.
struct CvThreadsScope {
    explicit CvThreadsScope(int n) { cv::setNumThreads(n); }
    ~CvThreadsScope() { cv::setNumThreads(-1); }
};

}  // namespace

IMGHIST_BACKEND_CASE("rvalue ROI destinations are written in place, as cv::equalizeHist and cv::threshold do",
                     "[filters][inputarray]") {
    std::uint64_t seed = 1900;
    for (int xo : sampled({-1, 0, 3})) {
        const cv::Mat src = make_image(333, 127, CV_8UC1, Dist::Gauss32, seed++, xo);
        const cv::Rect roi(5, 3, src.cols, src.rows);
        BackendScope scope(backend);
        {
            cv::Mat expected;
            cv::equalizeHist(src, expected);
            cv::Mat big(src.rows + 10, src.cols + 20, CV_8UC1, cv::Scalar(7));
            const uchar* data = big.data;
            gpuhist::equalizeHist(src, big(roi));  // an rvalue destination, as cv::equalizeHist accepts
            REQUIRE(big.data == data);
            FILTERS_REQUIRE_IDENTICAL(big(roi).clone(), expected);
            REQUIRE(outside_is(big, roi, 7));
        }
        {
            cv::Mat expected;
            const double t = cv::threshold(src, expected, 0, 200, cv::THRESH_BINARY | cv::THRESH_OTSU);
            cv::Mat big(src.rows + 10, src.cols + 20, CV_8UC1, cv::Scalar(7));
            REQUIRE(gpuhist::threshold(src, big(roi), 0, 200, cv::THRESH_BINARY | cv::THRESH_OTSU) == t);
            FILTERS_REQUIRE_IDENTICAL(big(roi).clone(), expected);
            REQUIRE(outside_is(big, roi, 7));
        }
        {
            cv::Mat expected;
            cv::createCLAHE(2.0, cv::Size(8, 8))->apply(src, expected);
            cv::Mat big(src.rows + 10, src.cols + 20, CV_8UC1, cv::Scalar(7));
            gpuhist::createCLAHE(2.0, cv::Size(8, 8))->apply(src, big(roi));
            REQUIRE(compare_clahe(big(roi).clone(), expected).max_diff <= 1.0);
            REQUIRE(outside_is(big, roi, 7));
        }
        // A fixed-size destination of the wrong size is refused, as OpenCV refuses it.
        cv::Mat big(src.rows + 10, src.cols + 20, CV_8UC1, cv::Scalar(7));
        const cv::Rect small(0, 0, src.cols - 1, src.rows);
        CHECK_THROWS_AS(cv::equalizeHist(src, big(small)), cv::Exception);
        CHECK_THROWS_AS(gpuhist::equalizeHist(src, big(small)), cv::Exception);
        REQUIRE(cv::countNonZero(big != 7) == 0);
    }
    // A destination of the right size and type is reused; another is reallocated.
    const cv::Mat src = make_image(64, 48, CV_8UC1, Dist::Photo, seed++);
    cv::Mat expected;
    cv::equalizeHist(src, expected);
    BackendScope scope(backend);
    cv::Mat same(src.size(), CV_8UC1), other(3, 3, CV_16UC3);
    const uchar* data = same.data;
    gpuhist::equalizeHist(src, same);
    gpuhist::equalizeHist(src, other);
    CHECK(same.data == data);
    FILTERS_REQUIRE_IDENTICAL(same, expected);
    FILTERS_REQUIRE_IDENTICAL(other, expected);

    if (backend == Backend::Cuda) {
        // An rvalue GpuMat view takes the GpuMat path through the InputArray overload.
        DeviceMat in(src), out(src.rows, src.cols, src.type(), 5);
        gpuhist::equalizeHist(in.mat, cv::cuda::GpuMat(out.mat));
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        FILTERS_REQUIRE_IDENTICAL(download(out.mat), expected);
        DeviceMat small(src.rows, src.cols - 1, src.type(), 0);
        CHECK_THROWS_AS(gpuhist::equalizeHist(in.mat, cv::cuda::GpuMat(small.mat)), cv::Exception);
    }
}

IMGHIST_BACKEND_CASE("cv::UMat sources and destinations give OpenCV's answers", "[filters][inputarray][umat]") {
    std::uint64_t seed = 1950;
    for (int xo : sampled({-1, 3})) {
        const cv::Mat src = make_image(333, 127, CV_8UC1, Dist::Photo, seed++, xo);
        const cv::Mat color = make_image(201, 99, CV_8UC3, Dist::Gauss32, seed++, xo);
        cv::UMat usrc, ucolor;
        src.copyTo(usrc);
        color.copyTo(ucolor);
        BackendScope scope(backend);

        cv::Mat expected;
        cv::equalizeHist(src, expected);
        cv::UMat udst;
        gpuhist::equalizeHist(usrc, udst);
        FILTERS_REQUIRE_IDENTICAL(udst.getMat(cv::ACCESS_READ).clone(), expected);
        cv::Mat mat_dst;  // UMat in, Mat out
        gpuhist::equalizeHist(usrc, mat_dst);
        FILTERS_REQUIRE_IDENTICAL(mat_dst, expected);

        const double t = cv::threshold(src, expected, 0, 255, cv::THRESH_TOZERO | cv::THRESH_TRIANGLE);
        cv::UMat uth;
        REQUIRE(gpuhist::threshold(usrc, uth, 0, 255, cv::THRESH_TOZERO | cv::THRESH_TRIANGLE) == t);
        FILTERS_REQUIRE_IDENTICAL(uth.getMat(cv::ACCESS_READ).clone(), expected);

        cv::UMat ucol_eq;
        gpuhist::equalizeHist(ucolor, ucol_eq, gpuhist::EQUALIZE_PER_CHANNEL);
        expected = opencv_equalize_per_channel(color);
        FILTERS_REQUIRE_IDENTICAL(ucol_eq.getMat(cv::ACCESS_READ).clone(), expected);

        cv::UMat uhist;
        gpuhist::calcHist(ucolor, uhist, 64, 0.f, 256.f);
        const cv::Mat hist = uhist.getMat(cv::ACCESS_READ).clone();
        REQUIRE(hist.type() == CV_32F);
        for (int c = 0; c < 3; ++c)
            FILTERS_REQUIRE_IDENTICAL(hist.col(c).clone(), opencv_hist(color, c, 64, 0.f, 256.f, cv::Mat()));

        cv::Mat clahe_ref;
        cv::createCLAHE(3.0, cv::Size(4, 4))->apply(src, clahe_ref);
        cv::UMat uclahe;
        gpuhist::createCLAHE(3.0, cv::Size(4, 4))->apply(usrc, uclahe);
        REQUIRE(compare_clahe(uclahe.getMat(cv::ACCESS_READ).clone(), clahe_ref).max_diff <= 1.0);
    }
}

IMGHIST_BACKEND_CASE("std::vector<uchar> is a 1xN image, as for cv::equalizeHist, cv::threshold and cv::calcHist",
                     "[filters][inputarray]") {
    std::mt19937 rng(1977);
    for (std::size_t n : {std::size_t(1), std::size_t(17), std::size_t(1000), std::size_t(65537)}) {
        std::vector<uchar> v(n);
        std::normal_distribution<double> g(120, 30);
        for (auto& x : v) x = cv::saturate_cast<uchar>(g(rng));
        BackendScope scope(backend);
        std::vector<uchar> expected, ours;
        cv::equalizeHist(v, expected);
        gpuhist::equalizeHist(v, ours);
        REQUIRE(ours == expected);
        const double t = cv::threshold(v, expected, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU);
        REQUIRE(gpuhist::threshold(v, ours, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU) == t);
        REQUIRE(ours == expected);
        cv::Mat hist;
        gpuhist::calcHist(v, hist);
        FILTERS_REQUIRE_IDENTICAL(hist, opencv_hist(cv::Mat(v).reshape(1, 1), 0, 256, 0.f, 256.f, cv::Mat()));
    }
    std::vector<uchar> none, out;
    CHECK_THROWS_AS(gpuhist::equalizeHist(none, out), cv::Exception);
}

IMGHIST_BACKEND_CASE("host calls follow cv::setNumThreads: the CPU backend gets cv::getNumThreads() threads, results unchanged",
                     "[filters][threads]") {
    const cv::Mat src = make_image(1021, 767, CV_8UC1, Dist::Photo, 1990, 3);
    const cv::Mat color = make_image(511, 255, CV_8UC3, Dist::Gauss32, 1991);
    cv::Mat eq_ref, th_ref, clahe_ref;
    cv::equalizeHist(src, eq_ref);
    const double t_ref = cv::threshold(src, th_ref, 0, 255, cv::THRESH_BINARY_INV | cv::THRESH_OTSU);
    const cv::Mat luma_ref = opencv_equalize_luma(color);
    cv::createCLAHE(2.0, cv::Size(8, 8))->apply(src, clahe_ref);

    cv::Mat clahe_first;
    for (int n : {1, -1, 3}) {  // one thread, OpenCV's default, an explicit count
        CvThreadsScope threads(n);
        const int expected_threads = cv::getNumThreads();
        INFO("cv::setNumThreads(" << n << "): cv::getNumThreads() = " << expected_threads);
        BackendScope scope(backend);
        ParallelLog log;
        cv::Mat eq, th, luma, clahe;
        gpuhist::equalizeHist(src, eq);
        const double t = gpuhist::threshold(src, th, 0, 255, cv::THRESH_BINARY_INV | cv::THRESH_OTSU);
        gpuhist::equalizeHist(color, luma);
        gpuhist::createCLAHE(2.0, cv::Size(8, 8))->apply(src, clahe);
        FILTERS_REQUIRE_IDENTICAL(eq, eq_ref);
        REQUIRE(t == t_ref);
        FILTERS_REQUIRE_IDENTICAL(th, th_ref);
        FILTERS_REQUIRE_IDENTICAL(luma, luma_ref);
        REQUIRE(compare_clahe(clahe, clahe_ref).max_diff <= 1.0);
        if (clahe_first.empty()) clahe_first = clahe;
        FILTERS_REQUIRE_IDENTICAL(clahe, clahe_first);  // the thread count changes nothing, bit for bit
        if (backend == Backend::Cpu) {
            // Every CPU loop of those calls got OpenCV's thread count, and one thread means one part.
            REQUIRE(ParallelLog::calls().size() >= 4);
            for (const auto& [given, parts] : ParallelLog::calls()) {
                CHECK(given == expected_threads);
                CHECK(parts <= expected_threads);
            }
        }
    }
}

// ---- device-resident, asynchronous use ---------------------------------------------------------------------------

TEST_CASE("device-resident pipeline on a caller stream gives exact results without a host round trip", "[filters][async][cuda]") {
    IMGHIST_REQUIRE_CUDA_OR_SKIP();
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    int* d_thresh = nullptr;
    int* h_thresh = nullptr;
    REQUIRE(cudaMalloc(&d_thresh, sizeof(int)) == cudaSuccess);
    REQUIRE(cudaMallocHost(&h_thresh, sizeof(int)) == cudaSuccess);
    std::uint64_t seed = 1700;
    for (int iter = 0; iter < 6; ++iter) {
        const cv::Mat src = iter % 2 ? bimodal(1023, 257, CV_8U, seed++) : make_image(1023, 257, CV_8UC1, Dist::Photo, seed++, 3);
        cv::Mat eq_ref, th_ref;
        cv::equalizeHist(src, eq_ref);
        const double otsu = cv::threshold(src, th_ref, 0, 255, cv::THRESH_BINARY_INV | cv::THRESH_OTSU);
        DeviceMat in(src), eq(src.rows, src.cols, CV_8UC1, 1), th(src.rows, src.cols, CV_8UC1, 2);
        // Enqueue everything, then wait once.
        gpuhist::equalizeHist(in.mat, eq.mat, imghist::Stream(stream));
        gpuhist::thresholdAsync(in.mat, th.mat, 0, 255, cv::THRESH_BINARY_INV | cv::THRESH_OTSU, d_thresh, imghist::Stream(stream));
        cudaMemcpyAsync(h_thresh, d_thresh, sizeof(int), cudaMemcpyDeviceToHost, stream);
        REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
        REQUIRE(*h_thresh == otsu);
        FILTERS_REQUIRE_IDENTICAL(download(eq.mat), eq_ref);
        FILTERS_REQUIRE_IDENTICAL(download(th.mat), th_ref);
        // The computed threshold may also go straight to pinned host memory.
        *h_thresh = -1;
        gpuhist::thresholdAsync(in.mat, th.mat, 0, 255, cv::THRESH_BINARY_INV | cv::THRESH_OTSU, h_thresh, imghist::Stream(stream));
        REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
        REQUIRE(*h_thresh == otsu);
    }
    // A large image on the staging path: several chunks per slot, slots reused.
    const cv::Mat big = make_image(6000, 6100, CV_8UC1, Dist::Gauss32, seed++);
    cv::Mat big_ref, big_out;
    cv::equalizeHist(big, big_ref);
    {
        BackendScope scope(Backend::Cuda);
        gpuhist::equalizeHist(big, big_out, imghist::Stream(stream));
    }
    FILTERS_REQUIRE_IDENTICAL(big_out, big_ref);
    const cv::Mat big_roi = big(cv::Rect(3, 5, 5990, 6090));
    cv::Mat roi_ref, roi_out;
    const double r = cv::threshold(big_roi, roi_ref, 0, 255, cv::THRESH_TRUNC | cv::THRESH_OTSU);
    {
        BackendScope scope(Backend::Cuda);
        REQUIRE(gpuhist::threshold(big_roi, roi_out, 0, 255, cv::THRESH_TRUNC | cv::THRESH_OTSU) == r);
    }
    FILTERS_REQUIRE_IDENTICAL(roi_out, roi_ref);
    // Page-locked cv::Mats are transferred directly (no staging); any mix of pinned and pageable works.
    imghist::PinnedBuffer pin_a, pin_b;
    const cv::Mat pin_src = gpuhist::createPinnedMat(pin_a, 1500, 2001, CV_8UC1);
    cv::Mat pin_dst = gpuhist::createPinnedMat(pin_b, 1500, 2001, CV_8UC1);
    make_image(2001, 1500, CV_8UC1, Dist::Photo, seed++).copyTo(pin_src);
    cv::Mat pin_ref, pageable_out;
    cv::equalizeHist(pin_src, pin_ref);
    {
        BackendScope scope(Backend::Cuda);
        gpuhist::equalizeHist(pin_src, pin_dst, imghist::Stream(stream));
        FILTERS_REQUIRE_IDENTICAL(pin_dst, pin_ref);
        gpuhist::equalizeHist(pin_src, pageable_out);
        FILTERS_REQUIRE_IDENTICAL(pageable_out, pin_ref);
        pin_dst.setTo(0);
        gpuhist::equalizeHist(pin_src.clone(), pin_dst);
        FILTERS_REQUIRE_IDENTICAL(pin_dst, pin_ref);
    }
    cudaFreeHost(h_thresh);
    cudaFree(d_thresh);
    cudaStreamDestroy(stream);
}

// ---- errors -------------------------------------------------------------------------------------------------------

TEST_CASE("errors reach OpenCV users as cv::Exception with OpenCV's codes", "[filters][errors]") {
    const cv::Mat gray = make_image(32, 16, CV_8UC1, Dist::Uniform, 1);
    const cv::Mat f32 = make_image(32, 16, CV_32FC1, Dist::Uniform, 2);
    const cv::Mat color = make_image(32, 16, CV_8UC3, Dist::Uniform, 3);
    const cv::Mat two = cv::Mat(16, 32, CV_8UC2, cv::Scalar(1, 2));
    cv::Mat out;
    REQUIRE(cv_error_code([&] { gpuhist::equalizeHist(cv::Mat(), out); }) == cv::Error::StsBadArg);
    REQUIRE(cv_error_code([&] { gpuhist::equalizeHist(f32, out); }) == cv::Error::StsUnsupportedFormat);
    REQUIRE(cv_error_code([&] { gpuhist::equalizeHist(two, out); }) == cv::Error::BadNumChannels);
    {
        // A destination that partially overlaps its source is refused by every operation (in place is fine).
        BackendScope scope(Backend::Cpu);
        cv::Mat big = make_image(40, 16, CV_8UC1, Dist::Uniform, 4);
        const cv::Mat src = big(cv::Rect(0, 0, 32, 16));
        cv::Mat dst = big(cv::Rect(3, 0, 32, 16));
        REQUIRE(cv_error_code([&] { gpuhist::equalizeHist(src, dst); }) == cv::Error::StsBadArg);
        REQUIRE(cv_error_code([&] { gpuhist::threshold(src, dst, 9, 255, cv::THRESH_BINARY); }) == cv::Error::StsBadArg);
        REQUIRE(cv_error_code([&] { gpuhist::createCLAHE(2.0, cv::Size(4, 4))->apply(src, dst); }) == cv::Error::StsBadArg);
        cv::Mat same = src;
        REQUIRE(cv_error_code([&] { gpuhist::equalizeHist(same, same); }) == 0);
    }
    REQUIRE(cv_error_code([&] { gpuhist::threshold(color, out, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU); }) ==
            cv::Error::BadNumChannels);
    REQUIRE(cv_error_code([&] { gpuhist::threshold(f32, out, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU); }) ==
            cv::Error::StsUnsupportedFormat);
    REQUIRE(cv_error_code([&] { gpuhist::threshold(gray, out, 0, 255, 5); }) == cv::Error::StsBadArg);
    REQUIRE(cv_error_code([&] { gpuhist::threshold(gray, out, 0, 255, cv::THRESH_OTSU | cv::THRESH_TRIANGLE); }) ==
            cv::Error::StsBadArg);
    REQUIRE(cv_error_code([&] { gpuhist::calcHist(gray, out, 256, 0.f, 256.f, cv::Mat(8, 8, CV_8UC1, cv::Scalar(1))); }) ==
            cv::Error::StsUnmatchedSizes);
    REQUIRE(cv_error_code([&] { gpuhist::calcHist(gray, out, 256, 10.f, 10.f); }) == cv::Error::StsBadArg);
    REQUIRE(cv_error_code([&] { gpuhist::createCLAHE(40.0, cv::Size(0, 8)); }) == cv::Error::StsBadArg);
    REQUIRE(cv_error_code([&] { gpuhist::createCLAHE()->apply(color, out); }) == cv::Error::BadNumChannels);
    REQUIRE(cv_error_code([&] { gpuhist::createCLAHE()->apply(f32, out); }) == cv::Error::StsUnsupportedFormat);
    // Nothing was thrown for valid calls of the same shapes.
    REQUIRE(cv_error_code([&] { gpuhist::equalizeHist(gray, out); }) == 0);

    // GpuMat inputs: no device here means GpuNotSupported; with a device, an output that does not fit and
    // cannot be created (OpenCV without CUDA) is GpuNotSupported too.
    if (!imghist::cuda_available()) {
        static unsigned char fake[64];
        cv::cuda::GpuMat g(4, 16, CV_8UC1, fake, 16), d;
        REQUIRE(cv_error_code([&] { gpuhist::equalizeHist(g, d); }) == cv::Error::GpuNotSupported);
        REQUIRE(cv_error_code([&] { gpuhist::threshold(g, d, 1, 2, cv::THRESH_BINARY); }) == cv::Error::GpuNotSupported);
        // A GpuMat reaches the InputArray entry points as a view, also where OpenCV has no CUDA (there
        // _InputArray::getGpuMat() throws StsNotImplemented): a host destination is the caller's error.
        cv::Mat host_dst;
        REQUIRE(cv_error_code([&] { gpuhist::equalizeHist(cv::InputArray(g), cv::OutputArray(host_dst)); }) ==
                cv::Error::StsBadArg);
        BackendScope scope(Backend::Cuda);
        REQUIRE(cv_error_code([&] { gpuhist::equalizeHist(gray, out); }) == cv::Error::GpuNotSupported);
    } else {
        DeviceMat in(gray);
        cv::cuda::GpuMat wrong;
        if (cv::cuda::getCudaEnabledDeviceCount() == 0)
            REQUIRE(cv_error_code([&] { gpuhist::equalizeHist(in.mat, wrong); }) == cv::Error::GpuNotSupported);
        DeviceMat small(8, 8, CV_8UC1, 0);
        REQUIRE(cv_error_code([&] { gpuhist::calcHist(in.mat, small.mat, wrong); }) == cv::Error::StsUnmatchedSizes);
    }
}

TEST_CASE("createDeviceMat gives an owning device image viewed as a GpuMat", "[filters][cuda]") {
    IMGHIST_REQUIRE_CUDA_OR_SKIP();
    gpuhist::DeviceImage store;
    cv::cuda::GpuMat g = gpuhist::createDeviceMat(store, 48, 50, CV_16UC3);
    REQUIRE(g.rows == 48);
    REQUIRE(g.cols == 50);
    REQUIRE(g.type() == CV_16UC3);
    REQUIRE(g.data == store.data());
    REQUIRE(g.step == store.pitch());
}
