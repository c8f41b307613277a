// The resource model (tools/imghist/README.md, "What one input may cost") end to end: each bomb and crash of
// the hostile-input review of issue 30, made here at a size that keeps the case quick, must be refused
// before it costs its memory or time, with an error naming the file, the limit and the option that raises
// it; and the same file must decode once the limit is raised (the limit, not a defect, refused it). Also the
// valid files the review found refused or decoded wrongly (a JPEG whose ICC chunks are misnumbered).
#include <zlib.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "cli_support.hpp"

#include <tiffio.h>  // after OpenCV: libtiff deprecates the int64 names OpenCV's headers use

using namespace clitest;

namespace {

std::string be32(std::uint32_t v) {
    return std::string{char(v >> 24), char((v >> 16) & 0xff), char((v >> 8) & 0xff), char(v & 0xff)};
}

std::string zlib_compress(const std::string& s) {
    uLongf n = compressBound(static_cast<uLong>(s.size()));
    std::string out(n, '\0');
    REQUIRE(compress2(reinterpret_cast<Bytef*>(&out[0]), &n, reinterpret_cast<const Bytef*>(s.data()),
                      static_cast<uLong>(s.size()), 9) == Z_OK);
    out.resize(n);
    return out;
}

std::string zlib_inflate(const std::string& z) {
    std::string out(1 << 20, '\0');
    uLongf n = out.size();
    REQUIRE(uncompress(reinterpret_cast<Bytef*>(&out[0]), &n, reinterpret_cast<const Bytef*>(z.data()),
                       static_cast<uLong>(z.size())) == Z_OK);
    out.resize(n);
    return out;
}

std::string png_chunk(const std::string& type, const std::string& body) {
    const std::string c = type + body;
    return be32(static_cast<std::uint32_t>(body.size())) + c + be32(crc(c, 0, c.size()));
}

/// A 2x2 gray PNG with `extra` chunks before its image data.
std::string png_with(const std::string& extra) {
    const std::string ihdr = be32(2) + be32(2) + std::string("\x08\x00\x00\x00\x00", 5);
    return std::string("\x89PNG\r\n\x1a\n", 8) + png_chunk("IHDR", ihdr) + extra +
           png_chunk("IDAT", zlib_compress(std::string("\0\x10\x20\0\x30\x40", 6))) + png_chunk("IEND", "");
}

/// Runs `imghist <args>` fed by `feed` through a pipe (a shell command run in `dir`).
Run run_piped(const TempDir& dir, const std::string& feed, const std::string& args) {
    const fs::path out = dir / ".stdout", err = dir / ".stderr";
    const std::string cmd = "cd " + q(dir.path) + " && " + feed + " | " + q(cli_path()) + " " + args + " > " + q(out) +
                            " 2> " + q(err);
    const int status = std::system(cmd.c_str());
    Run r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

/// Runs `args` (fed by `feed` through a pipe when given); requires exit `code`, stderr naming `file` and
/// containing `expect`, within `seconds`.
Run expect_exit(const TempDir& d, const std::string& args, int code, const std::string& file, const std::string& expect,
                double seconds = 10, const std::string& feed = "") {
    const auto t0 = std::chrono::steady_clock::now();
    Run r = feed.empty() ? run_cli(d, args) : run_piped(d, feed, args);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO(args << "\nexit " << r.code << "\nstderr: " << r.err);
    CHECK(r.code == code);
    CHECK(contains(r.err, file));
    CHECK(contains(r.err, expect));
    CHECK(took < seconds);
    return r;
}

/// The run's peak resident memory in MiB, from the line `-v` prints ("peak memory 13 MiB (resident)...").
double peak_mib(const std::string& err) {
    const std::size_t at = err.find("peak memory ");
    REQUIRE(at != std::string::npos);
    double v = 0;
    char unit[8] = {};
    REQUIRE(std::sscanf(err.c_str() + at, "peak memory %lf %7s", &v, unit) == 2);
    const std::string u = unit;
    return u == "GiB" ? v * 1024 : u == "KiB" ? v / 1024 : u == "bytes" ? v / 1048576 : v;
}

/// The gray (or first) channel's counts of `file` through `hist --format json`, with `extra` options.
std::vector<std::uint64_t> first_counts(const TempDir& d, const std::string& file, const std::string& extra = "") {
    Run r = run_cli(d, "hist " + file + " --format json --device cpu " + extra);
    REQUIRE(r.code == 0);
    return parse_json(r.out).at("channels").at(0).at("counts").get<std::vector<std::uint64_t>>();
}

/// A gray progressive JPEG written by libjpeg with a scan script of 2 * 63 + 1 scans: DC, then every AC
/// coefficient alone at Al = 1, then each refined to Al = 0.
std::string jpeg_of_127_scans(const cv::Mat& gray) {
    std::vector<jpeg_scan_info> script;
    script.push_back(jpeg_scan_info{1, {0, 0, 0, 0}, 0, 0, 0, 0});
    for (int k = 1; k < 64; ++k) script.push_back(jpeg_scan_info{1, {0, 0, 0, 0}, k, k, 0, 1});
    for (int k = 1; k < 64; ++k) script.push_back(jpeg_scan_info{1, {0, 0, 0, 0}, k, k, 1, 0});
    const std::vector<unsigned char> jpeg = test_jpeg::compress(
        gray.cols, gray.rows, 1, JCS_GRAYSCALE,
        [&](jpeg_compress_struct& c) {
            c.scan_info = script.data();
            c.num_scans = static_cast<int>(script.size());
        },
        [&](int y, unsigned char* row) { std::memcpy(row, gray.ptr<std::uint8_t>(y), static_cast<std::size_t>(gray.cols)); });
    return std::string(jpeg.begin(), jpeg.end());
}

/// A baseline JPEG with APP2 ICC_PROFILE segments inserted after SOI, each (sequence, count, payload).
std::string jpeg_with_icc(const std::string& jpeg, const std::vector<std::tuple<int, int, std::string>>& chunks) {
    std::string segments;
    for (auto& [seq, count, payload] : chunks) {
        const std::string body = std::string("ICC_PROFILE\0", 12) + char(seq) + char(count) + payload;
        const std::size_t n = body.size() + 2;
        segments += std::string("\xff\xe2", 2) + char(n >> 8) + char(n & 0xff) + body;
    }
    return jpeg.substr(0, 2) + segments + jpeg.substr(2);
}

/// A plausible ICC profile of `size` (>= 132) bytes: the size field, the 'acsp' signature, no tags, the rest
/// a pattern.
std::string icc_profile(std::uint32_t size) {
    std::string p(size, '\0');
    for (std::uint32_t i = 0; i < size; ++i) p[i] = char(i * 7 + 3);
    p.replace(0, 4, be32(size));
    p.replace(36, 4, "acsp");
    p.replace(128, 4, be32(0));  // no tags
    return p;
}

/// The inflated profile of a PNG's iCCP chunk; empty when it has none.
std::string png_icc(const std::string& png) {
    const std::size_t at = png.find("iCCP");
    if (at == std::string::npos) return {};
    const std::uint32_t len = (std::uint32_t(static_cast<unsigned char>(png[at - 4])) << 24) |
                              (std::uint32_t(static_cast<unsigned char>(png[at - 3])) << 16) |
                              (std::uint32_t(static_cast<unsigned char>(png[at - 2])) << 8) |
                              std::uint32_t(static_cast<unsigned char>(png[at - 1]));
    const std::string body = png.substr(at + 4, len);
    const std::size_t nul = body.find('\0');
    return zlib_inflate(body.substr(nul + 2));
}

/// A flat (all zero) gray TIFF written by libtiff with `compression`, in strips of 256 rows.
void write_flat_tiff(const fs::path& path, int w, int h, std::uint16_t compression) {
    TIFF* t = TIFFOpen(path.string().c_str(), "w");
    REQUIRE(t);
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, static_cast<std::uint32_t>(w));
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, static_cast<std::uint32_t>(h));
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, std::uint16_t(1));
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, std::uint16_t(8));
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(t, TIFFTAG_COMPRESSION, compression);
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, std::uint32_t(256));
    std::vector<std::uint8_t> strip(static_cast<std::size_t>(w) * 256, 0);
    for (int y = 0, s = 0; y < h; y += 256, ++s)
        REQUIRE(TIFFWriteEncodedStrip(t, static_cast<std::uint32_t>(s), strip.data(),
                                      static_cast<tmsize_t>(static_cast<std::size_t>(w) * std::min(256, h - y))) >= 0);
    TIFFClose(t);
}

