// End-to-end tests of the imghist program. Each case writes its inputs into a fresh temporary folder, runs
// the program as a user would (through the shell), and checks exit status, messages and output files.
// References come from OpenCV (imread, equalizeHist, threshold, calcHist, CLAHE) or from plain loops.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <jpeglib.h>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_TGA
#include <stb/stb_image.h>

#include "cli_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

using namespace clitest;

// ================================================================================================ basics

TEST_CASE("imghist --version and --help on every command", "[cli]") {
    TempDir d;
    Run r = run_cli(d, "--version");
    CHECK(r.code == 0);
    CHECK(contains(r.out, "imghist 0."));
    CHECK(contains(r.out, "built without CUDA") == !imghist::built_with_cuda());
    for (const char* cmd : {"", "equalize", "stretch", "match", "threshold", "clahe", "hist", "gen"}) {
        r = run_cli(d, std::string(cmd) + " --help");
        INFO(cmd);
        CHECK(r.code == 0);
        CHECK(contains(r.out, "Usage"));
        CHECK(contains(r.out, std::string(cmd)));
    }
    expect_error(d, "equalize --no-such-option a b", 2, {"no-such-option"});
    // Usage errors found after parsing exit with 2 as well, whatever their wording.
    expect_error(d, "equalize only-one.png", 2, {"expected IN"});
    r = run_cli(d, "hist");
    CHECK(r.code == 2);
    // A folder run's sizes (--pipeline) are checked before anything is read or written.
    write(d / "in/a.png", photo(8, 8, CV_8UC1, 1));
    expect_error(d, "equalize in out --device cpu --pipeline batchsize=3", 2, {"--pipeline: unknown key 'batchsize'"});
    expect_error(d, "hist in --device cpu --pipeline batch=0", 2, {"--pipeline: batch=0"});
    CHECK_FALSE(fs::exists(d / "out"));
    CHECK(run_cli(d, "equalize in out --device cpu -q --pipeline batch=64,writers=3").code == 0);
    CHECK(fs::exists(d / "out/a.png"));
}

// ============================================================================================= equalize

IMGHIST_BACKEND_CASE("equalize: gray PNG is bit-exact with cv::equalizeHist", "[cli][equalize]") {
    TempDir d;
    cv::Mat src = photo(333, 217, CV_8UC1, 1);
    write(d / "in.png", src);
    REQUIRE(run_cli(d, "equalize in.png out.png" + device_arg(backend)).code == 0);
    cv::Mat ref;
    cv::equalizeHist(src, ref);
    CHECK(same(read(d / "out.png"), ref));
    // A real photograph, and a PGM output.
    cv::Mat cam = read(samples_dir() / "camera.png", cv::IMREAD_GRAYSCALE);
    REQUIRE(run_cli(d, "equalize " + q(samples_dir() / "camera.png") + " cam.pgm" + device_arg(backend)).code == 0);
    cv::equalizeHist(cam, ref);
    CHECK(same(read(d / "cam.pgm"), ref));
}

IMGHIST_BACKEND_CASE("equalize: colour PNG, luma and per-channel, match OpenCV", "[cli][equalize]") {
    TempDir d;
    cv::Mat bgr = photo(301, 199, CV_8UC3, 2);
    write(d / "in.png", bgr);
    REQUIRE(run_cli(d, "equalize in.png luma.png" + device_arg(backend)).code == 0);
    REQUIRE(run_cli(d, "equalize in.png per.png --mode per-channel" + device_arg(backend)).code == 0);
    // Luma: the Y of Y'CrCb equalized (the file's RGB read as OpenCV's BGR throughout).
    CHECK(same(read(d / "luma.png"), opencv_equalize_luma(bgr)));
    CHECK(same(read(d / "per.png"), opencv_equalize_per_channel(bgr)));
    // RGBA: alpha passes through unchanged.
    cv::Mat bgra = photo(64, 48, CV_8UC4, 3);
    write(d / "a.png", bgra);
    REQUIRE(run_cli(d, "equalize a.png a-out.png --mode per-channel" + device_arg(backend)).code == 0);
    cv::Mat out = read(d / "a-out.png");
    REQUIRE(out.channels() == 4);
    cv::Mat a0, a1;
    cv::extractChannel(bgra, a0, 3);
    cv::extractChannel(out, a1, 3);
    CHECK(same(a0, a1));
    for (int c = 0; c < 3; ++c) {  // colour channels: cv::equalizeHist of each plane
        cv::Mat plane, eq, got;
        cv::extractChannel(bgra, plane, c);
        cv::equalizeHist(plane, eq);
        cv::extractChannel(out, got, c);
        CHECK(same(got, eq));
    }
}


TEST_CASE("equalize: 16-bit PNG stays 16-bit and follows the equalization rule", "[cli][equalize]") {
    TempDir d;
    cv::Mat src = photo(97, 61, CV_16UC1, 4);
    write(d / "in16.png", src);
    REQUIRE(run_cli(d, "equalize in16.png out16.png --device cpu").code == 0);
    cv::Mat out = read(d / "out16.png");
    REQUIRE(out.type() == CV_16UC1);
    CHECK(same(out, equalize16_reference(src)));
    // Colour, per channel: each plane through its own 16-bit table.
    cv::Mat c16 = photo(83, 47, CV_16UC3, 9);
    write(d / "c16.png", c16);
    REQUIRE(run_cli(d, "equalize c16.png c16-per.png --mode per-channel --device cpu").code == 0);
    const cv::Mat per = read(d / "c16-per.png");
    REQUIRE(per.type() == CV_16UC3);
    for (int c = 0; c < 3; ++c) {
        cv::Mat plane, got;
        cv::extractChannel(c16, plane, c);
        cv::extractChannel(per, got, c);
        CHECK(same(got, equalize16_reference(plane)));
    }
    // Colour, luma: Y of OpenCV's YCrCb through the 16-bit table, then back.
    REQUIRE(run_cli(d, "equalize c16.png c16-luma.png --mode luma --device cpu").code == 0);
    cv::Mat ycc, planes[3], luma_ref;
    cv::cvtColor(c16, ycc, cv::COLOR_BGR2YCrCb);
    cv::split(ycc, planes);
    planes[0] = equalize16_reference(planes[0]);
    cv::merge(planes, 3, ycc);
    cv::cvtColor(ycc, luma_ref, cv::COLOR_YCrCb2BGR);
    CHECK(same(read(d / "c16-luma.png"), luma_ref));
}

