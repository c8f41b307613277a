// Contrast stretch, histogram matching and multi-level Otsu against plain loops of the rules filters.hpp
// states (which the scikit-image script in tests/skimage checks against scikit-image itself): sorted samples
// for np.percentile, a linear scan for np.interp, skimage's exhaustive multi-Otsu search written out. Both
// backends, cv::Mat and GpuMat paths, every size class, ROI offsets, distributions, u8 and u16.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>

#include "filters_support.hpp"
#include "level_refs.hpp"
#include "stream_capture.hpp"
#include "imghist/filters.hpp"
#include "core/policy/policy.hpp"      // white-box: the one-launch size limit
#include "cuda/runtime/workspace.hpp"  // white-box: matching's cache of target points

using namespace filters_test;
using namespace level_refs;

namespace {

/// A 16-bit image spanning at most `span` levels from `base` (multi-Otsu's 16-bit range).
cv::Mat narrow16(int w, int h, int base, int span, std::uint64_t seed, int xo = -1) {
    cv::Mat m = make_image(w, h, CV_16UC1, Dist::Gauss32, seed, xo);
    for (int y = 0; y < m.rows; ++y)
        for (int x = 0; x < m.cols; ++x) m.at<std::uint16_t>(y, x) = static_cast<std::uint16_t>(base + m.at<std::uint16_t>(y, x) % span);
    return m;
}

const std::vector<std::pair<double, double>>& percent_pairs() {
    static const std::vector<std::pair<double, double>> p{{2, 1}, {0, 0}, {0.5, 0.5}, {10, 25}, {33.3, 0}, {50, 50}};
    return p;
}

}  // namespace

// ---- the rules on their own -----------------------------------------------------------------------------------

TEST_CASE("histogram_percentile equals np.percentile's linear rule on the sorted samples", "[filters][stretch]") {
    std::mt19937_64 rng(7);
    for (int trial = 0; trial < 200; ++trial) {
        const int n = 1 + static_cast<int>(rng() % 300);
        const int span = 1 + static_cast<int>(rng() % 256);
        std::vector<int> v(static_cast<std::size_t>(n));
        std::vector<std::uint64_t> h(256, 0);
        for (int& x : v) {
            x = static_cast<int>(rng() % static_cast<std::uint64_t>(span));
            ++h[static_cast<std::size_t>(x)];
        }
        for (double p : {0.0, 0.5, 1.0, 2.0, 25.0, 33.3, 50.0, 97.5, 99.0, 100.0}) {
            INFO("n " << n << " p " << p);
            REQUIRE(imghist::histogram_percentile(h.data(), 256, p) == np_percentile(v, p));
        }
    }
    // A hand-checked case: 0, 10 -> np.percentile(..., 25) = 2.5; (0, 10, 10, 10), 50 -> 10.
    std::vector<std::uint64_t> h(256, 0);
    h[0] = 1;
    h[10] = 1;
    CHECK(imghist::histogram_percentile(h.data(), 256, 25) == 2.5);
    h[10] = 3;
    CHECK(imghist::histogram_percentile(h.data(), 256, 50) == 10.0);
}

