// imghist_io — histogram results: text, CSV and JSON output, JSON input (for --merge), and sums.
//
// JSON of one image:
//   {"file": "a.png", "width": 640, "height": 480, "dtype": "u8", "bins": 256, "range": [0, 256],
//    "out_of_range": 0, "channels": [{"name": "r", "counts": [...], "out_of_range": 0}, ...]}
// A total (of a folder, or of --merge) has "images" and "pixels" instead of "file", "width", "height".
// A folder run prints {"files": [<image>...], "failed": [{"file": ..., "error": ...}], "total": <total>}.
// Results of different sample types binned differently (8- and 16-bit images without --range: [0, 256) and
// [0, 65536)) cannot be summed: each sample type gets a total of its own, and such a document has
// "totals": [<total>...] (in the order the types first appear) instead of "total". --merge sums either
// form; results of one sample type with different bins or ranges are refused.
// Strings are UTF-8: a byte of a file name that is not valid UTF-8 is written as U+FFFD.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
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

/// The totals of a folder or of --merge: results with the same bins and range add into one total; a result
/// of another sample type and another binning starts a total of its own (one of the same type and another
/// binning is refused).
class Totals {
public:
    /// Adds `r` (an image's result or a total); `source` names it in errors.
    void add(const HistResult& r, const std::string& source);
    /// Where add() puts `r`: the index of its total in all(), all().size() for a new one, or -1 where it
    /// refuses it.
    long place(const HistResult& r) const;
    const std::vector<HistResult>& all() const noexcept { return totals_; }

private:
    std::vector<HistResult> totals_;
};

/// The sample types of totals, as "u8, u16".
std::string dtype_list(const std::vector<HistResult>& totals);

/// Totals of results added in any order (a folder's files as they finish) that come out as Totals gives them
/// added in the order of their items' indexes: which total comes first, and each total's channel order. Its
/// caller holds the lock.
class IndexedTotals {
public:
    /// Adds item `index`'s result; false, adding nothing, where Totals would refuse it.
    bool try_add(const HistResult& r, std::size_t index, const std::string& source);
    /// The same, refusing with Totals' error.
    void add(const HistResult& r, std::size_t index, const std::string& source);
    /// Every total, in the order of its first item; its channels in the order of theirs.
    std::vector<HistResult> all() const;

private:
    using Key = std::pair<std::size_t, std::size_t>;  ///< (an item's index, a channel's position in it)
    Totals totals_;
    std::vector<std::size_t> first_;          ///< per total, its least item index
    std::vector<std::vector<Key>> channels_;  ///< per total and channel (in totals_' order), its least key
};

/// Appends r's JSON (the layout above, compact: no spaces or line breaks) to `out`.
void append_json(std::string& out, const HistResult& r);
/// A folder run's JSON: its files' results, the failed files with their errors (file, error), and its
/// total ("total"), or its totals when there are several ("totals").
std::string folder_json(const std::vector<const HistResult*>& files,
                        const std::vector<std::pair<std::string, std::string>>& failed, const std::vector<HistResult>& totals);
std::string folder_json(const std::vector<const HistResult*>& files,
                        const std::vector<std::pair<std::string, std::string>>& failed, const HistResult& total);
/// The same document from each file's JSON as append_json wrote it (made while the run went on: the end of a
/// run of 10 000 colour images then only joins 35 MB instead of writing 7.7 million counts).
std::string folder_json_from_parts(const std::vector<std::string_view>& file_json,
                                  const std::vector<std::pair<std::string, std::string>>& failed,
                                  const std::vector<HistResult>& totals);
/// The JSON of --merge's result: one total as a single result, several as {"totals": [...]}.
std::string totals_json(const std::vector<HistResult>& totals);
/// Parses an image result or a total; a folder result contributes its "total". Errors name `source`,
/// and a document with several totals (of different binnings) is one.
HistResult hist_from_json(const nlohmann::ordered_json& j, const std::string& source);
/// Every total of a document: an image result or a total (one), a folder result's "total" or "totals".
std::vector<HistResult> hists_from_json(const nlohmann::ordered_json& j, const std::string& source);

/// A file name on one line of text: control characters, DEL and the backslash as C escapes (\n, \r, \t,
/// \\, \xHH), any other byte as it is. Names in the text format and in the notes of image commands.
std::string text_name(const std::string& name);
/// Parses histogram JSON text (a file of `imghist hist --format json`) for hist_from_json, bounded whatever
/// the text: nesting deeper than a histogram's is refused (no recursion or stack grows with it), a folder
/// result's per-file "files" and "failed" are skipped while parsing (only its "total" or "totals" are
/// read), and at most about a million values are kept. Errors name `source`.
nlohmann::ordered_json parse_histogram_json(const std::uint8_t* data, std::size_t size, const std::string& source);

std::string format_text(const HistResult& r);
std::string format_csv(const HistResult& r);
/// A CSV field as RFC 4180 quotes it: in double quotes, each double quote doubled (file names may hold
/// commas, quotes and line breaks).
std::string csv_field(const std::string& s);
/// CSV data rows of r: ["label",]bin,low,high, then one count per name in `columns` (empty where r has no
/// channel of that name).
std::string csv_rows(const HistResult& r, const std::vector<std::string>& columns, const std::string* label);

}  // namespace cli
