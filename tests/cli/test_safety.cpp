// The program's promises about data and the habits users bring from ImageMagick and vips (issue 30): no output
// is ever an input or another output, every write error fails the command, a killed run's temporaries are
// cleared, long names and deep folders work or fail loudly, names print on one line, mistyped commands get
// a suggestion, formats and lossy quality are kept, an interruption says what was done, and outputs made durable
// in rounds keep the promise of one sync per file.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "cli_support.hpp"

using namespace clitest;

namespace {

cv::Mat equalized(const cv::Mat& m) {
    cv::Mat e;
    cv::equalizeHist(m, e);
    return e;
}

/// Regular files under a folder (recursively), as paths relative to it.
std::set<std::string> files_under(const fs::path& dir) {
    std::set<std::string> out;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file(ec)) out.insert(fs::relative(it->path(), dir, ec).string());
    return out;
}

/// A process id that no longer exists: a child that has exited and been reaped.
pid_t dead_pid() {
    const pid_t pid = fork();
    if (pid == 0) _exit(0);
    int status = 0;
    waitpid(pid, &status, 0);
    return pid;
}

/// The host part of imghist's temporary names: FNV-1a (32 bits) of the host name, as 8 hex digits.
std::string host_tag(const std::string& host) {
    std::uint32_t h = 2166136261u;
    for (unsigned char c : host) {
        h ^= c;
        h *= 16777619u;
    }
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", h);
    return hex;
}

std::string this_host() {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    return host;
}

void make_old(const fs::path& p) {
    const timespec old[2] = {{std::time(nullptr) - 7200, 0}, {std::time(nullptr) - 7200, 0}};
    REQUIRE(utimensat(AT_FDCWD, p.c_str(), old, 0) == 0);
}