TEST_CASE("multiotsu_thresholds equals scikit-image's exhaustive search, ties included", "[filters][multiotsu]") {
    std::mt19937_64 rng(11);
    int compared = 0;
    for (int trial = 0; trial < 120; ++trial) {
        const int classes = 2 + trial % 4;
        // Narrow spans keep the exhaustive reference quick for 5 classes; wider ones for fewer classes.
        const int span = classes == 5 ? 8 + static_cast<int>(rng() % 40) : 8 + static_cast<int>(rng() % 120);
        const int base = static_cast<int>(rng() % static_cast<std::uint64_t>(256 - span));
        std::vector<std::uint64_t> h(256, 0);
        const int kind = trial % 3;
        for (int i = 0; i < span; ++i) {
            std::uint64_t c = rng() % 1000;
            if (kind == 1) c = (i % 5 == 0) ? 0 : 100;                   // flat with gaps: many ties
            if (kind == 2) c = static_cast<std::uint64_t>(std::min(i, span - 1 - i) + 1);  // symmetric: mirror ties
            h[static_cast<std::size_t>(base + i)] = c;
        }
        h[static_cast<std::size_t>(base)] = std::max<std::uint64_t>(h[static_cast<std::size_t>(base)], 1);
        h[static_cast<std::size_t>(base + span - 1)] = std::max<std::uint64_t>(h[static_cast<std::size_t>(base + span - 1)], 1);
        int distinct = 0;
        for (auto c : h) distinct += c != 0;
        INFO("trial " << trial << " classes " << classes << " span " << span);
        if (distinct < classes) {
            REQUIRE_THROWS_AS(imghist::multiotsu_thresholds(h.data(), 256, classes), imghist::Error);
            continue;
        }
        REQUIRE(imghist::multiotsu_thresholds(h.data(), 256, classes) == ref_multiotsu(h, classes));
        ++compared;
    }
    CHECK(compared > 100);
    // The photograph at 3 and 4 classes over its full 256-level span.
    const cv::Mat cam = photo(1);
    const std::vector<std::uint64_t> h = level_hist(cam);
    for (int classes : {3, 4}) REQUIRE(imghist::multiotsu_thresholds(h.data(), 256, classes) == ref_multiotsu(h, classes));
}

TEST_CASE("multiotsu_threshold_indices runs the search on probabilities as given", "[filters][multiotsu]") {
    // scikit-image's threshold_multiotsu(hist=counts) searches the raw counts as float32 (not normalised):
    // another rounding than the probabilities multiotsu_thresholds forms, the same search.
    std::mt19937_64 rng(12);
    for (int trial = 0; trial < 60; ++trial) {
        const int classes = 2 + trial % 3;
        const int L = 8 + static_cast<int>(rng() % 90);
        std::vector<float> prob(static_cast<std::size_t>(L));
        for (float& p : prob) p = static_cast<float>(rng() % 5 == 0 ? 0 : 1 + rng() % 100000);
        prob.front() = prob.back() = 7.f;
        INFO("trial " << trial << " classes " << classes << " levels " << L);
        REQUIRE(imghist::multiotsu_threshold_indices(prob.data(), L, classes) == ref_multiotsu_search(prob, classes));
    }
    const std::vector<float> two = {0.f, 3.f, 0.f, 1.f};
    CHECK(imghist::multiotsu_threshold_indices(two.data(), 4, 2) == std::vector<int>{1});
    CHECK_THROWS_AS(imghist::multiotsu_threshold_indices(two.data(), 4, 3), imghist::Error);
    const std::vector<float> negative = {1.f, -1.f, 2.f};
    CHECK_THROWS_AS(imghist::multiotsu_threshold_indices(negative.data(), 3, 2), imghist::Error);
    const std::vector<float> wide(4097, 1.f);
    CHECK_THROWS_AS(imghist::multiotsu_threshold_indices(wide.data(), 4097, 2), imghist::Error);
}

