// Hostile and unusual files: each finding of the fuzzing run in issue 9 is reproduced here (the files are
// generated in the test) and must now give a clear error naming the file, quickly, with nothing written; and
// the decoders' answers on odd but valid files are checked against plain loops (the PNG rule
// v * 255 / (2^bits - 1), PIL's PNM rescaling round(v / maxval * out_max)).
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_support.hpp"

using namespace clitest;

namespace {

std::string le16(unsigned v) { return std::string{char(v & 0xff), char((v >> 8) & 0xff)}; }
std::string le32(std::uint32_t v) { return le16(v & 0xffff) + le16(v >> 16); }
std::string be32(std::uint32_t v) {
    return std::string{char(v >> 24), char((v >> 16) & 0xff), char((v >> 8) & 0xff), char(v & 0xff)};
}

std::uint32_t adler32(const std::string& s) {
    std::uint32_t a = 1, b = 0;
    for (unsigned char c : s) {
        a = (a + c) % 65521;
        b = (b + a) % 65521;
    }
    return (b << 16) | a;
}

std::string png_chunk(const std::string& type, const std::string& body) {
    std::string c = type + body;
    return be32(static_cast<std::uint32_t>(body.size())) + c + be32(crc(c, 0, c.size()));
}

/// A PNG written here from scratch: zlib stream of stored (uncompressed) deflate blocks, filter 0 rows.
std::string png_file(int w, int h, int depth, int color, const std::vector<std::string>& rows, const std::string& extra = "") {
    std::string raw;
    for (auto& r : rows) raw += '\0' + r;
    std::string z = "\x78\x01";
    for (std::size_t off = 0; off < raw.size() || off == 0; off += 65535) {
        const std::size_t n = std::min<std::size_t>(65535, raw.size() - off);
        const bool last = off + n >= raw.size();
        z += char(last ? 1 : 0);
        z += le16(static_cast<unsigned>(n)) + le16(static_cast<unsigned>(~n & 0xffff));
        z += raw.substr(off, n);
        if (last) break;
    }
    z += be32(adler32(raw));
    std::string ihdr = be32(static_cast<std::uint32_t>(w)) + be32(static_cast<std::uint32_t>(h));
    ihdr += char(depth);
    ihdr += char(color);
    ihdr += std::string(3, '\0');
    return std::string("\x89PNG\r\n\x1a\n", 8) + png_chunk("IHDR", ihdr) + extra + png_chunk("IDAT", z) + png_chunk("IEND", "");
}

/// Packs values of `bits` bits, most significant first (PNG and PBM order).
std::string pack(const std::vector<int>& v, int bits) {
    std::string out;
    int acc = 0, n = 0;
    for (int x : v) {
        acc = (acc << bits) | x;
        n += bits;
        if (n == 8) {
            out += char(acc);
            acc = n = 0;
        }
    }
    if (n) out += char(acc << (8 - n));
    return out;
}

/// A 54-byte BMP header (BITMAPINFOHEADER, uncompressed) claiming w x h at bpp bits.
std::string bmp_header(std::int32_t w, std::int32_t h, int bpp, std::uint32_t compression = 0) {
    return "BM" + le32(0) + le32(0) + le32(54) + le32(40) + le32(static_cast<std::uint32_t>(w)) +
           le32(static_cast<std::uint32_t>(h)) + le16(1) + le16(static_cast<unsigned>(bpp)) + le32(compression) + le32(0) +
           le32(2835) + le32(2835) + le32(0) + le32(0);
}

std::string tga_header(int type, int w, int h, int bpp) {
    std::string s(3, '\0');
    s[2] = char(type);
    s += std::string(9, '\0') + le16(static_cast<unsigned>(w)) + le16(static_cast<unsigned>(h));
    s += char(bpp);
    s += char(0x20);  // top-left origin
    return s;
}

/// Runs `args`, requires exit 1 with an error naming `file` and containing `expect`, no output file, and
/// a run of under `seconds`.
void expect_refused(const TempDir& d, const std::string& args, const std::string& file, const std::string& expect,
                    double seconds = 5) {
    const auto t0 = std::chrono::steady_clock::now();
    Run r = run_cli(d, args);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO(args << "\nstderr: " << r.err);
    CHECK(r.code == 1);
    CHECK(contains(r.err, file));
    CHECK(contains(r.err, expect));
    CHECK(took < seconds);
    CHECK_FALSE(fs::exists(d / "out.png"));
    CHECK_FALSE(fs::exists(d / "out.jpg"));
}

/// The gray histogram (256 bins unless given) of one image through `hist --format json`.
std::vector<std::uint64_t> gray_counts(const TempDir& d, const std::string& file, int bins = 256) {
    Run r = run_cli(d, "hist " + file + " --format json --device cpu --bins " + std::to_string(bins));
    REQUIRE(r.code == 0);
    return counts_of(parse_json(r.out), "gray");
}

}  // namespace

