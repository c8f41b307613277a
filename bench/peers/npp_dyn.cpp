// imghist-bench — NPP loaded at run time.
//
// NPP's headers are not needed: the few declarations used are written out below, as documented for NPP 11
// to 13 (CUDA 13 removed the variants without a stream context, so only the `_Ctx` entry points are used,
// and NppStreamContext must be filled by the caller).
#include "npp_dyn.hpp"

#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#include "common.hpp"

namespace bench {
namespace {

// Minimal NPP declarations (layout as in nppdefs.h).
struct NppiSize {
    int width;
    int height;
};
struct NppStreamContext {
    cudaStream_t hStream;
    int nCudaDeviceId;
    int nMultiProcessorCount;
    int nMaxThreadsPerMultiProcessor;
    int nMaxThreadsPerBlock;
    std::size_t nSharedMemPerBlock;
    int nCudaDevAttrComputeCapabilityMajor;
    int nCudaDevAttrComputeCapabilityMinor;
    unsigned int nStreamFlags;
    int nReserved0;
};
struct NppLibraryVersion {
    int major;
    int minor;
    int build;
};
using NppStatus = int;  // an enum in NPP: 0 success, < 0 errors, > 0 warnings

// NPP 12 declares the size as size_t*, NPP 11 as int*: a zeroed size_t receives either on little-endian hosts.
using BufSize1 = NppStatus (*)(NppiSize, int, std::size_t*, NppStreamContext);
using BufSizeN = NppStatus (*)(NppiSize, int*, std::size_t*, NppStreamContext);
using BufSize1NoCtx = NppStatus (*)(NppiSize, int, std::size_t*);
using Hist8u1 = NppStatus (*)(const std::uint8_t*, int, NppiSize, int*, int, int, int, std::uint8_t*, NppStreamContext);
using Hist16u1 = NppStatus (*)(const std::uint16_t*, int, NppiSize, int*, int, int, int, std::uint8_t*,
                               NppStreamContext);
using Hist8uN = NppStatus (*)(const std::uint8_t*, int, NppiSize, int**, int*, int*, int*, std::uint8_t*,
                              NppStreamContext);
using LibVersion = const NppLibraryVersion* (*)();

enum Fn { kBuf8u1, kBuf8u3, kBuf8u4, kBuf16u1, kHist8u1, kHist8u3, kHist8u4, kHist16u1 };
const char* const kNames[8] = {
    "nppiHistogramEvenGetBufferSize_8u_C1R_Ctx", "nppiHistogramEvenGetBufferSize_8u_C3R_Ctx",
    "nppiHistogramEvenGetBufferSize_8u_C4R_Ctx", "nppiHistogramEvenGetBufferSize_16u_C1R_Ctx",
    "nppiHistogramEven_8u_C1R_Ctx",              "nppiHistogramEven_8u_C3R_Ctx",
    "nppiHistogramEven_8u_C4R_Ctx",              "nppiHistogramEven_16u_C1R_Ctx",
};

NppStreamContext make_context_uncached(cudaStream_t stream) {
    NppStreamContext c{};
    int dev = 0;
    BENCH_CUDA(cudaGetDevice(&dev));
    c.hStream = stream;
    c.nCudaDeviceId = dev;
    int v = 0;
    cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev);
    c.nMultiProcessorCount = v;
    cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerMultiProcessor, dev);
    c.nMaxThreadsPerMultiProcessor = v;
    cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerBlock, dev);
    c.nMaxThreadsPerBlock = v;
    cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlock, dev);
    c.nSharedMemPerBlock = static_cast<std::size_t>(v);
    cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, dev);
    c.nCudaDevAttrComputeCapabilityMajor = v;
    cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMinor, dev);
    c.nCudaDevAttrComputeCapabilityMinor = v;
    unsigned flags = 0;
    if (stream) cudaStreamGetFlags(stream, &flags);
    c.nStreamFlags = flags;
    return c;
}

