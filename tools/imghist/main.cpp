// imghist — command-line front end: histograms, equalization, contrast stretch, histogram matching,
// thresholds (multi-level too) and CLAHE for images and folders, on the CPU or CUDA GPUs.
#include <cstdio>
#include <exception>

#include "program_commands.hpp"
#include "io/errors.hpp"
#include "io/fileio.hpp"
#include "gpu/gpu_jpeg.hpp"
#include "imghist/imghist.hpp"
#include "suggest.hpp"

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
    // A mistyped command or option gets the nearest name (the parser alone would say "A subcommand is
    // required" or "The following argument was not expected").
    if (const std::string unknown = unknown_command(app, argc, argv); !unknown.empty()) {
        std::fprintf(stderr, "imghist: %s\nRun 'imghist --help' for the commands.\n", unknown.c_str());
        return kExitUsage;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ExtrasError& e) {
        const std::string unknown = unknown_options(app, argc, argv);
        if (unknown.empty()) {
            app.exit(e);
        } else {
            std::string lines = "imghist: " + unknown;
            for (std::size_t at = lines.find('\n'); at != std::string::npos; at = lines.find('\n', at + 1))
                lines.insert(at + 1, "imghist: ");
            std::fprintf(stderr, "%s\n", lines.c_str());
        }
        return kExitUsage;
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return kExitUsage;
    }
    try {
        for (auto& c : commands)
            if (c.app->parsed()) {
                const int code = c.run();
                finish_stdout();  // a result that did not reach standard output is a failure
                return gpu_jpeg_exit(code);
            }
    } catch (const UsageError& e) {
        // A command that failed after starting a GPU's threads ends as one that succeeded: through
        // gpu_jpeg_exit, not under a teardown racing those threads.
        std::fprintf(stderr, "imghist: %s\n", e.what());
        return gpu_jpeg_exit(kExitUsage);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "imghist: %s\n", user_message(e).c_str());
        return gpu_jpeg_exit(kExitFailure);
    }
    return gpu_jpeg_exit(kExitUsage);
}