TEST_CASE("level-table rules refuse what they cannot serve", "[filters][errors]") {
    std::vector<std::uint64_t> h(256, 0), empty(256, 0);
    h[3] = 5;
    h[9] = 1;
    CHECK_THROWS_AS(imghist::stretch_table(h.data(), 256, -1, 1), imghist::Error);
    CHECK_THROWS_AS(imghist::stretch_table(h.data(), 256, 60, 50), imghist::Error);
    CHECK_THROWS_AS(imghist::stretch_table(empty.data(), 256, 2, 1), imghist::Error);
    CHECK_THROWS_AS(imghist::match_table(h.data(), empty.data(), 256), imghist::Error);
    CHECK_THROWS_AS(imghist::multiotsu_thresholds(h.data(), 256, 6), imghist::Error);
    CHECK_THROWS_AS(imghist::multiotsu_thresholds(h.data(), 256, 3), imghist::Error);  // 2 values, 3 classes
    std::vector<std::uint64_t> wide(65536, 0);
    wide[0] = wide[5000] = wide[7] = wide[9] = 1;
    try {
        imghist::multiotsu_thresholds(wide.data(), 65536, 3);
        FAIL("a 5001-level span was accepted");
    } catch (const imghist::Error& e) {
        CHECK(e.code() == imghist::ErrorCode::Unsupported);
        CHECK(std::string(e.what()).find("5001 levels") != std::string::npos);
    }
    // Through gpuhist: OpenCV's codes.
    cv::Mat f(4, 4, CV_32F, cv::Scalar(1)), d;
    CHECK_THROWS_AS(gpuhist::stretchContrast(f, d, 2, 1), cv::Exception);
    cv::Mat a(4, 4, CV_8UC1, cv::Scalar(1)), b(4, 4, CV_8UC3, cv::Scalar(1));
    CHECK_THROWS_AS(gpuhist::matchHistograms(a, b, d), cv::Exception);
    CHECK_THROWS_AS(gpuhist::thresholdMultiOtsu(a, d, 3), cv::Exception);  // a constant image has 1 level
}

// ---- the operations, both backends -------------------------------------------------------------------------------

IMGHIST_BACKEND_CASE("stretchContrast matches the percentile rule: sizes x ROI offsets x distributions, u8 and u16", "[filters][stretch]") {
    std::uint64_t seed = 300;
    for (int depth : {CV_8U, CV_16U})
        for (const Size2& s : size_classes())
            for (int xo : sampled({-1, 0, 3}))
                for (Dist d : all_dists()) {
                    const cv::Mat src = make_image(s.w, s.h, CV_MAKETYPE(depth, 1), d, seed++, xo);
                    const auto& pp = percent_pairs()[seed % percent_pairs().size()];
                    INFO((depth == CV_8U ? "u8 " : "u16 ") << s.w << "x" << s.h << " offset " << xo << " " << name(d)
                                                            << " low " << pp.first << " high " << pp.second);
                    const cv::Mat expected = ref_stretch(src, pp.first, pp.second, false);
                    check_op(backend, src, expected,
                             [&](const cv::Mat& a, cv::Mat& b) { gpuhist::stretchContrast(a, b, pp.first, pp.second); },
                             [&](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) {
                                 gpuhist::stretchContrast(a, b, pp.first, pp.second);
                             });
                }
}

IMGHIST_BACKEND_CASE("stretchContrast on colour: luma (alpha copied) and per channel, u8 and u16", "[filters][stretch][color]") {
    std::uint64_t seed = 900;
    for (int depth : {CV_8U, CV_16U})
        for (int cn : {3, 4})
            for (const Size2& s : sampled({Size2{1, 1}, Size2{7, 3}, Size2{333, 127}}))
                for (int xo : sampled({-1, 1}))
                    for (Dist d : sampled({Dist::Uniform, Dist::Gauss32, Dist::Photo, Dist::Constant}))
                        for (const auto& pp : sampled_first({std::make_pair(2.0, 1.0), std::make_pair(0.0, 0.0)})) {
                            const cv::Mat src = make_image(s.w, s.h, CV_MAKETYPE(depth, cn), d, seed++, xo);
                            INFO(cn << " channels depth " << depth << " " << s.w << "x" << s.h << " offset " << xo << " "
                                    << name(d) << " low " << pp.first);
                            check_op(backend, src, ref_stretch(src, pp.first, pp.second, true),
                                     [&](const cv::Mat& a, cv::Mat& b) { gpuhist::stretchContrast(a, b, pp.first, pp.second); },
                                     [&](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) {
                                         gpuhist::stretchContrast(a, b, pp.first, pp.second);
                                     });
                            check_op(backend, src, ref_stretch(src, pp.first, pp.second, false),
                                     [&](const cv::Mat& a, cv::Mat& b) {
                                         gpuhist::stretchContrast(a, b, pp.first, pp.second, gpuhist::EQUALIZE_PER_CHANNEL);
                                     },
                                     [&](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) {
                                         gpuhist::stretchContrast(a, b, pp.first, pp.second, gpuhist::EQUALIZE_PER_CHANNEL);
                                     });
                        }
}