TEST_CASE("hostile: a 16-bit P6 whose byte count wraps 64 bits is refused, whatever --max-pixels says", "[cli][hostile]") {
    TempDir d;
    // 2147380029 x 1431724848 x 6 bytes wraps to about 12 KB: the finding's heap overflow.
    write_bytes(d / "wrap.ppm", "P6\n2147380029 1431724848\n65535\n" + std::string(12000, '\x11'));
    for (const char* cmd : {"hist wrap.ppm", "equalize wrap.ppm out.png", "threshold wrap.ppm out.png", "clahe wrap.ppm out.png"})
        expect_refused(d, std::string(cmd) + " --device cpu --max-pixels 18446744073709551615", "wrap.ppm", "does not fit");
    // Within the address range but far more than the file holds: refused before allocation.
    write_bytes(d / "short.ppm", "P6\n30000 20000\n65535\n" + std::string(100, '\x11'));
    expect_refused(d, "equalize short.ppm out.png --device cpu --max-pixels 1000000000000", "short.ppm", "needs at least 3600000000 bytes");
    // The default limit names itself and the option.
    expect_refused(d, "hist short.ppm --device cpu", "short.ppm", "--max-pixels");
}

TEST_CASE("hostile: --max-pixels is an option of every command", "[cli][hostile]") {
    TempDir d;
    for (const char* cmd : {"hist", "equalize", "threshold", "clahe", "gen"}) {
        Run r = run_cli(d, std::string(cmd) + " --help");
        CHECK(r.code == 0);
        CHECK(contains(r.out, "--max-pixels"));
    }
    write(d / "in.png", photo(40, 30, CV_8UC1, 1));
    for (const char* cmd : {"hist in.png", "equalize in.png out.png", "threshold in.png out.png", "clahe in.png out.png"})
        expect_refused(d, std::string(cmd) + " --device cpu --max-pixels 1199", "in.png", "above the limit of 1199");
    CHECK(run_cli(d, "hist in.png --device cpu --max-pixels 1200").code == 0);
    expect_error(d, "gen big.png --dist uniform --size 100x100 --max-pixels 9999", 2, {"--max-pixels"});
    // Raw sample files too; a count whose byte size would wrap 64 bits is refused, not allocated short.
    const std::string no_limit = " --max-pixels 18446744073709551615";
    CHECK(run_cli(d, "gen big.bin --dist uniform --size 4611686018427387904 --dtype f32" + no_limit).code != 0);
    CHECK_FALSE(fs::exists(d / "big.bin"));
    CHECK(run_cli(d, "gen big.bin --dist uniform --size 4294967296x4294967296 --dtype u8" + no_limit).code == 2);
    CHECK(run_cli(d, "gen big.bin --dist uniform --size 10001 --dtype u8 --max-pixels 10000").code == 2);
}

TEST_CASE("hostile: 1-, 2- and 4-bit gray PNGs decode to v * 255 / (2^bits - 1)", "[cli][hostile][png]") {
    TempDir d;
    for (int bits : {1, 2, 4}) {
        const int w = 37, h = 3, levels = 1 << bits;  // odd width: a partial last byte in each row
        std::vector<std::string> rows;
        std::vector<std::uint64_t> expect(256, 0);
        for (int y = 0; y < h; ++y) {
            std::vector<int> v;
            for (int x = 0; x < w; ++x) {
                v.push_back((x * 7 + y) % levels);
                ++expect[static_cast<std::size_t>(v.back() * 255 / (levels - 1))];
            }
            rows.push_back(pack(v, bits));
        }
        const std::string name = "gray" + std::to_string(bits) + ".png";
        write_bytes(d / name, png_file(w, h, bits, 0, rows));
        INFO(name);
        CHECK(gray_counts(d, name) == expect);
    }
}

