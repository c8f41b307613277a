// gpuhist::calcHist in cv::calcHist's own two signatures (pointer and vector form) against cv::calcHist called
// with the same arguments: every depth, channels of 1/3/4-channel images and across several images, odd sizes,
// ROI offsets 0-15, masks, accumulation (also into values that are not whole numbers), omitted ranges; the
// shapes handed to cv::calcHist itself; the errors; and the calls users write, with literals and vectors, next
// to the older overloads (no ambiguity). Both backends; the CUDA case is skipped without a device.
#include <array>
#include <string>
#include <vector>

#include "filters_support.hpp"

using namespace filters_test;

namespace {

/// The pointer form on both sides with the same arguments; hist_in is the starting histogram (accumulate).
void check_pointer_form(const std::vector<cv::Mat>& images, int channel, const cv::Mat& mask, int bins,
                        const float* range, bool accumulate, const cv::Mat& hist_in) {
    const int channels[] = {channel};
    const int sizes[] = {bins};
    const float* ranges[] = {range};
    const float** r = range ? ranges : nullptr;
    cv::Mat expected = hist_in.clone(), got = hist_in.clone();
    cv::calcHist(images.data(), static_cast<int>(images.size()), channels, mask, expected, 1, sizes, r, true, accumulate);
    gpuhist::calcHist(images.data(), static_cast<int>(images.size()), channels, mask, got, 1, sizes, r, true, accumulate);
    REQUIRE(got.type() == CV_32FC1);
    REQUIRE(got.rows == bins);
    REQUIRE(got.cols == 1);
    FILTERS_REQUIRE_IDENTICAL(got, expected);
}

/// A value range per depth and a few bin counts that cover exact bin edges and partial ranges.
struct RangeCase {
    int bins;
    float low, high;
};
std::vector<RangeCase> ranges_for(int depth) {
    if (depth == CV_8U) return {{256, 0, 256}, {64, 0, 256}, {10, 20, 200}, {1, 0, 256}, {100, 0.5f, 255.5f}};
    if (depth == CV_16U) return {{65536, 0, 65536}, {1024, 0, 65536}, {77, 1000.5f, 60000}, {3, 0, 65536}};
    return {{256, 0, 256}, {100, 0.25f, 200}, {7, -1, 300}, {4096, 0, 1}};
}

}  // namespace

IMGHIST_BACKEND_CASE("calcHist in cv::calcHist's pointer form equals cv::calcHist: depths, channels, ROIs, masks",
                     "[filters][calchist]") {
    BackendScope scope(backend);
    std::uint64_t seed = 3000;
    const std::vector<Size2> sizes{{1, 1}, {7, 3}, {257, 1}, {1, 131}, {333, 127}};
    for (int depth : {CV_8U, CV_16U, CV_32F})
        for (int cn : sampled({1, 3, 4}))
            for (const Size2& s : sizes)
                for (int xo : roi_offsets()) {
                    const cv::Mat src = make_image(s.w, s.h, CV_MAKETYPE(depth, cn), Dist::Gauss32, seed++, xo);
                    const cv::Mat mask = make_image(s.w, s.h, CV_8UC1, Dist::Uniform, seed++, xo) > 90;
                    for (const RangeCase& rc : sampled(ranges_for(depth)))
                        for (int c : sampled_channels(cn))
                            for (bool use_mask : {false, true}) {
                                INFO("depth " << depth << " cn " << cn << " " << s.w << "x" << s.h << " xo " << xo
                                              << " bins " << rc.bins << " [" << rc.low << ", " << rc.high << ") channel "
                                              << c << " mask " << use_mask);
                                const float range[] = {rc.low, rc.high};
                                check_pointer_form({src}, c, use_mask ? mask : cv::Mat(), rc.bins, range, false, cv::Mat());
                            }
                }
}

