// imghist match IN... REF OUT — histogram matching of every input to one reference (an image, or a histogram
// JSON written by `imghist hist --format json`).
#include "options/commands.hpp"
#include "commands/image_tasks.hpp"

namespace cli {

Command add_match(CLI::App& app) {
    auto* sub = app.add_subcommand(
        "match", "Histogram matching to a reference image or histogram (as scikit-image's match_histograms, "
                 "rounded to the nearest level); IN... REF OUT");
    auto job = std::make_shared<ImageJob>();
    add_image_options(*sub, *job);
    sub->footer(
        "REF is the argument before OUT (the last one with --in-place): an image, or a histogram JSON of\n"
        "'imghist hist --format json' with a bin per level (256 for 8-bit, --bins 65536 --range 0:65536 for 16-bit).\n"
        "Colour images are matched channel by channel (R to R, ...); alpha is kept.\n"
        "Examples:\n"
        "  imghist match slide.png reference.png slide-matched.png\n"
        "  imghist match --recursive batch/ reference.png batch-matched/\n"
        "  imghist hist --format json ref/ > ref.json && imghist match new/ ref.json new-matched/");
    return image_command(sub, [job] { return match_task(*job); });
}

}  // namespace cli
