// imghist CLI — the --device option: auto | cpu | cuda[:N] | all.
#pragma once

#include <string>
#include <vector>

#include "imghist/histogram.hpp"

namespace cli {

struct Device {
    imghist::Backend backend = imghist::Backend::Cpu;
    int ordinal = -1;  ///< CUDA device, -1 for the CPU
    int cpu_threads = 0;  ///< CPU backend threads per call (0 = all; batch runs use 1 per worker)

    imghist::Options options() const {
        imghist::Options o;
        o.backend = backend;
        o.device = ordinal;
        o.cpu_threads = cpu_threads;
        return o;
    }
    bool cuda() const noexcept { return backend == imghist::Backend::Cuda; }
};

/// Resolves a --device value to the devices a run uses: auto = the CPU backend (measured fastest for the
/// CLI's host-resident images, see docs/DESIGN.md); cuda[:N] = one GPU (an error without
/// one); all = every CUDA device (the CPU when there is none). JPEG files may still go to the GPUs through
/// the GPU JPEG pipeline, which decides for itself (gpu_jobs.hpp: gpu_batch_plan; auto included).
std::vector<Device> resolve_devices(const std::string& spec);
/// "cpu" or "cuda:0 (NVIDIA H100 80GB HBM3)".
std::string describe(const Device& d);

}  // namespace cli