/// A lossless WebP of w x h whose five prefix codes have one symbol each: no bits at all per pixel, every
/// pixel black. 28 bytes whatever the size.
std::string zero_bit_webp(int w, int h) {
    std::uint64_t bits = 0;
    int n = 0;
    auto put = [&](std::uint64_t v, int count) {
        bits |= v << n;
        n += count;
    };
    put(0x2f, 8);
    put(static_cast<std::uint64_t>(w - 1), 14);
    put(static_cast<std::uint64_t>(h - 1), 14);
    put(0, 1 + 3 + 1 + 1 + 1);                   // no alpha, version 0, no transform, no cache, no meta codes
    for (int k = 0; k < 5; ++k) put(1, 1 + 1 + 1 + 1);  // simple code, one symbol, 1-bit symbol, symbol 0
    std::string vp8l;
    for (int i = 0; i < (n + 7) / 8; ++i) vp8l += char((bits >> (8 * i)) & 0xff);
    auto le32 = [](std::uint32_t v) { return std::string{char(v), char(v >> 8), char(v >> 16), char(v >> 24)}; };
    const std::string body = "VP8L" + le32(static_cast<std::uint32_t>(vp8l.size())) + vp8l;
    return "RIFF" + le32(static_cast<std::uint32_t>(4 + body.size())) + "WEBP" + body;
}

}  // namespace

