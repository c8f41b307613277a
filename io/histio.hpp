// imghist CLI — histogram results: text, CSV and JSON output, JSON input (for --merge), and sums.
//
// JSON of one image:
//   {"file": "a.png", "width": 640, "height": 480, "dtype": "u8", "bins": 256, "range": [0, 256],
//    "out_of_range": 0, "channels": [{"name": "r", "counts": [...], "out_of_range": 0}, ...]}
// A total (of a folder, or of --merge) has "images" and "pixels" instead of "file", "width", "height".
// A folder run prints {"files": [<image>...], "failed": [{"file": ..., "error": ...}], "total": <total>}.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "imghist/histogram.hpp"

namespace cli {

struct HistResult {
    std::string file;                 ///< empty for totals
    std::int64_t width = 0, height = 0;
    std::uint64_t images = 0, pixels = 0;
    std::string dtype = "u8";
    int bins = 256;
    double low = 0, high = 256;
    struct Channel {
        std::string name;
        std::vector<std::uint64_t> counts;
        std::uint64_t out_of_range = 0;
    };
    std::vector<Channel> channels;

    /// From a library result; names[c] names channel c.
    static HistResult from(const imghist::Histogram& h, const std::vector<std::string>& names);
    std::uint64_t out_of_range() const;
    /// Adds `o` into this total, channel by channel name (a new name becomes a new channel). Throws
    /// Error(InvalidArgument) naming `source` when bins or range differ.
    void add(const HistResult& o, const std::string& source);
    /// A total of nothing yet, with this result's bins and range.
    HistResult empty_total() const;
};

/// Appends r's JSON (the layout above, compact: no spaces or line breaks) to `out`. Throws
/// nlohmann::json::type_error for a name or file that is not valid UTF-8.
void append_json(std::string& out, const HistResult& r);
/// A folder run's JSON: its files' results, the failed files with their errors (file, error), the total.
std::string folder_json(const std::vector<const HistResult*>& files,
                        const std::vector<std::pair<std::string, std::string>>& failed, const HistResult& total);
/// Parses an image result or a total; a folder result contributes its "total". Errors name `source`.
HistResult hist_from_json(const nlohmann::ordered_json& j, const std::string& source);

std::string format_text(const HistResult& r);
std::string format_csv(const HistResult& r);
/// A CSV field as RFC 4180 quotes it: in double quotes, each double quote doubled (file names may hold
/// commas, quotes and line breaks).
std::string csv_field(const std::string& s);
/// CSV data rows of r: ["label",]bin,low,high, then one count per name in `columns` (empty where r has no
/// channel of that name).
std::string csv_rows(const HistResult& r, const std::vector<std::string>& columns, const std::string* label);

}  // namespace cli
