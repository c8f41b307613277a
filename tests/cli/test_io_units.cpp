// Pieces of the resource model without running the program: the bounded histogram JSON parser, the words
// that replace the standard library's exception texts, the memory budget, bounded file reading and the
// JPEG scan count.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "io/codecs/codec.hpp"
#include "io/codecs/codec_jpeg.hpp"
#include "io/errors.hpp"
#include "io/histio.hpp"
#include "io/memory.hpp"

namespace {

nlohmann::ordered_json parse(const std::string& s) {
    return cli::parse_histogram_json(reinterpret_cast<const std::uint8_t*>(s.data()), s.size(), "h.json");
}

std::string error_of(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const cli::Error& e) {
        return e.what();
    }
    return "";
}

std::string temp_file(const std::string& content) {
    char name[] = "/tmp/imghist-io-XXXXXX";
    const int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()));
    close(fd);
    return name;
}

}  // namespace

TEST_CASE("histogram JSON: nesting is bounded, a folder's files are skipped, the total is read", "[cli][units][json]") {
    std::string deep;
    for (int i = 0; i < 100000; ++i) deep += "[";
    CHECK(error_of([&] { parse(deep); }) == "h.json: not an imghist histogram (JSON nested deeper than 16 levels)");
    CHECK(error_of([&] { parse("{\"total\": ") ; }).find("h.json: not valid JSON (") == 0);
    // Nested totals are not a histogram (no recursion follows them).
    CHECK(error_of([&] { cli::hist_from_json(parse(R"({"total": {"total": {}}})"), "h.json"); })
              .find("not a histogram") != std::string::npos);

    const std::string total = R"({"images": 2, "pixels": 8, "dtype": "u8", "bins": 2, "range": [0, 256],
        "channels": [{"name": "gray", "counts": [5, 3], "out_of_range": 0}]})";
    std::string files = "[";
    for (int i = 0; i < 3000; ++i) files += std::string(i ? "," : "") + "{\"file\": \"x\", \"counts\": [1, 2, 3, 4, 5, 6, 7, 8, 9]}";
    files += "]";
    const auto j = parse("{\"files\": " + files + ", \"failed\": [], \"total\": " + total + "}");
    CHECK_FALSE(j.contains("files"));
    const cli::HistResult r = cli::hist_from_json(j, "h.json");
    CHECK(r.images == 2);
    CHECK(r.channels.at(0).counts == std::vector<std::uint64_t>{5, 3});
    // Outside "files", no more values than a histogram can hold.
    std::string big = "{\"bins\": 1, \"range\": [0, 1], \"x\": [";
    for (int i = 0; i < (1 << 20) + 10; ++i) big += i ? ",0" : "0";
    big += "]}";
    CHECK(error_of([&] { parse(big); }).find("more than 1048576 JSON values") != std::string::npos);
    CHECK(error_of([&] { cli::hist_from_json(parse(R"({"bins": 0, "range": [0, 1], "channels": []})"), "h.json"); })
              .find("bins 0 is not 1-65536") != std::string::npos);
    CHECK(error_of([&] { cli::hist_from_json(parse(R"({"bins": 4, "range": [1, 1], "channels": []})"), "h.json"); })
              .find("range is not finite") != std::string::npos);
}

TEST_CASE("errors: the standard library's exception texts are replaced by words", "[cli][units][errors]") {
    CHECK(cli::user_message(std::bad_alloc()) == "out of memory");
    CHECK(cli::user_message(std::length_error("cannot create std::vector larger than max_size()")).find("std::") ==
          std::string::npos);
    CHECK(cli::user_message(std::invalid_argument("stoi")).find("stoi") == std::string::npos);
    CHECK(cli::user_message(std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again)))
              .find("the system refused") == 0);
    CHECK(cli::user_message(cli::Error(cli::ErrorCode::Io, "a.png: cannot read")) == "a.png: cannot read");
    CHECK(cli::file_message("a.png", std::bad_alloc()) == "a.png: out of memory");
    CHECK(cli::file_message("a.png", cli::Error(cli::ErrorCode::Io, "a.png: cannot read")) == "a.png: cannot read");
    CHECK(cli::file_message("a.png", cli::Error(cli::ErrorCode::Io, "out.png: cannot write"), "out.png") ==
          "out.png: cannot write");
}