IMGHIST_BACKEND_CASE("calcHist in cv::calcHist's pointer form: ROI offsets 0-15, channels across images, frames",
                     "[filters][calchist]") {
    BackendScope scope(backend);
    std::uint64_t seed = 3500;
    const float range[] = {0, 256};
    const float range16[] = {0, 65536};
    // Every x-offset 0-15 of a ROI, for each depth and 3 / 4 channels.
    for (int depth : {CV_8U, CV_16U, CV_32F})
        for (int cn : {3, 4})
            for (int xo = 0; xo <= 15; ++xo) {
                const cv::Mat src = make_image(101, 9, CV_MAKETYPE(depth, cn), Dist::Uniform, seed++, xo);
                for (int c = 0; c < cn; ++c) {
                    INFO("depth " << depth << " cn " << cn << " xo " << xo << " channel " << c);
                    check_pointer_form({src}, c, cv::Mat(), 64, depth == CV_16U ? range16 : range, false, cv::Mat());
                }
            }
    // Channel numbers run across the images' concatenated channels: gray (0), BGR (1-3), BGRA (4-7).
    for (int depth : {CV_8U, CV_16U, CV_32F}) {
        const std::vector<cv::Mat> images{make_image(61, 17, CV_MAKETYPE(depth, 1), Dist::Gauss4, seed++, 2),
                                          make_image(61, 17, CV_MAKETYPE(depth, 3), Dist::Uniform, seed++),
                                          make_image(61, 17, CV_MAKETYPE(depth, 4), Dist::Gauss32, seed++, 5)};
        const cv::Mat mask = make_image(61, 17, CV_8UC1, Dist::Uniform, seed++) > 30;
        for (int c = 0; c < 8; ++c)
            for (bool use_mask : {false, true}) {
                INFO("depth " << depth << " concatenated channel " << c << " mask " << use_mask);
                check_pointer_form(images, c, use_mask ? mask : cv::Mat(), 256, depth == CV_16U ? range16 : range, false,
                                   cv::Mat());
            }
    }
    // Frames of each channel count (the CPU backend's value-counting paths), photo and uniform data.
    for (int cn : {1, 3, 4})
        for (Dist d : sampled({Dist::Photo, Dist::Uniform})) {
            const cv::Mat src = make_image(1920, 1080, CV_8UC(cn), d, seed++);
            for (int c = 0; c < cn; ++c) {
                INFO("1920x1080 cn " << cn << " " << name(d) << " channel " << c);
                check_pointer_form({src}, c, cv::Mat(), 256, range, false, cv::Mat());
                check_pointer_form({src}, c, cv::Mat(), 256, nullptr, false, cv::Mat());  // ranges omitted: [0, 256)
            }
        }
}

IMGHIST_BACKEND_CASE("calcHist in cv::calcHist's forms accumulates as cv::calcHist does", "[filters][calchist]") {
    BackendScope scope(backend);
    const cv::Mat a = make_image(211, 33, CV_8UC3, Dist::Gauss32, 4000, 3);
    const cv::Mat b = make_image(211, 33, CV_8UC3, Dist::Uniform, 4001);
    const cv::Mat mask = make_image(211, 33, CV_8UC1, Dist::Uniform, 4002) > 128;
    const float range[] = {0, 256};
    // Accumulating into an earlier result, into values that are not whole numbers (cv::calcHist rounds them to
    // ints, half to even, first), and into a histogram of the wrong shape (reallocated: nothing to add to).
    cv::Mat start;
    cv::calcHist(&a, 1, std::array<int, 1>{1}.data(), mask, start, 1, std::array<int, 1>{64}.data(),
                 std::array<const float*, 1>{range}.data());
    check_pointer_form({b}, 2, cv::Mat(), 64, range, true, start);
    cv::Mat fractions(64, 1, CV_32F);
    for (int i = 0; i < 64; ++i) fractions.at<float>(i) = 0.5f * static_cast<float>(i) - 3.25f;
    check_pointer_form({b}, 0, mask, 64, range, true, fractions);
    check_pointer_form({b}, 0, mask, 64, range, true, cv::Mat(10, 1, CV_32F, cv::Scalar(7)));
    check_pointer_form({b}, 0, mask, 64, range, true, cv::Mat());
    // The vector form, twice into the same hist.
    cv::Mat ours, theirs;
    for (int round = 0; round < 2; ++round) {
        gpuhist::calcHist(std::vector<cv::Mat>{a}, {1}, mask, ours, {32}, {0, 256}, round == 1);
        cv::calcHist(std::vector<cv::Mat>{a}, {1}, mask, theirs, {32}, {0, 256}, round == 1);
        FILTERS_REQUIRE_IDENTICAL(ours, theirs);
    }
}

