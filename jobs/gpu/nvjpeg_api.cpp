#include "gpu/nvjpeg_api.hpp"

#include <dlfcn.h>

#include <cstdlib>

#include <mutex>
#include <vector>


namespace cli::nv {
namespace {

void* open_first(const char* const* names, std::string& why) {
    std::string first_error;
    for (const char* const* n = names; *n; ++n) {
        if (void* h = dlopen(*n, RTLD_NOW | RTLD_LOCAL)) return h;
        const char* e = dlerror();
        if (first_error.empty() && e) first_error = e;
    }
    why = std::string("cannot load ") + names[0] + (first_error.empty() ? std::string() : " (" + first_error + ")");
    return nullptr;
}

template <class F>
bool bind(void* lib, const char* name, F& fn, std::string& why) {
    fn = reinterpret_cast<F>(dlsym(lib, name));
    if (!fn) why = std::string("the library has no ") + name;
    return fn != nullptr;
}

struct Loaded {
    std::once_flag once;
    bool ok = false;
    std::string why;
};

/// The nvJPEG file named by set_nvjpeg_library, tried first.
struct FirstFile {
    std::mutex m;
    std::string file;
};
FirstFile& first_file() {
    static FirstFile f;
    return f;
}

}  // namespace

const char* status_name(Status s) noexcept {
    switch (s) {
        case kSuccess: return "NVJPEG_STATUS_SUCCESS";
        case kNotInitialized: return "NVJPEG_STATUS_NOT_INITIALIZED";
        case kInvalidParameter: return "NVJPEG_STATUS_INVALID_PARAMETER";
        case kBadJpeg: return "NVJPEG_STATUS_BAD_JPEG";
        case kJpegNotSupported: return "NVJPEG_STATUS_JPEG_NOT_SUPPORTED";
        case kAllocatorFailure: return "NVJPEG_STATUS_ALLOCATOR_FAILURE";
        case kExecutionFailed: return "NVJPEG_STATUS_EXECUTION_FAILED";
        case kArchMismatch: return "NVJPEG_STATUS_ARCH_MISMATCH";
        case kInternalError: return "NVJPEG_STATUS_INTERNAL_ERROR";
        case kImplementationNotSupported: return "NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED";
        case kIncompleteBitstream: return "NVJPEG_STATUS_INCOMPLETE_BITSTREAM";
    }
    return "NVJPEG_STATUS_UNKNOWN";
}

void set_nvjpeg_library(const std::string& file) {
    std::lock_guard<std::mutex> l(first_file().m);
    first_file().file = file;
}

const NvJpegApi* nvjpeg(std::string* why) {
    static Loaded state;
    static NvJpegApi api{};
    std::call_once(state.once, [] {
        // The file set_nvjpeg_library names (--nvjpeg: unusual installations); then the loader's search path;
        // then the toolkit's default folder, which is often not in the loader's path.
        std::vector<std::string> names;
        {
            std::lock_guard<std::mutex> l(first_file().m);
            if (!first_file().file.empty()) names.push_back(first_file().file);
        }
        const char* versions[] = {"13", "12", "11"};
        for (const char* v : versions) names.push_back(std::string("libnvjpeg.so.") + v);
        for (const char* v : versions) names.push_back(std::string("/usr/local/cuda/lib64/libnvjpeg.so.") + v);
        std::vector<const char*> list;
        for (auto& n : names) list.push_back(n.c_str());
        list.push_back(nullptr);
        void* lib = open_first(list.data(), state.why);
        if (!lib) return;
        std::string& w = state.why;
        state.ok = bind(lib, "nvjpegCreateEx", api.CreateEx, w) && bind(lib, "nvjpegDestroy", api.Destroy, w) &&
                   bind(lib, "nvjpegJpegStateCreate", api.JpegStateCreate, w) &&
                   bind(lib, "nvjpegJpegStateDestroy", api.JpegStateDestroy, w) &&
                   bind(lib, "nvjpegDecode", api.Decode, w) &&
                   bind(lib, "nvjpegDecodeBatchedInitialize", api.DecodeBatchedInitialize, w) &&
                   bind(lib, "nvjpegDecodeBatched", api.DecodeBatched, w) &&
                   bind(lib, "nvjpegEncoderStateCreate", api.EncoderStateCreate, w) &&
                   bind(lib, "nvjpegEncoderStateDestroy", api.EncoderStateDestroy, w) &&
                   bind(lib, "nvjpegEncoderParamsCreate", api.EncoderParamsCreate, w) &&
                   bind(lib, "nvjpegEncoderParamsDestroy", api.EncoderParamsDestroy, w) &&
                   bind(lib, "nvjpegEncoderParamsSetQuality", api.EncoderParamsSetQuality, w) &&
                   bind(lib, "nvjpegEncoderParamsSetOptimizedHuffman", api.EncoderParamsSetOptimizedHuffman, w) &&
                   bind(lib, "nvjpegEncoderParamsSetSamplingFactors", api.EncoderParamsSetSamplingFactors, w) &&
                   bind(lib, "nvjpegEncodeYUV", api.EncodeYUV, w) && bind(lib, "nvjpegEncodeImage", api.EncodeImage, w) &&
                   bind(lib, "nvjpegEncodeRetrieveBitstream", api.EncodeRetrieveBitstream, w);
        if (state.ok)
            api.DecodeBatchedPreAllocate =
                reinterpret_cast<decltype(api.DecodeBatchedPreAllocate)>(dlsym(lib, "nvjpegDecodeBatchedPreAllocate"));
        // The library stays loaded for the life of the process (handles may outlive any scope here).
    });
    if (!state.ok && why) *why = state.why;
    return state.ok ? &api : nullptr;
}

const DriverApi* driver(std::string* why) {
    static Loaded state;
    static DriverApi api{};
    std::call_once(state.once, [] {
        const char* names[] = {"libcuda.so.1", "libcuda.so", nullptr};
        void* lib = open_first(names, state.why);
        if (!lib) return;
        std::string& w = state.why;
        state.ok = bind(lib, "cuInit", api.Init, w) && bind(lib, "cuDeviceGet", api.DeviceGet, w) &&
                   bind(lib, "cuDevicePrimaryCtxRetain", api.DevicePrimaryCtxRetain, w) &&
                   bind(lib, "cuDevicePrimaryCtxRelease_v2", api.DevicePrimaryCtxRelease, w) &&
                   bind(lib, "cuDevicePrimaryCtxSetFlags_v2", api.DevicePrimaryCtxSetFlags, w) &&
                   bind(lib, "cuCtxSetCurrent", api.CtxSetCurrent, w) &&
                   bind(lib, "cuStreamCreate", api.StreamCreate, w) &&
                   bind(lib, "cuStreamDestroy_v2", api.StreamDestroy, w) &&
                   bind(lib, "cuStreamSynchronize", api.StreamSynchronize, w) &&
                   bind(lib, "cuStreamWaitEvent", api.StreamWaitEvent, w) &&
                   bind(lib, "cuEventCreate", api.EventCreate, w) &&
                   bind(lib, "cuEventDestroy_v2", api.EventDestroy, w) &&
                   bind(lib, "cuEventRecord", api.EventRecord, w) &&
                   bind(lib, "cuEventSynchronize", api.EventSynchronize, w) &&
                   bind(lib, "cuEventQuery", api.EventQuery, w) &&
                   (bind(lib, "cuEventElapsedTime_v2", api.EventElapsedTime, w) ||
                    bind(lib, "cuEventElapsedTime", api.EventElapsedTime, w)) &&
                   bind(lib, "cuMemcpyDtoHAsync_v2", api.MemcpyDtoHAsync, w);
        if (state.ok && api.Init(0) != 0) {
            state.ok = false;
            state.why = "cuInit failed (no usable GPU driver)";
        }
    });
    if (!state.ok && why) *why = state.why;
    return state.ok ? &api : nullptr;
}

}  // namespace cli::nv