/// Rows of an RFC 4180 CSV document: quoted fields may hold commas, quotes and line breaks.
std::vector<std::vector<std::string>> parse_csv(const std::string& s) {
    std::vector<std::vector<std::string>> rows(1);
    std::string field;
    bool quoted = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (quoted) {
            if (c == '"' && i + 1 < s.size() && s[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            rows.back().push_back(field);
            field.clear();
        } else if (c == '\n') {
            rows.back().push_back(field);
            field.clear();
            rows.emplace_back();
        } else {
            field += c;
        }
    }
    if (rows.back().empty()) rows.pop_back();
    return rows;
}

/// Removes a folder tree through descriptors (paths deeper than PATH_MAX cannot be removed by name).
void remove_tree_at(int parent, const char* name) {
    const int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (fd < 0) {
        unlinkat(parent, name, 0);
        return;
    }
    DIR* d = fdopendir(fd);
    std::vector<std::string> names;
    while (dirent* e = readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.push_back(e->d_name);
    for (auto& n : names) remove_tree_at(dirfd(d), n.c_str());
    closedir(d);
    unlinkat(parent, name, AT_REMOVEDIR);
}

}  // namespace

// ================================================================================== nothing lost, ever

TEST_CASE("safety: no output is an input, by file identity, for every output a command writes", "[cli][safety]") {
    TempDir d;
    const cv::Mat g = photo(40, 30, CV_8UC1, 1), ref = photo(40, 30, CV_8UC1, 2);
    write(d / "in.png", g);
    write(d / "ref.png", ref);
    fs::create_symlink("in.png", d / "link.json");
    fs::create_hard_link(d / "in.png", d / "hard.csv");
    const std::string in_bytes = slurp(d / "in.png"), ref_bytes = slurp(d / "ref.png");
    auto untouched = [&] {
        CHECK(slurp(d / "in.png") == in_bytes);
        CHECK(slurp(d / "ref.png") == ref_bytes);
        CHECK(temporaries(d.path).empty());
    };
    // hist -o and --plot: the input itself, through a symbolic link, through a hard link, inside a folder.
    for (const std::string args : {"hist in.png -o in.png", "hist in.png --format json -o link.json",
                                   "hist in.png --format csv -o hard.csv", "hist in.png --plot in.png",
                                   "hist . --plot in.png", "hist . -o ./in.png"}) {
        Run r = run_cli(d, args + " --device cpu");
        INFO(args);
        CHECK(r.code == 1);
        CHECK(contains(r.err, "is the input"));
        CHECK(contains(r.err, "nothing written"));
        untouched();
    }
    // hist --merge: -o is one of the JSON files it sums.
    REQUIRE(run_cli(d, "hist in.png --format json -o a.json --device cpu").code == 0);
    const std::string a_json = slurp(d / "a.json");
    Run r = run_cli(d, "hist --merge a.json --format json -o a.json");
    CHECK(r.code == 1);
    CHECK(slurp(d / "a.json") == a_json);
    // match IN REF OUT with OUT = REF (also through a link): REF is an input too.
    fs::create_symlink("ref.png", d / "ref-link.png");
    for (const std::string out : {"ref.png", "ref-link.png"}) {
        r = run_cli(d, "match in.png ref.png " + out + " --device cpu");
        INFO(out);
        CHECK(r.code == 1);
        CHECK(contains(r.err, "ref.png"));
        untouched();
    }
    // An image output that is another input: x.jpg with --to png would replace the input x.png.
    write(d / "mix/x.png", g);
    write(d / "mix/x.jpg", photo(40, 30, CV_8UC3, 3));
    const std::string x_png = slurp(d / "mix/x.png");
    expect_error(d, "equalize mix/x.jpg mix/x.png mix --to png --device cpu", 1, {"is the input mix/x.png"});
    CHECK(slurp(d / "mix/x.png") == x_png);
    CHECK(temporaries(d / "mix").empty());
    // A folder's files (known by the folder scan) into an output folder that holds a hard link to one of them
    // and a symbolic link to another; and the same outputs in a fresh folder, which is no conflict.
    write(d / "src/a.png", g);
    write(d / "src/b.png", ref);
    fs::create_directories(d / "dst");
    fs::create_hard_link(d / "src/a.png", d / "dst/a.png");
    fs::create_symlink("../src/b.png", d / "dst/b.png");
    expect_error(d, "equalize src dst --device cpu", 1,
                 {"src/a.png: the output dst/a.png is the input file", "src/b.png: the output dst/b.png is the input file",
                  "2 outputs would overwrite inputs or each other; nothing written"});
    CHECK(slurp(d / "src/a.png") == in_bytes);
    CHECK(slurp(d / "src/b.png") == ref_bytes);
    CHECK(temporaries(d / "dst").empty());
    REQUIRE(run_cli(d, "equalize src fresh --device cpu").code == 0);
    CHECK(fs::exists(d / "fresh/a.png"));
    CHECK(fs::exists(d / "fresh/b.png"));
}

TEST_CASE("safety: two inputs never share an output; every collision is named before anything is written", "[cli][safety][folder]") {
    TempDir d;
    write(d / "in/photo.png", photo(30, 20, CV_8UC1, 4));
    write(d / "in/photo.jpg", photo(30, 20, CV_8UC3, 5));
    write(d / "in/other.png", photo(30, 20, CV_8UC1, 6));
    expect_error(d, "equalize in out --to png --device cpu", 1,
                 {"in/photo.jpg and in/photo.png would both be written to out/photo.png"});
    CHECK(files_under(d / "out").empty());  // not even other.png: nothing is written
    // Two input folders with one name each.
    write(d / "a/x.png", photo(30, 20, CV_8UC1, 7));
    write(d / "b/x.png", photo(30, 20, CV_8UC1, 8));
    write(d / "b/y.png", photo(30, 20, CV_8UC1, 9));
    expect_error(d, "equalize a b out2 --device cpu", 1, {"a/x.png and b/x.png would both be written to out2/x.png"});
    CHECK_FALSE(fs::exists(d / "out2"));
    // Across shards too: the two files of a collision may fall into different shards' runs.
    bool refused_everywhere = true;
    for (int k = 1; k <= 3; ++k) refused_everywhere &= run_cli(d, "equalize a b out3 --device cpu --shard " + std::to_string(k) + "/3").code == 1;
    CHECK(refused_everywhere);
    CHECK_FALSE(fs::exists(d / "out3"));
    // hist: -o and --plot naming one file.
    expect_error(d, "hist a -o r.svg --plot r.svg --device cpu", 1, {"would both be written to r.svg"});
    CHECK_FALSE(fs::exists(d / "r.svg"));
    // Without a collision the same run works, and --in-place takes every argument as an input.
    REQUIRE(run_cli(d, "equalize a/x.png b/y.png out4 --device cpu").code == 0);
    CHECK(files_under(d / "out4") == std::set<std::string>{"x.png", "y.png"});
    const cv::Mat ax = read(d / "a/x.png"), by = read(d / "b/y.png");
    REQUIRE(run_cli(d, "equalize --in-place a/x.png b/y.png --device cpu").code == 0);
    CHECK(same(read(d / "a/x.png"), equalized(ax)));
    CHECK(same(read(d / "b/y.png"), equalized(by)));
}

TEST_CASE("safety: every write error fails the command, standard output included", "[cli][safety]") {
    TempDir d;
    write(d / "in.png", photo(40, 30, CV_8UC1, 10));
    for (int i = 0; i < 3; ++i) write(d / "f" / ("p" + std::to_string(i) + ".png"), photo(30, 20, CV_8UC1, 11 + i));
    for (const std::string args : {"hist in.png", "hist in.png --format json", "hist f --format json",
                                   "hist f --format csv", "threshold in.png t.png", "equalize in.png -"}) {
        const std::string cmd = "cd " + q(d.path) + " && " + q(cli_path()) + " " + args + " --device cpu > /dev/full 2> .err";
        const int status = std::system(cmd.c_str());
        const std::string err = slurp(d / ".err");
        INFO(args << "\nstderr: " << err);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 1);
        CHECK(contains(err, "<stdout>"));
        CHECK(contains(err, "No space left on device"));
    }
    // -o FILE on a disk that fills up (here: a file size limit): an error, and no truncated file.
    const std::string cmd = "cd " + q(d.path) + " && (trap '' XFSZ; ulimit -f 2; exec " + q(cli_path()) +
                            " hist f --format json -o big.json --device cpu) > .out 2> .err";
    const int status = std::system(cmd.c_str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);
    CHECK(contains(slurp(d / ".err"), "big.json"));
    CHECK_FALSE(fs::exists(d / "big.json"));
    CHECK(temporaries(d.path).empty());
}