TEST_CASE("hostile: PNG CRC errors and palette indices beyond the palette are refused on every path", "[cli][hostile][png]") {
    TempDir d;
    const std::vector<std::string> rows1 = {pack({0, 1, 1, 0, 1}, 1), pack({1, 0, 0, 1, 0}, 1)};
    std::string one_bit = png_file(5, 2, 1, 0, rows1);  // libspng path
    std::string eight_bit = png_file(5, 2, 8, 0, {"\x01\x02\x03\x04\x05", "abcde"});  // fast path
    for (std::string* f : {&one_bit, &eight_bit}) {
        const std::size_t idat = f->find("IDAT");
        REQUIRE(idat != std::string::npos);
        (*f)[idat + 4 + 2] = static_cast<char>((*f)[idat + 4 + 2] ^ 0x01);  // a data byte; the CRC no longer matches
    }
    write_bytes(d / "badcrc1.png", one_bit);
    write_bytes(d / "badcrc8.png", eight_bit);
    expect_refused(d, "hist badcrc1.png --device cpu", "badcrc1.png", "CRC");
    expect_refused(d, "equalize badcrc8.png out.png --device cpu", "badcrc8.png", "CRC");

    // Palette of 3 entries; the index 3 is beyond it. A valid one (with tRNS) decodes to the palette colours.
    const std::string plte = png_chunk("PLTE", std::string("\x0a\x14\x1e\x28\x32\x3c\x46\x50\x5a", 9));
    write_bytes(d / "badindex.png", png_file(4, 1, 2, 3, {pack({0, 1, 3, 2}, 2)}, plte));
    expect_refused(d, "hist badindex.png --device cpu", "badindex.png", "palette index 3");
    write_bytes(d / "palette.png", png_file(4, 1, 2, 3, {pack({0, 1, 2, 2}, 2)}, plte + png_chunk("tRNS", "\x80")));
    Run r = run_cli(d, "hist palette.png --format json --device cpu");
    REQUIRE(r.code == 0);
    json j = parse_json(r.out);
    auto at = [&](const std::string& ch, int v) { return counts_of(j, ch)[static_cast<std::size_t>(v)]; };
    CHECK(at("r", 10) == 1);
    CHECK(at("r", 70) == 2);
    CHECK(at("b", 30) == 1);
    CHECK(at("b", 90) == 2);
    CHECK(at("a", 128) == 1);  // entry 0 has alpha 0x80, the others none given: opaque
    CHECK(at("a", 255) == 3);
}

