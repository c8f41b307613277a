// imghist hist IN... [--bins N] [--range LO:HI] [--mode gray|channels] [--format text|csv|json] [-o FILE]
//              [--plot FILE.png] [--log]
// imghist hist --raw FILE --dtype u8|u16|i32|f32 --bins N --range LO:HI
// imghist hist --merge a.json b.json ...
#include <cmath>
#include <cstdio>
#include <fstream>

#include "io/codecs/codec.hpp"
#include "commands/commands.hpp"
#include "io/errors.hpp"
#include "io/fileio.hpp"
#include "gpu/gpu_jobs.hpp"
#include "gpu/gpu_jpeg.hpp"
#include "commands/ops.hpp"
#include "commands/plot.hpp"
#include "io/raw.hpp"

namespace cli {
namespace {

struct HistArgs {
    Common common;
    std::vector<std::string> paths;
    int bins = 256;
    std::string range, mode = "channels", format = "text", output, plot, raw, dtype, plot_size = "960x540", shard = "1/1";
    bool log = false, merge = false, recursive = false;
};

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

/// Writes text to -o FILE (atomically) or stdout.
void emit(const std::string& text, const std::string& output) {
    if (output.empty() || output == "-") {
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
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

std::string format_batch(const std::vector<Item>& items, const HistResult& total, const std::string& format) {
    if (format == "json") {
        std::vector<const HistResult*> files;
        std::vector<std::pair<std::string, std::string>> failed;
        for (auto& it : items) {
            if (it.error.empty())
                files.push_back(&it.hist);
            else
                failed.emplace_back(it.input.path, it.error);
        }
        return folder_json(files, failed, total) + "\n";
    }
    if (format == "csv") {
        // One table: a file column, then the union of the channel names.
        std::vector<std::string> names;
        for (auto& c : total.channels) names.push_back(c.name);
        std::string s = "file,bin,low,high";
        for (auto& n : names) s += "," + n;
        s += "\n";
        for (auto& it : items)
            if (it.error.empty()) s += csv_rows(it.hist, names, &it.input.path);
        const std::string total_label = "TOTAL";
        s += csv_rows(total, names, &total_label);
        return s;
    }
    std::string s;
    for (auto& it : items)
        if (it.error.empty()) s += format_text(it.hist) + "\n";
    return s + format_text(total);
}

int run_hist(HistArgs& a) {
    HistParams p;  // --format and --mode are checked by the parser (CLI::IsMember)
    p.bins = a.bins;
    if (!a.range.empty()) {
        parse_range(a.range, p.low, p.high);
        p.range_set = true;
    }
    p.mode = a.mode == "gray" ? HistMode::Gray : HistMode::Channels;
    int w = 960, h = 540;
    if (std::sscanf(a.plot_size.c_str(), "%dx%d", &w, &h) != 2 || w < 320 || h < 200)
        fail_usage("--plot-size: expected WxH of at least 320x200");
    // The plot's format, from its extension: SVG, or a raster image format; refused before any work.
    const bool plot_svg = extension_of(a.plot) == "svg";
    const Format plot_format = format_from_extension(extension_of(a.plot));
    if (!a.plot.empty() && !plot_svg && plot_format == Format::Unknown)
        fail_usage("--plot " + a.plot + ": the extension must be .svg or an image format (.png, .jpg, .bmp, .tga, .ppm)");
    if (!a.plot.empty() && !plot_svg) {
        check_encodable(plot_format, 8, 3, display_name(a.plot, true));
        check_output_size(plot_format, static_cast<std::uint64_t>(w), static_cast<std::uint64_t>(h), 3, display_name(a.plot, true));
    }
    if (!a.plot.empty() && static_cast<std::uint64_t>(w) * static_cast<std::uint64_t>(h) > a.common.max_pixels)
        fail_usage("--plot-size " + a.plot_size + " is above the pixel limit (--max-pixels)");
    auto plot = [&](const HistResult& r) {
        if (a.plot.empty()) return;
        PlotOptions po;
        po.width = w;
        po.height = h;
        po.log = a.log;
        if (plot_svg) {
            const std::string svg = render_plot_svg(r, po);
            write_file_atomic(a.plot, svg.data(), svg.size());
            return;
        }
        write_image(a.plot, render_plot(r, po), plot_format, EncodeOptions{});
    };

    if (a.merge) {
        if (a.paths.empty()) fail_usage("--merge needs JSON files to sum");
        std::optional<HistResult> total;
        for (auto& path : a.paths) {
            Bytes data = read_file(path);
            nlohmann::ordered_json j;
            try {
                j = nlohmann::ordered_json::parse(data.begin(), data.end());
            } catch (const nlohmann::ordered_json::exception& e) {
                fail(ErrorCode::InvalidArgument, display_name(path), std::string("not valid JSON (") + e.what() + ")");
            }
            HistResult r = hist_from_json(j, display_name(path));
            if (!total) total = r.empty_total();
            total->add(r, display_name(path));
        }
        emit(format_one(*total, a.format), a.output);
        plot(*total);
        return kExitOk;
    }

    const std::vector<Device> devices = a.common.devices();
    if (!a.raw.empty()) {
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
        HistResult r = raw_histogram(a.raw, t, spec, devices.front().options());
        emit(format_one(r, a.format), a.output);
        plot(r);
        return kExitOk;
    }
    if (a.paths.empty()) fail_usage("hist needs an image, a folder, --raw FILE or --merge");

    const bool batch = is_batch(a.paths);
    const Shard shard = parse_shard(a.shard);
    std::vector<Item> items;
    std::vector<std::string> unsupported;
    std::size_t outside_shard = 0;
    for (auto& in : collect_inputs(a.paths, a.recursive, &unsupported)) {
        if (!in_shard(in.rel, shard)) {
            ++outside_shard;
            continue;
        }
        Item it;
        it.index = items.size();
        it.input = in;
        items.push_back(std::move(it));
    }
    const DecodeOptions dopt = a.common.decode();
    // JPEG files through the GPU when this run takes it (the gray mode's conversion is a host operation).
    const std::vector<Device> gpus = gpu_jpeg_devices(a.common, devices, count_jpeg_names(items), GpuWorkload::Hist,
                                                      p.mode == HistMode::Channels, "--mode gray converts on the host");
    const bool gpu = !gpus.empty();
    auto file_name = [&](const Item& it) { return batch ? it.input.rel : display_name(it.input.path); };
    const CpuLoad cpu_load = [&](Item& it, Bytes&& data) {
        it.image = decode_image(data, display_name(it.input.path), dopt);
    };
    Stages st;
    st.load = [&](Item& it) {
        Bytes data = read_file(it.input.path);
        if (gpu && take_for_gpu(it, data, false)) return;
        cpu_load(it, std::move(data));
    };
    st.process = [&](Item& it, const Device& d) {
        it.hist = image_histogram(it.image, p, d);
        it.hist.file = file_name(it);
    };
    if (gpu) {
        st.process_batch = [&](std::vector<Item*>& b, const Device& d) { gpu_hist_batch(b, d, p, file_name, dopt); };
        gpu_jpeg_stages(st, nv::kOutputYUV, false);
        st.decode_kept = [&](Item& it) { cpu_load(it, std::move(it.jpeg)); };
    }
    const RunOptions ro = run_options(a.common, batch, gpu ? gpus : devices);
    Summary s = run_pipeline(items, st, ro);
    s.unsupported = unsupported;
    if (!batch) {
        if (items.empty() || !items[0].error.empty()) return kExitFailure;
        emit(format_one(items[0].hist, a.format), a.output);
        plot(items[0].hist);
        return kExitOk;
    }
    std::optional<HistResult> total;
    for (auto& it : items)
        if (it.error.empty()) {
            if (!total) total = it.hist.empty_total();
            total->add(it.hist, it.input.path);
        }
    if (!total) {
        HistResult empty;
        empty.bins = p.bins;
        empty.low = p.range_set ? p.low : 0;
        empty.high = p.range_set ? p.high : 256;
        total = empty;
    }
    emit(format_batch(items, *total, a.format), a.output);
    plot(*total);
    if (!a.common.quiet) std::fprintf(stderr, "imghist: %s\n", summary_line(s).c_str());
    const std::string nothing = nothing_processed(s, outside_shard);
    if (!nothing.empty()) {
        std::fprintf(stderr, "imghist: %s\n", nothing.c_str());
        return kExitFailure;
    }
    return s.failed ? kExitFailure : kExitOk;
}

}  // namespace

Command add_hist(CLI::App& app) {
    auto* sub = app.add_subcommand("hist", "Histograms of images, folders or raw sample files");
    auto a = std::make_shared<HistArgs>();
    sub->add_option("paths", a->paths, "Images, folders or patterns ('-' = stdin); JSON files with --merge")->type_name("PATH");
    sub->add_option("--bins", a->bins, "Number of bins")->default_str("256")->check(CLI::Range(1, 65536));
    sub->add_option("--range", a->range, "Value range [LO, HI) (default: the sample type's range)")->type_name("LO:HI");
    sub->add_option("--mode", a->mode, "gray: one histogram of the gray image; channels: one per channel")
        ->check(CLI::IsMember({"gray", "channels"}))
        ->default_str("channels");
    sub->add_option("--format", a->format, "Output format")->check(CLI::IsMember({"text", "csv", "json"}))->default_str("text");
    sub->add_option("-o,--output", a->output, "Write the result to FILE instead of stdout")->type_name("FILE");
    sub->add_option("--plot", a->plot, "Draw the histogram: SVG for .svg, else a picture in the extension's format (.png, ...)")
        ->type_name("FILE.svg|FILE.png");
    sub->add_option("--plot-size", a->plot_size, "Picture size")->default_str("960x540")->type_name("WxH");
    sub->add_flag("--log", a->log, "Logarithmic count axis in the plot");
    sub->add_option("--raw", a->raw, "A raw sample file (no header) instead of images")->type_name("FILE");
    sub->add_option("--dtype", a->dtype, "Sample type of --raw: u8, u16, i32, f32")
        ->check(CLI::IsMember({"u8", "u16", "i32", "f32"}));
    sub->add_flag("--merge", a->merge, "Sum histogram JSON files (single results or folder results)");
    sub->add_flag("-r,--recursive", a->recursive, "Descend into sub-folders");
    sub->add_option("--shard", a->shard, "Process only part K of N of the inputs (stable per file name)")->type_name("K/N");
    add_common(*sub, a->common);
    sub->footer(
        "Examples:\n"
        "  imghist hist photo.png --format json\n"
        "  imghist hist photo.jpg --mode gray --plot hist.png --log\n"
        "  imghist hist --raw data.bin --dtype i32 --bins 1024 --range 0:1024\n"
        "  imghist hist shots/ --recursive --format json -o shots.json\n"
        "  imghist hist --merge part1.json part2.json --format json");
    return Command{sub, [a] { return run_hist(*a); }};
}

}  // namespace cli
