// imghist match IN... REF OUT — histogram matching of every input to one reference (an image, or a histogram
// JSON written by `imghist hist --format json`).
#include <nlohmann/json.hpp>

#include "io/codecs/codec.hpp"
#include "options/commands.hpp"
#include "io/errors.hpp"
#include "io/fileio.hpp"
#include "commands/ops.hpp"

namespace cli {

namespace {
MatchTarget load_target(const std::string& path, const Common& common) {
    const std::string name = display_name(path);
    if (extension_of(path) == "json") {
        const Bytes data = read_file(path, common.limits.max_input);
        return match_target(hist_from_json(parse_histogram_json(data.data(), data.size(), name), name), name);
    }
    const Bytes data = read_image_file(path, common.limits);
    const Image ref = decode_image(data, name, common.decode());
    return match_target(ref, common.devices().front());
}
}  // namespace

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
    return image_command(sub, [job] {
        ImageJob j = *job;
        const std::size_t min_args = j.in_place ? 2 : 3;
        if (j.paths.size() < min_args)
            fail_usage(j.in_place ? "expected IN... REF with --in-place" : "expected IN... REF OUT");
        const std::size_t ref_at = j.paths.size() - (j.in_place ? 1 : 2);
        const std::string ref = j.paths[ref_at];
        j.paths.erase(j.paths.begin() + static_cast<std::ptrdiff_t>(ref_at));
        j.other_inputs.push_back(ref);
        // The reference is read once, before the inputs; its histogram's JSON "total" serves folders.
        auto target = std::make_shared<MatchTarget>(load_target(ref, j.common));
        return ImageTask{j, [target](Item& it, const Device& d) { match(it.image, *target, d); }};
    });
}

}  // namespace cli
