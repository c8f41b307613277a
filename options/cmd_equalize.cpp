// imghist equalize IN... OUT [--mode luma|per-channel]
#include "options/commands.hpp"
#include "io/errors.hpp"
#include "commands/image_tasks.hpp"

namespace cli {

Command add_equalize(CLI::App& app) {
    auto* sub = app.add_subcommand("equalize", "Histogram equalization (gray: bit-exact with OpenCV's equalizeHist; colour: luma by default)");
    auto job = std::make_shared<ImageJob>();
    auto mode = std::make_shared<std::string>("luma");
    add_image_options(*sub, *job);
    sub->add_option("--mode", *mode, "Colour images: equalize the luma (Y of Y'CbCr) or each channel on its own")
        ->check(CLI::IsMember({"luma", "per-channel"}))
        ->default_str("luma");
    sub->footer(
        "Examples:\n"
        "  imghist equalize photo.png photo-eq.png\n"
        "  imghist equalize --recursive shots/ shots-eq/ --to jpg --quality 92\n"
        "  imghist equalize --shard 2/8 --skip-existing big-folder/ out/");
    return image_command(sub, [job, mode] {
        return equalize_task(*job, *mode == "luma" ? EqualizeMode::Luma : EqualizeMode::PerChannel);
    });
}

}  // namespace cli
