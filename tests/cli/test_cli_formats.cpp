// End-to-end tests of metadata, TIFF and WebP in the imghist program, against independent readers: PIL
// (tests/cli/pil_probe.py) for metadata and as a second decoder, OpenCV for pixels, plain loops for the
// documented conversion rules. Where PIL is missing (a GPU host without Python packages) the cases report
// themselves skipped.
#include <map>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

#include <tiffio.h>  // after OpenCV: libtiff deprecates the int64 names OpenCV's headers use

using namespace clitest;

namespace {

std::string python() {
    if (const char* env = std::getenv("IMGHIST_PYTHON"); env && *env) return env;
    // The system interpreter, which has Debian's python3-pil (a python3 earlier on PATH may not).
    return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

bool pil_or_skip() {
    static const int ok = std::system((python() + " -c 'import PIL' >/dev/null 2>&1").c_str()) == 0 ? 1 : 0;
    if (!ok) {
        std::printf("%s: PIL (python3-pil) not available, case skipped\n", imghist_test::kSkipMarker);
        std::fflush(stdout);
    }
    return ok;
}

/// Runs tests/cli/pil_probe.py with `args` in `dir` and returns its JSON answer.
json pil(const TempDir& dir, const std::string& args) {
    const fs::path probe = fs::path(imghist_test::source_dir()) / "tests/cli/pil_probe.py";
    const fs::path out = dir / ".pil-out", err = dir / ".pil-err";
    const std::string cmd = "cd " + q(dir.path) + " && " + python() + " " + q(probe) + " " + args + " > " + q(out) +
                            " 2> " + q(err);
    const int rc = std::system(cmd.c_str());
    INFO("pil_probe " << args << "\n" << slurp(err));
    REQUIRE(rc == 0);
    json j;
    REQUIRE_NOTHROW(j = json::parse(slurp(out)));
    return j;
}

cv::Mat equalize_per_channel(const cv::Mat& src) {
    std::vector<cv::Mat> p;
    cv::split(src, p);
    const std::size_t colour = p.size() == 2 || p.size() == 4 ? p.size() - 1 : p.size();  // alpha passes through
    for (std::size_t c = 0; c < colour; ++c) {
        if (src.depth() == CV_16U) p[c] = equalize16_reference(p[c]);
        else cv::equalizeHist(p[c], p[c]);
    }
    cv::Mat out;
    cv::merge(p, out);
    return out;
}

/// Writes in.jpg: the JPEG PIL makes from `photo_args` (pil_probe.py photo), with an APP1 XMP segment
/// inserted right after its SOI (PIL 9 cannot write XMP into JPEG). Returns PIL's reading of it.
json write_jpeg_with_xmp(const TempDir& d, const std::string& photo_args, const std::string& xmp) {
    pil(d, "photo src.jpg " + photo_args);
    const std::string jpeg = slurp(d / "src.jpg");
    const std::string id("http://ns.adobe.com/xap/1.0/\0", 29);
    const std::size_t len = 2 + id.size() + xmp.size();
    std::string seg = "\xff\xe1";
    seg.push_back(static_cast<char>(len >> 8));
    seg.push_back(static_cast<char>(len & 0xff));
    write_bytes(d / "in.jpg", jpeg.substr(0, 2) + seg + id + xmp + jpeg.substr(2));
    return pil(d, "info in.jpg");
}

/// Writes `m` (OpenCV's BGR(A) order) as a TIFF with libtiff: RGB(A) or gray, strips of 5 rows or 16x16
/// tiles, the given compression, chunky or planar-separate samples.
void write_tiff(const fs::path& path, const cv::Mat& m, std::uint16_t compression, bool tiled, bool separate = false) {
    cv::Mat rgb;  // a new buffer: `m` must stay as it is
    if (m.channels() == 3) cv::cvtColor(m, rgb, cv::COLOR_BGR2RGB);
    else if (m.channels() == 4) cv::cvtColor(m, rgb, cv::COLOR_BGRA2RGBA);
    else rgb = m;
    TIFF* t = TIFFOpen(path.string().c_str(), "w");
    REQUIRE(t != nullptr);
    const int ch = m.channels();
    const int bytes = m.depth() == CV_16U ? 2 : 1;
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, static_cast<std::uint32_t>(m.cols));
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, static_cast<std::uint32_t>(m.rows));
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, static_cast<std::uint16_t>(ch));
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, static_cast<std::uint16_t>(8 * bytes));
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, ch >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, separate ? PLANARCONFIG_SEPARATE : PLANARCONFIG_CONTIG);
    TIFFSetField(t, TIFFTAG_COMPRESSION, compression);
    if (ch == 2 || ch == 4) {
        std::uint16_t extra = EXTRASAMPLE_UNASSALPHA;
        TIFFSetField(t, TIFFTAG_EXTRASAMPLES, 1, &extra);
    }
    const std::size_t px = static_cast<std::size_t>(ch) * bytes;
    if (separate) {  // one plane per channel, one strip per row
        TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 1u);
        std::vector<cv::Mat> planes;
        cv::split(rgb, planes);
        for (int c = 0; c < ch; ++c)
            for (int y = 0; y < m.rows; ++y)
                REQUIRE(TIFFWriteScanline(t, planes[static_cast<std::size_t>(c)].ptr(y), static_cast<std::uint32_t>(y),
                                          static_cast<std::uint16_t>(c)) == 1);
    } else if (tiled) {
        TIFFSetField(t, TIFFTAG_TILEWIDTH, 16u);
        TIFFSetField(t, TIFFTAG_TILELENGTH, 16u);
        std::vector<std::uint8_t> tile(16 * 16 * px);
        for (int y0 = 0; y0 < m.rows; y0 += 16)
            for (int x0 = 0; x0 < m.cols; x0 += 16) {
                std::fill(tile.begin(), tile.end(), 0);
                for (int y = y0; y < std::min(m.rows, y0 + 16); ++y)
                    std::memcpy(&tile[static_cast<std::size_t>(y - y0) * 16 * px], rgb.ptr(y) + x0 * px,
                                static_cast<std::size_t>(std::min(16, m.cols - x0)) * px);
                REQUIRE(TIFFWriteTile(t, tile.data(), static_cast<std::uint32_t>(x0), static_cast<std::uint32_t>(y0), 0, 0) > 0);
            }
    } else {
        TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 5u);
        for (int y = 0; y < m.rows; ++y) REQUIRE(TIFFWriteScanline(t, rgb.ptr(y), static_cast<std::uint32_t>(y), 0) == 1);
    }
    TIFFClose(t);
}