TEST_CASE("hostile: truncated BMP and TGA files are refused, not zero-filled", "[cli][hostile][bmp][tga]") {
    TempDir d;
    // A 54-byte header claiming 12 x 16776970 pixels (201 Mpixels of zeros before).
    write_bytes(d / "tall.bmp", bmp_header(12, 16776970, 24));
    expect_refused(d, "hist tall.bmp --device cpu --max-pixels 1000000000", "tall.bmp", "truncated or corrupt BMP", 2);
    expect_refused(d, "clahe tall.bmp out.png --device cpu --max-pixels 1000000000", "tall.bmp", "truncated or corrupt BMP", 2);
    // A "negative" compression field, which stb_image decodes as uncompressed (found by fuzz_bmp).
    write_bytes(d / "negative.bmp", bmp_header(4356, 261, 24, 0xae000000u));
    expect_refused(d, "hist negative.bmp --device cpu", "negative.bmp", "truncated or corrupt BMP");
    // A real BMP cut to 80 of its bytes.
    const std::string bmp = encoded(photo(10, 10, CV_8UC3, 3), ".bmp");
    REQUIRE(bmp.size() > 300);
    write_bytes(d / "cut.bmp", bmp.substr(0, 80));
    expect_refused(d, "equalize cut.bmp out.png --device cpu", "cut.bmp", "truncated or corrupt BMP");
    write_bytes(d / "whole.bmp", bmp);
    CHECK(run_cli(d, "hist whole.bmp --device cpu").code == 0);

    // A 154-byte RLE TGA claiming 3340 x 32778: its packets run out long before the last pixel.
    std::string rle = tga_header(10, 3340, 32778, 24);
    while (rle.size() < 154) rle += std::string("\xff\x01\x02\x03", 4);  // runs of 128 pixels
    write_bytes(d / "rle.tga", rle.substr(0, 154));
    expect_refused(d, "hist rle.tga --device cpu --max-pixels 1000000000", "rle.tga", "run-length data ends", 2);
    // Uncompressed TGA cut short; and the same file whole decodes.
    std::string tga = tga_header(3, 5, 4, 8) + std::string(20, '\x40');
    write_bytes(d / "whole.tga", tga);
    write_bytes(d / "cut.tga", tga.substr(0, tga.size() - 1));
    expect_refused(d, "hist cut.tga --device cpu", "cut.tga", "truncated or corrupt TGA");
    CHECK(gray_counts(d, "whole.tga")[0x40] == 20);
    // A TGA written by the program (RLE) and cut short.
    write(d / "src.png", photo(30, 20, CV_8UC3, 4));
    REQUIRE(run_cli(d, "equalize src.png rle-ok.tga --device cpu").code == 0);
    const std::string ok = slurp(d / "rle-ok.tga");
    write_bytes(d / "rle-cut.tga", ok.substr(0, ok.size() / 2));
    expect_refused(d, "hist rle-cut.tga --device cpu", "rle-cut.tga", "truncated or corrupt TGA");
}

TEST_CASE("hostile: a few bytes of a compressed format cannot claim a huge image", "[cli][hostile]") {
    TempDir d;
    // PNG: a zlib stream of a few bytes for 60000 x 60000: deflate cannot expand that far (1032:1).
    write_bytes(d / "bomb.png", png_file(60000, 60000, 8, 0, {"\x00"}));
    expect_refused(d, "hist bomb.png --device cpu --max-pixels 10000000000", "bomb.png", "needs at least", 2);
    // JPEG: a valid 8x8 JPEG with its frame header patched to 60000 x 60000.
    std::string jpg = encoded(photo(8, 8, CV_8UC1, 5), ".jpg");
    const std::size_t sof = jpg.find("\xff\xc0");
    REQUIRE(sof != std::string::npos);
    jpg[sof + 5] = jpg[sof + 7] = char(0xea);
    jpg[sof + 6] = jpg[sof + 8] = char(0x60);
    write_bytes(d / "bomb.jpg", jpg);
    expect_refused(d, "hist bomb.jpg --device cpu --max-pixels 10000000000", "bomb.jpg", "needs at least", 2);
}

TEST_CASE("hostile: a FIFO is never opened blocking: skipped in a folder, an error when named", "[cli][hostile][folder]") {
    TempDir d;
    write(d / "in/a.png", photo(20, 10, CV_8UC1, 6));
    REQUIRE(mkfifo((d / "in/pipe.png").c_str(), 0644) == 0);
    Run r = run_cli(d, "hist in --device cpu --format json");  // hung forever before
    CHECK(r.code == 0);
    CHECK(contains(r.err, "pipe.png"));
    CHECK(contains(r.err, "FIFO"));
    CHECK(parse_json(r.out).at("files").size() == 1);
    expect_error(d, "equalize in/pipe.png out.png --device cpu", 1, {"pipe.png", "not a regular file"});
}

TEST_CASE("hostile: the output format's limits are checked before decoding", "[cli][hostile]") {
    TempDir d;
    // The header alone: were it decoded first, the error would be about the missing pixel data.
    write_bytes(d / "wide.bmp", bmp_header(8388620, 10, 24));
    expect_refused(d, "equalize wide.bmp out.jpg --device cpu", "out.jpg", "65500", 1);
    write(d / "wide.png", cv::Mat(1, 70000, CV_8UC1, cv::Scalar(9)));
    expect_refused(d, "equalize wide.png out.jpg --device cpu", "out.jpg", "65500");
    write(d / "many/wide.png", cv::Mat(1, 66000, CV_8UC1, cv::Scalar(9)));
    expect_error(d, "threshold many outdir --to tga --device cpu", 1, {"65535"});
}