// The context is rebuilt only when the stream or device changes, so timed calls pay no attribute queries.
NppStreamContext make_context(cudaStream_t stream) {
    static bool have = false;
    static NppStreamContext cached{};
    int dev = 0;
    BENCH_CUDA(cudaGetDevice(&dev));
    if (!have || cached.hStream != stream || cached.nCudaDeviceId != dev) {
        cached = make_context_uncached(stream);
        have = true;
    }
    return cached;
}

void* try_open(const std::string& name) { return dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL); }

void status_check(NppStatus s, const char* what) {
    if (s < 0) throw BenchError(std::string(what) + " returned NPP status " + std::to_string(s));
}

}  // namespace

bool NppHistogram::load(const std::string& hint) {
    // Candidate (libnppc, libnppist) pairs, most specific first.
    std::vector<std::pair<std::string, std::string>> pairs;
    const char* versions[] = {".13", ".12", ""};
    auto add_dir = [&](const std::string& dir) {
        const std::string d = dir.empty() ? std::string() : dir + "/";
        for (const char* v : versions) pairs.emplace_back(d + "libnppc.so" + v, d + "libnppist.so" + v);
    };
    if (!hint.empty()) {
        if (hint.find(".so") != std::string::npos) {  // a file: libnppc from the same directory
            const auto slash = hint.rfind('/');
            const std::string d = slash == std::string::npos ? std::string() : hint.substr(0, slash + 1);
            for (const char* v : versions) pairs.emplace_back(d + "libnppc.so" + v, hint);
        } else {
            add_dir(hint);
        }
    }
    add_dir("");  // the dynamic loader's own search (LD_LIBRARY_PATH, ld.so.cache)
    if (const char* home = std::getenv("CUDA_HOME"); home && *home) add_dir(std::string(home) + "/lib64");
    add_dir("/usr/local/cuda/lib64");
    add_dir("/usr/local/cuda/targets/x86_64-linux/lib");
    add_dir("/usr/local/cuda/targets/sbsa-linux/lib");

    std::string last_error = "libnppist not found";
    for (const auto& [core_path, ist_path] : pairs) {
        core_ = try_open(core_path);  // optional: only used for the version string
        ist_ = try_open(ist_path);
        if (!ist_) {
            if (const char* e = dlerror()) last_error = e;
            if (core_) dlclose(core_);
            core_ = nullptr;
            continue;
        }
        for (int i = 0; i < 8; ++i) fn_[i] = dlsym(ist_, kNames[i]);
        if (!fn_[kBuf8u1]) fn_[kBuf8u1] = dlsym(ist_, "nppiHistogramEvenGetBufferSize_8u_C1R");
        if (!fn_[kBuf8u1] || !fn_[kHist8u1]) {
            last_error = ist_path + " lacks nppiHistogramEven_8u_C1R_Ctx";
            dlclose(ist_);
            ist_ = nullptr;
            if (core_) dlclose(core_);
            core_ = nullptr;
            continue;
        }
        Dl_info info{};
        const std::string where = dladdr(fn_[kHist8u1], &info) && info.dli_fname ? info.dli_fname : ist_path;
        std::string version = "?";
        if (core_) {
            if (auto v = reinterpret_cast<LibVersion>(dlsym(core_, "nppGetLibVersion"))) {
                if (const NppLibraryVersion* lv = v())
                    version = std::to_string(lv->major) + "." + std::to_string(lv->minor) + "." +
                              std::to_string(lv->build);
            }
        }
        description_ = version + " (" + where + ")";
        return true;
    }
    why_ = last_error;
    return false;
}

NppHistogram::~NppHistogram() {
    // The libraries stay loaded until exit: NPP may have registered CUDA resources we do not track.
}

bool NppHistogram::supports(const Workload& w) const {
    if (!available() || w.batch || !w.npp) return false;
    if (w.type == imghist::SampleType::U8) {
        return (w.channels == 1 && fn_[kHist8u1]) || (w.channels == 3 && fn_[kHist8u3] && fn_[kBuf8u3]) ||
               (w.channels == 4 && fn_[kHist8u4] && fn_[kBuf8u4]);
    }
    if (w.type == imghist::SampleType::U16) return w.channels == 1 && fn_[kHist16u1] && fn_[kBuf16u1];
    return false;
}

