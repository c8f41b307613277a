// imghist hist as parsed (options/cmd_hist.cpp declares its options): images, folders, raw
// sample files or histogram JSON files to merge, and what runs them.
#pragma once

#include <string>
#include <vector>

#include "commands/image_job.hpp"

namespace cli {

struct HistArgs {
    Common common;
    std::vector<std::string> paths;
    int bins = 256;
    std::string range, mode = "channels", format = "text", output, plot, raw, dtype, plot_size = "960x540", shard = "1/1";
    bool log = false, merge = false, recursive = false;
};

/// Runs hist as parsed; returns the process's exit code.
int run_hist(const HistArgs& a);

}  // namespace cli