TEST_CASE("limits: a PNG of compressed text chunks is refused before it is inflated past --max-metadata",
          "[cli][limits][png]") {
    TempDir d;
    // 200 zTXt comments of 1 MiB each in a 200 KB file: 200 MiB of text (the review's file: 1000 of them,
    // 4.1 GB resident and a 1.05 GB output).
    const std::string comment = png_chunk("zTXt", std::string("Comment\0\0", 9) + zlib_compress(std::string(1 << 20, 'a')));
    std::string chunks;
    for (int i = 0; i < 200; ++i) chunks += comment;
    write_bytes(d / "text.png", png_with(chunks));
    Run r = expect_exit(d, "equalize text.png out.png --device cpu -v", 1, "text.png", "raise the limit with --max-metadata");
    CHECK_FALSE(fs::exists(d / "out.png"));
    CHECK(peak_mib(r.err) < 200);  // at most the 64 MiB limit of text is inflated (and copied once)
    // Raised, the file decodes and its comments are kept.
    REQUIRE(run_cli(d, "equalize text.png out.png --device cpu --max-metadata 256M").code == 0);
    CHECK(fs::file_size(d / "out.png") > (std::uintmax_t(200) << 20));
    fs::remove(d / "out.png");

    // Their number is bounded too: 1001 tiny text chunks against the default of 1000.
    std::string many;
    for (int i = 0; i < 1001; ++i) many += png_chunk("tEXt", std::string("Comment\0x", 9));
    write_bytes(d / "many.png", png_with(many));
    expect_exit(d, "hist many.png --device cpu", 1, "many.png", "raise the limit with --max-metadata-items");
    CHECK(run_cli(d, "hist many.png --device cpu --max-metadata-items 2000").code == 0);
}

