// nvjpeg_setup — what nvJPEG's hardware decoder costs to set up, one call at a time (docs/PERFORMANCE.md,
// "Folders of JPEGs on a GPU host"). Not built by CMake: the machines that build imghist need no nvJPEG headers
// (imghist loads the library at run time). On a GPU host:
//
//   nvcc -O2 -o nvjpeg_setup bench/probes/nvjpeg_setup.cpp -lnvjpeg
//   ./nvjpeg_setup ctx hw s128 s128        # one fresh process per sequence: the first calls pay the most
//
// Steps, timed in the order given: ctx (cudaFree(0): the runtime and the primary context), hw / hwnp / def / hyb
// (nvjpegCreateEx with the hardware backend, hardware without pipelining, default, GPU hybrid), sN (a state of
// the hardware handle and nvjpegDecodeBatchedInitialize for batches of N), pin (cudaMallocHost, 64 MiB), par2h
// (two hardware handles created on two threads at once), par2s (two states of the hardware handle at once).
#include <cuda_runtime.h>
#include <nvjpeg.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int create(nvjpegBackend_t backend, unsigned flags, nvjpegHandle_t* h) {
    return nvjpegCreateEx(backend, nullptr, nullptr, flags, h);
}

// Two calls of `f` on two threads at once; the status of both (0 when both succeed).
template <class F>
int twice_at_once(F f) {
    int second = 0;
    std::thread t([&] { second = f(1); });
    const int first = f(0);
    t.join();
    return first | second;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s step... (ctx hw hwnp def hyb sN pin par2h par2s)\n", argv[0]);
        return 2;
    }
    nvjpegHandle_t hw = nullptr, other = nullptr;
    const double start = now_ms();
    double last = start;
    for (int i = 1; i < argc; ++i) {
        const char* step = argv[i];
        int rc = 0;
        if (!std::strcmp(step, "ctx")) {
            rc = cudaFree(nullptr);
        } else if (!std::strcmp(step, "hw")) {
            rc = create(NVJPEG_BACKEND_HARDWARE, 0, &hw);
        } else if (!std::strcmp(step, "hwnp")) {
            rc = create(NVJPEG_BACKEND_HARDWARE, NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE, &hw);
        } else if (!std::strcmp(step, "def")) {
            rc = create(NVJPEG_BACKEND_DEFAULT, 0, &other);
        } else if (!std::strcmp(step, "hyb")) {
            rc = create(NVJPEG_BACKEND_GPU_HYBRID, 0, &other);
        } else if (!std::strcmp(step, "pin")) {
            void* p = nullptr;
            rc = cudaMallocHost(&p, 64u << 20);
        } else if (!std::strcmp(step, "par2h")) {
            nvjpegHandle_t two[2] = {};
            rc = twice_at_once([&](int k) { return create(NVJPEG_BACKEND_HARDWARE, 0, &two[k]); });
            hw = two[0];
        } else if (!std::strcmp(step, "par2s") && hw) {
            nvjpegJpegState_t two[2] = {};
            rc = twice_at_once([&](int k) { return static_cast<int>(nvjpegJpegStateCreate(hw, &two[k])); });
        } else if (step[0] == 's' && std::atoi(step + 1) > 0 && hw) {
            nvjpegJpegState_t st = nullptr;
            rc = nvjpegJpegStateCreate(hw, &st);
            if (rc == 0) rc = nvjpegDecodeBatchedInitialize(hw, st, std::atoi(step + 1), 1, NVJPEG_OUTPUT_YUV);
        } else {
            std::fprintf(stderr, "unknown step '%s' (or sN / par2s before a hardware handle)\n", step);
            return 2;
        }
        const double t = now_ms();
        std::printf("%-6s status %d %8.1f ms (at %.1f ms)\n", step, rc, t - last, t - start);
        last = t;
    }
    return 0;
}
