// An image command's file job from its command line, for the Python module (imghist.dask.process_files). This
// header needs no argument parser: parse_file_job reads the line with the commands' own parsers
// (commands.hpp), so its rules and messages are the program's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "commands/file_job.hpp"

namespace cli {

/// An image-to-image command (equalize, stretch, match, threshold, clahe) parsed from its arguments as
/// `imghist ARGS...` parses them, e.g. {"equalize", "in/", "out/", "--quality", "90"}. Throws UsageError with the
/// parser's message (an unknown command or option, a bad value).
std::unique_ptr<ImageFileJob> parse_file_job(const std::vector<std::string>& args);

}  // namespace cli