std::size_t bytes_of(const fs::path& p) { return static_cast<std::size_t>(fs::file_size(p)); }

/// `imghist equalize IN OUT`, then PIL's reading of OUT.
json equalized_info(const TempDir& d, const std::string& in, const std::string& out) {
    REQUIRE(run_cli(d, "equalize " + in + " " + out + " --device cpu").code == 0);
    return pil(d, "info " + out);
}

/// The fields named in `keys` of PIL's reading `info` against the values in `expect`.
void check_fields(const json& info, const json& expect, std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
        INFO(key);
        CHECK(info[key] == expect.at(key));
    }
}

}  // namespace

// ============================================================================================== metadata

TEST_CASE("metadata: JPEG to JPEG keeps EXIF, ICC, XMP, comments, density, quality and progressive mode", "[cli][metadata]") {
    if (!pil_or_skip()) return;
    TempDir d;
    const std::string xmp = "<x:xmpmeta xmlns:x='adobe:ns:meta/'>rated 5</x:xmpmeta>";
    const json in =
        write_jpeg_with_xmp(d, "256 192 RGB orientation=6 make=TestCam icc=srgb dpi=300 comment=hello quality=75 progressive=1", xmp);
    REQUIRE(in["xmp"] == xmp);
    REQUIRE(in["progressive"] == true);
    // Luma mode takes the planar path (Y plane only), per-channel the RGB path: both keep everything.
    REQUIRE(run_cli(d, "equalize in.jpg luma.jpg --device cpu").code == 0);
    REQUIRE(run_cli(d, "equalize in.jpg per.jpg --mode per-channel --device cpu").code == 0);
    for (const char* out : {"luma.jpg", "per.jpg"}) {
        INFO(out);
        const json o = pil(d, std::string("info ") + out);
        CHECK(o["orientation"] == 6);
        CHECK(o["make"] == "TestCam");
        CHECK(o["icc_sha256"] == in["icc_sha256"]);
        CHECK(o["icc_sha256"].is_string());
        CHECK(o["dpi"] == json::array({300.0, 300.0}));
        CHECK(o["comments"] == json::array({"hello"}));
        CHECK(o["xmp"] == xmp);
        // Quality: the same quantisation tables as PIL's quality-75 input, and progressive again.
        CHECK(o["quantization"] == in["quantization"]);
        CHECK(o["progressive"] == true);
        const double ratio = static_cast<double>(bytes_of(d / out)) / static_cast<double>(bytes_of(d / "in.jpg"));
        INFO("size ratio " << ratio);
        CHECK(ratio > 0.7);
        CHECK(ratio < 1.35);
    }
    // --quality overrides: the tables of PIL's quality 90, and a larger file.
    pil(d, "photo q90.jpg 16 16 RGB quality=90");
    REQUIRE(run_cli(d, "equalize in.jpg hi.jpg --quality 90 --device cpu").code == 0);
    CHECK(pil(d, "info hi.jpg")["quantization"] == pil(d, "info q90.jpg")["quantization"]);
    CHECK(bytes_of(d / "hi.jpg") > bytes_of(d / "luma.jpg"));
    // A baseline input stays baseline; a gray one keeps its one table.
    pil(d, "photo base.jpg 64 48 L quality=60");
    REQUIRE(run_cli(d, "equalize base.jpg base-out.jpg --device cpu").code == 0);
    const json b = pil(d, "info base-out.jpg");
    CHECK(b["progressive"] == false);
    CHECK(b["quantization"] == pil(d, "info base.jpg")["quantization"]);
}

