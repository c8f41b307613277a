// Internal: IMGHIST_HD marks small functions compiled for both the host and the device (the shared
// arithmetic of the binning rule and of the filters), and plain inline functions in host-only builds.
#pragma once

#if defined(__CUDACC__)
#define IMGHIST_HD __host__ __device__ __forceinline__
#else
#define IMGHIST_HD inline
#endif
