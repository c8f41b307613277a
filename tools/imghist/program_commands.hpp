// The commands only the program has: gen (test images) and bench (runs imghist-bench).
#pragma once

#include "options/commands.hpp"

namespace cli {

Command add_gen(CLI::App& app);
Command add_bench(CLI::App& app);

}  // namespace cli
