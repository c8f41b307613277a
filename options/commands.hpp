// imghist's image commands on the command line: each cmd_*.cpp adds one command (its options) to a parser and
// returns the function that runs it once parsed (the jobs themselves are jobs/commands/). The program's alone
// (main.cpp): the Python module's imghist.dask.process_files fills the same jobs from its keyword options
// (python/src/files.cpp). The only place, with the program, that uses the parser (CLI11).
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "commands/image_job.hpp"
#include "commands/image_tasks.hpp"

namespace cli {

/// The options of Common: devices, threads, limits, verbosity, tuning.
void add_common(CLI::App& sub, Common& c);
/// The options of ImageJob (IN... OUT, output format and metadata), Common's included.
void add_image_options(CLI::App& sub, ImageJob& job);

struct Command {
    CLI::App* app = nullptr;
    std::function<int()> run;
};

Command add_hist(CLI::App& app);
Command add_equalize(CLI::App& app);
Command add_threshold(CLI::App& app);
Command add_clahe(CLI::App& app);
Command add_stretch(CLI::App& app);
Command add_match(CLI::App& app);

/// Options as the program writes them in messages: "--low", "--auto-level", "--method value".
const OptionSpelling& program_spelling();

/// The Command of an image-to-image subcommand: `task` builds the ImageTask once the line is parsed; run()
/// runs it with run_image_job.
Command image_command(CLI::App* sub, std::function<ImageTask()> task);

}  // namespace cli