TEST_CASE("limits: a JPEG of more scans than --max-scans is refused before decoding; raised, it decodes as OpenCV does",
          "[cli][limits][jpeg]") {
    TempDir d;
    const cv::Mat gray = photo(64, 48, CV_8UC1, 30);
    write_bytes(d / "scans.jpg", jpeg_of_127_scans(gray));
    expect_exit(d, "hist scans.jpg --device cpu", 1, "scans.jpg", "127 scans, above the limit of 100");
    expect_exit(d, "equalize scans.jpg out.png --device cpu", 1, "scans.jpg", "--max-scans");
    CHECK_FALSE(fs::exists(d / "out.png"));
    const cv::Mat ref = cv::imread((d / "scans.jpg").string(), cv::IMREAD_GRAYSCALE);
    REQUIRE(!ref.empty());
    CHECK(first_counts(d, "scans.jpg", "--max-scans 127") == cv_hist(ref, 0, 256, 0, 256));
    expect_exit(d, "hist scans.jpg --device cpu --max-scans 126", 1, "scans.jpg", "above the limit of 126");
}

TEST_CASE("limits: a JPEG whose ICC chunks are misnumbered decodes; the profile is kept only when it is whole",
          "[cli][limits][jpeg][metadata]") {
    TempDir d;
    const cv::Mat src = photo(40, 30, CV_8UC3, 31);
    const std::string base = encoded(src, ".jpg");
    const std::string icc = icc_profile(300);
    const cv::Mat ref = cv::imdecode(std::vector<uchar>(base.begin(), base.end()), cv::IMREAD_COLOR);
    struct Case {
        const char* name;
        std::vector<std::tuple<int, int, std::string>> chunks;
        bool kept;
    };
    const std::vector<Case> cases = {
        {"count-too-high.jpg", {{1, 2, icc}}, true},                                       // "1 of 2", all there
        {"count-zero.jpg", {{1, 0, icc.substr(0, 100)}, {2, 0, icc.substr(100)}}, true},   // count 0
        {"repeated-seq.jpg", {{1, 2, icc.substr(0, 150)}, {1, 2, icc.substr(150)}}, true},  // 1 and 1 of 2
        {"truncated.jpg", {{1, 2, icc.substr(0, 200)}}, false},                            // the rest is missing
    };
    for (const Case& c : cases) {
        INFO(c.name);
        write_bytes(d / c.name, jpeg_with_icc(base, c.chunks));
        Run r = run_cli(d, std::string("equalize ") + c.name + " out.png --device cpu --mode per-channel");
        REQUIRE(r.code == 0);
        CHECK(png_icc(slurp(d / "out.png")) == (c.kept ? icc : std::string()));
        // The pixels are the JPEG's: its equalization is OpenCV's of OpenCV's decoding.
        CHECK(same(read(d / "out.png", cv::IMREAD_COLOR), opencv_equalize_per_channel(ref)));
        fs::remove(d / "out.png");
    }
}

TEST_CASE("limits: TIFF compressions without a bound of their own are held to --max-ratio", "[cli][limits][tiff]") {
    TempDir d;
    std::uint16_t compression = 0;
    for (std::uint16_t c : {std::uint16_t(COMPRESSION_ZSTD), std::uint16_t(COMPRESSION_LZMA)})
        if (!compression && TIFFIsCODECConfigured(c)) compression = c;
    if (!compression) {
        std::printf("%s: this libtiff has neither ZSTD nor LZMA, case skipped\n", imghist_test::kSkipMarker);
        return;
    }
    // 9000 x 9000 zeros (77 MiB) in a few KB.
    write_flat_tiff(d / "flat.tif", 9000, 9000, compression);
    REQUIRE(fs::file_size(d / "flat.tif") < 100000);
    expect_exit(d, "hist flat.tif --device cpu", 1, "flat.tif", "raise it with --max-ratio");
    expect_exit(d, "equalize flat.tif out.tif --device cpu", 1, "flat.tif", "above the limit of 1024:1");
    CHECK_FALSE(fs::exists(d / "out.tif"));
    CHECK(first_counts(d, "flat.tif", "--max-ratio 100000000")[0] == 81000000u);
    // Images up to 64 MiB pass whatever their ratio.
    write_flat_tiff(d / "small.tif", 4000, 4000, compression);
    CHECK(first_counts(d, "small.tif")[0] == 16000000u);
}

