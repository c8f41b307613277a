// imghist-bench — GPU histogram benchmark: our kernel against CUB, NPP, the read limit and two classic
// kernels, on every workload and data set, in one process. See bench/README.md.
//
// The program by concern: options.* (command line), device_info.* (the device record), context.hpp (the
// run's state), measure.* (one case: every peer on the same buffer, timing, checks, goals; the peers
// themselves in baselines.cu, npp_dyn.cpp, classic_kernels.cu; data in datagen.cpp), report.* (table rows,
// JSON), table.cpp and sweep.cpp (the two modes); this file starts a run.
#include <cuda_runtime.h>

#include <cstdio>
#include <exception>
#include <string>

#include "imghist/imghist.hpp"

#include "context.hpp"
#include "modes.hpp"
#include "report.hpp"

int main(int argc, char** argv) {
    using namespace bench;
    Context cx;
    cx.opt = parse(argc, argv);
    cx.command = "imghist-bench";
    for (int i = 1; i < argc; ++i) cx.command += std::string(" ") + argv[i];
    // NPP is probed first: its self-test runs in a forked child, which must happen before this process
    // initialises CUDA.
    if (cx.opt.npp && !cx.opt.sweep) cx.npp.load_checked(cx.opt.npp_lib, cx.opt.device);

    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        std::fprintf(stderr, "imghist-bench: no CUDA device available (%s); nothing to measure.\n",
                     e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return kExitNoDevice;
    }
    if (cx.opt.device < 0 || cx.opt.device >= count) {
        std::fprintf(stderr, "imghist-bench: device %d does not exist (%d found)\n", cx.opt.device, count);
        return kExitUsage;
    }
    try {
        BENCH_CUDA(cudaSetDevice(cx.opt.device));
        cx.dev = query_device(cx.opt.device);
        // A blocking stream: ordered after any legacy-default-stream work a library call may issue.
        BENCH_CUDA(cudaStreamCreate(&cx.stream));
        cx.sink.reserve(64);
        BENCH_CUDA(cudaMemset(cx.sink.get(), 0, 64));

        std::string why;
        for (const auto& p : photo_candidates(cx.opt.image, argv[0])) {
            if (load_photo(p, cx.photo, why)) break;
        }
        if (!cx.photo.ok()) cx.photo_note = "not found (" + why + "); use --image";


        imghist::CudaHistogrammer hg(cx.opt.device);
        cx.hg = &hg;
        print_device(cx);
        const int rc = cx.opt.sweep ? run_sweep(cx) : run_table(cx);
        cx.hg = nullptr;
        cudaStreamSynchronize(cx.stream);
        cudaStreamDestroy(cx.stream);
        return rc;
    } catch (const imghist::Error& err) {
        std::fprintf(stderr, "imghist-bench: %s (%s)\n", err.what(), imghist::to_string(err.code()));
        return err.code() == imghist::ErrorCode::NoDevice ? kExitNoDevice : 1;
    } catch (const std::exception& err) {
        std::fprintf(stderr, "imghist-bench: %s\n", err.what());
        return 1;
    }
}
