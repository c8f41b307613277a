// imghist hist IN... [--bins N] [--range LO:HI] [--mode gray|channels] [--format text|csv|json] [-o FILE]
//              [--plot FILE.png] [--log]
// imghist hist --raw FILE --dtype u8|u16|i32|f32 --bins N --range LO:HI
// imghist hist --merge a.json b.json ...
#include "options/commands.hpp"
#include "commands/hist_job.hpp"

namespace cli {

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
