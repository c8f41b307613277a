// imghist._imghist — the parts of the module beside module.cpp, each adding its functions and classes.
#pragma once

#include <pybind11/pybind11.h>

namespace imghist_py {

/// The batch filters (imghist/batch_filters.hpp): batch.cpp.
void add_batch_functions(pybind11::module_& m);
/// Image files (imghist_io: read, write, metadata) and the image commands' per-file work (jobs/): files.cpp.
void add_file_functions(pybind11::module_& m);

}  // namespace imghist_py