TEST_CASE("hostile: --raw with a range whose width overflows a double is refused", "[cli][hostile][raw]") {
    TempDir d;
    write_bytes(d / "x.bin", std::string(64, '\x01'));
    expect_error(d, "hist --raw x.bin --dtype u8 --range=-1e308:1e308", 2, {"overflows"});
    CHECK(run_cli(d, "hist --raw x.bin --dtype u8 --range=0:inf").code == 2);
}

TEST_CASE("hostile: the format comes from the content, and PNM details are read as PIL reads them", "[cli][hostile][pnm]") {
    TempDir d;
    // "P5#" (a comment right after the magic) named .tga: our PNM reader, samples big-endian.
    write_bytes(d / "pnm.tga", std::string("P5#comment\n2 1\n65535\n\x01\x02\x03\x04", 25));
    std::vector<std::uint64_t> c = gray_counts(d, "pnm.tga", 65536);
    CHECK(c[0x0102] == 1);
    CHECK(c[0x0304] == 1);
    // P1: only 0, 1, whitespace and comments.
    write_bytes(d / "bad.pbm", "P1\n3 1\n1 x 0\n");
    expect_refused(d, "hist bad.pbm --device cpu", "bad.pbm", "other than 0, 1");
    write_bytes(d / "ok.pbm", "P1\n3 2\n1 0# c\n0\n110\n");
    CHECK(gray_counts(d, "ok.pbm")[0] == 3);
    // Binary samples above the maximum value.
    write_bytes(d / "above.pgm", std::string("P5\n2 1\n100\n\x10\x65", 13));
    expect_refused(d, "hist above.pgm --device cpu", "above.pgm", "above the maximum value");
    write_bytes(d / "above16.pgm", std::string("P5\n1 1\n1000\n\x03\xe9", 14));
    expect_refused(d, "hist above16.pgm --device cpu", "above16.pgm", "above the maximum value");
    // Other maximum values: every value once, stretched to round(v / maxval * out_max), half to even.
    for (int maxval : {1, 3, 100, 254, 256, 1000, 4095, 65534}) {
        const bool wide = maxval > 255;
        const double out_max = wide ? 65535 : 255;
        std::string bin = "P5\n" + std::to_string(maxval + 1) + " 1\n" + std::to_string(maxval) + "\n";
        std::string txt = "P2\n" + std::to_string(maxval + 1) + " 1\n" + std::to_string(maxval) + "\n";
        std::vector<std::uint64_t> expect(wide ? 65536 : 256, 0);
        for (int v = 0; v <= maxval; ++v) {
            if (wide) bin += std::string{char(v >> 8), char(v & 0xff)};
            else bin += char(v);
            txt += std::to_string(v) + (v % 16 == 15 ? "\n" : " ");
            ++expect[static_cast<std::size_t>(std::nearbyint(v / static_cast<double>(maxval) * out_max))];
        }
        INFO("maxval " << maxval);
        write_bytes(d / "bin.pgm", bin);
        write_bytes(d / "txt.pgm", txt);
        CHECK(gray_counts(d, "bin.pgm", wide ? 65536 : 256) == expect);
        CHECK(gray_counts(d, "txt.pgm", wide ? 65536 : 256) == expect);
    }
}

