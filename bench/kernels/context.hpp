// imghist-bench — the state of one run: options, device, peers, the photograph and the device buffers that
// every measurement reuses.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "cuda/launch_shape.hpp"  // the launch-shape override (white-box)
#include "imghist/imghist.hpp"

#include "common.hpp"
#include "datagen.hpp"
#include "device_info.hpp"
#include "npp_dyn.hpp"
#include "bench_args.hpp"

namespace bench {

struct Context {
    Options opt;
    std::string command;  // the command line, for the record
    DeviceInfo dev;
    cudaStream_t stream = nullptr;
    imghist::CudaHistogrammer* hg = nullptr;
    NppHistogram npp;
    Photo photo;
    std::string photo_note;
    DevMem input, sink, out_ours, out_cub, out_npp, out_classic, cub_temp, npp_temp;
    std::vector<unsigned char> host;
    bool failures = false;
};

}  // namespace bench
