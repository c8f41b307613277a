// The one error of a build without CUDA (IMGHIST_WITH_CUDA=OFF) for every CUDA entry point it stubs
// (core/no_cuda.cpp, filters/no_cuda.cpp, filters/batch_no_cuda.cpp), so that they all say the same thing.
#pragma once

namespace imghist::detail {

/// Throws Error(NoDevice): `what` is not available, as this build has no CUDA backend.
[[noreturn]] void no_cuda(const char* what);

}  // namespace imghist::detail
