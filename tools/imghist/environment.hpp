// imghist CLI — the environment variables the program reads, read in environment.cpp and nowhere else (the
// library's own are read by the library: include/imghist/policy.hpp lists them).
//
//   IMGHIST_PIPELINE   the folder pipeline's tunable sizes (pipeline/tuning.hpp)
//   IMGHIST_NVJPEG     a nvJPEG library file to open before searching (gpu/nvjpeg_api.hpp)
//   CUDA_HOME          the CUDA toolkit whose lib64/ is searched for nvJPEG (default /usr/local/cuda)
#pragma once

#include <string>

namespace cli {

/// The value of a variable of the list above; "" when unset or empty.
std::string pipeline_spec_from_environment();
std::string nvjpeg_library_from_environment();
std::string cuda_home_from_environment();

}  // namespace cli