TEST_CASE("metadata: JPEG -> PNG -> JPEG, PNG -> TIFF and WebP carry EXIF, ICC, XMP, comments and resolution", "[cli][metadata]") {
    if (!pil_or_skip()) return;
    TempDir d;
    const std::string xmp = "<x:xmpmeta>carried</x:xmpmeta>";
    const json in = write_jpeg_with_xmp(d, "40 30 RGB orientation=3 make=Phone icc=srgb dpi=240 comment=from-jpeg", xmp);
    const json from_jpeg = {{"orientation", 3}, {"make", "Phone"}, {"icc_sha256", in["icc_sha256"]},
                            {"comments", json::array({"from-jpeg"})}, {"xmp", xmp}};
    json o = equalized_info(d, "in.jpg", "out.png");
    check_fields(o, from_jpeg, {"orientation", "make", "icc_sha256", "comments", "xmp"});
    REQUIRE(o["dpi"].is_array());
    CHECK(std::abs(o["dpi"][0].get<double>() - 240) < 0.01);  // pHYs holds whole pixels per metre
    // And back to JPEG.
    o = equalized_info(d, "out.png", "back.jpg");
    check_fields(o, from_jpeg, {"orientation", "make", "icc_sha256", "comments", "xmp"});
    CHECK(o["dpi"] == json::array({240.0, 240.0}));
    // A PNG made by PIL, to a JPEG: a non-JPEG input is written at quality 90.
    pil(d, "photo in.png 40 30 RGB orientation=8 make=Scanner icc=srgb dpi=600 comment=png-note 'xmp=" + xmp + "'");
    const json pin = pil(d, "info in.png");
    const json from_png = {{"orientation", 8}, {"make", "Scanner"}, {"icc_sha256", pin["icc_sha256"]},
                           {"comments", json::array({"png-note"})}, {"xmp", xmp}};
    o = equalized_info(d, "in.png", "p.jpg");
    check_fields(o, from_png, {"orientation", "make", "icc_sha256", "comments", "xmp"});
    CHECK(o["dpi"] == json::array({600.0, 600.0}));
    pil(d, "photo q90.jpg 16 16 RGB quality=90");
    CHECK(o["quantization"] == pil(d, "info q90.jpg")["quantization"]);
    // TIFF: ICC, XMP, orientation, resolution, comment (ImageDescription).
    o = equalized_info(d, "in.png", "t.tif");
    check_fields(o, from_png, {"orientation", "icc_sha256", "comments", "xmp"});
    REQUIRE(o["dpi"].is_array());
    CHECK(std::abs(o["dpi"][0].get<double>() - 600) < 0.01);
    // ... and from the TIFF on to a PNG.
    check_fields(equalized_info(d, "t.tif", "t.png"), from_png, {"orientation", "icc_sha256", "xmp", "comments"});
    // WebP: EXIF, ICC, XMP (WebP has no resolution or comment).
    check_fields(equalized_info(d, "in.png", "w.webp"), from_png, {"orientation", "make", "icc_sha256", "xmp"});
    check_fields(equalized_info(d, "w.webp", "w.png"), from_png, {"orientation", "make", "icc_sha256", "xmp"});
}