IMGHIST_BACKEND_CASE("calcHist in cv::calcHist's forms: the calls users write compile and agree", "[filters][calchist]") {
    BackendScope scope(backend);
    const cv::Mat img = make_image(97, 41, CV_8UC3, Dist::Photo, 4100, 1);
    const cv::Mat gray = make_image(97, 41, CV_8UC1, Dist::Gauss32, 4101);
    const cv::Mat mask = make_image(97, 41, CV_8UC1, Dist::Uniform, 4102) > 10;
    cv::Mat expected, hist;
    // The pointer form with C arrays, as in OpenCV's tutorials.
    {
        int channels[] = {0};
        int histSize[] = {256};
        float range[] = {0, 256};
        const float* ranges[] = {range};
        cv::calcHist(&img, 1, channels, cv::Mat(), expected, 1, histSize, ranges, true, false);
        gpuhist::calcHist(&img, 1, channels, cv::Mat(), hist, 1, histSize, ranges, true, false);
        FILTERS_REQUIRE_IDENTICAL(hist, expected);
        gpuhist::calcHist(&img, 1, channels, cv::noArray(), hist, 1, histSize, ranges);
        FILTERS_REQUIRE_IDENTICAL(hist, expected);
        cv::calcHist(&gray, 1, nullptr, mask, expected, 1, histSize, nullptr);
        gpuhist::calcHist(&gray, 1, nullptr, mask, hist, 1, histSize, nullptr);
        FILTERS_REQUIRE_IDENTICAL(hist, expected);
    }
    // OpenCV's calcHist_Demo.cpp word for word: planes of a split image, channels as the literal 0.
    {
        std::vector<cv::Mat> bgr_planes;
        cv::split(img, bgr_planes);
        int histSize = 256;
        float range[] = {0, 256};
        const float* histRange[] = {range};
        bool uniform = true, accumulate = false;
        cv::Mat b_hist, b_expected;
        cv::calcHist(&bgr_planes[0], 1, 0, cv::Mat(), b_expected, 1, &histSize, histRange, uniform, accumulate);
        gpuhist::calcHist(&bgr_planes[0], 1, 0, cv::Mat(), b_hist, 1, &histSize, histRange, uniform, accumulate);
        FILTERS_REQUIRE_IDENTICAL(b_hist, b_expected);
    }
    // The vector form: vectors, and braced literals for channels, histSize and ranges.
    {
        const std::vector<cv::Mat> images{img};
        const std::vector<int> channels{2}, histSize{50};
        const std::vector<float> ranges{0.f, 256.f};
        cv::calcHist(images, channels, mask, expected, histSize, ranges);
        gpuhist::calcHist(images, channels, mask, hist, histSize, ranges);
        FILTERS_REQUIRE_IDENTICAL(hist, expected);
        cv::calcHist(std::vector<cv::Mat>{img}, {1}, cv::Mat(), expected, {256}, {0, 256});
        gpuhist::calcHist(std::vector<cv::Mat>{img}, {1}, cv::Mat(), hist, {256}, {0, 256});
        FILTERS_REQUIRE_IDENTICAL(hist, expected);
        gpuhist::calcHist(images, {1}, cv::noArray(), hist, {256}, {0.f, 256.f}, false);
        FILTERS_REQUIRE_IDENTICAL(hist, expected);
        cv::calcHist(std::vector<cv::Mat>{gray}, {0}, cv::Mat(), expected, {16}, {});  // 8-bit: ranges omitted
        gpuhist::calcHist(std::vector<cv::Mat>{gray}, {0}, cv::Mat(), hist, {16}, {});
        FILTERS_REQUIRE_IDENTICAL(hist, expected);
        gpuhist::calcHist(gray, {0}, cv::Mat(), hist, {16}, {});  // a single image stands for a list of one
        FILTERS_REQUIRE_IDENTICAL(hist, expected);
    }
    // The older overloads still resolve as before: one column per channel.
    gpuhist::calcHist(img, hist);
    REQUIRE(hist.size() == cv::Size(3, 256));
    gpuhist::calcHist(img, hist, 64, 0.f, 256.f);
    REQUIRE(hist.size() == cv::Size(3, 64));
    gpuhist::calcHist(gray, hist, 256, 0.f, 256.f, mask);
    cv::calcHist(&gray, 1, std::array<int, 1>{0}.data(), mask, expected, 1, std::array<int, 1>{256}.data(),
                 std::array<const float*, 1>{std::array<float, 2>{0, 256}.data()}.data());
    FILTERS_REQUIRE_IDENTICAL(hist, expected);
}