IMGHIST_BACKEND_CASE("stretch, match, multiotsu: 16-bit PNGs stay 16-bit and follow the rules (plain loops)", "[cli][stretch][match][multiotsu]") {
    TempDir d;
    const cv::Mat src = photo(97, 61, CV_16UC1, 21);
    write(d / "in16.png", src);
    // --auto-level: lo = min, hi = max (np.percentile at 0 and 100), v -> trunc((v - lo) / (hi - lo) * 65535).
    REQUIRE(run_cli(d, "stretch in16.png st16.png --auto-level" + device_arg(backend)).code == 0);
    const cv::Mat st = read(d / "st16.png");
    REQUIRE(st.type() == CV_16UC1);
    double lo = 0, hi = 0;
    cv::minMaxLoc(src, &lo, &hi);
    cv::Mat expect = src.clone();
    expect.forEach<std::uint16_t>([&](std::uint16_t& v, const int*) {
        v = static_cast<std::uint16_t>((static_cast<double>(v) - lo) / (hi - lo) * 65535.0);
    });
    CHECK(same(st, expect));
    // Matching an image to itself gives it back: every quantile meets its own level.
    REQUIRE(run_cli(d, "match in16.png in16.png self16.png" + device_arg(backend)).code == 0);
    CHECK(same(read(d / "self16.png"), src));
    // Multi-Otsu on a 16-bit image of three flat levels: the two lowest levels are the thresholds.
    cv::Mat three(40, 30, CV_16UC1, cv::Scalar(1000));
    three(cv::Rect(0, 0, 30, 10)).setTo(2000);
    three(cv::Rect(0, 30, 30, 10)).setTo(3000);
    write(d / "three16.png", three);
    Run r = run_cli(d, "threshold three16.png labels16.png --method multiotsu --classes 3" + device_arg(backend));
    REQUIRE(r.code == 0);
    CHECK(contains(r.out, "thresholds: 1000 2000"));
    cv::Mat labels = read(d / "labels16.png");
    REQUIRE(labels.type() == CV_16UC1);
    // np.digitize: label = thresholds <= v, so 1000 -> 1 (scaled (65535 + 1) / 2), 2000 and 3000 -> 2.
    CHECK(labels.at<std::uint16_t>(20, 5) == 32768);
    CHECK(labels.at<std::uint16_t>(5, 5) == 65535);
    CHECK(labels.at<std::uint16_t>(35, 5) == 65535);
}

TEST_CASE("stretch, match, multiotsu: usage errors exit 2, bad inputs name the file and write nothing", "[cli][errors]") {
    TempDir d;
    write(d / "g.png", photo(64, 48, CV_8UC1, 3));
    write(d / "g16.png", photo(64, 48, CV_16UC1, 3));
    write(d / "flat.png", cv::Mat(8, 8, CV_8UC1, cv::Scalar(9)));
    write_bytes(d / "text.png", "not a picture\n");
    struct Case {
        std::string args;
        int code;
        std::string expect;
    };
    for (const Case& c : {Case{"stretch g.png out.png --low 150%", 2, "--low"},
                          Case{"stretch g.png out.png --low 60 --high 50", 2, "--low + --high must not exceed 100 (percent)"},
                          Case{"stretch g.png out.png --normalize --low 3", 2, "--normalize sets low and high: give --low / --high"},
                          Case{"stretch g.png out.png --normalize --auto-level", 2, "--normalize and --auto-level exclude each other"},
                          Case{"threshold g.png out.png --method value", 2, "--method value needs --value"},
                          Case{"threshold g.png out.png --method triangle --value 9", 2, "--value is only used with --method value"},
                          Case{"threshold g.png out.png --method multiotsu --invert", 2, "--value and --invert do not apply to --method multiotsu"},
                          Case{"match g.png out.png", 2, "expected IN... REF OUT"},
                          Case{"match g.png missing.png out.png", 1, "missing.png"},
                          Case{"match g16.png g.png out.png", 1, "the reference is 8-bit, the image 16-bit"},
                          Case{"match text.png g.png out.png", 1, "text.png"},
                          Case{"threshold g.png out.png --method multiotsu --classes 7", 2, "--classes"},
                          Case{"threshold g.png out.png --method otsu --classes 3", 2, "--classes is only used"},
                          Case{"threshold flat.png out.png --method multiotsu", 1, "flat.png: multi-Otsu: the image has only 1 different values"},
                          Case{"threshold g16.png out.png --method multiotsu", 1, "at most 4096"}}) {
        INFO(c.args);
        Run r = run_cli(d, c.args + " --device cpu");
        CHECK(r.code == c.code);
        CHECK(contains(r.err, c.expect));
        CHECK_FALSE(fs::exists(d / "out.png"));
    }
    CHECK(temporaries(d.path).empty());
}