TEST_CASE("metadata: a camera EXIF block (IFD0 tags, Exif and GPS sub-IFDs) survives JPEG -> TIFF -> JPEG/PNG", "[cli][metadata][tiff]") {
    if (!pil_or_skip()) return;
    TempDir d;
    for (const char* order : {"MM", "II"}) {
        INFO(order);
        const std::string o = order;
        pil(d, "photo in-" + o + ".jpg 40 30 RGB quality=90 full_exif=" + o);
        pil(d, "photo in16-" + o + ".png 20 10 I16 full_exif=" + o);
        const json in = pil(d, "info in-" + o + ".jpg");
        REQUIRE(in["exif_ifd"].size() == 3);
        REQUIRE(in["gps_ifd"].size() == 2);
        REQUIRE(run_cli(d, "equalize in-" + o + ".jpg t-" + o + ".tif --device cpu").code == 0);
        REQUIRE(run_cli(d, "equalize t-" + o + ".tif back-" + o + ".jpg --device cpu").code == 0);
        REQUIRE(run_cli(d, "equalize t-" + o + ".tif back-" + o + ".png --device cpu").code == 0);
        for (const std::string f : {"t-" + o + ".tif", "back-" + o + ".jpg", "back-" + o + ".png"}) {
            INFO(f);
            const json j = pil(d, "info " + f);
            CHECK(j["make"] == "CamMake");
            CHECK(j["software"] == "sw1");
            CHECK(j["orientation"] == 6);
            CHECK(j["exif_ifd"] == in["exif_ifd"]);
            CHECK(j["gps_ifd"] == in["gps_ifd"]);
        }
        // A 16-bit TIFF in the EXIF block's byte order keeps its samples. (OpenCV's TIFF reader applies the
        // Orientation tag, 6 here: a quarter turn clockwise.)
        REQUIRE(run_cli(d, "equalize in16-" + o + ".png t16-" + o + ".tif --device cpu").code == 0);
        cv::Mat turned;
        cv::rotate(equalize16_reference(read(d / ("in16-" + o + ".png"))), turned, cv::ROTATE_90_CLOCKWISE);
        CHECK(same(read(d / ("t16-" + o + ".tif")), turned));
        CHECK(pil(d, "info t16-" + o + ".tif")["exif_ifd"] == in["exif_ifd"]);
    }
}

TEST_CASE("metadata: threshold and clahe keep it too", "[cli][metadata]") {
    if (!pil_or_skip()) return;
    TempDir d;
    pil(d, "photo in.png 40 30 RGB orientation=5 make=Cam icc=srgb dpi=150 comment=note 'xmp=<x/>'");
    const json in = pil(d, "info in.png");
    for (const char* cmd : {"threshold in.png t.png --method otsu", "clahe in.png c.png", "clahe in.png c.jpg"}) {
        INFO(cmd);
        REQUIRE(run_cli(d, std::string(cmd) + " --device cpu").code == 0);
        const std::string out = std::string(cmd).substr(std::string(cmd).find(".png ") + 5, 5);
        const json o = pil(d, "info " + out);
        CHECK(o["orientation"] == 5);
        CHECK(o["make"] == "Cam");
        CHECK(o["icc_sha256"] == in["icc_sha256"]);
        REQUIRE(o["dpi"].is_array());
        CHECK(std::abs(o["dpi"][0].get<double>() - 150) < 0.02);  // PNG: 5906 pixels per metre = 150.012 dpi
        CHECK(o["comments"] == json::array({"note"}));
        CHECK(o["xmp"] == "<x/>");
    }
}