TEST_CASE("safety: hist of a folder of 8- and 16-bit images writes every file and a total per sample type", "[cli][safety][hist]") {
    TempDir d;
    const cv::Mat a8 = photo(30, 20, CV_8UC1, 20), b8 = photo(25, 20, CV_8UC1, 21), c16 = photo(20, 10, CV_16UC1, 22);
    write(d / "in/a.png", a8);
    write(d / "in/b.png", b8);
    write(d / "in/c.png", c16);
    Run r = run_cli(d, "hist in --format json --device cpu -o all.json");
    REQUIRE(r.code == 0);
    CHECK(contains(r.err, "different sample types (u8, u16)"));
    json j = parse_json(slurp(d / "all.json"));
    REQUIRE(j.at("files").size() == 3);
    CHECK_FALSE(j.contains("total"));
    REQUIRE(j.at("totals").size() == 2);
    std::vector<std::uint64_t> sum8 = cv_hist(a8, 0, 256, 0, 256), b8h = cv_hist(b8, 0, 256, 0, 256);
    for (std::size_t i = 0; i < sum8.size(); ++i) sum8[i] += b8h[i];
    CHECK(j["totals"][0]["dtype"] == "u8");
    CHECK(j["totals"][0]["images"] == 2);
    CHECK(counts_of(j["totals"][0], "gray") == sum8);
    CHECK(j["totals"][1]["dtype"] == "u16");
    CHECK(j["totals"][1]["range"][1] == 65536);
    CHECK(counts_of(j["totals"][1], "gray") == cv_hist(c16, 0, 256, 0, 65536));
    // --merge reads such a document back (and sums it with others the same way).
    r = run_cli(d, "hist --merge all.json all.json --format json");
    REQUIRE(r.code == 0);
    json m = parse_json(r.out);
    REQUIRE(m.at("totals").size() == 2);
    CHECK(m["totals"][1]["images"] == 2);
    // Text and CSV carry both totals; a plot of two binnings is refused after the results are written.
    expect_error(d, "hist in --format csv --device cpu --plot p.png -o all.csv", 1, {"p.png", "--range"});
    CHECK_FALSE(fs::exists(d / "p.png"));
    const std::string csv = slurp(d / "all.csv");
    CHECK(contains(csv, "\"TOTAL u8\",0,"));
    CHECK(contains(csv, "\"TOTAL u16\",255,"));
    // With --range every image bins alike: one total, and the plot is drawn.
    r = run_cli(d, "hist in --format json --device cpu --range 0:65536 --plot p.png");
    REQUIRE(r.code == 0);
    CHECK(parse_json(r.out).at("total").at("images") == 3);
    CHECK(fs::exists(d / "p.png"));
}

// ================================================================================= leftovers and limits