TEST_CASE("equalize: JPEG to JPEG in luma mode equalizes the Y plane", "[cli][equalize][jpeg]") {
    TempDir d;
    cv::Mat bgr = photo(320, 240, CV_8UC3, 5);
    std::vector<int> params = {cv::IMWRITE_JPEG_QUALITY, 95};
    REQUIRE(cv::imwrite((d / "in.jpg").string(), bgr, params));
    REQUIRE(run_cli(d, "equalize in.jpg out.jpg --quality 100 --device cpu").code == 0);
    // Reference: the decoded input's luma equalized. The output went through one more JPEG encoding, so
    // compare its decoded luma with a tolerance.
    cv::Mat in = read(d / "in.jpg", cv::IMREAD_COLOR), out = read(d / "out.jpg", cv::IMREAD_COLOR);
    cv::Mat yin, yout, ref;
    cv::cvtColor(in, yin, cv::COLOR_BGR2YCrCb);
    cv::cvtColor(out, yout, cv::COLOR_BGR2YCrCb);
    cv::extractChannel(yin, yin, 0);
    cv::extractChannel(yout, yout, 0);
    cv::equalizeHist(yin, ref);
    cv::Mat diff;
    cv::absdiff(ref, yout, diff);
    CHECK(cv::mean(diff)[0] < 1.5);
    // The chroma planes were not touched: the output's Cr stays within JPEG noise of the input's.
    cv::Mat cin, cout;
    cv::cvtColor(in, cin, cv::COLOR_BGR2YCrCb);
    cv::cvtColor(out, cout, cv::COLOR_BGR2YCrCb);
    cv::extractChannel(cin, cin, 1);
    cv::extractChannel(cout, cout, 1);
    cv::absdiff(cin, cout, diff);
    CHECK(cv::mean(diff)[0] < 2.0);
    // A gray JPEG (one plane) with a size that is not a multiple of the block size.
    cv::Mat gray = photo(203, 117, CV_8UC1, 15);
    REQUIRE(cv::imwrite((d / "g.jpg").string(), gray, params));
    REQUIRE(run_cli(d, "equalize g.jpg g-out.jpg --quality 100 --device cpu").code == 0);
    cv::Mat gin = read(d / "g.jpg", cv::IMREAD_GRAYSCALE), gout = read(d / "g-out.jpg", cv::IMREAD_GRAYSCALE);
    REQUIRE(gout.size() == gin.size());
    cv::equalizeHist(gin, ref);
    cv::absdiff(ref, gout, diff);
    CHECK(cv::mean(diff)[0] < 1.5);
}

namespace {
/// np.percentile(v, p), linear rule (the documented percentile of stretch_table).
double linear_percentile(std::vector<int> v, double p) {
    std::sort(v.begin(), v.end());
    const double h = static_cast<double>(v.size() - 1) * (p / 100.0);
    if (h >= static_cast<double>(v.size() - 1)) return v.back();
    const std::size_t i = static_cast<std::size_t>(std::floor(h));
    const double g = h - std::floor(h), a = v[i], b = v[i + 1], dd = b - a;
    return g >= 0.5 ? b - dd * (1 - g) : a + dd * g;
}
/// The luma stretch 2%/1% of an 8-bit gray or BGR image, by the documented rule, as a plain loop.
cv::Mat plain_luma_stretch(const cv::Mat& in) {
    std::vector<int> y;
    for (int r = 0; r < in.rows; ++r)
        for (int x = 0; x < in.cols; ++x) {
            const std::uint8_t* p = in.ptr<std::uint8_t>(r) + x * in.channels();
            y.push_back(in.channels() == 1 ? p[0] : (p[0] * 1868 + p[1] * 9617 + p[2] * 4899 + 8192) >> 14);
        }
    const double lo = linear_percentile(y, 2), hi = linear_percentile(y, 99);
    cv::Mat out = in.clone();
    for (int r = 0; r < in.rows; ++r)
        for (int i = 0; i < in.cols * in.channels(); ++i) {
            const double c = std::min(std::max(static_cast<double>(in.ptr<std::uint8_t>(r)[i]), lo), hi);
            out.ptr<std::uint8_t>(r)[i] = static_cast<std::uint8_t>(lo == hi ? lo : (c - lo) / (hi - lo) * 255);
        }
    return out;
}
}  // namespace

TEST_CASE("stretch: JPEG to JPEG in luma mode (the planar path) gives the RGB rule's result within JPEG noise", "[cli][stretch][jpeg]") {
    TempDir d;
    // A low-contrast photograph, so that the stretch changes it a lot (slope about 2).
    cv::Mat bgr = photo(320, 240, CV_8UC3, 5);
    bgr.convertTo(bgr, CV_8UC3, 0.5, 60);
    std::vector<int> params = {cv::IMWRITE_JPEG_QUALITY, 95};
    REQUIRE(cv::imwrite((d / "in.jpg").string(), bgr, params));
    REQUIRE(run_cli(d, "stretch in.jpg out.jpg --quality 100 --device cpu").code == 0);
    // Reference: the decoded input through the documented rule (one table from the luma percentiles, applied
    // to B, G and R). The planar path works on the JPEG's own planes and the output went through one more
    // encoding: compare with a tolerance, per channel, which also shows that the chroma was scaled with Y.
    const cv::Mat in = read(d / "in.jpg", cv::IMREAD_COLOR), out = read(d / "out.jpg", cv::IMREAD_COLOR);
    const cv::Mat ref = plain_luma_stretch(in);
    cv::Mat diff;
    cv::absdiff(ref, out, diff);
    const cv::Scalar mean = cv::mean(diff);
    INFO("mean |out - rule| per channel: " << mean[0] << " " << mean[1] << " " << mean[2]);
    for (int c = 0; c < 3; ++c) CHECK(mean[c] < 2.5);
    // Against the same stretch of Y alone (chroma kept), the colour channels are clearly further off.
    cv::Mat ycc, yref;
    cv::cvtColor(in, ycc, cv::COLOR_BGR2YCrCb);
    std::vector<cv::Mat> planes;
    cv::split(ycc, planes);
    planes[0] = plain_luma_stretch(planes[0]);
    cv::merge(planes, ycc);
    cv::cvtColor(ycc, yref, cv::COLOR_YCrCb2BGR);
    cv::Mat ydiff;
    cv::absdiff(yref, ref, ydiff);
    CHECK(cv::mean(ydiff)[0] + cv::mean(ydiff)[2] > 2 * (mean[0] + mean[2]));
    // A gray JPEG (one plane), a size that is not a multiple of the block size: exactly the gray rule,
    // within the noise of the second encoding.
    cv::Mat gray = photo(203, 117, CV_8UC1, 15);
    gray.convertTo(gray, CV_8UC1, 0.4, 70);
    REQUIRE(cv::imwrite((d / "g.jpg").string(), gray, params));
    REQUIRE(run_cli(d, "stretch g.jpg g-out.jpg --quality 100 --device cpu").code == 0);
    const cv::Mat gin = read(d / "g.jpg", cv::IMREAD_GRAYSCALE), gout = read(d / "g-out.jpg", cv::IMREAD_GRAYSCALE);
    REQUIRE(gout.size() == gin.size());
    cv::absdiff(plain_luma_stretch(gin), gout, diff);
    CHECK(cv::mean(diff)[0] < 1.5);
}