TEST_CASE("metadata: --strip writes none of it", "[cli][metadata]") {
    if (!pil_or_skip()) return;
    TempDir d;
    write_jpeg_with_xmp(d, "40 30 RGB orientation=6 make=TestCam icc=srgb dpi=300 comment=hello", "<x/>");
    pil(d, "photo in.png 40 30 RGB orientation=6 make=TestCam icc=srgb dpi=300 comment=hello 'xmp=<x/>'");
    for (const char* args : {"in.jpg s1.jpg", "in.jpg s2.jpg --mode per-channel", "in.jpg s3.png", "in.png s4.png",
                             "in.png s5.jpg", "in.png s6.tif", "in.png s7.webp"}) {
        INFO(args);
        REQUIRE(run_cli(d, std::string("equalize ") + args + " --strip --device cpu").code == 0);
        const std::string a = args, out = a.substr(a.find(' ') + 1, a.find(' ', a.find(' ') + 1) - a.find(' ') - 1);
        const json o = pil(d, "info " + out);
        CHECK(o["orientation"].is_null());
        CHECK(o["exif_bytes"] == 0);
        CHECK(o["icc_sha256"].is_null());
        CHECK(o["comments"].empty());
        CHECK(o["xmp"].is_null());
        // PIL reports dpi (1, 1) for a JFIF header's unitless density and for a TIFF without resolution tags.
        CHECK((o["dpi"].is_null() || o["dpi"] == json::array({1.0, 1.0})));
    }
}

TEST_CASE("metadata: --auto-orient equals PIL's exif_transpose for all 8 orientations", "[cli][metadata]") {
    if (!pil_or_skip()) return;
    TempDir d;
    for (int o = 1; o <= 8; ++o) {
        INFO("orientation " << o);
        const std::string n = std::to_string(o);
        pil(d, "photo in" + n + ".png 37 23 RGB make=Cam orientation=" + n);
        REQUIRE(run_cli(d, "equalize in" + n + ".png plain" + n + ".png --mode per-channel --device cpu").code == 0);
        REQUIRE(run_cli(d, "equalize in" + n + ".png rot" + n + ".png --mode per-channel --auto-orient --device cpu").code == 0);
        // Equalization does not depend on positions: orienting the plain output must give the same pixels.
        pil(d, "transpose plain" + n + ".png ref" + n + ".png");
        const cv::Mat got = read(d / ("rot" + n + ".png")), ref = read(d / ("ref" + n + ".png"));
        CHECK(got.cols == (o >= 5 ? 23 : 37));
        CHECK(same(got, ref));
        const json info = pil(d, "info rot" + n + ".png");
        CHECK(info["orientation"] == 1);
        CHECK(info["make"] == "Cam");
    }
    // A JPEG (which otherwise takes the planar path) and a 16-bit gray PNG.
    pil(d, "photo in.jpg 40 30 RGB orientation=6 quality=95");
    REQUIRE(run_cli(d, "equalize in.jpg out.jpg --auto-orient --device cpu").code == 0);
    const json j = pil(d, "info out.jpg");
    CHECK(j["size"] == json::array({30, 40}));
    CHECK(j["orientation"] == 1);
    pil(d, "photo g16.png 21 13 I16 orientation=7");
    REQUIRE(run_cli(d, "equalize g16.png g16-plain.png --device cpu").code == 0);
    REQUIRE(run_cli(d, "equalize g16.png g16-rot.png --auto-orient --device cpu").code == 0);
    pil(d, "transpose g16-plain.png g16-ref.png");
    const cv::Mat g = read(d / "g16-rot.png");
    CHECK(g.type() == CV_16UC1);
    CHECK(same(g, read(d / "g16-ref.png")));
}