IMGHIST_BACKEND_CASE("calcHist in cv::calcHist's forms: dims > 1, non-uniform ranges and many bins are cv::calcHist's",
                     "[filters][calchist]") {
    BackendScope scope(backend);
    const cv::Mat bgr = make_image(123, 45, CV_8UC3, Dist::Photo, 4200);
    cv::Mat hsv;
    cv::cvtColor(bgr, hsv, cv::COLOR_BGR2HSV);
    cv::Mat expected, hist;
    // The tutorials' hue-saturation histogram.
    cv::calcHist(std::vector<cv::Mat>{hsv}, {0, 1}, cv::Mat(), expected, {30, 32}, {0, 180, 0, 256});
    gpuhist::calcHist(std::vector<cv::Mat>{hsv}, {0, 1}, cv::Mat(), hist, {30, 32}, {0, 180, 0, 256});
    REQUIRE(hist.size() == cv::Size(32, 30));
    FILTERS_REQUIRE_IDENTICAL(hist, expected);
    // Non-uniform bins, 8-bit and float.
    const float edges[] = {0, 10, 50, 51, 200, 256};
    const float* ranges[] = {edges};
    const int channels[] = {1}, sizes[] = {5};
    cv::calcHist(&bgr, 1, channels, cv::Mat(), expected, 1, sizes, ranges, false);
    gpuhist::calcHist(&bgr, 1, channels, cv::Mat(), hist, 1, sizes, ranges, false);
    FILTERS_REQUIRE_IDENTICAL(hist, expected);
    const cv::Mat f32 = make_image(50, 20, CV_32FC1, Dist::Uniform, 4201);
    cv::calcHist(&f32, 1, nullptr, cv::Mat(), expected, 1, sizes, ranges, false);
    gpuhist::calcHist(&f32, 1, nullptr, cv::Mat(), hist, 1, sizes, ranges, false);
    FILTERS_REQUIRE_IDENTICAL(hist, expected);
    // More bins than 8-bit values.
    cv::calcHist(std::vector<cv::Mat>{bgr}, {2}, cv::Mat(), expected, {1000}, {0, 256});
    gpuhist::calcHist(std::vector<cv::Mat>{bgr}, {2}, cv::Mat(), hist, {1000}, {0, 256});
    FILTERS_REQUIRE_IDENTICAL(hist, expected);
}

