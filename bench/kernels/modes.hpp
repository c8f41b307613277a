// imghist-bench — the two modes of a run: the table of every workload, data set and size, and the
// launch-shape sweep of our kernel. Each returns the process's exit status.
#pragma once

#include "context.hpp"

namespace bench {

int run_table(Context& cx);
int run_sweep(Context& cx);

}  // namespace bench