TEST_CASE("16-bit RGBA to JPEG: refused with a message naming --depth 8 and --flatten, converted with them", "[cli][metadata]") {
    TempDir d;
    cv::Mat src = photo(45, 31, CV_16UC4, 11);
    // A spread of alpha values, 0 and 65535 included.
    for (int y = 0; y < src.rows; ++y)
        for (int x = 0; x < src.cols; ++x)
            src.at<cv::Vec4w>(y, x)[3] = static_cast<std::uint16_t>(x == 0 ? 0 : x == 1 ? 65535 : (x * 1499 + y * 977) % 65536);
    write(d / "in.png", src);
    expect_error(d, "equalize in.png out.jpg --device cpu", 1, {"out.jpg", "--depth 8"});
    expect_error(d, "equalize in.png out.jpg --depth 8 --device cpu", 1, {"--flatten"});
    CHECK_FALSE(fs::exists(d / "out.jpg"));
    // The documented rules, computed here in double precision: composite over the background at 16 bits,
    // then round(v * 255 / 65535).
    REQUIRE(run_cli(d, "equalize in.png flat.png --mode per-channel --depth 8 --flatten --background '#204060' --device cpu").code == 0);
    const cv::Mat eq = equalize_per_channel(src);
    const double bg[3] = {0x60 * 257.0, 0x40 * 257.0, 0x20 * 257.0};  // B, G, R
    cv::Mat ref(src.size(), CV_8UC3);
    for (int y = 0; y < src.rows; ++y)
        for (int x = 0; x < src.cols; ++x) {
            const cv::Vec4w p = eq.at<cv::Vec4w>(y, x);
            const double a = p[3];
            for (int c = 0; c < 3; ++c) {
                const double v16 = std::round((p[c] * a + bg[c] * (65535 - a)) / 65535.0);
                ref.at<cv::Vec3b>(y, x)[c] = static_cast<std::uint8_t>(std::round(v16 * 255.0 / 65535.0));
            }
        }
    const cv::Mat flat = read(d / "flat.png");
    CHECK(flat.type() == CV_8UC3);
    CHECK(same(flat, ref));
    // To JPEG (default white background): close to the same rule's result in luma (the JPEG's chroma is
    // subsampled, which moves the colours of this busy synthetic image by several levels).
    REQUIRE(run_cli(d, "equalize in.png flat.jpg --mode per-channel --depth 8 --flatten --quality 100 --device cpu").code == 0);
    REQUIRE(run_cli(d, "equalize in.png white.png --mode per-channel --depth 8 --flatten --device cpu").code == 0);
    cv::Mat y_jpeg, y_png, diff;
    cv::cvtColor(read(d / "flat.jpg"), y_jpeg, cv::COLOR_BGR2GRAY);
    cv::cvtColor(read(d / "white.png"), y_png, cv::COLOR_BGR2GRAY);
    cv::absdiff(y_jpeg, y_png, diff);
    CHECK(cv::mean(diff)[0] < 1.5);
    // 16-bit gray to 8-bit: round(v / 257).
    cv::Mat g16 = photo(33, 17, CV_16UC1, 12);
    write(d / "g16.png", g16);
    REQUIRE(run_cli(d, "equalize g16.png g8.png --depth 8 --device cpu").code == 0);
    const cv::Mat e16 = equalize16_reference(g16);
    cv::Mat g8ref(g16.size(), CV_8UC1);
    for (int y = 0; y < g16.rows; ++y)
        for (int x = 0; x < g16.cols; ++x)
            g8ref.at<std::uint8_t>(y, x) = static_cast<std::uint8_t>(std::round(e16.at<std::uint16_t>(y, x) / 257.0));
    CHECK(same(read(d / "g8.png"), g8ref));
}

// ================================================================================================== TIFF

TEST_CASE("TIFF: 8/16-bit gray and colour, strips and tiles, four compressions, decode equal to PIL/OpenCV", "[cli][tiff]") {
    if (!pil_or_skip()) return;
    TempDir d;
    const std::map<std::string, std::uint16_t> compressions = {
        {"none", COMPRESSION_NONE}, {"lzw", COMPRESSION_LZW}, {"deflate", COMPRESSION_ADOBE_DEFLATE}, {"packbits", COMPRESSION_PACKBITS}};
    int k = 0;
    for (int type : {CV_8UC1, CV_8UC3, CV_8UC4, CV_16UC1, CV_16UC3})
        for (bool tiled : {false, true})
            for (auto& [cname, comp] : compressions) {
                const cv::Mat src = photo(37, 29, type, static_cast<unsigned>(40 + k));
                const std::string n = "t" + std::to_string(k++);
                INFO(n << ": type " << type << (tiled ? " tiled " : " strips ") << cname);
                write_tiff(d / (n + ".tif"), src, comp, tiled);
                // The independent decode: PIL where it holds the layout, OpenCV (its own libtiff reader) for
                // 16-bit colour, which PIL cannot hold.
                cv::Mat ref;
                if (type == CV_16UC3) {
                    ref = read(d / (n + ".tif"));
                } else {
                    pil(d, "decode " + n + ".tif " + n + "-pil.png");
                    ref = read(d / (n + "-pil.png"));
                }
                REQUIRE(same(ref, src));  // the file holds what was written
                REQUIRE(run_cli(d, "equalize " + n + ".tif " + n + ".png --mode per-channel --device cpu").code == 0);
                CHECK(same(read(d / (n + ".png")), equalize_per_channel(ref)));
            }
}