TEST_CASE("the luma of stretchContrast is the Y of cv::cvtColor(BGR2YCrCb) on 8-bit images", "[filters][stretch][color]") {
    const cv::Mat src = make_image(333, 127, CV_8UC3, Dist::Photo, 5, 1);
    cv::Mat ycc;
    cv::cvtColor(src, ycc, cv::COLOR_BGR2YCrCb);
    for (int y = 0; y < src.rows; ++y)
        for (int x = 0; x < src.cols; ++x) REQUIRE(luma(src, y, x) == ycc.at<cv::Vec3b>(y, x)[0]);
}

IMGHIST_BACKEND_CASE("matchHistograms matches the np.interp rule: sizes x ROI offsets x distributions, u8 and u16", "[filters][match]") {
    std::uint64_t seed = 1300;
    for (int depth : {CV_8U, CV_16U})
        for (int cn : {1, 3})
            for (const Size2& s : size_classes())
                for (int xo : sampled({-1, 3}))
                    for (Dist d : sampled_first(all_dists())) {
                        const cv::Mat src = make_image(s.w, s.h, CV_MAKETYPE(depth, cn), d, seed++, xo);
                        const Dist rd = all_dists()[seed % all_dists().size()];
                        const cv::Mat ref = make_image(97, 61, CV_MAKETYPE(depth, cn), rd, seed++, 1);
                        INFO(cn << " channels depth " << depth << " " << s.w << "x" << s.h << " offset " << xo << " "
                                << name(d) << " to " << name(rd));
                        const cv::Mat expected = ref_match(src, counts_of(ref));
                        check_op(backend, src, expected,
                                 [&](const cv::Mat& a, cv::Mat& b) { gpuhist::matchHistograms(a, ref, b); },
                                 [&](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) {
                                     DeviceMat r(ref);
                                     gpuhist::matchHistograms(a, r.mat, b);
                                 });
                    }
}

// Frames (frame_sizes: which device path each takes), continuous and as ROIs, gray and colour.
IMGHIST_BACKEND_CASE("stretchContrast and matchHistograms on frames up to 4096x2304 follow their rules", "[filters][stretch][match][frames]") {
    std::uint64_t seed = 1700;
    for_each_frame(backend, seed, [&](const cv::Mat& src) {
        const int cn = src.channels();
        const cv::Mat ref = make_image(640, 480, CV_8UC(cn), Dist::Gauss32, seed++, 1);
        check_op(backend, src, ref_stretch(src, 2.0, 1.0, false),
                 [&](const cv::Mat& a, cv::Mat& b) { gpuhist::stretchContrast(a, b, 2.0, 1.0, gpuhist::EQUALIZE_PER_CHANNEL); },
                 [&](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) {
                     gpuhist::stretchContrast(a, b, 2.0, 1.0, gpuhist::EQUALIZE_PER_CHANNEL);
                 });
        const cv::Mat expected = ref_match(src, counts_of(ref));
        check_op(backend, src, expected, [&](const cv::Mat& a, cv::Mat& b) { gpuhist::matchHistograms(a, ref, b); },
                 [&](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) {
                     DeviceMat r(ref);
                     gpuhist::matchHistograms(a, r.mat, b);
                 });
        // The same target as a histogram, one column per channel (host images only; on the device
        // the 64-bit counts are copied and matched in the same launch shape).
        std::vector<cv::Mat> planes;
        cv::split(ref, planes);
        cv::Mat hist(256, cn, CV_32F);
        for (int c = 0; c < cn; ++c) {
            cv::Mat h;
            cv::calcHist(std::vector<cv::Mat>{planes[c]}, {0}, cv::Mat(), h, {256}, {0.f, 256.f});
            h.copyTo(hist.col(c));
        }
        BackendScope scope(backend);
        cv::Mat out;
        gpuhist::matchHistogramsToHist(src, hist, out);
        FILTERS_REQUIRE_IDENTICAL(out, expected);
    });
}