TEST_CASE("hostile: a recursive walk does not follow a symbolic link loop", "[cli][hostile][folder]") {
    TempDir d;
    write(d / "in/top.png", photo(8, 8, CV_8UC1, 7));
    write(d / "in/a/mid.png", photo(8, 8, CV_8UC1, 8));
    write(d / "in/a/b/low.png", photo(8, 8, CV_8UC1, 9));
    fs::create_directory_symlink("../..", d / "in/a/b/up");   // back to in/: a loop
    write(d / "elsewhere/far.png", photo(8, 8, CV_8UC1, 10));
    fs::create_directory_symlink("../elsewhere", d / "in/link");  // not a loop: followed
    Run r = run_cli(d, "hist in -r --device cpu --format json");
    CHECK(r.code == 0);
    CHECK(contains(r.err, "loop"));
    std::set<std::string> files;
    const json j = parse_json(r.out);
    for (auto& f : j.at("files")) files.insert(f.at("file").get<std::string>());
    CHECK(files == std::set<std::string>{"a/b/low.png", "a/mid.png", "link/far.png", "top.png"});
    r = run_cli(d, "equalize in -r out --device cpu");
    CHECK(r.code == 0);
    std::size_t outputs = 0;
    for (auto& e : fs::recursive_directory_iterator(d / "out"))
        if (e.is_regular_file()) ++outputs;
    CHECK(outputs == 4);
}

TEST_CASE("hostile: folder CSV quotes file names as RFC 4180 says", "[cli][hostile][hist]") {
    TempDir d;
    write(d / "in/plain.png", photo(8, 8, CV_8UC1, 11));
    write(d / "in/q\"uote,comma.png", photo(8, 8, CV_8UC1, 12));
    Run r = run_cli(d, "hist in --format csv --device cpu");
    REQUIRE(r.code == 0);
    CHECK(contains(r.out, "\n\"in/q\"\"uote,comma.png\",0,"));
    CHECK(contains(r.out, "\n\"in/plain.png\",0,"));
    // Every row has the same number of fields once quoted fields are read as RFC 4180 says.
    std::istringstream in(r.out);
    std::string line;
    std::set<std::size_t> widths;
    while (std::getline(in, line)) {
        std::size_t fields = 1;
        bool quoted = false;
        for (char ch : line) {
            if (ch == '"') quoted = !quoted;
            else if (ch == ',' && !quoted) ++fields;
        }
        CHECK_FALSE(quoted);
        widths.insert(fields);
    }
    CHECK(widths.size() == 1);
}

TEST_CASE("plot: .svg writes an SVG document, other extensions an image or a clear refusal", "[cli][hist][plot]") {
    TempDir d;
    write(d / "in.png", photo(40, 30, CV_8UC3, 13));
    Run r = run_cli(d, "hist in.png --plot h.svg --device cpu");
    REQUIRE(r.code == 0);
    const std::string svg = slurp(d / "h.svg");
    CHECK(svg.rfind("<?xml", 0) == 0);
    CHECK(contains(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"960\" height=\"540\""));
    CHECK(contains(svg, "</svg>\n"));
    for (const char* colour : {"#d62728", "#2ca02c", "#1f77b4"}) {  // one filled polygon per channel, in its colour
        const std::size_t poly = svg.find(std::string("\" fill=\"") + colour + "\" fill-opacity");
        CHECK(poly != std::string::npos);
        CHECK(svg.rfind("<polygon points=", poly) != std::string::npos);
    }
    CHECK(contains(svg, ">in.png  40x30</text>"));
    r = run_cli(d, "hist in.png --plot h.jpg --device cpu");
    CHECK(r.code == 0);
    CHECK(read(d / "h.jpg").cols == 960);
    expect_error(d, "hist in.png --plot h.txt --device cpu", 2, {"h.txt", ".svg"});
    CHECK_FALSE(fs::exists(d / "h.txt"));
}