TEST_CASE("TIFF: outputs in every compression read back equal by PIL and OpenCV", "[cli][tiff]") {
    if (!pil_or_skip()) return;
    TempDir d;
    const cv::Mat rgb = photo(41, 27, CV_8UC3, 50), g16 = photo(23, 19, CV_16UC1, 51), rgba = photo(19, 17, CV_8UC4, 52);
    write(d / "rgb.png", rgb);
    write(d / "g16.png", g16);
    write(d / "rgba.png", rgba);
    const std::map<std::string, std::string> pil_name = {
        {"none", "raw"}, {"lzw", "tiff_lzw"}, {"deflate", "tiff_adobe_deflate"}, {"packbits", "packbits"}};
    for (auto& [c, pname] : pil_name) {
        INFO(c);
        REQUIRE(run_cli(d, "equalize rgb.png rgb-" + c + ".tif --mode per-channel --tiff-compression " + c + " --device cpu").code == 0);
        CHECK(pil(d, "info rgb-" + c + ".tif")["compression"] == pname);
        pil(d, "decode rgb-" + c + ".tif rgb-" + c + "-pil.png");
        CHECK(same(read(d / ("rgb-" + c + "-pil.png")), equalize_per_channel(rgb)));
        REQUIRE(run_cli(d, "equalize g16.png g16-" + c + ".tif --tiff-compression " + c + " --device cpu").code == 0);
        const cv::Mat g = read(d / ("g16-" + c + ".tif"));
        CHECK(g.type() == CV_16UC1);
        CHECK(same(g, equalize16_reference(g16)));
    }
    REQUIRE(run_cli(d, "equalize rgba.png rgba.tif --mode per-channel --device cpu").code == 0);
    pil(d, "decode rgba.tif rgba-pil.png");
    CHECK(same(read(d / "rgba-pil.png"), equalize_per_channel(rgba)));
}

TEST_CASE("TIFF: palette, float and planar-separate files are refused by name", "[cli][tiff][errors]") {
    if (!pil_or_skip()) return;
    TempDir d;
    // PIL writes the palette and float files; libtiff the planar one.
    write_bytes(d / "p.py", "from PIL import Image\n"
                            "Image.new('P', (8, 8), 3).save('pal.tif')\n"
                            "Image.new('F', (8, 8), 0.5).save('float.tif')\n");
    REQUIRE(std::system(("cd " + q(d.path) + " && " + python() + " p.py").c_str()) == 0);
    write_tiff(d / "planar.tif", photo(9, 7, CV_8UC3, 60), COMPRESSION_NONE, false, true);
    const std::map<std::string, std::string> why = {{"pal.tif", "palette"}, {"float.tif", "floating-point"}, {"planar.tif", "planar-separate"}};
    for (auto& [file, word] : why) {
        INFO(file);
        const Run r = run_cli(d, "equalize " + file + " out.png --device cpu");
        CHECK(r.code == 1);
        CHECK(contains(r.err, file));
        CHECK(contains(r.err, word));
        CHECK_FALSE(fs::exists(d / "out.png"));
    }
    // A truncated TIFF, and a header claiming more pixels than the limit: clear errors, nothing allocated.
    const std::string whole = slurp(d / "planar.tif");
    write_bytes(d / "cut.tif", whole.substr(0, 60));
    expect_error(d, "equalize cut.tif out.png --device cpu", 1, {"cut.tif"});
    write_tiff(d / "big.tif", photo(300, 200, CV_8UC1, 61), COMPRESSION_LZW, false);
    expect_error(d, "equalize big.tif out.png --max-pixels 1000 --device cpu", 1, {"big.tif", "above the limit"});
}

// ================================================================================================== WebP

