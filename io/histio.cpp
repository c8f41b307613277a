#include "io/histio.hpp"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "io/errors.hpp"

namespace cli {

HistResult HistResult::from(const imghist::Histogram& h, const std::vector<std::string>& names) {
    HistResult r;
    r.bins = h.spec.bins;
    r.low = h.spec.low;
    r.high = h.spec.high;
    for (int c = 0; c < h.channels; ++c) {
        Channel ch;
        ch.name = c < static_cast<int>(names.size()) ? names[static_cast<std::size_t>(c)] : "c" + std::to_string(c);
        ch.counts.assign(h.channel(c), h.channel(c) + h.bins());
        ch.out_of_range = h.out_of_range.empty() ? 0 : h.out_of_range[static_cast<std::size_t>(c)];
        r.channels.push_back(std::move(ch));
    }
    return r;
}

std::uint64_t HistResult::out_of_range() const {
    std::uint64_t s = 0;
    for (auto& c : channels) s += c.out_of_range;
    return s;
}

HistResult HistResult::empty_total() const {
    HistResult t;
    t.dtype = dtype;
    t.bins = bins;
    t.low = low;
    t.high = high;
    return t;
}

void HistResult::add(const HistResult& o, const std::string& source) {
    if (o.bins != bins || o.low != low || o.high != high)
        fail(ErrorCode::InvalidArgument, source,
             "cannot sum histograms with different bins or range (" + std::to_string(o.bins) + " bins over [" +
                 std::to_string(o.low) + ", " + std::to_string(o.high) + ") vs " + std::to_string(bins) +
                 " bins over [" + std::to_string(low) + ", " + std::to_string(high) + "))");
    if (dtype != o.dtype) dtype = "mixed";
    images += o.file.empty() ? o.images : 1;
    pixels += o.file.empty() ? o.pixels : static_cast<std::uint64_t>(o.width) * static_cast<std::uint64_t>(o.height);
    for (const Channel& oc : o.channels) {
        Channel* mine = nullptr;
        for (Channel& c : channels)
            if (c.name == oc.name) mine = &c;
        if (!mine) {
            channels.push_back(Channel{oc.name, std::vector<std::uint64_t>(static_cast<std::size_t>(bins), 0), 0});
            mine = &channels.back();
        }
        for (std::size_t i = 0; i < oc.counts.size(); ++i) mine->counts[i] += oc.counts[i];
        mine->out_of_range += oc.out_of_range;
    }
}

namespace {
/// Integral range ends print as integers ("range": [0, 256]), others as floating point.
nlohmann::ordered_json number(double v) {
    if (v == std::floor(v) && std::fabs(v) < 9e15) return static_cast<std::int64_t>(v);
    return v;
}
}  // namespace

namespace {
template <class Int>
void append_integer(std::string& out, Int v) {
    char buf[24];
    const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
}
// Strings and range ends are few: nlohmann writes them, with its escaping and its shortest round-trip form
// of doubles, as it did when it wrote the whole document. A file name that is not UTF-8 (a Latin-1 name)
// must not cost the folder's whole result: its invalid bytes become U+FFFD.
void append_string(std::string& out, const std::string& s) {
    out += nlohmann::ordered_json(s).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}
// A member: `before` is the text up to its value, such as `,"bins":`.
template <class Int>
void append_integer(std::string& out, const char* before, Int v) {
    out += before;
    append_integer(out, v);
}
void append_string(std::string& out, const char* before, const std::string& s) {
    out += before;
    append_string(out, s);
}
}  // namespace

// The counts are written straight into the text: a folder of 4000 images has 3 million of them, and building
// them as a JSON tree first took 0.4 s (H100 host, hist of 4000 1920x1080 JPEGs) of a 2.3 s run.
void append_json(std::string& out, const HistResult& r) {
    std::size_t counts = 0;
    for (const auto& c : r.channels) counts += c.counts.size();
    out.reserve(out.size() + 256 + counts * 8);
    if (!r.file.empty()) {
        append_string(out, "{\"file\":", r.file);
        append_integer(out, ",\"width\":", r.width);
        append_integer(out, ",\"height\":", r.height);
    } else {
        append_integer(out, "{\"images\":", r.images);
        append_integer(out, ",\"pixels\":", r.pixels);
    }
    append_string(out, ",\"dtype\":", r.dtype);
    append_integer(out, ",\"bins\":", r.bins);
    out += ",\"range\":[" + number(r.low).dump() + ',' + number(r.high).dump() + ']';
    append_integer(out, ",\"out_of_range\":", r.out_of_range());
    out += ",\"channels\":[";
    for (std::size_t c = 0; c < r.channels.size(); ++c) {
        const HistResult::Channel& ch = r.channels[c];
        append_string(out, c ? ",{\"name\":" : "{\"name\":", ch.name);
        out += ",\"counts\":[";
        for (std::size_t i = 0; i < ch.counts.size(); ++i) {
            if (i) out += ',';
            append_integer(out, ch.counts[i]);
        }
        append_integer(out, "],\"out_of_range\":", ch.out_of_range);
        out += '}';
    }
    out += "]}";
}

long Totals::place(const HistResult& r) const {
    for (std::size_t k = 0; k < totals_.size(); ++k)
        if (totals_[k].bins == r.bins && totals_[k].low == r.low && totals_[k].high == r.high) return static_cast<long>(k);
    // Another sample type's binning starts its own total; another binning of the same type is a mistake
    // (histograms made with different --bins or --range).
    for (const HistResult& t : totals_)
        if (t.dtype == r.dtype) return -1;
    return static_cast<long>(totals_.size());
}

void Totals::add(const HistResult& r, const std::string& source) {
    long k = place(r);
    if (k < 0)  // HistResult::add refuses it, naming `source`
        for (HistResult& t : totals_)
            if (t.dtype == r.dtype) t.add(r, source);
    if (k < 0 || k == static_cast<long>(totals_.size())) {
        totals_.push_back(r.empty_total());
        k = static_cast<long>(totals_.size()) - 1;
    }
    totals_[static_cast<std::size_t>(k)].add(r, source);
}

bool IndexedTotals::try_add(const HistResult& r, std::size_t index, const std::string& source) {
    const long place = totals_.place(r);
    if (place < 0) return false;
    const auto k = static_cast<std::size_t>(place);
    totals_.add(r, source);
    if (k == first_.size()) {
        first_.push_back(index);
        channels_.emplace_back();
    }
    first_[k] = std::min(first_[k], index);
    const std::vector<HistResult::Channel>& mine = totals_.all()[k].channels;
    std::vector<Key>& keys = channels_[k];
    for (std::size_t c = 0; c < r.channels.size(); ++c)
        for (std::size_t m = 0; m < mine.size(); ++m) {
            if (mine[m].name != r.channels[c].name) continue;
            if (m == keys.size()) keys.push_back({index, c});  // a channel this total did not have
            keys[m] = std::min(keys[m], Key{index, c});
        }
    return true;
}

void IndexedTotals::add(const HistResult& r, std::size_t index, const std::string& source) {
    if (!try_add(r, index, source)) totals_.add(r, source);  // Totals' refusal, naming `source`
}

std::vector<HistResult> IndexedTotals::all() const {
    std::vector<std::size_t> order(first_.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [this](std::size_t a, std::size_t b) { return first_[a] < first_[b]; });
    std::vector<HistResult> out;
    for (std::size_t k : order) {
        HistResult t = totals_.all()[k];
        std::vector<std::size_t> by(t.channels.size());
        for (std::size_t m = 0; m < by.size(); ++m) by[m] = m;
        const std::vector<Key>& keys = channels_[k];
        std::sort(by.begin(), by.end(), [&keys](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
        std::vector<HistResult::Channel> channels;
        for (std::size_t m : by) channels.push_back(std::move(t.channels[m]));
        t.channels = std::move(channels);
        out.push_back(std::move(t));
    }
    return out;
}

std::string dtype_list(const std::vector<HistResult>& totals) {
    std::string s;
    for (const HistResult& t : totals) s += (s.empty() ? "" : ", ") + t.dtype;
    return s;
}

std::string totals_json(const std::vector<HistResult>& totals) {
    std::string out;
    if (totals.size() == 1) {
        append_json(out, totals[0]);
        return out;
    }
    out = "{\"totals\":[";
    for (std::size_t k = 0; k < totals.size(); ++k) {
        if (k) out += ',';
        append_json(out, totals[k]);
    }
    return out + "]}";
}

std::string folder_json(const std::vector<const HistResult*>& files,
                        const std::vector<std::pair<std::string, std::string>>& failed, const HistResult& total) {
    return folder_json(files, failed, std::vector<HistResult>{total});
}

std::string folder_json(const std::vector<const HistResult*>& files,
                        const std::vector<std::pair<std::string, std::string>>& failed, const std::vector<HistResult>& totals) {
    std::vector<std::string> texts(files.size());
    std::vector<std::string_view> views;
    for (std::size_t k = 0; k < files.size(); ++k) {
        append_json(texts[k], *files[k]);
        views.emplace_back(texts[k]);
    }
    return folder_json_from_parts(views, failed, totals);
}

std::string folder_json_from_parts(const std::vector<std::string_view>& file_json,
                                  const std::vector<std::pair<std::string, std::string>>& failed,
                                  const std::vector<HistResult>& totals) {
    std::size_t bytes = 64;
    for (std::string_view f : file_json) bytes += f.size() + 1;
    std::string out;
    out.reserve(bytes);
    out = "{\"files\":[";
    for (std::size_t k = 0; k < file_json.size(); ++k) {
        if (k) out += ',';
        out += file_json[k];
    }
    out += "],\"failed\":[";
    for (std::size_t k = 0; k < failed.size(); ++k) {
        append_string(out, k ? ",{\"file\":" : "{\"file\":", failed[k].first);
        append_string(out, ",\"error\":", failed[k].second);
        out += '}';
    }
    if (totals.size() == 1) {
        out += "],\"total\":";
        append_json(out, totals[0]);
    } else {
        out += "],\"totals\":[";
        for (std::size_t k = 0; k < totals.size(); ++k) {
            if (k) out += ',';
            append_json(out, totals[k]);
        }
        out += ']';
    }
    out += '}';
    return out;
}

namespace {
/// nlohmann's message without its "[json.exception.parse_error.101] " tag.
std::string json_reason(const std::exception& e) {
    std::string m = e.what();
    if (!m.empty() && m[0] == '[') {
        const std::size_t end = m.find("] ");
        if (end != std::string::npos) m = m.substr(end + 2);
    }
    return m;
}
}  // namespace

nlohmann::ordered_json parse_histogram_json(const std::uint8_t* data, std::size_t size, const std::string& source) {
    using Json = nlohmann::ordered_json;
    using Event = Json::parse_event_t;
    // A histogram (or a folder's total) nests 4 levels and holds 65536 counts per channel at most.
    constexpr int kMaxDepth = 16;
    constexpr std::size_t kMaxValues = std::size_t(1) << 20;
    std::size_t values = 0;
    const Json::parser_callback_t keep = [&](int depth, Event event, Json& parsed) {
        if ((event == Event::object_start || event == Event::array_start) && depth >= kMaxDepth)
            fail(ErrorCode::InvalidArgument, source,
                 "not an imghist histogram (JSON nested deeper than " + std::to_string(kMaxDepth) + " levels)");
        if (event == Event::key && depth == 1 && (parsed == "files" || parsed == "failed")) return false;
        if ((event == Event::value || event == Event::object_start || event == Event::array_start) && ++values > kMaxValues)
            fail(ErrorCode::InvalidArgument, source,
                 "not an imghist histogram (more than " + std::to_string(kMaxValues) + " JSON values outside \"files\")");
        return true;
    };
    try {
        return Json::parse(data, data + size, keep);
    } catch (const Json::exception& e) {
        fail(ErrorCode::InvalidArgument, source, "not valid JSON (" + json_reason(e) + ")");
    }
}

HistResult hist_from_json(const nlohmann::ordered_json& j, const std::string& source) {
    std::vector<HistResult> all = hists_from_json(j, source);
    if (all.size() != 1)
        fail(ErrorCode::InvalidArgument, source,
             "holds " + std::to_string(all.size()) + " totals (one per sample type); one histogram is needed here");
    return std::move(all[0]);
}

namespace {
HistResult one_from_json(const nlohmann::ordered_json& j, const std::string& source) {
    try {
        if (!j.is_object()) fail(ErrorCode::InvalidArgument, source, "not a histogram (expected a JSON object)");
        // A total is one histogram: a "total" inside one is refused rather than followed.
        if (j.contains("total") || j.contains("totals"))
            fail(ErrorCode::InvalidArgument, source, "not a histogram (\"total\" is not one image's or a total's result)");
        HistResult r;
        if (j.contains("file")) {
            r.file = j.at("file").get<std::string>();
            r.width = j.value("width", std::int64_t(0));
            r.height = j.value("height", std::int64_t(0));
        } else {
            r.images = j.value("images", std::uint64_t(0));
            r.pixels = j.value("pixels", std::uint64_t(0));
        }
        r.dtype = j.value("dtype", std::string("u8"));
        r.bins = j.at("bins").get<int>();
        r.low = j.at("range").at(0).get<double>();
        r.high = j.at("range").at(1).get<double>();
        if (r.bins < 1 || r.bins > 65536)
            fail(ErrorCode::InvalidArgument, source, "not an imghist histogram (bins " + std::to_string(r.bins) + " is not 1-65536)");
        if (!std::isfinite(r.low) || !std::isfinite(r.high) || !(r.low < r.high))
            fail(ErrorCode::InvalidArgument, source, "not an imghist histogram (its range is not finite LO < HI)");
        for (auto& c : j.at("channels")) {
            HistResult::Channel ch;
            ch.name = c.at("name").get<std::string>();
            ch.counts = c.at("counts").get<std::vector<std::uint64_t>>();
            ch.out_of_range = c.value("out_of_range", std::uint64_t(0));
            if (static_cast<int>(ch.counts.size()) != r.bins)
                fail(ErrorCode::InvalidArgument, source, "channel '" + ch.name + "' has " + std::to_string(ch.counts.size()) +
                                                             " counts but bins is " + std::to_string(r.bins));
            r.channels.push_back(std::move(ch));
        }
        return r;
    } catch (const nlohmann::ordered_json::exception& e) {
        fail(ErrorCode::InvalidArgument, source, "not an imghist histogram (" + json_reason(e) + ")");
    }
}
}  // namespace

std::vector<HistResult> hists_from_json(const nlohmann::ordered_json& j, const std::string& source) {
    if (j.is_object() && j.contains("total")) return {one_from_json(j.at("total"), source)};
    if (j.is_object() && j.contains("totals")) {
        const nlohmann::ordered_json& t = j.at("totals");
        if (!t.is_array() || t.empty()) fail(ErrorCode::InvalidArgument, source, "\"totals\" is not a list of histograms");
        std::vector<HistResult> all;
        for (const auto& one : t) all.push_back(one_from_json(one, source));
        return all;
    }
    return {one_from_json(j, source)};
}

namespace {
std::string num(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return buf;
}
}  // namespace

std::string text_name(const std::string& name) {
    std::string out;
    out.reserve(name.size());
    for (char ch : name) {
        const unsigned char c = static_cast<unsigned char>(ch);
        switch (c) {
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\\': out += "\\\\"; break;
            default:
                if (c < 0x20 || c == 0x7f) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\x%02x", c);
                    out += buf;
                } else {
                    out += ch;
                }
        }
    }
    return out;
}

std::string format_text(const HistResult& r) {
    std::string s = "# ";
    if (!r.file.empty())
        s += text_name(r.file) + " " + std::to_string(r.width) + "x" + std::to_string(r.height) + " " + r.dtype;
    else
        s += "total of " + std::to_string(r.images) + " image(s), " + std::to_string(r.pixels) + " pixels";
    s += ", " + std::to_string(r.bins) + " bins over [" + num(r.low) + ", " + num(r.high) + "), out of range " +
         std::to_string(r.out_of_range()) + "\n# bin low";
    for (auto& c : r.channels) s += " " + c.name;
    s += "\n";
    const double w = (r.high - r.low) / r.bins;
    char buf[64];
    for (int b = 0; b < r.bins; ++b) {
        s += std::to_string(b) + " " + num(r.low + w * b);
        for (auto& c : r.channels) {
            std::snprintf(buf, sizeof buf, " %" PRIu64, c.counts[static_cast<std::size_t>(b)]);
            s += buf;
        }
        s += "\n";
    }
    return s;
}

std::string csv_field(const std::string& s) {
    std::string q = "\"";
    for (char c : s) {
        if (c == '"') q += '"';
        q += c;
    }
    return q + "\"";
}

std::string csv_rows(const HistResult& r, const std::vector<std::string>& columns, const std::string* label) {
    // Each column's channel in r, or none.
    std::vector<const std::vector<std::uint64_t>*> col(columns.size(), nullptr);
    for (std::size_t k = 0; k < columns.size(); ++k)
        for (auto& c : r.channels)
            if (c.name == columns[k]) col[k] = &c.counts;
    std::string s;
    const double w = (r.high - r.low) / r.bins;
    char buf[64];
    for (int b = 0; b < r.bins; ++b) {
        if (label) s += csv_field(*label) + ",";
        s += std::to_string(b) + "," + num(r.low + w * b) + "," + num(b + 1 == r.bins ? r.high : r.low + w * (b + 1));
        for (const auto* counts : col) {
            if (counts) {
                std::snprintf(buf, sizeof buf, ",%" PRIu64, (*counts)[static_cast<std::size_t>(b)]);
                s += buf;
            } else {
                s += ",";
            }
        }
        s += "\n";
    }
    return s;
}

std::string format_csv(const HistResult& r) {
    std::vector<std::string> names;
    std::string s = "bin,low,high";
    for (auto& c : r.channels) {
        s += "," + c.name;
        names.push_back(c.name);
    }
    return s + "\n" + csv_rows(r, names, nullptr);
}

}  // namespace cli