TEST_CASE("memory budget: an input over the whole budget is refused; others wait their turn", "[cli][units][memory]") {
    cli::MemoryBudget budget(100);
    cli::MemoryReservation big(&budget);
    CHECK(error_of([&] { big.ensure(101, "big.png"); }).find("big.png: needs 101 bytes") == 0);

    // Two inputs that grow their share (a header estimate, then the real size) never wait on each other.
    std::atomic<int> done{0};
    auto worker = [&] {
        for (int i = 0; i < 200; ++i) {
            cli::MemoryReservation r(&budget);
            r.ensure(30, "a");
            r.ensure(70, "a");
            CHECK(r.held() == 70);
        }
        ++done;
    };
    std::thread a(worker), b(worker);
    a.join();
    b.join();
    CHECK(done == 2);

    // A share held elsewhere makes the next input wait until it is given back.
    cli::MemoryReservation first(&budget);
    first.ensure(80, "first");
    std::atomic<bool> got{false};
    std::thread second([&] {
        cli::MemoryReservation r(&budget);
        r.ensure(50, "second");
        got = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK_FALSE(got);
    first.release();
    second.join();
    CHECK(got);
    // A reservation that may not wait takes its share at once.
    first.ensure(80, "first");
    cli::MemoryReservation urgent(&budget, false);
    urgent.ensure(50, "urgent");
    CHECK(urgent.held() == 50);
}

TEST_CASE("reading files: bounded, by size, and the head is seen before the rest", "[cli][units][io]") {
    const std::string path = temp_file(std::string("\x89PNG\r\n\x1a\n", 8) + std::string(5000, 'x'));
    CHECK(cli::read_file(path).size() == 5008);
    CHECK(error_of([&] { cli::read_file(path, 5000); }).find("above the input limit of 4.9 KiB (raise it with --max-input)") !=
          std::string::npos);
    std::size_t seen = 0;
    CHECK(cli::read_file(path, 1 << 20, 8, [&](const std::uint8_t*, std::size_t n) { seen = n; }).size() == 5008);
    CHECK(seen == 8);
    std::remove(path.c_str());
    const std::string text = temp_file(std::string(100, 'x'));
    CHECK(error_of([&] { cli::read_image_file(text, cli::Limits{}); }).find("unrecognised image format") != std::string::npos);
    std::remove(text.c_str());
}

TEST_CASE("JPEG scans are counted from the markers", "[cli][units][jpeg]") {
    // SOI, a segment, two SOS with entropy data holding a stuffed 0xFF00 and a restart marker, EOI.
    const std::string sos = std::string("\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00", 10);
    const std::string f = std::string("\xff\xd8\xff\xe0\x00\x04\x00\x00", 8) + sos + std::string("\x12\xff\x00\x34\xff\xd0\x56", 7) +
                          sos + std::string("\x78", 1) + std::string("\xff\xd9", 2);
    CHECK(cli::count_jpeg_scans(cli::Bytes(f.begin(), f.end())) == 2);
}

namespace {
/// The reference for count_jpeg_scans: a byte-at-a-time state machine over the stream.
std::uint64_t scans_by_state_machine(const cli::Bytes& b) {
    enum class At { Markers, Segment, EntropyData } at = At::Markers;
    std::uint64_t scans = 0;
    std::size_t skip = 0;  // bytes of the segment left to skip
    bool sos = false;      // the segment being skipped is an SOS header
    for (std::size_t i = 2; i + 1 < b.size(); ++i) {
        const std::uint8_t x = b[i], y = b[i + 1];
        switch (at) {
            case At::Markers:
                if (x != 0xFF || y == 0xFF) break;  // not a marker, or a fill byte
                if (y == 0xD9) return scans;
                if (y == 0x01 || y == 0x00 || (y >= 0xD0 && y <= 0xD8)) {
                    ++i;  // a marker without a length
                    break;
                }
                if (i + 3 >= b.size()) return scans;
                sos = y == 0xDA;
                scans += sos;  // counted at its marker, whether or not the file holds all of it
                skip = (std::size_t(b[i + 2]) << 8 | b[i + 3]) + 2;
                at = At::Segment;
                --skip;  // this byte
                if (skip == 0) at = sos ? At::EntropyData : At::Markers;
                break;
            case At::Segment:
                if (--skip == 0) at = sos ? At::EntropyData : At::Markers;
                break;
            case At::EntropyData:
                // Data ends before a marker: 0xFF then neither a stuffed 0x00 nor a restart marker.
                if (x == 0xFF && y != 0x00 && !(y >= 0xD0 && y <= 0xD7)) {
                    at = At::Markers;
                    --i;  // look at this byte again as a marker
                }
                break;
        }
    }
    return scans;
}
}  // namespace

TEST_CASE("JPEG scans: the marker walk equals a byte-at-a-time state machine on random streams", "[cli][units][jpeg]") {
    // Streams of SOS segments whose entropy data is dense in 0xFF: stuffed bytes, restart markers, fill bytes,
    // a marker cut at the end, files ending inside the data or on a lone 0xFF.
    std::uint32_t seed = 12345;
    auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
    const std::uint8_t picks[] = {0xFF, 0x00, 0xD0, 0xD7, 0xD8, 0xD9, 0xDA, 0xE1, 0x01, 0x12};
    for (int round = 0; round < 2000; ++round) {
        cli::Bytes b = {0xFF, 0xD8};
        const int segments = 1 + static_cast<int>(next() % 4);
        for (int s = 0; s < segments; ++s) {
            const std::uint8_t sos[] = {0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00};
            b.insert(b.end(), sos, sos + sizeof sos);
            const int len = static_cast<int>(next() % 300);
            for (int k = 0; k < len; ++k)
                b.push_back(next() % 3 == 0 ? picks[next() % sizeof picks] : static_cast<std::uint8_t>(next() >> 24));
        }
        if (next() % 2) b.insert(b.end(), {0xFF, 0xD9});
        b.resize(b.size() - next() % 3);
        INFO("round " << round << ", " << b.size() << " bytes");
        CHECK(cli::count_jpeg_scans(b) == scans_by_state_machine(b));
    }
}