TEST_CASE("calcHist in cv::calcHist's forms refuses what cv::calcHist refuses, with OpenCV's codes",
          "[filters][calchist][errors]") {
    const cv::Mat gray = make_image(32, 16, CV_8UC1, Dist::Uniform, 1);
    const cv::Mat bgr = make_image(32, 16, CV_8UC3, Dist::Uniform, 2);
    const cv::Mat small = make_image(8, 16, CV_8UC1, Dist::Uniform, 3);
    const cv::Mat w16 = make_image(32, 16, CV_16UC1, Dist::Uniform, 4);
    const cv::Mat s8 = cv::Mat(16, 32, CV_8SC1, cv::Scalar(1));
    cv::Mat hist;
    const int sizes[] = {256};
    const float range[] = {0, 256};
    const float* ranges[] = {range};
    auto code = [&](const std::vector<cv::Mat>& images, int channel, const cv::Mat& mask, const float** r, int bins = 256) {
        const int channels[] = {channel};
        const int hs[] = {bins};
        return cv_error_code([&] {
            gpuhist::calcHist(images.data(), static_cast<int>(images.size()), channels, mask, hist, 1, hs, r);
        });
    };
    REQUIRE(code({bgr}, 3, cv::Mat(), ranges) == cv::Error::StsBadArg);   // channel past the last
    REQUIRE(code({bgr}, -1, cv::Mat(), ranges) == cv::Error::StsBadArg);
    REQUIRE(code({gray, bgr}, 4, cv::Mat(), ranges) == cv::Error::StsBadArg);
    REQUIRE(code({gray, small}, 1, cv::Mat(), ranges) == cv::Error::StsUnmatchedSizes);
    REQUIRE(code({gray, w16}, 1, cv::Mat(), ranges) == cv::Error::StsUnmatchedFormats);
    REQUIRE(code({s8}, 0, cv::Mat(), ranges) == cv::Error::StsUnsupportedFormat);
    REQUIRE(code({w16}, 0, cv::Mat(), nullptr) == cv::Error::StsBadArg);  // ranges are needed beyond 8 bits
    REQUIRE(code({gray}, 0, small, ranges) == cv::Error::StsUnmatchedSizes);
    REQUIRE(code({gray}, 0, cv::Mat(16, 32, CV_16UC1), ranges) == cv::Error::StsUnsupportedFormat);
    REQUIRE(code({gray}, 0, cv::Mat(), ranges, 0) == cv::Error::StsBadArg);
    const float empty_range[] = {10, 10};
    const float* bad_ranges[] = {empty_range};
    REQUIRE(code({gray}, 0, cv::Mat(), bad_ranges) == cv::Error::StsBadArg);
    REQUIRE(cv_error_code([&] { gpuhist::calcHist(&bgr, 1, nullptr, cv::Mat(), hist, 1, sizes, ranges); }) ==
            cv::Error::StsBadArg);  // no channels: one single-channel image
    REQUIRE(cv_error_code([&] { gpuhist::calcHist(&gray, 0, nullptr, cv::Mat(), hist, 1, sizes, ranges); }) ==
            cv::Error::StsBadArg);
    REQUIRE(cv_error_code([&] { gpuhist::calcHist(std::vector<cv::Mat>{}, {0}, cv::Mat(), hist, {256}, {0, 256}); }) ==
            cv::Error::StsBadArg);
    REQUIRE(cv_error_code([&] { gpuhist::calcHist(std::vector<cv::Mat>{gray}, {0}, cv::Mat(), hist, {256}, {0}); }) ==
            cv::Error::StsBadArg);
    REQUIRE(cv_error_code([&] { gpuhist::calcHist(std::vector<cv::Mat>{gray}, {0, 1}, cv::Mat(), hist, {256}, {}); }) ==
            cv::Error::StsBadArg);
    static unsigned char fake[64];
    const cv::cuda::GpuMat g(4, 16, CV_8UC1, fake, 16);
    REQUIRE(cv_error_code([&] { gpuhist::calcHist(std::vector<cv::cuda::GpuMat>{g}, {0}, cv::Mat(), hist, {256}, {}); }) ==
            cv::Error::StsBadArg);
    // Valid calls of the same shapes throw nothing.
    REQUIRE(code({gray, bgr}, 3, cv::Mat(), ranges) == 0);
    REQUIRE(code({w16}, 0, cv::Mat(), ranges) == 0);
}
