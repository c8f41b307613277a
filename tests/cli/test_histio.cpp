// The CLI's histogram JSON writer (histio.hpp) against the same document built as an nlohmann tree and
// dumped: the layout the README documents, written without the tree.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "io/histio.hpp"

using cli::HistResult;
using ojson = nlohmann::ordered_json;

namespace {

// Integral range ends as integers, others as doubles (the documented form: "range": [0, 256]).
ojson range_end(double v) {
    if (v == std::floor(v) && std::fabs(v) < 9e15) return static_cast<std::int64_t>(v);
    return v;
}

ojson tree_of(const HistResult& r) {
    ojson j = ojson::object();
    if (!r.file.empty()) {
        j["file"] = r.file;
        j["width"] = r.width;
        j["height"] = r.height;
    } else {
        j["images"] = r.images;
        j["pixels"] = r.pixels;
    }
    j["dtype"] = r.dtype;
    j["bins"] = r.bins;
    j["range"] = {range_end(r.low), range_end(r.high)};
    std::uint64_t oor = 0;
    ojson chans = ojson::array();
    for (const auto& c : r.channels) {
        oor += c.out_of_range;
        chans.push_back({{"name", c.name}, {"counts", c.counts}, {"out_of_range", c.out_of_range}});
    }
    j["out_of_range"] = oor;
    j["channels"] = std::move(chans);
    return j;
}

HistResult sample(const std::string& file, int bins, double low, double high, std::vector<std::string> names,
                  std::uint64_t seed) {
    HistResult r;
    r.file = file;
    r.width = 1920;
    r.height = 1080;
    r.dtype = file.empty() ? "mixed" : "u8";
    r.images = 7;
    r.pixels = 123456789012ull;
    r.bins = bins;
    r.low = low;
    r.high = high;
    for (std::size_t c = 0; c < names.size(); ++c) {
        HistResult::Channel ch;
        ch.name = names[c];
        for (int b = 0; b < bins; ++b) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            // Zeroes, small and large counts, and the largest 64-bit count.
            const std::uint64_t v = b % 7 == 0 ? 0 : b == 3 ? std::numeric_limits<std::uint64_t>::max() : seed >> (b % 60);
            ch.counts.push_back(v);
        }
        ch.out_of_range = c * 1000003ull;
        r.channels.push_back(std::move(ch));
    }
    return r;
}

std::string written(const HistResult& r) {
    std::string s;
    cli::append_json(s, r);
    return s;
}

}  // namespace

TEST_CASE("histogram JSON: the writer's text equals the nlohmann tree's dump", "[cli][json]") {
    const std::vector<HistResult> cases = {
        sample("a.png", 256, 0, 256, {"R", "G", "B"}, 1),
        sample("dir/with \"quotes\", back\\slash,\nnew line, tab\t, \x01 control, caf\xc3\xa9 \xe2\x82\xac.jpg", 16,
               -1.5, 1e20, {"gray"}, 2),
        sample("f.tif", 1, 1e-7, 0.25, {"c0", "c1", "c2", "c3"}, 3),
        sample("", 64, 0, 65536, {"R", "G", "B"}, 4),  // a total: images and pixels
        sample("no-channels.png", 8, -0.0, 3.0000000000000004, {}, 5),
        sample("", 2, -9e15, 9.5e15, {"Y"}, 6),
    };
    for (const HistResult& r : cases) {
        INFO(r.file);
        CHECK(written(r) == tree_of(r).dump());
    }
    // Appends: what was there stays.
    std::string s = "prefix";
    cli::append_json(s, cases[0]);
    CHECK(s == "prefix" + tree_of(cases[0]).dump());
}

TEST_CASE("histogram JSON: a folder's document equals the nlohmann tree's dump", "[cli][json]") {
    const HistResult a = sample("a.png", 256, 0, 256, {"R", "G", "B"}, 11);
    const HistResult b = sample("b.jpg", 256, 0, 256, {"R", "G", "B"}, 12);
    const HistResult total = sample("", 256, 0, 256, {"R", "G", "B"}, 13);
    const std::vector<std::pair<std::string, std::string>> failed = {
        {"bad.jpg", "bad.jpg: truncated or corrupt JPEG"}, {"x\"y.png", "x\"y.png: not a PNG file (bad signature)"}};
    for (int shape = 0; shape < 4; ++shape) {
        std::vector<const HistResult*> files;
        if (shape & 1) files = {&a, &b};
        const std::vector<std::pair<std::string, std::string>> f = shape & 2 ? failed : decltype(failed){};
        ojson j;
        j["files"] = ojson::array();
        j["failed"] = ojson::array();
        for (const HistResult* r : files) j["files"].push_back(tree_of(*r));
        for (const auto& [file, error] : f) j["failed"].push_back({{"file", file}, {"error", error}});
        j["total"] = tree_of(total);
        CHECK(cli::folder_json(files, f, total) == j.dump());
    }
}