TEST_CASE("limits: a lossless WebP of a few bytes cannot claim a huge image", "[cli][limits][webp]") {
    TempDir d;
    write_bytes(d / "zero.webp", zero_bit_webp(5000, 5000));  // 28 bytes, 72 MiB of pixels
    REQUIRE(fs::file_size(d / "zero.webp") < 40);
    expect_exit(d, "hist zero.webp --device cpu", 1, "zero.webp", "lossless WebP data of");
    CHECK(run_cli(d, "hist zero.webp --device cpu").err.find("--max-ratio") != std::string::npos);
    // Raised: the file is valid, all black.
    CHECK(first_counts(d, "zero.webp", "--max-ratio 100000000")[0] == 25000000u);
}

TEST_CASE("limits: inputs are read by size, within --max-input, and refused by their first bytes", "[cli][limits][io]") {
    TempDir d;
    write(d / "noise.png", [] {
        cv::Mat m(1200, 1200, CV_8UC1);
        cv::randu(m, 0, 256);
        return m;
    }());
    REQUIRE(fs::file_size(d / "noise.png") > (1u << 20));
    expect_exit(d, "hist noise.png --device cpu --max-input 1M", 1, "noise.png", "above the input limit of 1 MiB (raise it with --max-input)");
    expect_exit(d, "hist - --device cpu --max-input 1M < noise.png", 1, "<stdin>", "--max-input");
    expect_exit(d, "hist - --device cpu --max-input 1M < /dev/zero", 1, "<stdin>", "unrecognised image format");
    expect_exit(d, "hist - --device cpu --max-input 1M", 1, "<stdin>", "holds more than 1 MiB, above the input limit", 10,
                "cat noise.png");
    CHECK(run_cli(d, "hist - --device cpu < noise.png").code == 0);
    const Run piped = run_piped(d, "cat noise.png", "hist - --device cpu --format json");
    CHECK(piped.code == 0);
    CHECK(parse_json(piped.out).at("channels") ==
          parse_json(run_cli(d, "hist noise.png --device cpu --format json").out).at("channels"));
    // 256 MiB of zeros named .png (a sparse file): refused from its first bytes, nothing else read.
    {
        std::ofstream f(d / "fake.png", std::ios::binary);
        f.seekp((std::streamoff(256) << 20) - 1);
        f.put('\0');
    }
    Run r = expect_exit(d, "hist fake.png --device cpu -v", 1, "fake.png", "not a PNG file");
    CHECK(peak_mib(r.err) < 100);
}

TEST_CASE("limits: --max-memory refuses an image that cannot fit and makes a folder wait for room",
          "[cli][limits][memory]") {
    TempDir d;
    for (int i = 0; i < 6; ++i) write(d / ("in/p" + std::to_string(i) + ".png"), photo(1000, 700, CV_8UC3, 40 + i));
    // Each image is 2.0 MiB decoded, counted with its file (under 2 MiB) and three times its pixels: 6-8 MiB.
    for (int i = 0; i < 6; ++i) REQUIRE(fs::file_size(d / ("in/p" + std::to_string(i) + ".png")) < (2u << 20));
    expect_exit(d, "equalize in out --device cpu --max-memory 5M", 1, "p0.png", "raise it with --max-memory");
    CHECK(temporaries(d.path).empty());
    // Room for one image at a time, four threads: every file is done.
    Run r = run_cli(d, "equalize in out --device cpu --max-memory 12M --threads 4 -v");
    CHECK(r.code == 0);
    for (int i = 0; i < 6; ++i) CHECK(fs::exists(d / ("out/p" + std::to_string(i) + ".png")));
    CHECK(contains(r.err, "memory budget 12 MiB (--max-memory)"));
}

