// imghist — command-line front end: histograms, equalization, contrast stretch, histogram matching,
// thresholds (multi-level too) and CLAHE for images and folders, on the CPU or CUDA GPUs.
#include <cstdio>
#include <exception>

#include "commands/commands.hpp"
#include "io/errors.hpp"
#include "io/fileio.hpp"
#include "gpu/gpu_jpeg.hpp"
#include "imghist/imghist.hpp"

int main(int argc, char** argv) {
    using namespace cli;
    install_signal_cleanup();
    CLI::App app{"imghist " + std::string(imghist::version()) +
                 " - image histograms and histogram filters on the GPU or CPU",
                 "imghist"};
    app.set_version_flag("--version", std::string("imghist ") + imghist::version() +
                                          (imghist::built_with_cuda() ? "" : " (CPU only: built without CUDA)"));
    app.require_subcommand(1);
    app.footer("Run 'imghist COMMAND --help' for a command's options. Inputs may be files, folders or patterns;\n"
               "'-' reads standard input or writes standard output.");
    std::vector<Command> commands = {add_equalize(app), add_stretch(app), add_match(app), add_threshold(app),
                                     add_clahe(app),    add_hist(app),    add_gen(app),   add_bench(app)};
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return kExitUsage;
    }
    try {
        for (auto& c : commands)
            if (c.app->parsed()) return gpu_jpeg_exit(c.run());
    } catch (const UsageError& e) {
        std::fprintf(stderr, "imghist: %s\n", e.what());
        return kExitUsage;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "imghist: %s\n", e.what());
        return kExitFailure;
    }
    return kExitUsage;
}