TEST_CASE("histogram JSON: a name that is not UTF-8 is written with U+FFFD for each invalid byte", "[cli][json]") {
    // A Latin-1 file name must not cost a folder its whole result: nlohmann's replacing dump is the reference.
    HistResult r = sample("bad\xff\xfe caf\xe9.png", 4, 0, 256, {"R"}, 21);
    CHECK_THROWS_AS(tree_of(r).dump(), nlohmann::json::type_error);
    CHECK(written(r) == tree_of(r).dump(-1, ' ', false, ojson::error_handler_t::replace));
    CHECK(written(r).find("\"bad\xef\xbf\xbd\xef\xbf\xbd caf\xef\xbf\xbd.png\"") != std::string::npos);
}

TEST_CASE("histogram JSON: totals of two sample types, and --merge's reading of them", "[cli][json]") {
    HistResult u8 = sample("", 256, 0, 256, {"gray"}, 31), u16 = sample("", 256, 0, 65536, {"gray"}, 32);
    u8.dtype = "u8";
    u16.dtype = "u16";
    ojson j;
    j["files"] = ojson::array();
    j["failed"] = ojson::array();
    j["totals"] = {tree_of(u8), tree_of(u16)};
    CHECK(cli::folder_json({}, {}, std::vector<HistResult>{u8, u16}) == j.dump());
    const std::vector<HistResult> back = cli::hists_from_json(j, "x.json");
    REQUIRE(back.size() == 2);
    CHECK(back[1].high == 65536);
    CHECK(back[1].channels[0].counts == u16.channels[0].counts);
    CHECK_THROWS_AS(cli::hist_from_json(j, "x.json"), imghist::Error);  // one histogram needed (match's REF)
    // Totals: one per sample type; the same type with other bins is refused, naming the source.
    cli::Totals t;
    t.add(u8, "a");
    t.add(u16, "b");
    t.add(u8, "c");
    REQUIRE(t.all().size() == 2);
    CHECK(t.all()[0].images == 14);
    CHECK(cli::dtype_list(t.all()) == "u8, u16");
    HistResult other = sample("", 16, 0, 256, {"gray"}, 33);
    other.dtype = "u8";
    CHECK_THROWS_WITH(t.add(other, "b16.json"), Catch::Contains("b16.json"));
}

TEST_CASE("folder totals: results added in any order come out as Totals adds them in index order", "[cli][json]") {
    // A folder's files as a run counts them: gray, colour and colour-with-alpha 8-bit images, 16-bit ones
    // (another binning: a total of their own); their threads finish in any order.
    std::vector<HistResult> files = {sample("0.png", 256, 0, 256, {"gray"}, 41),
                                     sample("1.png", 256, 0, 256, {"R", "G", "B"}, 42),
                                     sample("2.png", 256, 0, 65536, {"gray"}, 43),
                                     sample("3.png", 256, 0, 256, {"R", "G", "B", "A"}, 44),
                                     sample("4.png", 256, 0, 65536, {"R", "G", "B"}, 45),
                                     sample("5.png", 256, 0, 256, {"gray"}, 46)};
    for (std::size_t k = 0; k < files.size(); ++k) files[k].dtype = files[k].high == 256 ? "u8" : "u16";
    cli::Totals in_order;
    for (const HistResult& f : files) in_order.add(f, f.file);
    const std::string expected = cli::folder_json({}, {}, in_order.all());
    std::vector<std::size_t> order = {0, 1, 2, 3, 4, 5};
    int orders = 0;
    do {
        cli::IndexedTotals t;
        for (std::size_t k : order) REQUIRE(t.try_add(files[k], k, files[k].file));
        INFO("order " << order[0] << order[1] << order[2] << order[3] << order[4] << order[5]);
        CHECK(cli::folder_json({}, {}, t.all()) == expected);
        ++orders;
    } while (std::next_permutation(order.begin(), order.end()));
    CHECK(orders == 720);
    // What Totals refuses (8-bit histograms of another binning) is not added, and add() refuses it by name.
    cli::IndexedTotals t;
    REQUIRE(t.try_add(files[0], 0, "0.png"));
    HistResult other = sample("6.png", 16, 0, 256, {"gray"}, 47);
    other.dtype = "u8";
    CHECK_FALSE(t.try_add(other, 6, "6.png"));
    cli::Totals first_only;
    first_only.add(files[0], "0.png");
    CHECK(cli::folder_json({}, {}, t.all()) == cli::folder_json({}, {}, first_only.all()));
    CHECK_THROWS_WITH(t.add(other, 6, "6.png"), Catch::Contains("6.png"));
}

TEST_CASE("text names: control characters and the backslash as C escapes, on one line", "[cli][text]") {
    CHECK(cli::text_name("plain name.png") == "plain name.png");
    CHECK(cli::text_name("a\nb\rc\td\\e\x01\x7f.png") == "a\\nb\\rc\\td\\\\e\\x01\\x7f.png");
    CHECK(cli::text_name("caf\xc3\xa9.png") == "caf\xc3\xa9.png");  // UTF-8 as it is
}