IMGHIST_BACKEND_CASE("matching to a given histogram equals matching to an image that has it", "[filters][match]") {
    const cv::Mat src = make_image(333, 127, CV_8UC3, Dist::Photo, 17, 3);
    const cv::Mat ref = make_image(200, 100, CV_8UC1, Dist::Gauss32, 18);
    cv::Mat hist;
    cv::calcHist(std::vector<cv::Mat>{ref}, {0}, cv::Mat(), hist, {256}, {0.f, 256.f});
    std::vector<std::map<int, std::uint64_t>> target(1);
    for (int v = 0; v < 256; ++v)
        if (hist.at<float>(v) > 0) target[0][v] = static_cast<std::uint64_t>(hist.at<float>(v));
    BackendScope scope(backend);
    cv::Mat out;
    gpuhist::matchHistogramsToHist(src, hist, out);
    FILTERS_REQUIRE_IDENTICAL(out, ref_match(src, target));
}

namespace {
/// imghist::Histogram of 256 levels per channel from plain-loop counts.
imghist::Histogram histogram_of(const std::vector<std::map<int, std::uint64_t>>& counts) {
    imghist::Histogram h = imghist::Histogram::zeros(imghist::BinSpec::u8(), static_cast<int>(counts.size()));
    for (std::size_t c = 0; c < counts.size(); ++c)
        for (const auto& [level, n] : counts[c]) h.channel(static_cast<int>(c))[level] = n;
    return h;
}
}  // namespace

IMGHIST_BACKEND_CASE("match_to_histogram to a host histogram: 1 or C target channels, repeated and changing targets", "[filters][match]") {
    // On the device, one launch takes the target's points in its parameters and keeps them in the stream's
    // workspace; the next call with the same target (same counts, same channel layout) reads them from there.
    // The sequence makes every transition: new, repeated, other counts, back, one histogram for every channel
    // with the same first channel (another layout), repeated, back; and it starts and ends with a gray target
    // shared by all images, so consecutive images of other channel counts meet the same counts in another
    // layout.
    std::uint64_t seed = 1900;
    std::vector<Size2> sizes = size_classes();
    sizes.push_back({1920, 1080});
    const std::vector<std::map<int, std::uint64_t>> gray = counts_of(make_image(77, 53, CV_8UC1, Dist::Gauss4, seed++, 1));
    const std::size_t one_launch_max = imghist::detail::policy::one_launch_max_bytes();
    for (const Size2& s : sizes)
        for (int cn : {1, 3, 4})
            for (int xo : sampled({-1, 7})) {
                if (s.w * s.h > 640 * 480 && (cn == 4 || xo != 7)) continue;  // frames: gray and colour ROIs
                const cv::Mat src = make_image(s.w, s.h, CV_8UC(cn), Dist::Photo, seed++, xo);
                const auto a = counts_of(make_image(97, 61, CV_8UC(cn), Dist::Gauss32, seed++, 1));
                const auto b = counts_of(make_image(50, 41, CV_8UC(cn), Dist::Uniform, seed++, 1));
                const std::vector<std::map<int, std::uint64_t>> a0{a[0]};
                const std::vector<const std::vector<std::map<int, std::uint64_t>>*> order{&gray, &a, &a, &b, &a,
                                                                                          &a0, &a0, &a, &gray};
                std::map<const void*, cv::Mat> expected;
                for (const auto* t : order)
                    if (!expected.count(t)) expected[t] = ref_match(src, *t);
                imghist::FilterOptions fo;
                fo.backend = backend;
                DeviceMat in;
                if (backend == Backend::Cuda) in = DeviceMat(src);
                // White-box: images the one-launch path takes leave their target's counts in the tag of the
                // default stream's cache (the counts follow the tag's header), so the next call can hit it.
                const std::size_t bytes = static_cast<std::size_t>(s.w) * s.h * cn;
                const bool one_launch = backend == Backend::Cuda && bytes <= one_launch_max;
                for (std::size_t k = 0; k < order.size(); ++k) {
                    INFO(s.w << "x" << s.h << " offset " << xo << " channels " << cn << " call " << k);
                    const imghist::Histogram target = histogram_of(*order[k]);
                    if (backend == Backend::Cuda) {
                        DeviceMat out(src.rows, src.cols, src.type(), static_cast<int>(k % 4));
                        imghist::match_to_histogram(imghist::view_of(in.mat), imghist::view_of(out.mat), target, fo);
                        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
                        FILTERS_REQUIRE_IDENTICAL(download(out.mat), expected[order[k]]);
#if IMGHIST_TEST_WITH_CUDA
                        if (one_launch) {
                            const std::size_t n = target.counts.size() * sizeof(std::uint64_t);
                            auto ws = imghist::detail::acquire_workspace(-1, nullptr);
                            const std::vector<unsigned char>& tag = ws->host_tag(imghist::detail::DeviceSlot::MatchPoints);
                            REQUIRE(tag.size() > n);
                            REQUIRE(std::memcmp(tag.data() + tag.size() - n, target.counts.data(), n) == 0);
                        }
#else
                        (void)one_launch;
#endif
                    } else {
                        cv::Mat out(src.size(), src.type());
                        imghist::match_to_histogram(imghist::view_of(src), imghist::view_of(out), target, fo);
                        FILTERS_REQUIRE_IDENTICAL(out, expected[order[k]]);
                    }
                }
            }
}

