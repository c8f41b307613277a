// The program's environment variables (environment.hpp): the one place that calls getenv.
#include "environment.hpp"

#include <cstdlib>

namespace cli {
namespace {

std::string variable(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

}  // namespace

std::string pipeline_spec_from_environment() { return variable("IMGHIST_PIPELINE"); }
std::string nvjpeg_library_from_environment() { return variable("IMGHIST_NVJPEG"); }
std::string cuda_home_from_environment() { return variable("CUDA_HOME"); }

}  // namespace cli
