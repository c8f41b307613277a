// imghist hist IN... [--bins N] [--range LO:HI] [--mode gray|channels] [--format text|csv|json] [-o FILE]
//              [--plot FILE.png] [--log]
// imghist hist --raw FILE --dtype u8|u16|i32|f32 --bins N --range LO:HI
// imghist hist --merge a.json b.json ...
// What hist does once parsed (its options: options/cmd_hist.cpp).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string_view>

#include "io/codecs/codec.hpp"
#include "commands/hist_job.hpp"
#include "io/errors.hpp"
#include "io/fileio.hpp"
#include "gpu/gpu_jobs.hpp"
#include "commands/ops.hpp"
#include "pipeline/output_safety.hpp"
#include "pipeline/trace.hpp"
#include "commands/plot.hpp"
#include "io/raw.hpp"

namespace cli {
namespace {

void parse_range(const std::string& s, double& lo, double& hi) {
    auto colon = s.find(':');
    try {
        if (colon == std::string::npos) throw std::invalid_argument(s);
        std::size_t u1 = 0, u2 = 0;
        lo = std::stod(s.substr(0, colon), &u1);
        hi = std::stod(s.substr(colon + 1), &u2);
        if (u1 != colon || u2 != s.size() - colon - 1) throw std::invalid_argument(s);
    } catch (const std::exception&) {
        fail_usage("--range: expected LO:HI such as 0:256, got '" + s + "'");
    }
    if (!(hi > lo)) fail_usage("--range " + s + ": HI must be greater than LO");
    if (!std::isfinite(lo) || !std::isfinite(hi) || !std::isfinite(hi - lo))
        fail_usage("--range " + s + ": LO and HI must be finite and HI - LO representable (it overflows a double)");
}

/// Writes text to -o FILE (atomically) or stdout; a failed write to stdout fails the command.
void emit(const std::string& text, const std::string& output) {
    if (output.empty() || output == "-") {
        errno = 0;
        if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
            stdout_failed(errno);
            finish_stdout();  // throws, naming the error
        }
    } else {
        write_file_atomic(output, text.data(), text.size());
    }
}

std::string format_one(const HistResult& r, const std::string& format) {
    if (format == "json") {
        std::string s;
        append_json(s, r);
        return s + "\n";
    }
    if (format == "csv") return format_csv(r);
    return format_text(r);
}

/// The label of a total's CSV rows: "TOTAL", or "TOTAL u16" when there are several.
std::string total_label(const std::vector<HistResult>& totals, const HistResult& t) {
    return totals.size() == 1 ? std::string("TOTAL") : "TOTAL " + t.dtype;
}

/// CSV of several results in one table: a file column, then the union of their channel names.
std::string csv_table(const std::vector<const Item*>& files, const std::vector<HistResult>& totals) {
    std::vector<std::string> names;
    for (auto& t : totals)
        for (auto& c : t.channels)
            if (std::find(names.begin(), names.end(), c.name) == names.end()) names.push_back(c.name);
    std::string s = "file,bin,low,high";
    for (auto& n : names) s += "," + n;
    s += "\n";
    for (const Item* it : files) s += csv_rows(it->hist, names, &it->input.path);
    for (auto& t : totals) {
        const std::string label = total_label(totals, t);
        s += csv_rows(t, names, &label);
    }
    return s;
}

/// --merge's result: one total as one result; several (one per sample type) in the folder forms.
std::string format_totals(const std::vector<HistResult>& totals, const std::string& format) {
    if (totals.size() == 1) return format_one(totals[0], format);
    if (format == "json") return totals_json(totals) + "\n";
    if (format == "csv") return csv_table({}, totals);
    std::string s;
    for (auto& t : totals) s += (s.empty() ? "" : "\n") + format_text(t);
    return s;
}

std::string format_batch(const std::vector<Item>& items, const std::vector<HistResult>& totals, const std::string& format) {
    std::vector<const Item*> ok;
    for (auto& it : items)
        if (it.error.empty()) ok.push_back(&it);
    // Each file's JSON or text is its report (hist_stages).
    if (format == "json") {
        std::vector<std::string_view> files;
        std::vector<std::pair<std::string, std::string>> failed;
        for (auto& it : items) {
            if (it.error.empty())
                files.emplace_back(it.report);
            else
                failed.emplace_back(it.input.path, it.error);
        }
        return folder_json_from_parts(files, failed, totals) + "\n";
    }
    if (format == "csv") return csv_table(ok, totals);
    std::string s;
    for (const Item* it : ok) s += it->report;
    for (std::size_t k = 0; k < totals.size(); ++k) s += (k ? "\n" : "") + format_text(totals[k]);
    return s;
}

/// --plot FILE: its format and size, checked before any work.
struct PlotTarget {
    std::string path;
    bool svg = false;
    Format format = Format::Unknown;
    PlotOptions options;
};

PlotTarget plot_target(const HistArgs& a) {
    PlotTarget t;
    t.path = a.plot;
    int w = 960, h = 540;
    if (std::sscanf(a.plot_size.c_str(), "%dx%d", &w, &h) != 2 || w < 320 || h < 200)
        fail_usage("--plot-size: expected WxH of at least 320x200");
    t.options.width = w;
    t.options.height = h;
    t.options.log = a.log;
    if (a.plot.empty()) return t;
    // The plot's format, from its extension: SVG, or a raster image format.
    t.svg = extension_of(a.plot) == "svg";
    t.format = format_from_extension(extension_of(a.plot));
    if (!t.svg && t.format == Format::Unknown)
        fail_usage("--plot " + a.plot + ": the extension must be .svg or an image format (.png, .jpg, .bmp, .tga, .ppm)");
    if (!t.svg) {
        check_encodable(t.format, 8, 3, display_name(a.plot, true));
        check_output_size(t.format, static_cast<std::uint64_t>(w), static_cast<std::uint64_t>(h), 3, display_name(a.plot, true));
    }
    if (static_cast<std::uint64_t>(w) * static_cast<std::uint64_t>(h) > a.common.limits.max_pixels)
        fail_usage("--plot-size " + a.plot_size + " is above the pixel limit (--max-pixels)");
    return t;
}

/// Draws the plot of the result; several totals (one per sample type) have no one picture: an error, after
/// the results themselves were written.
void write_plot(const PlotTarget& t, const std::vector<HistResult>& totals) {
    if (t.path.empty()) return;
    if (totals.size() != 1) {
        std::string types;
        for (auto& r : totals) types += (types.empty() ? "" : ", ") + r.dtype;
        fail(ErrorCode::InvalidArgument, t.path,
             "not drawn: the images have different sample types (" + types +
                 "), binned over different ranges, so there is no one total to plot; give --range LO:HI to bin them "
                 "alike, or plot each sample type apart");
    }
    if (t.svg) {
        const std::string svg = render_plot_svg(totals[0], t.options);
        write_file_atomic(t.path, svg.data(), svg.size());
        return;
    }
    write_image(t.path, render_plot(totals[0], t.options), t.format, EncodeOptions{});
}

/// -o and --plot are neither an input nor the same file: checked before anything is written.
void check_hist_outputs(const HistArgs& a, const std::vector<std::string>& input_paths) {
    InputSet inputs;
    for (auto& p : input_paths) inputs.add(p);
    std::vector<PlannedOutput> outputs;
    if (!a.output.empty()) outputs.push_back(PlannedOutput{a.output, "-o"});
    if (!a.plot.empty()) outputs.push_back(PlannedOutput{a.plot, "--plot"});
    refuse_conflicts(output_conflicts(outputs, inputs));
}

int run_merge(const HistArgs& a, const PlotTarget& plot) {
    if (a.paths.empty()) fail_usage("--merge needs JSON files to sum");
    check_hist_outputs(a, a.paths);
    Totals totals;
    for (auto& path : a.paths) {
        const Bytes data = read_file(path, a.common.limits.max_input);
        const nlohmann::ordered_json j = parse_histogram_json(data.data(), data.size(), display_name(path));
        for (const HistResult& r : hists_from_json(j, display_name(path))) totals.add(r, display_name(path));
    }
    emit(format_totals(totals.all(), a.format), a.output);
    write_plot(plot, totals.all());
    return kExitOk;
}

int run_raw(const HistArgs& a, const HistParams& p, const PlotTarget& plot) {
    if (!a.paths.empty()) fail_usage("--raw FILE takes no other inputs");
    if (a.dtype.empty()) fail_usage("--raw needs --dtype u8|u16|i32|f32");
    imghist::SampleType t = parse_dtype(a.dtype);
    imghist::BinSpec spec;
    if (p.range_set) {
        spec = imghist::BinSpec::even(p.bins, p.low, p.high);
    } else if (t == imghist::SampleType::U8 || t == imghist::SampleType::U16) {
        spec = imghist::BinSpec::full(t, p.bins);
    } else {
        fail_usage("--raw with --dtype " + a.dtype + " needs --range LO:HI");
    }
    check_hist_outputs(a, {a.raw});
    HistResult r = raw_histogram(a.raw, t, spec, a.common.devices().front().options(), a.common.limits.max_input);
    emit(format_one(r, a.format), a.output);
    write_plot(plot, {r});
    return kExitOk;
}

/// A folder run's totals, taken from each file as its counts are made (on the threads that make them), so that
/// a file of a JSON or text run keeps only its report: a million files' counts are never held at once.
struct FolderCounts {
    explicit FolderCounts(std::size_t files) : added(files, 0) {}
    std::mutex m;
    IndexedTotals totals;
    std::vector<char> added;  ///< per item index: its counts are in `totals` (and gone from the item)
};

/// The pipeline's stages for histograms of image files (JPEGs through the GPUs when the run takes them).
Stages hist_stages(const HistArgs& a, const HistParams& p, const std::vector<Device>& devices, std::size_t jpegs,
                   bool batch, const std::shared_ptr<FolderCounts>& counts) {
    const DecodeOptions dopt = a.common.decode();
    // After a file's counts, on the thread that made them: its name, its part of the folder's JSON or text, and
    // its counts into the folder's totals (CSV needs every file's channel names first: formatted, and its
    // totals made, at the end).
    const std::string format = a.format;
    auto done = [batch, format, counts](Item& it) {
        it.hist.file = batch ? it.input.rel : display_name(it.input.path);
        if (!batch) return;
        if (format == "json") append_json(it.report, it.hist);
        else if (format == "text") it.report = format_text(it.hist) + "\n";
        else return;
        std::lock_guard<std::mutex> l(counts->m);
        if (!counts->totals.try_add(it.hist, it.index, it.input.path)) return;  // the end adds it, refusing it
        counts->added[it.index] = 1;
        it.hist = HistResult();
    };
    const auto cpu_load = [dopt](Item& it, Bytes&& data) {
        DecodeOptions o = dopt;
        o.memory = &it.memory;
        it.image = decode_image(data, display_name(it.input.path), o);
    };
    Stages st;
    st.load = [cpu_load, dopt](Item& it) { cpu_load(it, read_image_file(it.input.path, dopt.limits)); };
    st.process = [p, done](Item& it, const Device& d) {
        it.hist = image_histogram(it.image, p, d);
        done(it);
    };
    GpuCommand c;
    c.work = GpuWorkload::Hist;
    c.load = [cpu_load, dopt](Item& it) {
        Bytes data = read_image_file(it.input.path, dopt.limits);
        if (!take_for_gpu(it, data, false)) cpu_load(it, std::move(data));
    };
    c.decode_kept = [cpu_load](Item& it) { cpu_load(it, std::move(it.jpeg)); };
    c.decode = dopt;
    c.hist = p;
    c.hist_done = done;
    // The gray mode's conversion is a host operation.
    st.batch = gpu_batch_plan(a.common.device, a.common.verbose, devices, jpegs, p.mode == HistMode::Channels, "--mode gray converts on the host", c);
    return st;
}

/// The folder's totals (one per sample type when they bin differently): those its files added as they were
/// counted, and the others' now; an empty one of the asked binning when no file succeeded.
std::vector<HistResult> folder_totals(const std::vector<Item>& items, FolderCounts& counts, const HistParams& p, bool quiet) {
    for (auto& it : items)
        if (it.error.empty() && !counts.added[it.index]) counts.totals.add(it.hist, it.index, it.input.path);
    const std::vector<HistResult> totals = counts.totals.all();
    if (totals.empty()) {
        HistResult empty;
        empty.bins = p.bins;
        empty.low = p.range_set ? p.low : 0;
        empty.high = p.range_set ? p.high : 256;
        return {empty};
    }
    if (totals.size() > 1 && !quiet)
        std::fprintf(stderr, "imghist: the images have different sample types (%s), binned over different ranges: "
                             "one total for each (--range LO:HI bins them alike)\n",
                     dtype_list(totals).c_str());
    return totals;
}

int run_images(const HistArgs& a, const HistParams& p, const PlotTarget& plot) {
    if (a.paths.empty()) fail_usage("hist needs an image, a folder, --raw FILE or --merge");
    set_tracing(a.common.trace);
    const bool batch = is_batch(a.paths);
    const Shard shard = parse_shard(a.shard);
    std::vector<Item> items;
    std::vector<std::string> unsupported, all_inputs;
    std::size_t outside_shard = 0;
    for (auto& in : collect_inputs(a.paths, a.recursive, &unsupported)) {
        all_inputs.push_back(in.path);
        if (!in_shard(in.rel, shard)) {
            ++outside_shard;
            continue;
        }
        Item it;
        it.index = items.size();
        it.input = in;
        items.push_back(std::move(it));
    }
    check_hist_outputs(a, all_inputs);
    trace_line("planned: " + std::to_string(items.size()) + " files");
    const std::vector<Device> devices = a.common.devices();
    trace_devices(a.common.device, devices);
    const RunOptions ro = run_options(a.common, batch, devices);
    const auto counts = std::make_shared<FolderCounts>(items.size());
    const Stages stages = hist_stages(a, p, devices, count_jpeg_names(items), batch, counts);
    Summary s = run_pipeline(items, stages, ro);
    s.unsupported = unsupported;
    if (!batch) {
        if (items.empty() || !items[0].error.empty()) return kExitFailure;
        emit(format_one(items[0].hist, a.format), a.output);
        write_plot(plot, {items[0].hist});
        return kExitOk;
    }
    const std::vector<HistResult> totals = folder_totals(items, *counts, p, a.common.quiet);
    emit(format_batch(items, totals, a.format), a.output);
    if (!a.common.quiet) std::fprintf(stderr, "imghist: %s\n", summary_line(s).c_str());
    write_plot(plot, totals);
    const std::string nothing = nothing_processed(s, outside_shard);
    if (!nothing.empty()) {
        std::fprintf(stderr, "imghist: %s\n", nothing.c_str());
        return kExitFailure;
    }
    return s.failed ? kExitFailure : kExitOk;
}

}  // namespace

int run_hist(const HistArgs& a) {
    HistParams p;  // --format and --mode were checked by the program's option grammar
    p.bins = a.bins;
    if (!a.range.empty()) {
        parse_range(a.range, p.low, p.high);
        p.range_set = true;
    }
    p.mode = a.mode == "gray" ? HistMode::Gray : HistMode::Channels;
    const PlotTarget plot = plot_target(a);
    if (a.merge) return run_merge(a, plot);
    if (!a.raw.empty()) return run_raw(a, p, plot);
    return run_images(a, p, plot);
}


}  // namespace cli