TEST_CASE("equalize: BMP, TGA and PNM inputs and outputs", "[cli][equalize][codecs]") {
    TempDir d;
    cv::Mat src = photo(81, 53, CV_8UC1, 6), ref;
    cv::equalizeHist(src, ref);
    write(d / "in.bmp", src);
    write(d / "in.pgm", src);
    for (const char* in : {"in.bmp", "in.pgm"})
        for (const char* out : {"o.png", "o.bmp", "o.pgm", "o.tga"}) {
            INFO(in << " -> " << out);
            REQUIRE(run_cli(d, std::string("equalize ") + in + " " + out + " --device cpu").code == 0);
            if (std::string(out) != "o.tga") {
                CHECK(same(read(d / out, cv::IMREAD_GRAYSCALE), ref));
            } else {  // OpenCV 4.6 cannot read TGA: stb_image reads it
                int w = 0, h = 0, n = 0;
                unsigned char* px = stbi_load((d / out).string().c_str(), &w, &h, &n, 1);
                REQUIRE(px != nullptr);
                const cv::Mat tga = cv::Mat(h, w, CV_8UC1, px).clone();
                stbi_image_free(px);
                CHECK(same(tga, ref));
            }
        }
    // 16-bit PNM keeps 16 bits.
    cv::Mat s16 = photo(40, 30, CV_16UC1, 7);
    write(d / "in16.pgm", s16);
    REQUIRE(run_cli(d, "equalize in16.pgm out16.pgm --device cpu").code == 0);
    const cv::Mat o16 = read(d / "out16.pgm");
    REQUIRE(o16.type() == CV_16UC1);
    CHECK(same(o16, equalize16_reference(s16)));
}

TEST_CASE("equalize: standard input to standard output", "[cli][equalize]") {
    TempDir d;
    cv::Mat src = photo(120, 80, CV_8UC1, 8), ref;
    write(d / "in.png", src);
    cv::equalizeHist(src, ref);
    Run r = run_cli(d, "equalize - - --to png --device cpu < in.png");
    REQUIRE(r.code == 0);
    write_bytes(d / "piped.png", r.out);
    CHECK(same(read(d / "piped.png"), ref));
}

// ============================================================================================ threshold

IMGHIST_BACKEND_CASE("threshold: otsu, triangle, value and --invert match cv::threshold", "[cli][threshold]") {
    TempDir d;
    cv::Mat src = photo(257, 191, CV_8UC1, 9);
    write(d / "in.png", src);
    struct Case {
        std::string args;
        int type;
        double value;
    };
    for (const Case& c : {Case{"--method otsu", cv::THRESH_BINARY | cv::THRESH_OTSU, 0},
                          Case{"--method triangle", cv::THRESH_BINARY | cv::THRESH_TRIANGLE, 0},
                          Case{"--method value --value 100", cv::THRESH_BINARY, 100},
                          Case{"--method otsu --invert", cv::THRESH_BINARY_INV | cv::THRESH_OTSU, 0}}) {
        INFO(c.args);
        Run r = run_cli(d, "threshold in.png out.png " + c.args + device_arg(backend));
        REQUIRE(r.code == 0);
        cv::Mat ref;
        double t = cv::threshold(src, ref, c.value, 255, c.type);
        CHECK(r.out == "threshold: " + std::to_string(static_cast<int>(t)) + "\n");
        CHECK(same(read(d / "out.png"), ref));
    }
    // Colour input: thresholded on its gray (cv::COLOR_BGR2GRAY of the file).
    cv::Mat bgr = photo(90, 70, CV_8UC3, 10), gray, ref;
    write(d / "c.png", bgr);
    cv::cvtColor(bgr, gray, cv::COLOR_BGR2GRAY);
    double t = cv::threshold(gray, ref, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU);
    Run r = run_cli(d, "threshold c.png c-out.png" + device_arg(backend));
    REQUIRE(r.code == 0);
    CHECK(r.out == "threshold: " + std::to_string(static_cast<int>(t)) + "\n");
    CHECK(same(read(d / "c-out.png"), ref));
    expect_error(d, "threshold in.png x.png --method value", 2, {"--value"});
    CHECK_FALSE(fs::exists(d / "x.png"));
}

// ================================================================================================ clahe

IMGHIST_BACKEND_CASE("clahe: within one level of cv::CLAHE", "[cli][clahe]") {
    TempDir d;
    cv::Mat src = photo(300, 200, CV_8UC1, 11);
    write(d / "in.png", src);
    REQUIRE(run_cli(d, "clahe in.png out.png --clip 3 --tiles 4x5" + device_arg(backend)).code == 0);
    cv::Mat ref, diff;
    cv::createCLAHE(3.0, cv::Size(4, 5))->apply(src, ref);
    cv::Mat out = read(d / "out.png");
    REQUIRE(out.size() == ref.size());
    cv::absdiff(out, ref, diff);
    double maxd = 0;
    cv::minMaxLoc(diff, nullptr, &maxd);
    CHECK(maxd <= 1);
    CHECK(cv::countNonZero(diff) < static_cast<int>(src.total() / 100));
    expect_error(d, "clahe in.png bad.png --tiles 0x3", 2, {"--tiles"});
}