TEST_CASE("leftovers: --skip-existing clears our stale temporaries and nobody else's files", "[cli][safety][folder]") {
    TempDir d;
    write(d / "in/a.png", photo(30, 20, CV_8UC1, 30));
    write(d / "in/sub/b.png", photo(30, 20, CV_8UC1, 31));
    REQUIRE(run_cli(d, "equalize in out -r --device cpu").code == 0);
    fs::remove(d / "out/sub/b.png");
    const std::string here = host_tag(this_host()), dead = std::to_string(dead_pid()), live = std::to_string(getpid());
    const std::string stale_here = ".imghist-" + here + "-" + dead + "-3.tmp";       // its writer is gone
    const std::string stale_sub = ".imghist-" + here + "-" + dead + "-4.tmp";
    const std::string live_here = ".imghist-" + here + "-" + live + "-0.tmp";        // a run still writing
    const std::string fresh_other = ".imghist-0badc0de-" + dead + "-1.tmp";          // another host, recent
    const std::string old_other = ".imghist-0badc0de-" + dead + "-2.tmp";            // another host, 2 h old
    const std::string old_legacy = ".a.png.imghist-" + dead + "-7.tmp";               // an older version's, 2 h old
    const std::string not_ours = ".notes.tmp", not_hidden = "a.png.imghist-1-1.tmp";
    for (const std::string& n : {stale_here, live_here, fresh_other, old_other, old_legacy, not_ours, not_hidden})
        write_bytes(d / "out" / n, "partial");
    write_bytes(d / "out/sub" / stale_sub, "partial");
    for (const std::string& n : {old_other, old_legacy, not_ours, not_hidden}) make_old(d / "out" / n);
    Run r = run_cli(d, "equalize in out -r --skip-existing --device cpu");
    REQUIRE(r.code == 0);
    CHECK(contains(r.err, "removed 4 stale temporary files"));
    CHECK(contains(r.err, "done 1, failed 0, skipped 1"));
    for (const std::string& n : {stale_here, old_other, old_legacy}) CHECK_FALSE(fs::exists(d / "out" / n));
    CHECK_FALSE(fs::exists(d / "out/sub" / stale_sub));
    for (const std::string& n : {live_here, fresh_other, not_ours, not_hidden}) CHECK(fs::exists(d / "out" / n));
    CHECK(fs::exists(d / "out/sub/b.png"));
}

TEST_CASE("limits: output names of 235 to 255 bytes work; temporary names stay short", "[cli][safety]") {
    TempDir d;
    const cv::Mat g = photo(20, 10, CV_8UC1, 40);
    write(d / "in.png", g);
    for (std::size_t len : {235u, 250u, 255u}) {
        const std::string name = std::string(len - 4, 'n') + ".png";
        Run r = run_cli(d, "equalize in.png " + name + " --device cpu");
        INFO(len);
        REQUIRE(r.code == 0);
        CHECK(same(read(d / name), equalized(g)));
    }
    // In a folder run too, named after long input names.
    const std::string long_name = std::string(251, 'x') + ".png";
    write(d / "long" / long_name, g);
    write(d / "long/short.png", g);
    REQUIRE(run_cli(d, "equalize long out --device cpu").code == 0);
    CHECK(same(read(d / "out" / long_name), equalized(g)));
    CHECK(temporaries(d.path).empty());
}

TEST_CASE("limits: a folder deeper than PATH_MAX fails the run loudly, naming it", "[cli][safety][folder]") {
    TempDir d;
    write(d / "in/top.png", photo(20, 10, CV_8UC1, 41));
    const std::string component(200, 'd');
    int fd = open((d / "in").c_str(), O_RDONLY | O_DIRECTORY);
    REQUIRE(fd >= 0);
    for (int level = 0; level < 22; ++level) {  // 22 x 201 bytes: past PATH_MAX (4096)
        REQUIRE(mkdirat(fd, component.c_str(), 0777) == 0);
        const int next = openat(fd, component.c_str(), O_RDONLY | O_DIRECTORY);
        close(fd);
        fd = next;
        REQUIRE(fd >= 0);
    }
    const std::string png = encoded(photo(20, 10, CV_8UC1, 42), ".png");
    const int f = openat(fd, "deep.png", O_WRONLY | O_CREAT, 0644);
    REQUIRE(f >= 0);
    REQUIRE(::write(f, png.data(), png.size()) == static_cast<ssize_t>(png.size()));
    close(f);
    close(fd);
    for (const std::string args : {"equalize in out -r", "hist in -r"}) {
        Run r = run_cli(d, args + " --device cpu");
        INFO(args);
        CHECK(r.code == 1);
        CHECK(contains(r.err, "in/" + component + "/" + component));
        CHECK(contains(r.err, "PATH_MAX"));
        CHECK_FALSE(contains(r.err, "unsupported"));
    }
    CHECK_FALSE(fs::exists(d / "out"));
    // Without --recursive the deep folder is not entered: the top level is processed.
    CHECK(run_cli(d, "equalize in out --device cpu").code == 0);
    const int in = open((d / "in").c_str(), O_RDONLY | O_DIRECTORY);
    remove_tree_at(in, component.c_str());
    close(in);
}

