#include "pipeline/device.hpp"

#include "io/errors.hpp"
#include "pipeline/trace.hpp"

namespace cli {

std::vector<Device> resolve_devices(const std::string& spec) {
    if (spec == "cpu") return {Device{imghist::Backend::Cpu, -1}};
    if (spec == "auto") {
        // Images decoded on the host: each operation is one or two passes over them, and on the GPU host we
        // measured (H200, 16 cores) every CLI workload ran faster on the CPU backend than through PCIe copies
        // plus CUDA start-up (~140 ms per process). So auto means the CPU for them; JPEG folders may still go
        // to the GPUs, which the GPU JPEG pipeline decides during the run (gpu_jobs.hpp).
        return {Device{imghist::Backend::Cpu, -1}};
    }
    const int count = imghist::cuda_device_count();
    if (spec == "all") {
        if (count == 0) return {Device{imghist::Backend::Cpu, -1}};
        std::vector<Device> out;
        for (int i = 0; i < count; ++i) out.push_back(Device{imghist::Backend::Cuda, i});
        return out;
    }
    if (spec.rfind("cuda", 0) == 0) {
        int ordinal = 0;
        if (spec.size() > 4) {
            if (spec[4] != ':' || spec.size() == 5) fail_usage("--device: expected cuda or cuda:N, got '" + spec + "'");
            try {
                std::size_t used = 0;
                ordinal = std::stoi(spec.substr(5), &used);
                if (used != spec.size() - 5 || ordinal < 0) throw std::invalid_argument(spec);
            } catch (const std::exception&) {
                fail_usage("--device: expected cuda or cuda:N, got '" + spec + "'");
            }
        }
        if (count == 0)
            throw Error(ErrorCode::NoDevice, "--device " + spec +
                                                 (imghist::built_with_cuda()
                                                      ? ": no CUDA device is available here"
                                                      : ": this imghist was built without CUDA (IMGHIST_WITH_CUDA=OFF)") +
                                                 " (use --device cpu or auto)");
        if (ordinal >= count)
            throw Error(ErrorCode::NoDevice, "--device " + spec + ": there are only " + std::to_string(count) + " CUDA device(s)");
        return {Device{imghist::Backend::Cuda, ordinal}};
    }
    fail_usage("--device: expected auto, cpu, cuda, cuda:N or all, got '" + spec + "'");
}

std::string describe(const Device& d) {
    if (!d.cuda()) return "cpu";
    return "cuda:" + std::to_string(d.ordinal) + " (" + imghist::cuda_device_name(d.ordinal) + ")";
}

void trace_devices(const std::string& spec, const std::vector<Device>& devices) {
    if (!tracing()) return;
    std::string line = "--device " + spec + ":";
    for (const Device& d : devices) line += " " + describe(d);
    if (spec == "auto") line += " (JPEG files: GPUs when the run finds them worth starting)";
    trace_line(line);
}

}  // namespace cli