TEST_CASE("limits: the CLAHE tile grid is bounded by the image and by the memory budget", "[cli][limits][clahe]") {
    TempDir d;
    write(d / "small.png", photo(64, 64, CV_8UC1, 50));
    // The review's case: 3000 x 3000 tiles on a 64 x 64 image took 2.26 GB and 10 s.
    expect_exit(d, "clahe small.png out.png --tiles 3000x3000 --device cpu", 1, "small.png",
                "finer than the 64x64 image", 5);
    CHECK_FALSE(fs::exists(d / "out.png"));
    CHECK(run_cli(d, "clahe small.png out.png --tiles 64x64 --device cpu").code == 0);
    // 16-bit: a table of 65536 levels per tile; 64 x 64 tiles need 512 MiB.
    write(d / "deep.png", photo(300, 300, CV_16UC1, 51));
    expect_exit(d, "clahe deep.png deep-out.png --tiles 64x64 --device cpu --max-memory 256M", 1, "deep.png",
                "512 MiB of tile tables");
    CHECK_FALSE(fs::exists(d / "deep-out.png"));
}

TEST_CASE("limits: histogram JSON nested 30000 levels deep is refused, not a stack overflow", "[cli][limits][json]") {
    TempDir d;
    std::string nested;
    for (int i = 0; i < 30000; ++i) nested += "{\"total\": ";
    nested += "{}";
    nested += std::string(30000, '}');
    write_bytes(d / "nested.json", nested);
    expect_exit(d, "hist --merge nested.json", 1, "nested.json", "nested deeper than");
    write(d / "in.png", photo(20, 20, CV_8UC1, 52));
    expect_exit(d, "match in.png nested.json out.png --device cpu", 1, "nested.json", "nested deeper than");
    // Arrays too.
    write_bytes(d / "arrays.json", std::string(30000, '[') + std::string(30000, ']'));
    expect_exit(d, "hist --merge arrays.json", 1, "arrays.json", "nested deeper than");
    // A histogram whose bins are out of range is refused in words.
    write_bytes(d / "bins.json", R"({"bins": -1, "range": [0, 1], "channels": [{"name": "gray", "counts": []}]})");
    expect_exit(d, "hist --merge bins.json", 1, "bins.json", "bins -1 is not 1-65536");
}

TEST_CASE("limits: --threads is bounded with a clear message", "[cli][limits]") {
    TempDir d;
    write(d / "a.png", photo(20, 20, CV_8UC1, 53));
    write(d / "b.png", photo(20, 20, CV_8UC1, 54));
    // Unbounded, this ended in SIGABRT ("terminate called without an active exception").
    expect_exit(d, "hist a.png b.png --threads 33000 --device cpu", 2, "--threads", "33000 is above the limit of 1024");
    CHECK(run_cli(d, "hist a.png b.png --threads 1024 --device cpu").code == 0);
}

TEST_CASE("limits: library error texts do not reach users", "[cli][limits][png]") {
    TempDir d;
    // A PLTE of 7 bytes (not whole entries): libspng's later calls answered "non-recoverable state".
    const std::string ihdr = be32(4) + be32(1) + std::string("\x02\x03\x00\x00\x00", 5);
    const std::string png = std::string("\x89PNG\r\n\x1a\n", 8) + png_chunk("IHDR", ihdr) +
                            png_chunk("PLTE", std::string(7, '\0')) +
                            png_chunk("IDAT", zlib_compress(std::string("\0\x18", 2))) + png_chunk("IEND", "");
    write_bytes(d / "plte.png", png);
    Run r = expect_exit(d, "hist plte.png --device cpu", 1, "plte.png", "truncated or corrupt PNG");
    CHECK_FALSE(contains(r.err, "non-recoverable"));
}