TEST_CASE("names: a line break in a file name stays on one line in text, intact in CSV and JSON", "[cli][safety][hist]") {
    TempDir d;
    const std::string odd = "two\nlines\\tab\t.png";
    write(d / "in/plain.png", photo(8, 8, CV_8UC1, 50));
    write(d / "in" / odd, photo(8, 8, CV_8UC1, 51));
    Run r = run_cli(d, "hist in --bins 4 --device cpu");
    REQUIRE(r.code == 0);
    std::istringstream lines(r.out);
    std::string line;
    std::size_t headers = 0;
    while (std::getline(lines, line)) {
        INFO(line);
        if (line.empty()) continue;
        if (line[0] == '#') {
            ++headers;
            continue;
        }
        CHECK(line.find_first_not_of("0123456789. ") == std::string::npos);  // a data row: numbers only
    }
    CHECK(headers == 6);  // two lines per block: two files and the total
    CHECK(contains(r.out, "# two\\nlines\\\\tab\\t.png 8x8 u8"));
    // CSV: RFC 4180 quoting keeps the name whole.
    r = run_cli(d, "hist in --bins 4 --format csv --device cpu");
    REQUIRE(r.code == 0);
    const auto rows = parse_csv(r.out);
    std::set<std::string> names;
    for (std::size_t i = 1; i < rows.size(); ++i) {
        CHECK(rows[i].size() == rows[0].size());
        names.insert(rows[i][0]);
    }
    CHECK(names == std::set<std::string>{"TOTAL", "in/plain.png", "in/" + odd});
    // JSON: escaped by the JSON rules, read back as it was.
    r = run_cli(d, "hist in --bins 4 --format json --device cpu");
    REQUIRE(r.code == 0);
    std::set<std::string> files;
    const json folder = parse_json(r.out);
    for (auto& f : folder.at("files")) files.insert(f.at("file").get<std::string>());
    CHECK(files == std::set<std::string>{"plain.png", odd});
    // A name that is not UTF-8 costs nothing but its own bytes (written as U+FFFD).
    write(d / "in/latin\xe9.png", photo(8, 8, CV_8UC1, 52));
    r = run_cli(d, "hist in --bins 4 --format json --device cpu");
    REQUIRE(r.code == 0);
    CHECK(parse_json(r.out).at("files").size() == 3);
    CHECK(contains(r.out, "latin\xef\xbf\xbd.png"));
    // The notes of image commands ("<file>: threshold: T") are one line each too.
    r = run_cli(d, "threshold in thr --device cpu");
    REQUIRE(r.code == 0);
    CHECK(contains(r.out, "in/two\\nlines\\\\tab\\t.png: threshold: "));
}

// ====================================================================================== CLI habits

TEST_CASE("habits: a mistyped command or option gets the nearest name", "[cli][safety]") {
    TempDir d;
    expect_error(d, "equalise a.png b.png", 2, {"unknown command 'equalise'; did you mean 'equalize'?"});
    expect_error(d, "histt a.png", 2, {"did you mean 'hist'?"});
    expect_error(d, "frobnicate a.png", 2, {"unknown command 'frobnicate'", "equalize"});
    expect_error(d, "equalize a.png b.png --qualty 90", 2, {"unknown option '--qualty'", "did you mean --quality?"});
    expect_error(d, "hist a.png --bnis=8", 2, {"did you mean --bins?"});
    expect_error(d, "clahe a.png b.png --tilse 4x4", 2, {"did you mean --tiles?"});
}

TEST_CASE("habits: standard input to standard output keeps the input's format", "[cli][safety]") {
    TempDir d;
    const cv::Mat c = photo(40, 30, CV_8UC3, 60), g = photo(40, 30, CV_8UC1, 61);
    write(d / "in.jpg", c);
    write(d / "in.tif", g);
    write(d / "in.bmp", g);
    Run r = run_cli(d, "equalize - - --device cpu < in.jpg");
    REQUIRE(r.code == 0);
    CHECK(r.out.compare(0, 3, "\xff\xd8\xff") == 0);
    r = run_cli(d, "equalize - - --device cpu < in.tif");
    REQUIRE(r.code == 0);
    CHECK(r.out.compare(0, 4, "II*\0", 4) == 0);
    write_bytes(d / "back.tif", r.out);
    CHECK(same(read(d / "back.tif"), equalized(g)));
    r = run_cli(d, "equalize - - --device cpu < in.bmp");
    REQUIRE(r.code == 0);
    CHECK(r.out.compare(0, 2, "BM") == 0);
    // A file whose name lies about its content: the content decides.
    fs::copy_file(d / "in.jpg", d / "lying.png");
    r = run_cli(d, "equalize lying.png - --device cpu");
    REQUIRE(r.code == 0);
    CHECK(r.out.compare(0, 3, "\xff\xd8\xff") == 0);
    // --to still chooses.
    r = run_cli(d, "equalize - - --to png --device cpu < in.jpg");
    REQUIRE(r.code == 0);
    CHECK(r.out.compare(0, 4, "\x89PNG") == 0);
}