TEST_CASE("match_to_histogram captured into a CUDA graph leaves the stream's cache of target points alone", "[filters][match][cuda]") {
    if (!imghist_test::cuda_or_skip()) return;
#if IMGHIST_TEST_WITH_CUDA
    // A captured call runs when the graph is launched, perhaps many times: the points it carries must not be
    // taken for what the cache holds when the call returns. Calls outside the graph between its launches use
    // and refresh the cache; the graph's launches must still give their own target's answer.
    const cv::Mat src = make_image(333, 127, CV_8UC1, Dist::Photo, 31);
    // The cache belongs to the one-launch path (the two-kernel path copies the target from pageable memory,
    // which a capture does not take).
    if (imghist::detail::policy::one_launch_max_bytes() < src.total()) {
        std::printf("%s: the one-launch path is off (IMGHIST_ONE_LAUNCH_MAX_BYTES), case skipped\n", imghist_test::kSkipMarker);
        return;
    }
    const auto t1 = counts_of(make_image(97, 61, CV_8UC1, Dist::Gauss32, 32, 1));
    const auto t2 = counts_of(make_image(50, 41, CV_8UC1, Dist::Uniform, 33, 1));
    const cv::Mat e1 = ref_match(src, t1), e2 = ref_match(src, t2);
    cudaStream_t s = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    imghist::FilterOptions fo;
    fo.backend = Backend::Cuda;
    fo.stream = reinterpret_cast<imghist::Stream>(s);
    DeviceMat in(src), out(src.rows, src.cols, src.type(), 0), graph_out(src.rows, src.cols, src.type(), 3);
    auto run = [&](const std::vector<std::map<int, std::uint64_t>>& t, DeviceMat& o) {
        imghist::match_to_histogram(imghist::view_of(in.mat), imghist::view_of(o.mat), histogram_of(t), fo);
    };
    auto check = [&](DeviceMat& o, const cv::Mat& e) {
        REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
        FILTERS_REQUIRE_IDENTICAL(download(o.mat), e);
    };
    run(t1, out);  // the stream's workspace now exists and caches t1
    check(out, e1);
    imghist_test::StreamCapture capture(s, cudaStreamCaptureModeThreadLocal);
    run(t2, graph_out);
    capture.end();
    const cudaGraphExec_t exec = capture.instantiate();
    run(t2, out);  // the graph has not run: nothing of t2 is on the device yet
    check(out, e2);
    REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
    check(graph_out, e2);
    run(t1, out);
    check(out, e1);
    REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
    check(graph_out, e2);
    run(t1, out);  // the cache's t1 after the graph's launch
    check(out, e1);
    REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
#endif
}

