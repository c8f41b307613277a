// imghist clahe IN... OUT [--clip 2.0] [--tiles 8x8]
#include "options/commands.hpp"
#include "io/errors.hpp"
#include "commands/image_tasks.hpp"

namespace cli {

Command add_clahe(CLI::App& app) {
    auto* sub = app.add_subcommand("clahe", "Contrast-limited adaptive histogram equalization (as OpenCV's CLAHE)");
    auto job = std::make_shared<ImageJob>();
    auto params = std::make_shared<ClaheParams>();
    auto tiles = std::make_shared<std::string>("8x8");
    add_image_options(*sub, *job);
    sub->add_option("--clip", params->clip, "Clip limit (OpenCV's clipLimit)")->default_str("2.0")->check(CLI::NonNegativeNumber);
    sub->add_option("--tiles", *tiles, "Tile grid, COLSxROWS")->default_str("8x8");
    sub->footer("Example:\n  imghist clahe xray.png xray-clahe.png --clip 3 --tiles 16x16");
    return image_command(sub, [job, params, tiles] {
        ClaheParams p = *params;
        if (std::sscanf(tiles->c_str(), "%dx%d", &p.tiles_x, &p.tiles_y) != 2 || p.tiles_x < 1 || p.tiles_y < 1)
            fail_usage("--tiles: expected COLSxROWS such as 8x8, got '" + *tiles + "'");
        return clahe_task(*job, p);
    });
}

}  // namespace cli