std::size_t NppHistogram::buffer_size(const Workload& w, int width, int height, cudaStream_t stream) {
    if (!supports(w)) throw BenchError("NPP does not support this workload");
    const NppiSize roi{width, height};
    const NppStreamContext ctx = make_context(stream);
    std::size_t bytes = 0;
    int levels[4] = {w.bins + 1, w.bins + 1, w.bins + 1, w.bins + 1};
    NppStatus s = 0;
    if (w.type == imghist::SampleType::U16) {
        s = reinterpret_cast<BufSize1>(fn_[kBuf16u1])(roi, levels[0], &bytes, ctx);
    } else if (w.channels == 1) {
        s = reinterpret_cast<BufSize1>(fn_[kBuf8u1])(roi, levels[0], &bytes, ctx);
    } else {
        s = reinterpret_cast<BufSizeN>(fn_[w.channels == 3 ? kBuf8u3 : kBuf8u4])(roi, levels, &bytes, ctx);
    }
    status_check(s, "nppiHistogramEvenGetBufferSize");
    return bytes;
}

void NppHistogram::run(const Workload& w, const void* data, int width, int height, std::size_t pitch, int* hist,
                       void* buffer, cudaStream_t stream) {
    if (!supports(w)) throw BenchError("NPP does not support this workload");
    if (pitch > 0x7fffffff) throw BenchError("NPP: row step does not fit an int");
    const NppiSize roi{width, height};
    const NppStreamContext ctx = make_context(stream);
    const int levels = w.bins + 1, lo = static_cast<int>(w.low), hi = static_cast<int>(w.high);
    auto* buf = static_cast<std::uint8_t*>(buffer);
    NppStatus s = 0;
    if (w.type == imghist::SampleType::U16) {
        s = reinterpret_cast<Hist16u1>(fn_[kHist16u1])(static_cast<const std::uint16_t*>(data), static_cast<int>(pitch),
                                                       roi, hist, levels, lo, hi, buf, ctx);
    } else if (w.channels == 1) {
        s = reinterpret_cast<Hist8u1>(fn_[kHist8u1])(static_cast<const std::uint8_t*>(data), static_cast<int>(pitch),
                                                     roi, hist, levels, lo, hi, buf, ctx);
    } else {
        int* h[4] = {hist, hist + w.bins, hist + 2 * w.bins, hist + 3 * w.bins};
        int nl[4] = {levels, levels, levels, levels}, l[4] = {lo, lo, lo, lo}, u[4] = {hi, hi, hi, hi};
        s = reinterpret_cast<Hist8uN>(fn_[w.channels == 3 ? kHist8u3 : kHist8u4])(
            static_cast<const std::uint8_t*>(data), static_cast<int>(pitch), roi, h, nl, l, u, buf, ctx);
    }
    status_check(s, "nppiHistogramEven");
}

}  // namespace bench