IMGHIST_BACKEND_CASE("thresholdMultiOtsu: skimage's thresholds and the scaled np.digitize labels, u8 and u16", "[filters][multiotsu]") {
    std::uint64_t seed = 2100;
    for (const Size2& s : size_classes())
        for (int xo : sampled({-1, 0, 3}))
            for (int classes : sampled({2, 3, 4, 5})) {
                for (int depth : {CV_8U, CV_16U}) {
                    cv::Mat src;
                    if (depth == CV_8U) {
                        // 5 classes over a full 256-level span would make the exhaustive reference slow: narrow it.
                        src = make_image(s.w, s.h, CV_8UC1, classes == 5 ? Dist::Gauss4 : Dist::Gauss32, seed++, xo);
                    } else {
                        src = narrow16(s.w, s.h, 20000, classes == 5 ? 40 : 300, seed++, xo);
                    }
                    const std::vector<std::uint64_t> h = level_hist(src);
                    int distinct = 0;
                    for (auto c : h) distinct += c != 0;
                    INFO(s.w << "x" << s.h << " offset " << xo << " classes " << classes << " depth " << depth
                              << " levels " << distinct);
                    if (distinct < classes) {
                        BackendScope scope(backend);
                        cv::Mat out;
                        REQUIRE_THROWS_AS(gpuhist::thresholdMultiOtsu(src, out, classes), cv::Exception);
                        continue;
                    }
                    const std::vector<int> t = ref_multiotsu(h, classes);
                    const cv::Mat expected = ref_labels(src, t);
                    check_op(backend, src, expected,
                             [&](const cv::Mat& a, cv::Mat& b) { REQUIRE(gpuhist::thresholdMultiOtsu(a, b, classes) == t); },
                             [&](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) {
                                 REQUIRE(gpuhist::thresholdMultiOtsu(a, b, classes) == t);
                             });
                }
            }
}

IMGHIST_BACKEND_CASE("level-table operations in place", "[filters][stretch][match][multiotsu]") {
    const cv::Mat src = make_image(333, 127, CV_8UC1, Dist::Gauss32, 41, 1);
    const cv::Mat ref = make_image(64, 64, CV_8UC1, Dist::Uniform, 42);
    BackendScope scope(backend);
    cv::Mat a = src.clone(), b = src.clone(), c = src.clone();
    gpuhist::stretchContrast(a, a, 2, 1);
    FILTERS_REQUIRE_IDENTICAL(a, ref_stretch(src, 2, 1, false));
    gpuhist::matchHistograms(b, ref, b);
    FILTERS_REQUIRE_IDENTICAL(b, ref_match(src, counts_of(ref)));
    const std::vector<int> t = gpuhist::thresholdMultiOtsu(c, c, 3);
    REQUIRE(t == ref_multiotsu(level_hist(src), 3));
    FILTERS_REQUIRE_IDENTICAL(c, ref_labels(src, t));
}