TEST_CASE("habits: --to against the output's extension, and several inputs into one file, are refused", "[cli][safety]") {
    TempDir d;
    write(d / "a.jpg", photo(40, 30, CV_8UC3, 62));
    write(d / "b.jpg", photo(40, 30, CV_8UC3, 63));
    expect_error(d, "equalize a.jpg out.jpg --to png --device cpu", 2, {"--to png", "out.jpg"});
    CHECK_FALSE(fs::exists(d / "out.png"));
    CHECK_FALSE(fs::exists(d / "out.jpg"));
    // The same format under another spelling keeps the name given.
    REQUIRE(run_cli(d, "equalize a.jpg out.jpeg --to jpg --device cpu").code == 0);
    CHECK(fs::exists(d / "out.jpeg"));
    CHECK_FALSE(fs::exists(d / "out.jpg"));
    // Several inputs into a name with an image extension: no folder of that name.
    expect_error(d, "equalize a.jpg b.jpg single.jpg --device cpu", 2, {"single.jpg", "folder"});
    CHECK_FALSE(fs::exists(d / "single.jpg"));
    // ... or into an existing file: left as it was.
    write_bytes(d / "notes", "keep me");
    CHECK(run_cli(d, "equalize a.jpg b.jpg notes --device cpu").code == 2);
    CHECK(slurp(d / "notes") == "keep me");
    // A folder name works, existing or not.
    REQUIRE(run_cli(d, "equalize a.jpg b.jpg outdir --device cpu").code == 0);
    CHECK(files_under(d / "outdir") == std::set<std::string>{"a.jpg", "b.jpg"});
}

TEST_CASE("habits: a lossy WebP stays lossy at its own quality, a lossless one lossless", "[cli][safety][webp]") {
    TempDir d;
    const cv::Mat c = photo(120, 90, CV_8UC3, 64);
    for (int quality : {30, 60, 90}) {
        INFO("quality " << quality);
        const std::string name = "q" + std::to_string(quality);
        std::vector<uchar> bytes;
        REQUIRE(cv::imencode(".webp", c, bytes, {cv::IMWRITE_WEBP_QUALITY, quality}));
        write_bytes(d / (name + ".webp"), std::string(bytes.begin(), bytes.end()));
        REQUIRE(run_cli(d, "equalize " + name + ".webp " + name + "-out.webp --mode per-channel --device cpu").code == 0);
        const std::string out = slurp(d / (name + "-out.webp"));
        CHECK(out.substr(12, 4) == "VP8 ");
        // libwebp at the estimated quality: the output is OpenCV's encoding of the same pixels at a quality
        // within 2 of the input's.
        const cv::Mat pixels = opencv_equalize_per_channel(read(d / (name + ".webp"), cv::IMREAD_COLOR));
        int matched = 0;
        for (int q = quality - 2; q <= quality + 2; ++q) {
            std::vector<uchar> ref;
            REQUIRE(cv::imencode(".webp", pixels, ref, {cv::IMWRITE_WEBP_QUALITY, q}));
            if (std::string(ref.begin(), ref.end()) == out) matched = q;
        }
        CHECK(matched != 0);
    }
    // --quality overrides the estimate; a lossless input stays lossless.
    REQUIRE(run_cli(d, "equalize q30.webp forced.webp --quality 95 --device cpu").code == 0);
    CHECK(fs::file_size(d / "forced.webp") > fs::file_size(d / "q30-out.webp"));
    std::vector<uchar> lossless;
    REQUIRE(cv::imencode(".webp", c, lossless, {cv::IMWRITE_WEBP_QUALITY, 101}));
    write_bytes(d / "ll.webp", std::string(lossless.begin(), lossless.end()));
    REQUIRE(run_cli(d, "equalize ll.webp ll-out.webp --mode per-channel --device cpu").code == 0);
    CHECK(slurp(d / "ll-out.webp").substr(12, 4) == "VP8L");
    CHECK(same(read(d / "ll-out.webp", cv::IMREAD_COLOR), opencv_equalize_per_channel(c)));
}