TEST_CASE("WebP: lossless round trip is exact, lossy with --quality, lossy inputs decode as PIL decodes them", "[cli][webp]") {
    if (!pil_or_skip()) return;
    TempDir d;
    const cv::Mat rgb = photo(53, 37, CV_8UC3, 70), gray = photo(31, 22, CV_8UC1, 72);
    cv::Mat rgba = photo(29, 23, CV_8UC4, 71);
    rgba.at<cv::Vec4b>(0, 0)[3] = 0;  // a transparent pixel keeps its colour (exact lossless)
    write(d / "rgb.png", rgb);
    write(d / "rgba.png", rgba);
    write(d / "gray.png", gray);
    REQUIRE(run_cli(d, "equalize rgb.png rgb.webp --mode per-channel --device cpu").code == 0);
    REQUIRE(run_cli(d, "equalize rgba.png rgba.webp --mode per-channel --device cpu").code == 0);
    REQUIRE(run_cli(d, "equalize gray.png gray.webp --device cpu").code == 0);
    CHECK(contains(slurp(d / "rgb.webp"), "VP8L"));
    pil(d, "decode rgb.webp rgb-pil.png");
    pil(d, "decode rgba.webp rgba-pil.png");
    pil(d, "decode gray.webp gray-pil.png");
    CHECK(same(read(d / "rgb-pil.png"), equalize_per_channel(rgb)));
    CHECK(same(read(d / "rgba-pil.png"), equalize_per_channel(rgba)));
    cv::Mat g3, geq;
    cv::equalizeHist(gray, geq);
    cv::cvtColor(geq, g3, cv::COLOR_GRAY2BGR);  // WebP has no gray: stored as RGB
    CHECK(same(read(d / "gray-pil.png"), g3));
    // Read back by imghist: exact too.
    REQUIRE(run_cli(d, "equalize rgb.webp again.png --mode per-channel --device cpu").code == 0);
    CHECK(same(read(d / "again.png"), equalize_per_channel(equalize_per_channel(rgb))));
    // --quality makes it lossy.
    REQUIRE(run_cli(d, "equalize rgb.png lossy.webp --quality 80 --device cpu").code == 0);
    const std::string lossy = slurp(d / "lossy.webp");
    CHECK(contains(lossy, "VP8 "));
    CHECK_FALSE(contains(lossy, "VP8L"));
    // Lossy inputs written by PIL: our decode equals PIL's.
    pil(d, "photo in.webp 47 33 RGB quality=70");
    pil(d, "photo ina.webp 47 33 RGBA quality=70");
    for (const char* n : {"in", "ina"}) {
        INFO(n);
        pil(d, std::string("decode ") + n + ".webp " + n + "-pil.png");
        REQUIRE(run_cli(d, std::string("equalize ") + n + ".webp " + n + "-out.png --mode per-channel --device cpu").code == 0);
        CHECK(same(read(d / (std::string(n) + "-out.png")), equalize_per_channel(read(d / (std::string(n) + "-pil.png")))));
    }
    // 16-bit to WebP is refused with the option that converts it.
    write(d / "g16.png", photo(8, 8, CV_16UC1, 73));
    const Run r = run_cli(d, "equalize g16.png g16.webp --device cpu");
    CHECK(r.code == 1);
    CHECK(contains(r.err, "--depth 8"));
}

// ================================================================================================ folders

TEST_CASE("folder: files imghist cannot read are named in the summary, and a run that processes nothing fails", "[cli][folder]") {
    TempDir d;
    fs::create_directories(d / "empty");
    const cv::Mat a = photo(20, 10, CV_8UC1, 80), b = photo(21, 11, CV_8UC3, 81);
    write(d / "in/a.png", a);
    write(d / "in/b.tif", b);
    write(d / "in/c.webp", b);
    write_bytes(d / "in/notes.xyz", "x");
    write_bytes(d / "in/readme.txt", "y");
    Run r = run_cli(d, "equalize in out --mode per-channel --device cpu");
    CHECK(r.code == 0);
    CHECK(contains(r.err, "done 3, failed 0"));
    CHECK(contains(r.err, "skipped 2 unsupported: notes.xyz, readme.txt"));
    CHECK(same(read(d / "out/b.tif"), equalize_per_channel(b)));
    CHECK(same(read(d / "out/c.webp"), equalize_per_channel(read(d / "in/c.webp"))));
    // hist reports them the same way.
    r = run_cli(d, "hist in --device cpu");
    CHECK(r.code == 0);
    CHECK(contains(r.err, "skipped 2 unsupported: notes.xyz, readme.txt"));
    // A folder of unreadable files, and an empty folder: non-zero exit with a message.
    write_bytes(d / "junk/x.xyz", "x");
    write_bytes(d / "junk/y.doc", "y");
    expect_error(d, "equalize junk out2 --device cpu", 1, {"skipped 2 unsupported: x.xyz, y.doc", "nothing processed"});
    expect_error(d, "hist junk --device cpu", 1, {"nothing processed"});
    expect_error(d, "equalize empty out3 --device cpu", 1, {"no image files found"});
    // Everything already done is not "nothing processed".
    r = run_cli(d, "equalize in out --mode per-channel --skip-existing --device cpu");
    CHECK(r.code == 0);
}