// ================================================================================================= hist

IMGHIST_BACKEND_CASE("hist: JSON counts equal cv::calcHist, per channel and gray", "[cli][hist]") {
    TempDir d;
    cv::Mat bgr = photo(211, 157, CV_8UC3, 12);
    write(d / "in.png", bgr);
    Run r = run_cli(d, "hist in.png --format json" + device_arg(backend));
    REQUIRE(r.code == 0);
    json j = parse_json(r.out);
    CHECK(j["width"] == 211);
    CHECK(j["height"] == 157);
    CHECK(j["bins"] == 256);
    CHECK(j["range"][0] == 0);
    CHECK(j["range"][1] == 256);
    CHECK(j["out_of_range"] == 0);
    REQUIRE(j["channels"].size() == 3);
    CHECK(j["channels"][0]["name"] == "r");
    CHECK(counts_of(j, "r") == cv_hist(bgr, 2, 256, 0, 256));
    CHECK(counts_of(j, "g") == cv_hist(bgr, 1, 256, 0, 256));
    CHECK(counts_of(j, "b") == cv_hist(bgr, 0, 256, 0, 256));
    // Gray mode, 64 bins over [32, 224): out-of-range pixels are counted apart.
    r = run_cli(d, "hist in.png --format json --mode gray --bins 64 --range 32:224" + device_arg(backend));
    REQUIRE(r.code == 0);
    j = parse_json(r.out);
    cv::Mat gray;
    cv::cvtColor(bgr, gray, cv::COLOR_BGR2GRAY);
    auto ref = cv_hist(gray, 0, 64, 32, 224);
    CHECK(counts_of(j, "gray") == ref);
    std::uint64_t in_range = 0;
    for (auto v : ref) in_range += v;
    CHECK(j["out_of_range"] == gray.total() - in_range);
}

TEST_CASE("hist: text and CSV formats, -o FILE", "[cli][hist]") {
    TempDir d;
    cv::Mat g = photo(50, 40, CV_8UC1, 13);
    write(d / "g.png", g);
    auto ref = cv_hist(g, 0, 16, 0, 256);
    Run r = run_cli(d, "hist g.png --bins 16 --format csv -o g.csv --device cpu");
    REQUIRE(r.code == 0);
    CHECK(r.out.empty());
    std::istringstream csv(slurp(d / "g.csv"));
    std::string line;
    std::getline(csv, line);
    CHECK(line == "bin,low,high,gray");
    for (int b = 0; b < 16; ++b) {
        REQUIRE(std::getline(csv, line));
        CHECK(line == std::to_string(b) + "," + std::to_string(b * 16) + "," + std::to_string(b * 16 + 16) + "," +
                           std::to_string(ref[static_cast<std::size_t>(b)]));
    }
    r = run_cli(d, "hist g.png --bins 16 --device cpu");
    REQUIRE(r.code == 0);
    std::istringstream text(r.out);
    std::getline(text, line);
    CHECK(contains(line, "g.png 50x40"));
    std::getline(text, line);
    CHECK(line == "# bin low gray");
    std::uint64_t sum = 0;
    for (int b = 0; b < 16; ++b) {
        REQUIRE(std::getline(text, line));
        std::istringstream f(line);
        int bin = -1;
        double low = -1;
        std::uint64_t count = 0;
        f >> bin >> low >> count;
        CHECK(bin == b);
        CHECK(count == ref[static_cast<std::size_t>(b)]);
        sum += count;
    }
    CHECK(sum == g.total());
}

