// imghist stretch IN... OUT [--low 2%] [--high 1%] [--mode luma|per-channel] [--normalize | --auto-level]
#include <cerrno>
#include <cstdlib>

#include "options/commands.hpp"
#include "io/errors.hpp"
#include "commands/image_tasks.hpp"

namespace cli {

namespace {
/// "2", "2%" or "0.5%" -> 2, 2, 0.5; a percent in [0, 100].
double parse_percent(const std::string& text, const char* option) {
    std::string t = text;
    if (!t.empty() && t.back() == '%') t.pop_back();
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(t.c_str(), &end);
    if (t.empty() || errno != 0 || *end != '\0' || !(v >= 0.0 && v <= 100.0))
        fail_usage(std::string(option) + ": expected a percent in [0, 100] such as 2 or 2%, got '" + text + "'");
    return v;
}
}  // namespace

Command add_stretch(CLI::App& app) {
    auto* sub = app.add_subcommand(
        "stretch", "Contrast stretch by percentiles (as scikit-image's rescale_intensity between np.percentile's "
                   "LOW and 100-HIGH; ImageMagick's -contrast-stretch)");
    auto job = std::make_shared<ImageJob>();
    auto low = std::make_shared<std::string>("2%");
    auto high = std::make_shared<std::string>("1%");
    auto mode = std::make_shared<std::string>("luma");
    auto normalize = std::make_shared<bool>(false);
    auto auto_level = std::make_shared<bool>(false);
    add_image_options(*sub, *job);
    auto* low_opt = sub->add_option("--low", *low, "Percent of the samples that become black")->default_str("2%")->type_name("PCT");
    auto* high_opt = sub->add_option("--high", *high, "Percent of the samples that become white")->default_str("1%")->type_name("PCT");
    sub->add_option("--mode", *mode,
                    "Colour images: one stretch from the luma's percentiles for R, G and B alike (keeps hues), or "
                    "each channel from its own")
        ->check(CLI::IsMember({"luma", "per-channel"}))
        ->default_str("luma");
    sub->add_flag("--normalize", *normalize, "ImageMagick's -normalize: --low 2% --high 1% (the default)");
    sub->add_flag("--auto-level", *auto_level, "ImageMagick's -auto-level: --low 0 --high 0 (min to black, max to white)");
    sub->footer(
        "Examples:\n"
        "  imghist stretch scan.png scan-stretched.png --low 2% --high 1%\n"
        "  imghist stretch --auto-level shots/ shots-levelled/\n"
        "  imghist stretch photo.jpg out.jpg --mode per-channel --low 0.5% --high 0.5%");
    return image_command(sub, [job, low, high, mode, normalize, auto_level, low_opt, high_opt] {
        StretchChoice c;
        c.mode = *mode == "luma" ? StretchMode::Luma : StretchMode::PerChannel;
        c.normalize = *normalize;
        c.auto_level = *auto_level;
        if (low_opt->count() != 0) c.low = parse_percent(*low, "--low");
        if (high_opt->count() != 0) c.high = parse_percent(*high, "--high");
        return stretch_task(*job, stretch_params(c, program_spelling()));
    });
}

}  // namespace cli
