// The --device option (auto | cpu | cuda[:N] | all) and the folder run's one measured constant.
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
/// image commands' host-resident images, see docs/DESIGN.md); cuda[:N] = one GPU (an error without
/// one); all = every CUDA device (the CPU when there is none). JPEG files may still go to the GPUs through
/// the GPU JPEG pipeline, which decides for itself (gpu_jobs.hpp: gpu_batch_plan; auto included).
std::vector<Device> resolve_devices(const std::string& spec);
/// What a GPU's start-up costs before it takes a file (the context, nvJPEG's hardware decoder, the encoders):
/// 0.74-1.03 s on H100 hosts (docs/DESIGN.md). --device auto starts a GPU only when the CPU workers would
/// need longer than this for the files left: a shorter run would pay for the start-up and gain nothing.
constexpr double kGpuStartupSeconds = 1.0;

/// "cpu" or "cuda:0 (NVIDIA H100 80GB HBM3)".
std::string describe(const Device& d);
/// With --trace: the devices --device `spec` resolved to (for cuda and all, the driver is loaded by then: the
/// line's time, against the line before it, says what that cost).
void trace_devices(const std::string& spec, const std::vector<Device>& devices);

}  // namespace cli
