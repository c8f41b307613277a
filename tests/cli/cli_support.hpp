// Helpers shared by the CLI test files: running the program in a temporary folder, writing inputs and
// reading outputs with OpenCV, and plain-loop references.
#pragma once

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "support.hpp"

namespace fs = std::filesystem;

namespace {

// ---- running the program ------------------------------------------------------------------------------

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

/// The program under test: $IMGHIST_CLI, else the one this build made, else imghist on PATH (a relocated
/// bundle, where the build path does not exist).
std::string cli_path() {
    if (const char* env = std::getenv("IMGHIST_CLI"); env && *env) return env;
    if (access(IMGHIST_CLI_PATH, X_OK) == 0) return IMGHIST_CLI_PATH;
    return "imghist";
}

/// The shipped photographs.
fs::path samples_dir() { return fs::path(imghist_test::source_dir()) / "samples/images"; }

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

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

/// Runs `imghist <args>` (a shell fragment: may hold redirections of stdin) in `dir`.
Run run_cli(const TempDir& dir, const std::string& args) {
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

std::string device_arg(imghist::Backend b) { return b == imghist::Backend::Cuda ? " --device cuda" : " --device cpu"; }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// Files in a folder whose names start with '.' and end in ".tmp" (left-over temporaries).
std::vector<std::string> temporaries(const fs::path& dir) {
    std::vector<std::string> out;
    for (auto& e : fs::recursive_directory_iterator(dir)) {
        std::string n = e.path().filename().string();
        if (n.size() > 4 && n[0] == '.' && n.substr(n.size() - 4) == ".tmp") out.push_back(n);
    }
    return out;
}

// ---- inputs ---------------------------------------------------------------------------------------------

/// A photograph-like 8-bit image: smooth shapes plus noise, a few saturated pixels, odd size.
cv::Mat photo(int w, int h, int type, unsigned seed) {
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

void write(const fs::path& p, const cv::Mat& m) { REQUIRE(cv::imwrite(p.string(), m)); }
void write_bytes(const fs::path& p, const std::string& bytes) {
    std::ofstream f(p, std::ios::binary);
    f << bytes;
}
cv::Mat read(const fs::path& p, int flags = cv::IMREAD_UNCHANGED) {
    cv::Mat m = cv::imread(p.string(), flags);
    INFO("reading " << p);
    REQUIRE(!m.empty());
    return m;
}
bool same(const cv::Mat& a, const cv::Mat& b) {
    return a.size() == b.size() && a.type() == b.type() && cv::countNonZero(cv::Mat(a != b).reshape(1)) == 0;
}


/// 16-bit equalization by a plain loop, cv::equalizeHist's rule over 65536 levels: the first non-empty
/// level -> 0, the others round(cdf after it * scale) with scale = 65535 / (N - h[i0]) computed first (in
/// double; OpenCV's 8-bit code computes the scale once the same way, in float).
cv::Mat equalize16_reference(const cv::Mat& src) {
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

}  // namespace