// The device search (u8 device images) replaces scikit-image's exhaustive walk by a bound and a frontier of
// candidates that may overflow (the host search then takes over); the host search uses the same bound.
// Histograms that stress both: exact ties from empty runs between sparse levels (every threshold position
// in a run gives the same classes), mirror ties, flat runs, exactly `classes` levels, two-level images,
// and spreads wide enough to overflow the device's frontier.
IMGHIST_BACKEND_CASE("thresholdMultiOtsu on adversarial histograms: ties, sparse levels, exact counts, wide spreads", "[filters][multiotsu]") {
    std::mt19937_64 rng(31);
    std::vector<std::pair<std::vector<std::uint64_t>, int>> cases;  // (histogram, classes)
    auto sparse = [&](int levels, int span, int base, bool equal) {
        std::vector<std::uint64_t> h(256, 0);
        for (int k = 0; k < levels; ++k) {
            const int v = base + (levels == 1 ? 0 : k * (span - 1) / (levels - 1));
            h[static_cast<std::size_t>(v)] = equal ? 40 : 1 + rng() % 200;
        }
        return h;
    };
    for (int classes : sampled({2, 3, 4, 5})) {
        // Five classes over a wide span would make the exhaustive reference slow; 2-4 classes take 256 levels.
        const int span = classes == 5 ? 120 : 256;
        for (int levels : sampled({classes, classes + 1, 8, 12}))
            for (bool equal : {true, false}) cases.push_back({sparse(levels, span, 256 - span, equal), classes});
        std::vector<std::uint64_t> flat(256, 0), mirror(256, 0);
        for (int v = 100; v < 100 + (classes == 5 ? 40 : 120); ++v) flat[static_cast<std::size_t>(v)] = 7;
        for (int v = 0; v < 60; ++v) mirror[static_cast<std::size_t>(v + 30)] = static_cast<std::uint64_t>(1 + std::min(v, 59 - v));
        cases.push_back({flat, classes});
        cases.push_back({mirror, classes});
    }
    std::vector<std::uint64_t> two(256, 0);
    two[0] = 3;
    two[255] = 5;
    cases.push_back({two, 2});
    for (const auto& c : cases) {
        const std::vector<std::uint64_t>& h = c.first;
        const int classes = c.second;  // a plain variable: C++17 lambdas cannot capture structured bindings
        const cv::Mat src = image_with(h);
        const std::vector<int> t = ref_multiotsu(h, classes);
        INFO("classes " << classes << " width " << src.cols << " reference " << t.size() << " thresholds");
        REQUIRE(imghist::multiotsu_thresholds(h.data(), 256, classes) == t);
        const cv::Mat expected = ref_labels(src, t);
        check_op(backend, src, expected,
                 [&](const cv::Mat& a, cv::Mat& b) { REQUIRE(gpuhist::thresholdMultiOtsu(a, b, classes) == t); },
                 [&](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) { REQUIRE(gpuhist::thresholdMultiOtsu(a, b, classes) == t); });
    }
}

IMGHIST_BACKEND_CASE("thresholdMultiOtsu with 5 classes over a full 256-level photograph equals the exhaustive search", "[filters][multiotsu]") {
    const cv::Mat src = photo(1);
    const std::vector<std::uint64_t> h = level_hist(src);
    const std::vector<int> t = imghist::multiotsu_thresholds(h.data(), 256, 5);
    REQUIRE(t.size() == 4);
    REQUIRE(std::is_sorted(t.begin(), t.end()));
    // The exhaustive search tries about 1.7e8 combinations: a few seconds, 40 s under ASan, where what the
    // sanitizers check is our calls (above and below), not the test's search: runs with IMGHIST_TEST_SHAPES_ONLY
    // (the sanitizer runs) leave it out, plain runs compare with it.
    if (!shapes_only()) REQUIRE(t == ref_multiotsu(h, 5));
    check_op(backend, src, ref_labels(src, t),
             [&](const cv::Mat& a, cv::Mat& b) { REQUIRE(gpuhist::thresholdMultiOtsu(a, b, 5) == t); },
             [&](const cv::cuda::GpuMat& a, cv::cuda::GpuMat& b) { REQUIRE(gpuhist::thresholdMultiOtsu(a, b, 5) == t); });
}