IMGHIST_BACKEND_CASE("hist --raw: int32 samples counted like a plain loop", "[cli][hist][raw]") {
    TempDir d;
    // 10-bit samples stored as int32, with a few outside [0, 1024).
    std::vector<std::int32_t> v(200003);
    std::uint32_t s = 12345;
    for (auto& x : v) {
        s = s * 1664525u + 1013904223u;
        x = static_cast<std::int32_t>((s >> 8) % 1100) - 20;
    }
    write_bytes(d / "data.bin", std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
    Run r = run_cli(d, "hist --raw data.bin --dtype i32 --bins 1024 --range 0:1024 --format json" + device_arg(backend));
    REQUIRE(r.code == 0);
    json j = parse_json(r.out);
    std::vector<std::uint64_t> ref(1024, 0);
    std::uint64_t out = 0;
    for (auto x : v) {
        if (x >= 0 && x < 1024)
            ++ref[static_cast<std::size_t>(x)];
        else
            ++out;
    }
    CHECK(counts_of(j, "gray") == ref);
    CHECK(j["out_of_range"] == out);
    // Wrong sizes are refused with the file's name.
    write_bytes(d / "odd.bin", std::string(7, 'x'));
    expect_error(d, "hist --raw odd.bin --dtype i32 --bins 8 --range 0:8", 1, {"odd.bin", "multiple"});
    expect_error(d, "hist --raw data.bin --dtype f32 --bins 8", 2, {"--range"});
}

TEST_CASE("hist --plot draws a PNG picture in the channel colours", "[cli][hist][plot]") {
    TempDir d;
    write(d / "c.png", photo(100, 80, CV_8UC3, 14));
    Run r = run_cli(d, "hist c.png --plot plot.png --plot-size 640x360 --log --device cpu");
    REQUIRE(r.code == 0);
    cv::Mat p = read(d / "plot.png", cv::IMREAD_COLOR);
    CHECK(p.cols == 640);
    CHECK(p.rows == 360);
    // The legend squares are drawn in full colour: red, green and blue pixels exist (BGR order here).
    auto has = [&](cv::Vec3b c) {
        for (int y = 0; y < p.rows; ++y)
            for (int x = 0; x < p.cols; ++x)
                if (p.at<cv::Vec3b>(y, x) == c) return true;
        return false;
    };
    CHECK(has(cv::Vec3b(40, 39, 214)));
    CHECK(has(cv::Vec3b(44, 160, 44)));
    CHECK(has(cv::Vec3b(180, 119, 31)));
    CHECK(has(cv::Vec3b(30, 30, 30)));  // axes and text
}

// ================================================================================================== gen

TEST_CASE("gen: the distributions have the asked parameters", "[cli][gen]") {
    TempDir d;
    auto mean_sd = [&](const std::string& file) {
        cv::Mat m = read(d / file);
        cv::Scalar mean, sd;
        cv::meanStdDev(m, mean, sd);
        return std::make_pair(mean[0], sd[0]);
    };
    REQUIRE(run_cli(d, "gen u.png --dist uniform --size 400x300 --low 10 --high 50 --seed 3").code == 0);
    cv::Mat u = read(d / "u.png");
    double lo, hi;
    cv::minMaxLoc(u, &lo, &hi);
    CHECK(lo == 10);
    CHECK(hi == 49);
    CHECK(u.cols == 400);
    CHECK(u.rows == 300);
    REQUIRE(run_cli(d, "gen n.png --dist normal --size 400x300 --mean 100 --stddev 20").code == 0);
    auto [nm, ns] = mean_sd("n.png");
    CHECK(nm == Approx(100).margin(0.5));
    CHECK(ns == Approx(20).margin(0.5));
    REQUIRE(run_cli(d, "gen b.png --dist binomial --size 400x300 --trials 40 --p 0.25").code == 0);
    CHECK(mean_sd("b.png").first == Approx(10).margin(0.1));
    REQUIRE(run_cli(d, "gen p.png --dist poisson --size 400x300 --lambda 30").code == 0);
    CHECK(mean_sd("p.png").first == Approx(30).margin(0.2));
    REQUIRE(run_cli(d, "gen e.png --dist exponential --size 400x300 --scale 20").code == 0);
    CHECK(mean_sd("e.png").first == Approx(20).margin(0.5));
    // Same seed, same bytes; 16-bit and colour; raw files.
    REQUIRE(run_cli(d, "gen n2.png --dist normal --size 400x300 --mean 100 --stddev 20").code == 0);
    CHECK(slurp(d / "n.png") == slurp(d / "n2.png"));
    REQUIRE(run_cli(d, "gen c16.png --dist normal --size 64x32 --channels 3 --depth 16").code == 0);
    CHECK(read(d / "c16.png").type() == CV_16UC3);
    REQUIRE(run_cli(d, "gen r.bin --dist uniform --size 1000 --dtype i32 --high 1024").code == 0);
    std::string raw = slurp(d / "r.bin");
    REQUIRE(raw.size() == 4000);
    const auto* s = reinterpret_cast<const std::int32_t*>(raw.data());
    bool ok = true;
    for (int i = 0; i < 1000; ++i) ok = ok && s[i] >= 0 && s[i] < 1024;
    CHECK(ok);
}

// =============================================================================================== folders

TEST_CASE("folder: a corrupt file in the middle is reported and the run goes on", "[cli][folder]") {
    TempDir d;
    std::map<std::string, cv::Mat> good;
    for (int i = 0; i < 6; ++i) {
        std::string name = "img" + std::to_string(i) + ".png";
        if (i == 3) continue;
        good[name] = photo(64 + i, 48, CV_8UC1, 20 + i);
        write(d / "in" / name, good[name]);
    }
    std::string png = encoded(photo(64, 48, CV_8UC1, 99), ".png");
    write_bytes(d / "in/img3.png", png.substr(0, png.size() / 2));  // truncated, in the middle of the run
    Run r = expect_error(d, "equalize in out --device cpu --threads 2", 1,
                         {"img3.png", "truncated or corrupt PNG", "done 5, failed 1"});
    CHECK_FALSE(fs::exists(d / "out/img3.png"));
    for (auto& [name, m] : good) {
        cv::Mat ref;
        cv::equalizeHist(m, ref);
        INFO(name);
        CHECK(same(read(d / "out" / name), ref));
    }
    CHECK(temporaries(d / "out").empty());
    // Not a terminal: no progress bar characters on stderr.
    CHECK_FALSE(contains(r.err, "\r"));
}

TEST_CASE("folder: --skip-existing resumes, --recursive mirrors sub-folders", "[cli][folder]") {
    TempDir d;
    write(d / "in/a.png", photo(30, 20, CV_8UC1, 30));
    write(d / "in/sub/b.png", photo(30, 20, CV_8UC1, 31));
    write(d / "in/sub/deeper/c.jpg", photo(32, 24, CV_8UC3, 32));
    write_bytes(d / "in/notes.txt", "not an image");
    Run r = run_cli(d, "equalize in out --recursive --device cpu");
    REQUIRE(r.code == 0);
    CHECK(fs::exists(d / "out/a.png"));
    CHECK(fs::exists(d / "out/sub/b.png"));
    CHECK(fs::exists(d / "out/sub/deeper/c.jpg"));
    CHECK_FALSE(fs::exists(d / "out/notes.txt"));
    // Simulate a stopped run: one output missing, another replaced by a marker that must survive.
    fs::remove(d / "out/sub/b.png");
    write_bytes(d / "out/a.png", "marker");
    r = run_cli(d, "equalize in out --recursive --skip-existing --device cpu");
    REQUIRE(r.code == 0);
    CHECK(contains(r.err, "done 1, failed 0, skipped 2"));
    CHECK(slurp(d / "out/a.png") == "marker");
    cv::Mat ref;
    cv::equalizeHist(read(d / "in/sub/b.png"), ref);
    CHECK(same(read(d / "out/sub/b.png"), ref));
    // Without --recursive only the top level is processed; --to changes the format.
    r = run_cli(d, "equalize in flat --to bmp --device cpu");
    REQUIRE(r.code == 0);
    CHECK(fs::exists(d / "flat/a.bmp"));
    CHECK_FALSE(fs::exists(d / "flat/sub"));
}

TEST_CASE("folder: --shard K/N covers every file exactly once, and --merge sums the parts", "[cli][folder][hist]") {
    TempDir d;
    for (int i = 0; i < 13; ++i) write(d / "in" / ("f" + std::to_string(i) + ".png"), photo(20 + i, 10, CV_8UC1, 40 + i));
    Run whole = run_cli(d, "hist in --format json --device cpu -o whole.json");
    REQUIRE(whole.code == 0);
    json wj = parse_json(slurp(d / "whole.json"));
    CHECK(wj["files"].size() == 13);
    // Every file's histogram equals cv::calcHist of that file, and the folder's total their sum.
    std::vector<std::uint64_t> sum(256, 0);
    for (auto& f : wj["files"]) {
        const std::string name = fs::path(f["file"].get<std::string>()).filename().string();
        INFO(name);
        const auto ref = cv_hist(read(d / "in" / name, cv::IMREAD_GRAYSCALE), 0, 256, 0, 256);
        CHECK(counts_of(f, "gray") == ref);
        for (int b = 0; b < 256; ++b) sum[static_cast<std::size_t>(b)] += ref[static_cast<std::size_t>(b)];
    }
    CHECK(counts_of(wj["total"], "gray") == sum);
    CHECK(wj["total"]["images"] == 13);
    // The folder as CSV: one row per file and bin, then TOTAL; every count equals cv::calcHist's.
    REQUIRE(run_cli(d, "hist in --format csv --device cpu -o whole.csv").code == 0);
    std::map<std::string, std::vector<std::uint64_t>> csv;
    {
        std::istringstream in(slurp(d / "whole.csv"));
        std::string line;
        std::getline(in, line);
        CHECK(line == "file,bin,low,high,gray");
        while (std::getline(in, line)) {
            std::vector<std::string> f;
            std::stringstream ls(line);
            for (std::string cell; std::getline(ls, cell, ',');) f.push_back(cell);
            REQUIRE(f.size() == 5);
            REQUIRE(f[0].size() > 2);
            // keyed by file name: "in/f3.png" -> f3.png
            csv[fs::path(f[0].substr(1, f[0].size() - 2)).filename().string()].push_back(std::stoull(f[4]));
        }
    }
    CHECK(csv.size() == 14);
    CHECK(csv["TOTAL"] == sum);
    for (int i = 0; i < 13; ++i) {
        const std::string name = "f" + std::to_string(i) + ".png";
        CHECK(csv[name] == cv_hist(read(d / "in" / name, cv::IMREAD_GRAYSCALE), 0, 256, 0, 256));
    }

    std::multiset<std::string> seen;
    std::string parts;
    for (int k = 1; k <= 3; ++k) {
        std::string out = "part" + std::to_string(k) + ".json";
        REQUIRE(run_cli(d, "hist in --format json --device cpu --shard " + std::to_string(k) + "/3 -o " + out).code == 0);
        json pj = parse_json(slurp(d / out));
        for (auto& f : pj["files"]) seen.insert(f["file"].get<std::string>());
        parts += " " + out;
    }
    CHECK(seen.size() == 13);
    CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == 13);
    Run m = run_cli(d, "hist --merge" + parts + " --format json");
    REQUIRE(m.code == 0);
    json mj = parse_json(m.out);
    CHECK(counts_of(mj, "gray") == counts_of(wj["total"], "gray"));
    CHECK(mj["images"] == 13);
    // Equalize with shards writes disjoint outputs that together cover the folder.
    for (int k = 1; k <= 4; ++k)
        REQUIRE(run_cli(d, "equalize in out --device cpu --shard " + std::to_string(k) + "/4").code == 0);
    int outputs = 0;
    for (auto& e : fs::directory_iterator(d / "out")) outputs += e.path().extension() == ".png";
    CHECK(outputs == 13);
    Run bad = run_cli(d, "hist in --shard 4/3");
    CHECK(bad.code == 2);
    CHECK(contains(bad.err, "--shard"));
    Run mism = run_cli(d, "hist in/f1.png --bins 16 --format json -o b16.json");
    REQUIRE(mism.code == 0);
    mism = run_cli(d, "hist --merge part1.json b16.json");
    CHECK(mism.code != 0);
    CHECK(contains(mism.err, "b16.json"));
}