TEST_CASE("habits: SIGINT says what was done, removes our temporaries and ends by the signal", "[cli][safety][folder]") {
    TempDir d;
    const cv::Mat big = photo(1600, 1200, CV_8UC3, 70);
    const int files = 40;
    for (int i = 0; i < files; ++i) {
        cv::Mat m = big.clone();
        m.at<cv::Vec3b>(0, 0)[0] = static_cast<uchar>(i);
        write(d / "in" / ("f" + std::to_string(100 + i) + ".png"), m);
    }
    const fs::path err = d / "err.txt";
    const std::string cli = cli_path();
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        if (chdir(d.path.c_str()) != 0) _exit(126);
        const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), n = open("/dev/null", O_WRONLY);
        dup2(e, 2);
        dup2(n, 1);
        execlp(cli.c_str(), cli.c_str(), "equalize", "in", "out", "--device", "cpu", "--threads", "1", "--png-level", "9",
               static_cast<char*>(nullptr));
        _exit(127);
    }
    // Interrupt once a few outputs are complete (the run takes many seconds in all).
    const auto start = std::chrono::steady_clock::now();
    while (files_under(d / "out").size() < 2 && std::chrono::steady_clock::now() - start < std::chrono::seconds(60))
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    kill(pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    const std::string message = slurp(err);
    INFO(message);
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGINT);  // a shell shows 130 and stops a loop that ran it
    CHECK(contains(message, "interrupted after "));
    CHECK(contains(message, " of 40 files (done "));
    CHECK(contains(message, ", failed 0, skipped 0)"));
    CHECK(temporaries(d / "out").empty());
    CHECK(files_under(d / "out").size() < static_cast<std::size_t>(files));
}

// ================================================================================== durable outputs in rounds

namespace {

/// One completed system call of an `strace -f -y` log: its name, its first argument and, for renames, both
/// paths; `start` is the line where it began (an "<unfinished ...>" call completes on a later line).
struct Call {
    std::string name, fd_path, from, to;
    std::size_t start = 0, end = 0;
};

/// strace pads short calls before " = 0": the line's end says whether the call returned 0.
bool returned_zero(const std::string& rest) { return rest.size() >= 3 && rest.compare(rest.size() - 3, 3, "= 0") == 0; }

std::vector<Call> completed_calls(const std::string& log) {
    std::vector<Call> calls;
    std::map<std::string, Call> unfinished;  // by pid
    std::istringstream in(log);
    std::string line;
    for (std::size_t n = 0; std::getline(in, line); ++n) {
        // "PID call(...) = 0", the pid padded with spaces to a fixed width.
        const std::size_t sp = line.find(' '), call = line.find_first_not_of(' ', sp);
        if (sp == std::string::npos || call == std::string::npos) continue;
        const std::string pid = line.substr(0, sp), rest = line.substr(call);
        if (rest.rfind("<... ", 0) == 0) {
            auto it = unfinished.find(pid);
            if (it == unfinished.end() || !returned_zero(rest)) continue;
            it->second.end = n;
            calls.push_back(it->second);
            unfinished.erase(it);
            continue;
        }
        const std::size_t paren = rest.find('(');
        if (paren == std::string::npos) continue;
        Call c;
        c.name = rest.substr(0, paren);
        c.start = c.end = n;
        const std::size_t lt = rest.find('<', paren), gt = rest.find('>', paren);
        if (lt != std::string::npos && gt != std::string::npos && lt < gt) c.fd_path = rest.substr(lt + 1, gt - lt - 1);
        if (c.name.rfind("rename", 0) == 0) {
            // rename("from", "to") or renameat(fd, "from", fd, "to"): the two quoted strings.
            std::vector<std::string> quoted;
            for (std::size_t q1 = rest.find('"'); q1 != std::string::npos && quoted.size() < 2; q1 = rest.find('"', q1 + 1)) {
                const std::size_t q2 = rest.find('"', q1 + 1);
                if (q2 == std::string::npos) break;
                quoted.push_back(rest.substr(q1 + 1, q2 - q1 - 1));
                q1 = q2;
            }
            if (quoted.size() == 2) {
                c.from = fs::path(quoted[0]).filename().string();
                c.to = quoted[1];
            }
        }
        if (rest.find("<unfinished ...>") != std::string::npos) unfinished[pid] = c;
        else if (returned_zero(rest)) calls.push_back(c);
    }
    std::sort(calls.begin(), calls.end(), [](const Call& a, const Call& b) { return a.end < b.end; });
    return calls;
}

}  // namespace

