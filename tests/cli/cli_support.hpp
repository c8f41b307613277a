// Support for the end-to-end tests of the imghist program: temporary folders, running the program, writing
// and reading files, and small encoders for the odd files the bad-input cases need.
#pragma once

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <jpeglib.h>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "jpeg_support.hpp"
#include "opencv_reference.hpp"
#include "support.hpp"

namespace clitest {

namespace fs = std::filesystem;
using nlohmann::json;

// ---- running the program ------------------------------------------------------------------------------

inline std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

/// The program under test: $IMGHIST_CLI, else the one this build made, else imghist on PATH (a relocated
/// bundle, where the build path does not exist).
inline std::string cli_path() {
    if (const char* env = std::getenv("IMGHIST_CLI"); env && *env) return env;
    if (access(IMGHIST_CLI_PATH, X_OK) == 0) return IMGHIST_CLI_PATH;
    return "imghist";
}

/// The shipped photographs.
inline fs::path samples_dir() { return fs::path(imghist_test::source_dir()) / "samples/images"; }

struct TempDir {
    fs::path path;
    TempDir() {
        const char* base = std::getenv("TMPDIR");
        std::string tmpl = std::string(base && *base ? base : "/tmp") + "/imghist-cli-XXXXXX";
        std::vector<char> buf(tmpl.begin(), tmpl.end());
        buf.push_back('\0');
        REQUIRE(mkdtemp(buf.data()) != nullptr);
        path = buf.data();
    }
    ~TempDir() {
        std::error_code ec;
        fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(path, ec);
    }
    fs::path operator/(const std::string& name) const { return path / name; }
};

struct Run {
    int code = -1;
    std::string out, err;
};

inline std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

/// Runs `imghist <args>` (a shell fragment: may hold redirections of stdin) in `dir`.
inline Run run_cli(const TempDir& dir, const std::string& args) {
    fs::path out = dir / ".stdout", err = dir / ".stderr";
    std::string cmd = "cd " + q(dir.path) + " && " + q(cli_path()) + " " + args + " > " + q(out) + " 2> " + q(err);
    int status = std::system(cmd.c_str());
    Run r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    r.out = slurp(out);
    r.err = slurp(err);
    fs::remove(out);
    fs::remove(err);
    INFO("imghist " << args << "\nexit " << r.code << "\nstderr: " << r.err);
    return r;
}

inline std::string device_arg(imghist::Backend b) { return b == imghist::Backend::Cuda ? " --device cuda" : " --device cpu"; }

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// Runs `imghist <args>` in `dir`; checks that it exits with `code` and that stderr holds every one of
/// `messages`. Returns the run for the checks that are the caller's own.
inline Run expect_error(const TempDir& dir, const std::string& args, int code,
                        const std::vector<std::string>& messages) {
    Run r = run_cli(dir, args);
    INFO("imghist " << args << "\nexit " << r.code << "\nstderr: " << r.err);
    CHECK(r.code == code);
    for (const std::string& m : messages) CHECK(contains(r.err, m));
    return r;
}

/// Files in a folder whose names start with '.' and end in ".tmp" (left-over temporaries).
inline std::vector<std::string> temporaries(const fs::path& dir) {
    std::vector<std::string> out;
    for (auto& e : fs::recursive_directory_iterator(dir)) {
        std::string n = e.path().filename().string();
        if (n.size() > 4 && n[0] == '.' && n.substr(n.size() - 4) == ".tmp") out.push_back(n);
    }
    return out;
}

// ---- inputs ---------------------------------------------------------------------------------------------

/// A photograph-like 8-bit image: smooth shapes plus noise, a few saturated pixels, odd size.
inline cv::Mat photo(int w, int h, int type, unsigned seed) {
    cv::Mat m(h, w, type);
    cv::RNG rng(seed);
    const int cn = m.channels();
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            for (int c = 0; c < cn; ++c) {
                double v = 90 + 50 * std::sin(x * (0.02 + 0.01 * c) + seed) * std::cos(y * 0.03) + static_cast<int>(0.2 * x * (c + 1)) % 60;
                v += rng.gaussian(6);
                int iv = cv::saturate_cast<int>(v);
                if (CV_MAT_DEPTH(type) == CV_16U)
                    m.ptr<std::uint16_t>(y)[x * cn + c] = cv::saturate_cast<std::uint16_t>(iv * 200 + rng.uniform(0, 200));
                else
                    m.ptr<std::uint8_t>(y)[x * cn + c] = cv::saturate_cast<std::uint8_t>(iv);
            }
    return m;
}

/// Writes an input file, making the folders it goes into.
inline void write(const fs::path& p, const cv::Mat& m) {
    fs::create_directories(p.parent_path());
    REQUIRE(cv::imwrite(p.string(), m));
}
inline void write_bytes(const fs::path& p, const std::string& bytes) {
    fs::create_directories(p.parent_path());
    std::ofstream f(p, std::ios::binary);
    f << bytes;
}
inline cv::Mat read(const fs::path& p, int flags = cv::IMREAD_UNCHANGED) {
    cv::Mat m = cv::imread(p.string(), flags);
    INFO("reading " << p);
    REQUIRE(!m.empty());
    return m;
}
inline bool same(const cv::Mat& a, const cv::Mat& b) {
    return a.size() == b.size() && a.type() == b.type() && cv::countNonZero(cv::Mat(a != b).reshape(1)) == 0;
}

inline std::uint32_t crc(const std::string& s, std::size_t from, std::size_t n) {
    std::uint32_t c = 0xffffffffu;
    for (std::size_t i = from; i < from + n; ++i) {
        c ^= static_cast<unsigned char>(s[i]);
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return ~c;
}

/// A PNG whose IHDR claims width x height and whose data is nonsense (it must never be decoded).
inline std::string png_header_only(std::uint32_t width, std::uint32_t height) {
    std::string s("\x89PNG\r\n\x1a\n", 8);
    auto be = [&](std::uint32_t v) {
        for (int i = 3; i >= 0; --i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    };
    be(13);
    std::size_t start = s.size();
    s += "IHDR";
    be(width);
    be(height);
    s += std::string("\x08\x00\x00\x00\x00", 5);
    be(crc(s, start, 17));
    be(4);
    start = s.size();
    s += "IDATabcd";
    be(crc(s, start, 8));
    return s;
}

/// A JPEG written with libjpeg in a given colour space (used for a CMYK file, which OpenCV cannot write).
inline std::string jpeg_with(int w, int h, int components, J_COLOR_SPACE space) {
    const std::vector<unsigned char> jpeg = test_jpeg::compress(
        w, h, components, space, [](jpeg_compress_struct&) {},
        [&](int y, unsigned char* row) {
            for (std::size_t i = 0; i < static_cast<std::size_t>(w * components); ++i)
                row[i] = static_cast<unsigned char>((i * 7 + y * 3) & 0xff);
        });
    return std::string(jpeg.begin(), jpeg.end());
}

inline std::string encoded(const cv::Mat& m, const std::string& ext) {
    std::vector<uchar> b;
    REQUIRE(cv::imencode(ext, m, b));
    return std::string(b.begin(), b.end());
}

inline json parse_json(const std::string& s) {
    INFO("JSON: " << s.substr(0, 300));
    json j;
    REQUIRE_NOTHROW(j = json::parse(s));
    return j;
}

/// cv::calcHist of one channel as integer counts.
inline std::vector<std::uint64_t> cv_hist(const cv::Mat& m, int channel, int bins, float lo, float hi) {
    cv::Mat h;
    int ch[] = {channel};
    int size[] = {bins};
    float range[] = {lo, hi};
    const float* ranges[] = {range};
    cv::calcHist(&m, 1, ch, cv::Mat(), h, 1, size, ranges);
    std::vector<std::uint64_t> out(static_cast<std::size_t>(bins));
    for (int i = 0; i < bins; ++i) out[static_cast<std::size_t>(i)] = static_cast<std::uint64_t>(h.at<float>(i));
    return out;
}

inline std::vector<std::uint64_t> counts_of(const json& hist, const std::string& name) {
    for (auto& c : hist.at("channels"))
        if (c.at("name") == name) return c.at("counts").get<std::vector<std::uint64_t>>();
    FAIL("no channel " << name);
    return {};
}

/// 16-bit equalization by a plain loop, cv::equalizeHist's rule over 65536 levels: the first non-empty
/// level -> 0, the others round(cdf after it * scale) with scale = 65535 / (N - h[i0]) computed first (in
/// double; OpenCV's 8-bit code computes the scale once the same way, in float).
inline cv::Mat equalize16_reference(const cv::Mat& src) {
    std::vector<std::uint64_t> h(65536, 0);
    for (int y = 0; y < src.rows; ++y)
        for (int x = 0; x < src.cols; ++x) ++h[src.at<std::uint16_t>(y, x)];
    int i0 = 0;
    while (h[static_cast<std::size_t>(i0)] == 0) ++i0;
    const double total = static_cast<double>(src.total());
    const double scale = 65535.0 / (total - static_cast<double>(h[static_cast<std::size_t>(i0)]));
    std::vector<std::uint16_t> lut(65536, 0);
    std::uint64_t sum = 0;
    for (int i = i0 + 1; i < 65536; ++i) {
        sum += h[static_cast<std::size_t>(i)];
        lut[static_cast<std::size_t>(i)] = static_cast<std::uint16_t>(std::nearbyint(static_cast<double>(sum) * scale));
    }
    cv::Mat out(src.size(), CV_16UC1);
    for (int y = 0; y < src.rows; ++y)
        for (int x = 0; x < src.cols; ++x) out.at<std::uint16_t>(y, x) = lut[src.at<std::uint16_t>(y, x)];
    return out;
}

}  // namespace clitest