// ============================================================================================ bad input

TEST_CASE("bad input: each gives a message naming the file, a non-zero exit and no output", "[cli][errors]") {
    TempDir d;
    cv::Mat g = photo(64, 48, CV_8UC1, 50);
    std::string png = encoded(g, ".png"), jpg = encoded(photo(64, 48, CV_8UC3, 51), ".jpg");
    std::string corrupt_png = png;
    for (std::size_t i = 60; i < 90 && i < corrupt_png.size(); ++i) corrupt_png[i] = static_cast<char>(corrupt_png[i] ^ 0x5a);
    std::string corrupt_jpg = jpg;
    for (std::size_t i = jpg.size() / 2; i < jpg.size() / 2 + 200; ++i) corrupt_jpg[i] = static_cast<char>(0xff);
    std::string jpg12 = jpg;
    std::size_t sof = jpg12.find("\xff\xc0");
    REQUIRE(sof != std::string::npos);
    jpg12[sof + 4] = 12;  // SOF0 sample precision 8 -> 12
    write_bytes(d / "truncated.png", png.substr(0, png.size() * 2 / 3));
    write_bytes(d / "corrupt.png", corrupt_png);
    write_bytes(d / "truncated.jpg", jpg.substr(0, jpg.size() / 2));
    write_bytes(d / "corrupt.jpg", corrupt_jpg);
    write_bytes(d / "empty.png", "");
    write_bytes(d / "text.png", "this is a text file, not a picture\n");
    write_bytes(d / "huge.png", png_header_only(100000, 100000));
    write_bytes(d / "precision12.jpg", jpg12);
    write_bytes(d / "cmyk.jpg", jpeg_with(32, 16, 4, JCS_CMYK));

    struct Case {
        std::string file, expect;
    };
    for (const Case& c : {Case{"truncated.png", "truncated or corrupt PNG"}, Case{"corrupt.png", "corrupt"},
                          Case{"truncated.jpg", "truncated or corrupt JPEG"}, Case{"corrupt.jpg", "corrupt JPEG"},
                          Case{"empty.png", "empty file"}, Case{"text.png", "not a PNG file"},
                          Case{"huge.png", "100000x100000"}, Case{"precision12.jpg", "unsupported sample depth"},
                          Case{"cmyk.jpg", "unsupported channel count"}, Case{"missing.png", "no such file"}}) {
        for (const char* cmd : {"equalize", "threshold", "hist"}) {
            INFO(cmd << " " << c.file);
            bool hist = std::string(cmd) == "hist";
            const std::string out = hist ? " --plot out.png" : " out.png";
            Run r = expect_error(d, std::string(cmd) + " " + c.file + out + " --device cpu", 1, {c.file, c.expect});
            CHECK(r.out.empty());
            CHECK_FALSE(fs::exists(d / "out.png"));
        }
    }
    // The pixel limit is configurable, and is checked before decoding.
    write(d / "ok.png", g);
    expect_error(d, "equalize ok.png out.png --max-pixels 1000", 1, {"ok.png", "--max-pixels"});
    CHECK_FALSE(fs::exists(d / "out.png"));
    CHECK(temporaries(d.path).empty());
}