TEST_CASE("durable outputs: each output's data is synced after it is written and before its rename, the folder after",
          "[cli][safety][folder]") {
    // Folder runs make outputs durable in rounds (a syncfs of the file system, or fdatasync of each file): read
    // from the program's own system calls, every rename of a temporary must follow a sync that began after
    // that temporary was closed, and a fsync of its folder must follow the rename.
    TempDir d;
    if (std::system("command -v strace > /dev/null 2>&1") != 0) {
        std::printf("%s: strace is not installed\n", imghist_test::kSkipMarker);
        return;
    }
    for (int i = 0; i < 24; ++i) write(d / ("in/f" + std::to_string(i) + ".png"), photo(64, 48, CV_8UC3, 30 + i));
    for (const char* sync : {"syncfs", "fdatasync"}) {
        INFO("sync=" << sync);
        const fs::path out = d / (std::string("out-") + sync), log = d / (std::string("trace-") + sync + ".txt");
        const std::string cmd = "cd " + q(d.path) + " && strace -f -qq -y -o " + q(log) +
                                " -e trace=close,fsync,fdatasync,syncfs,rename,renameat,renameat2 " + q(cli_path()) +
                                " equalize in " + q(out) + " --device cpu --threads 3 -q --pipeline sync=" + sync;
        if (std::system(cmd.c_str()) != 0 && !fs::exists(out / "f0.png")) {  // ptrace may be forbidden here
            std::printf("%s: strace cannot trace here\n", imghist_test::kSkipMarker);
            return;
        }
        const std::vector<Call> calls = completed_calls(slurp(log));
        std::map<std::string, std::size_t> closed;  // temporary name -> line of its close
        std::size_t renames = 0;
        for (std::size_t k = 0; k < calls.size(); ++k) {
            const Call& c = calls[k];
            const std::string name = fs::path(c.fd_path).filename().string();
            // The writer's close (the sync thread may open and close it again to sync it).
            if (c.name == "close" && name.rfind(".imghist-", 0) == 0) closed.emplace(name, c.end);
            if (c.name.rfind("rename", 0) != 0 || c.from.rfind(".imghist-", 0) != 0) continue;
            ++renames;
            INFO("rename of " << c.from << " to " << c.to);
            REQUIRE(closed.count(c.from) == 1);
            bool synced = false;
            for (std::size_t j = 0; j < k && !synced; ++j) {
                const Call& s = calls[j];
                const bool covers = s.name == "syncfs" || ((s.name == "fdatasync" || s.name == "fsync") &&
                                                           fs::path(s.fd_path).filename().string() == c.from);
                synced = covers && s.start > closed[c.from];
            }
            CHECK(synced);
            bool folder = false;
            for (std::size_t j = k + 1; j < calls.size() && !folder; ++j)
                folder = calls[j].name == "fsync" &&
                         fs::path(calls[j].fd_path).filename() == fs::path(c.to).parent_path().filename();
            CHECK(folder);
        }
        CHECK(renames == 24);
        CHECK(temporaries(out).empty());
    }
}

TEST_CASE("durable outputs: a run killed outright leaves no partial file under a final name, and --skip-existing finishes it",
          "[cli][safety][folder]") {
    TempDir d;
    const int files = 24;
    for (int i = 0; i < files; ++i) write(d / ("in/f" + std::to_string(100 + i) + ".png"), photo(800, 600, CV_8UC3, 90 + i));
    // The complete outputs, for comparison: the CPU encoder is deterministic at a fixed thread count.
    REQUIRE(run_cli(d, "equalize in ref --device cpu --threads 1 -q").code == 0);
    const std::string cli = cli_path();
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        if (chdir(d.path.c_str()) != 0) _exit(126);
        const int n = open("/dev/null", O_WRONLY);
        dup2(n, 1);
        dup2(n, 2);
        execlp(cli.c_str(), cli.c_str(), "equalize", "in", "out", "--device", "cpu", "--threads", "1",
               static_cast<char*>(nullptr));
        _exit(127);
    }
    // SIGKILL (as a crash would) once a few outputs are complete and others are in flight.
    const auto start = std::chrono::steady_clock::now();
    auto finals = [&] {
        std::size_t n = 0;
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(d / "out", ec))
            if (e.path().filename().string()[0] != '.') ++n;
        return n;
    };
    while (finals() < 3 && std::chrono::steady_clock::now() - start < std::chrono::seconds(60))
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(WIFSIGNALED(status));
    REQUIRE(finals() < static_cast<std::size_t>(files));  // killed mid-run
    // Every file under a final name is whole: byte for byte the complete run's.
    for (const auto& e : fs::directory_iterator(d / "out")) {
        const std::string name = e.path().filename().string();
        if (name[0] == '.') continue;
        INFO(name);
        CHECK(slurp(e.path()) == slurp(d / "ref" / name));
    }
    // Resumed: the rest is written, stale temporaries of the killed run are removed, nothing is left over.
    const Run r = run_cli(d, "equalize in out --device cpu --threads 1 --skip-existing");
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(temporaries(d / "out").empty());
    CHECK(files_under(d / "out") == files_under(d / "ref"));
    for (const std::string& name : files_under(d / "ref")) {
        INFO(name);
        CHECK(slurp(d / "out" / name) == slurp(d / "ref" / name));
    }
}