namespace bench {

// Variants checked by the self-test, in bit order.
namespace {
struct Variant {
    const char* name;
    imghist::SampleType type;
    int channels, bins;
    double high;
    int fns[2];  // buffer-size and histogram entry points
};
const Variant kVariants[4] = {
    {"8u_C1R", imghist::SampleType::U8, 1, 256, 256, {kBuf8u1, kHist8u1}},
    {"8u_C3R", imghist::SampleType::U8, 3, 256, 256, {kBuf8u3, kHist8u3}},
    {"8u_C4R", imghist::SampleType::U8, 4, 256, 256, {kBuf8u4, kHist8u4}},
    {"16u_C1R", imghist::SampleType::U16, 1, 1024, 65536, {kBuf16u1, kHist16u1}},
};
Workload as_workload(const Variant& v) {
    return Workload{v.name, v.type, v.channels, v.bins, 0, v.high, false, v.name, 0, false, true, false};
}
}  // namespace

int NppHistogram::self_test(int device) {
    if (cudaSetDevice(device) != cudaSuccess) return 0;
    int mask = 0;
    const int width = 67, height = 13;  // odd sizes: partial vectors and rows
    for (int vi = 0; vi < 4; ++vi) {
        const Variant& v = kVariants[vi];
        const Workload w = as_workload(v);
        if (!supports(w)) continue;
        try {
            const std::size_t ss = imghist::sample_size(v.type), pitch = width * ss * v.channels;
            std::vector<unsigned char> host(pitch * height);
            std::vector<int> expect(static_cast<std::size_t>(v.channels) * v.bins, 0);
            for (int y = 0; y < height; ++y)
                for (int x = 0; x < width; ++x)
                    for (int c = 0; c < v.channels; ++c) {
                        const std::size_t i = (static_cast<std::size_t>(y) * width + x) * v.channels + c;
                        unsigned value;
                        if (ss == 1) {
                            value = (x * 7 + y * 13 + c * 5) & 0xff;
                            host[i] = static_cast<unsigned char>(value);
                        } else {
                            value = (x * 977u + y * 131u + c * 7u) & 0xffff;
                            reinterpret_cast<std::uint16_t*>(host.data())[i] = static_cast<std::uint16_t>(value);
                        }
                        ++expect[static_cast<std::size_t>(c) * v.bins + static_cast<std::size_t>(value * v.bins / v.high)];
                    }
            DevMem img(host.size()), hist(expect.size() * sizeof(int));
            BENCH_CUDA(cudaMemcpy(img.get(), host.data(), host.size(), cudaMemcpyHostToDevice));
            BENCH_CUDA(cudaMemset(hist.get(), 0xff, hist.size()));
            DevMem buf(std::max<std::size_t>(1, buffer_size(w, width, height, nullptr)));
            run(w, img.get(), width, height, pitch, hist.as<int>(), buf.get(), nullptr);
            BENCH_CUDA(cudaDeviceSynchronize());
            std::vector<int> got(expect.size());
            BENCH_CUDA(cudaMemcpy(got.data(), hist.get(), hist.size(), cudaMemcpyDeviceToHost));
            if (got == expect) mask |= 1 << vi;
        } catch (...) {
        }
    }
    return mask;
}

bool NppHistogram::load_checked(const std::string& hint, int device) {
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
        int code = 0x40;
        if (load(hint)) code |= self_test(device);
        std::_Exit(code);
    }
    int mask = -1;
    std::string failure;
    if (pid < 0) {
        failure = "self-test not run (fork failed)";
    } else {
        int status = 0;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
        for (;;) {
            const pid_t r = waitpid(pid, &status, WNOHANG);
            if (r == pid) break;
            if (r < 0 || std::chrono::steady_clock::now() > deadline) {
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
                failure = "self-test timed out";
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        if (failure.empty()) {
            if (WIFSIGNALED(status)) failure = "self-test crashed (signal " + std::to_string(WTERMSIG(status)) + ")";
            else if (WIFEXITED(status) && (WEXITSTATUS(status) & 0x40)) mask = WEXITSTATUS(status) & 0x0f;
            else failure = "self-test failed (exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
        }
    }
    if (!load(hint)) return false;
    if (mask < 0) {  // nothing known to work: disable everything
        mask = 0;
        disabled_ = failure;
    }
    for (int vi = 0; vi < 4; ++vi) {
        if (mask & (1 << vi)) continue;
        const bool present = fn_[kVariants[vi].fns[0]] && fn_[kVariants[vi].fns[1]];
        if (present && failure.empty())
            disabled_ += std::string(disabled_.empty() ? "" : ", ") + kVariants[vi].name + " (self-test: wrong counts or error)";
        fn_[kVariants[vi].fns[1]] = nullptr;  // supports() now says no
    }
    if (mask == 0) {
        why_ = "no NPP histogram passed the self-test: " + (disabled_.empty() ? failure : disabled_);
        ist_ = nullptr;  // available() == false; the library stays loaded
        return false;
    }
    return true;
}

}  // namespace bench