TEST_CASE("bad output: unwritable folder, output equal to input, impossible format", "[cli][errors]") {
    TempDir d;
    cv::Mat g = photo(64, 48, CV_8UC1, 60);
    write(d / "in.png", g);
    write_bytes(d / "afile", "x");
    // The output's folder is a file (unwritable for every user, root included).
    expect_error(d, "equalize in.png afile/out.png --device cpu", 1, {"afile/out.png", "not a folder"});
    expect_error(d, "equalize in.png nowhere/out.png --device cpu", 1, {"does not exist"});
    if (geteuid() != 0) {  // permissions do not stop root
        fs::create_directories(d / "ro");
        fs::permissions(d / "ro", fs::perms::owner_read | fs::perms::owner_exec);
        expect_error(d, "equalize in.png ro/out.png --device cpu", 1, {"ro/out.png", "Permission denied"});
        CHECK(fs::is_empty(d / "ro"));
    }
    // Output equal to the input: refused, the input untouched; --in-place does it atomically.
    const std::string before = slurp(d / "in.png");
    expect_error(d, "equalize in.png in.png --device cpu", 1, {"in.png", "--in-place"});
    CHECK(slurp(d / "in.png") == before);
    CHECK(run_cli(d, "equalize in.png ./in.png --device cpu").code == 1);
    CHECK(slurp(d / "in.png") == before);
    CHECK(run_cli(d, "equalize --in-place in.png --device cpu").code == 0);
    cv::Mat ref;
    cv::equalizeHist(g, ref);
    CHECK(same(read(d / "in.png"), ref));
    // A format that cannot hold the image.
    write(d / "in16.png", photo(20, 10, CV_16UC1, 61));
    expect_error(d, "equalize in16.png out.jpg --device cpu", 1, {"out.jpg", "16-bit"});
    CHECK_FALSE(fs::exists(d / "out.jpg"));
    expect_error(d, "equalize in.png out.xyz --device cpu", 1, {"extension"});
    CHECK_FALSE(fs::exists(d / "out.xyz"));
    CHECK(temporaries(d.path).empty());
}

TEST_CASE("device: --device cuda without a GPU is a clear error", "[cli][device]") {
    TempDir d;
    write(d / "in.png", photo(20, 10, CV_8UC1, 70));
    Run r = run_cli(d, "hist in.png --device cuda:7");
    CHECK(r.code != 0);
    CHECK(contains(r.err, "cuda:7"));
    if (!imghist::built_with_cuda()) CHECK(contains(r.err, "built without CUDA (IMGHIST_WITH_CUDA=OFF)"));
    expect_error(d, "hist in.png --device gpu", 2, {"--device"});
    r = run_cli(d, "hist in.png --device all --format json");  // all GPUs, or the CPU when there is none
    CHECK(r.code == 0);
}

TEST_CASE("bench: runs imghist-bench next to the program, passing arguments, clear error when missing", "[cli][bench]") {
    TempDir d;
    fs::create_directories(d / "bin");
    std::string prog = cli_path();
    if (prog.find('/') == std::string::npos) {  // on PATH: find it
        std::string which = "command -v imghist > " + q(d / "which.txt");
        REQUIRE(std::system(which.c_str()) == 0);
        prog = slurp(d / "which.txt");
        while (!prog.empty() && (prog.back() == '\n' || prog.back() == ' ')) prog.pop_back();
    }
    fs::copy_file(prog, d / "bin/imghist");
    const std::string self = q(d / "bin/imghist");
    std::string cmd = "cd " + q(d.path) + " && PATH=/nonexistent " + self + " bench --json x.json > o.txt 2> e.txt";
    int st = std::system(cmd.c_str());
    CHECK(WEXITSTATUS(st) == 1);
    CHECK(contains(slurp(d / "e.txt"), "imghist-bench"));
    CHECK(contains(slurp(d / "e.txt"), "not found"));
    write_bytes(d / "bin/imghist-bench", "#!/bin/sh\necho \"bench args: $*\"\nexit 3\n");
    fs::permissions(d / "bin/imghist-bench", fs::perms::owner_all);
    st = std::system(cmd.c_str());
    CHECK(WEXITSTATUS(st) == 3);
    CHECK(slurp(d / "o.txt") == "bench args: --json x.json\n");
}