TEST_CASE("plot: UTF-8 file names render, as text in SVG and as base letters and boxes in pictures", "[cli][hist][plot]") {
    TempDir d;
    const std::string name = "\xc3\xa9t\xc3\xa9-\xe6\x97\xa5\xe6\x9c\xac & <x>.png";  // "été-日本 & <x>.png"
    write_bytes(d / name, encoded(photo(20, 10, CV_8UC1, 14), ".png"));
    Run r = run_cli(d, "hist '" + name + "' --plot h.svg --device cpu");
    REQUIRE(r.code == 0);
    CHECK(contains(slurp(d / "h.svg"), ">\xc3\xa9t\xc3\xa9-\xe6\x97\xa5\xe6\x9c\xac &amp; &lt;x&gt;.png  20x10</text>"));
    // The raster title: "ete-" then two boxes; compare with the same plot of an ASCII name of that shape.
    r = run_cli(d, "hist '" + name + "' --plot u.png --device cpu");
    REQUIRE(r.code == 0);
    write_bytes(d / "ete-AB & <x>.png", slurp(d / name));
    REQUIRE(run_cli(d, "hist 'ete-AB & <x>.png' --plot a.png --device cpu").code == 0);
    cv::Mat u = read(d / "u.png"), a = read(d / "a.png");
    const cv::Rect title(0, 0, u.cols, 30);
    cv::Mat diff;
    cv::absdiff(u(title), a(title), diff);
    CHECK(cv::countNonZero(diff.reshape(1)) > 0);   // the boxes differ from "AB"
    CHECK(same(u(cv::Rect(0, 30, u.cols, u.rows - 30)), a(cv::Rect(0, 30, a.cols, a.rows - 30))));
    // An invalid UTF-8 byte is a box too, never a read outside the font's tables.
    write_bytes(d / "bad\xff.png", slurp(d / name));
    CHECK(run_cli(d, "hist 'bad\xff.png' --plot b.png --device cpu").code == 0);
}

TEST_CASE("progress: the bar fits a narrow terminal and never wraps", "[cli][folder]") {
    TempDir d;
    for (int i = 0; i < 12; ++i) write(d / ("in/f" + std::to_string(i) + ".png"), photo(16, 16, CV_8UC1, 20 + i));
    for (int cols : {40, 20, 8}) {
        // script(1) gives the program a terminal of that width.
        const std::string cmd = "cd " + q(d.path) + " && script -qec \"stty cols " + std::to_string(cols) + "; " +
                                q(cli_path()) + " hist in --format json -o h.json --device cpu\" /dev/null > tty.txt";
        REQUIRE(std::system(cmd.c_str()) == 0);
        std::string tty = slurp(d / "tty.txt");
        std::size_t pos = 0;
        int updates = 0;
        while ((pos = tty.find('\r', pos)) != std::string::npos) {
            std::size_t end = tty.find_first_of("\r\n", pos + 1);
            std::string line = tty.substr(pos + 1, end == std::string::npos ? std::string::npos : end - pos - 1);
            const std::size_t esc = line.find("\x1b[K");
            if (esc != std::string::npos) line.erase(esc);
            if (!line.empty() && line.find("imghist:") == std::string::npos) {
                ++updates;
                INFO("cols " << cols << ": '" << line << "'");
                CHECK(line.size() <= static_cast<std::size_t>(cols - 1));
            }
            pos += 1;
        }
        CHECK(updates >= 12);
    }
}

TEST_CASE("atomic output: the file is flushed before the rename and the folder after it", "[cli][errors]") {
    TempDir d;
    if (std::system("command -v strace > /dev/null 2>&1") != 0) {
        std::printf("%s: strace is not installed\n", imghist_test::kSkipMarker);
        return;
    }
    write(d / "in.png", photo(20, 10, CV_8UC1, 15));
    const std::string cmd = "cd " + q(d.path) + " && strace -f -qq -o trace.txt -e trace=fsync,fdatasync,syncfs,rename,renameat,renameat2 " +
                            q(cli_path()) + " equalize in.png out.png --device cpu";
    if (std::system(cmd.c_str()) != 0 && !fs::exists(d / "out.png")) {  // ptrace may be forbidden here
        std::printf("%s: strace cannot trace here\n", imghist_test::kSkipMarker);
        return;
    }
    const std::string trace = slurp(d / "trace.txt");
    const std::size_t rename = trace.find("\"out.png\")");
    REQUIRE(rename != std::string::npos);
    // The temporary file before the rename (one file is synced alone: fdatasync), the folder after it.
    const std::size_t before = std::min(trace.rfind("fdatasync(", rename), trace.rfind("fsync(", rename));
    CHECK(before != std::string::npos);
    CHECK(trace.find("fsync(", rename) != std::string::npos);
    CHECK(same(read(d / "out.png"), [&] { cv::Mat e; cv::equalizeHist(read(d / "in.png"), e); return e; }()));
}
