// Experiment (not part of the build): what the start-up of the GPU JPEG pipeline costs, step by step, and
// which ways of setting nvJPEG up shorten it. One process per variant (start-up costs are paid once per
// process); each prints one line per step (milliseconds since the process's start and the step's own time),
// then times steady-state batches (hardware decode of B copies of a JPEG into its YCbCr planes, then encode
// of those planes in rounds of S encoder states, one stream per encoding thread) and ends with _Exit, as
// the CLI does. Variants (flags):
//   --parallel      the hardware-decoder handle (and its batched state) and the default handle (and the
//                   encoder states' warm-up) on two threads at once, instead of one after the other
//   --pageable      nvJPEG's "pinned" host buffers from malloc instead of cudaHostAlloc (nvJPEG copies
//                   through them with cudaMemcpyAsync, which is correct on pageable memory too)
//   --pools         NVJPEG_FLAGS_ENABLE_MEMORY_POOLS (flag value 2) on both handles
//   --dev-arena     nvJPEG's device buffers carved from one 4 GiB allocation made up front (never freed):
//                   what the encoder states' warm-up costs without the driver's allocations
//   --warm-threads N  warm the encoder states on N threads (each with its own stream)
//   --states S      encoder states (default 32)   --batch B (default 128)   --batches K (default 3)
//   --enc-threads T encode each batch on T threads (each with S/T states and its own stream)
//   --no-warm       no encoder warm-up (the first batch pays it)
//   --hw-flags F    flags of the hardware handle only (1 = NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE)
// Two other modes replace the run above:
//   --ctx-only      the context alone, then _Exit (what the driver's teardown of a bare context costs)
//   --probe-init    the hardware handle, then per batch size (8, 32, 64, 128) a batched state's set-up and
//                   its decode rate; then the default and GPU_HYBRID handles and their batched decode rates
// Conclusions: docs/DESIGN.md; raw outputs: git log -- docs/results. Build (no CUDA headers needed: nvJPEG
// and the driver are loaded at run time through the CLI's declarations) and run:
//   g++ -O2 -std=c++17 -Itools/imghist -o nvjpeg_startup bench/experiments/nvjpeg_startup.cpp tools/imghist/nvjpeg_api.cpp -ldl -pthread
//   ./nvjpeg_startup photo_1080p_420.jpg --parallel --pageable
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "nvjpeg_api.hpp"

using namespace cli;
using Clock = std::chrono::steady_clock;
static const Clock::time_point g_start = Clock::now();
static double ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }
static double now_ms() { return ms(g_start, Clock::now()); }
static void step(const char* what, Clock::time_point t0) {
    std::printf("%-34s at %8.1f ms  took %8.1f ms\n", what, now_ms(), ms(t0, Clock::now()));
    std::fflush(stdout);
}
#define NV(x)                                                                           \
    do {                                                                                \
        nv::Status s_ = (x);                                                            \
        if (s_ != nv::kSuccess) {                                                       \
            std::printf("FAILED %s: %s (line %d)\n", #x, nv::status_name(s_), __LINE__); \
            std::_Exit(2);                                                              \
        }                                                                               \
    } while (0)

// nvjpegPinnedAllocator_t (nvJPEG's public header): int (*)(void**, size_t, unsigned flags), int (*)(void*).
struct PinnedAllocator {
    int (*pinned_malloc)(void**, std::size_t, unsigned);
    int (*pinned_free)(void*);
};
static int pageable_malloc(void** p, std::size_t n, unsigned) {
    *p = std::malloc(n ? n : 1);
    return *p ? 0 : 1;
}
static int pageable_free(void* p) {
    std::free(p);
    return 0;
}

using CuMemAlloc = int (*)(unsigned long long*, std::size_t);

// The Y, Cb and Cr planes of a w x h 4:2:0 image packed from device address `base`.
static nv::Image planes_420(unsigned long long base, int w, int h) {
    nv::Image img{};
    img.channel[0] = reinterpret_cast<unsigned char*>(base);
    img.pitch[0] = static_cast<std::size_t>(w);
    img.channel[1] = img.channel[0] + static_cast<std::size_t>(w) * h;
    img.pitch[1] = static_cast<std::size_t>(w / 2);
    img.channel[2] = img.channel[1] + static_cast<std::size_t>(w / 2) * (h / 2);
    img.pitch[2] = static_cast<std::size_t>(w / 2);
    return img;
}

// nvjpegDevAllocator_t (nvJPEG's public header): int (*)(void**, size_t), int (*)(void*).
struct DevAllocator {
    int (*dev_malloc)(void**, std::size_t);
    int (*dev_free)(void*);
};
static std::atomic<unsigned long long> g_arena_next{0};
static unsigned long long g_arena_end = 0;
static int arena_malloc(void** p, std::size_t n) {
    const unsigned long long size = (n + 255) & ~255ull;
    const unsigned long long at = g_arena_next.fetch_add(size);
    if (at + size > g_arena_end) return 1;
    *p = reinterpret_cast<void*>(at);
    return 0;
}
static int arena_free(void*) { return 0; }
using CuMemsetD8 = int (*)(unsigned long long, unsigned char, std::size_t);

int main(int argc, char** argv) {
    if (argc < 2) {
        std::printf("usage: %s file.jpg [flags]\n", argv[0]);
        return 1;
    }
    bool parallel = false, pageable = false, pools = false, warm = true, ctx_only = false, probe_init = false,
         dev_arena = false;
    unsigned hw_flags = 0;
    int warm_threads = 1, states = 32, batch = 128, batches = 3, enc_threads = 1;
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
        if (a == "--parallel") parallel = true;
        else if (a == "--pageable") pageable = true;
        else if (a == "--pools") pools = true;
        else if (a == "--dev-arena") dev_arena = true;
        else if (a == "--no-warm") warm = false;
        else if (a == "--ctx-only") ctx_only = true;
        else if (a == "--probe-init") probe_init = true;
        else if (a == "--hw-flags") hw_flags = static_cast<unsigned>(next());
        else if (a == "--warm-threads") warm_threads = next();
        else if (a == "--states") states = next();
        else if (a == "--batch") batch = next();
        else if (a == "--batches") batches = next();
        else if (a == "--enc-threads") enc_threads = next();
    }
    std::printf("variant:%s%s%s warm-threads %d states %d batch %d enc-threads %d%s\n", parallel ? " parallel" : " serial",
                pageable ? " pageable" : "", pools ? " pools" : "", warm_threads, states, batch, enc_threads,
                warm ? "" : " no-warm");
    std::ifstream f(argv[1], std::ios::binary);
    std::vector<unsigned char> jpeg((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());

    auto t = Clock::now();
    std::string why;
    const nv::NvJpegApi* nj = nv::nvjpeg(&why);
    const nv::DriverApi* cu = nj ? nv::driver(&why) : nullptr;
    if (!nj || !cu) {
        std::printf("unavailable: %s\n", why.c_str());
        return 1;
    }
    void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    auto mem_alloc = reinterpret_cast<CuMemAlloc>(dlsym(libcuda, "cuMemAlloc_v2"));
    auto memset8 = reinterpret_cast<CuMemsetD8>(dlsym(libcuda, "cuMemsetD8_v2"));
    step("load nvJPEG + driver, cuInit", t);
    t = Clock::now();
    int dev = 0;
    nv::CuContext ctx = nullptr;
    if (cu->DeviceGet(&dev, 0) != 0 || cu->DevicePrimaryCtxRetain(&ctx, dev) != 0 || cu->CtxSetCurrent(ctx) != 0) {
        std::printf("no context\n");
        return 1;
    }
    step("primary context", t);
    if (ctx_only) {
        std::printf("exit at %.1f ms, epoch %.6f\n", now_ms(),
                    std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
        std::fflush(stdout);
        std::_Exit(0);
    }

    PinnedAllocator pa{pageable_malloc, pageable_free};
    void* pinned = pageable ? &pa : nullptr;
    DevAllocator da{arena_malloc, arena_free};
    void* devalloc = nullptr;
    if (dev_arena) {
        t = Clock::now();
        unsigned long long base = 0;
        if (mem_alloc(&base, 4ull << 30) != 0) {
            std::printf("arena allocation failed\n");
            return 1;
        }
        g_arena_next = base;
        g_arena_end = base + (4ull << 30);
        devalloc = &da;
        step("device arena (4 GiB)", t);
    }
    const unsigned flags = pools ? 2u : 0u;
    const int w = 1920, h = 1080;
    nv::Handle hw = nullptr, def = nullptr;
    nv::JpegState hw_state = nullptr;
    std::vector<nv::EncoderState> enc(static_cast<std::size_t>(states));
    nv::EncoderParams params = nullptr;
    nv::Stream main_stream = nullptr;
    cu->StreamCreate(&main_stream, nv::kStreamNonBlocking);
    const std::size_t plane_bytes = static_cast<std::size_t>(w) * h * 3 / 2;

    auto decoder_side = [&] {
        cu->CtxSetCurrent(ctx);
        auto t0 = Clock::now();
        NV(nj->CreateEx(nv::kBackendHardware, nullptr, pinned, flags | hw_flags, &hw));
        step("hardware handle", t0);
        t0 = Clock::now();
        NV(nj->JpegStateCreate(hw, &hw_state));
        NV(nj->DecodeBatchedInitialize(hw, hw_state, batch, 1, nv::kOutputYUV));
        step("hardware state + batched init", t0);
    };
    auto encoder_side = [&] {
        cu->CtxSetCurrent(ctx);
        auto t0 = Clock::now();
        NV(nj->CreateEx(nv::kBackendDefault, devalloc, pinned, flags, &def));
        step("default handle", t0);
        t0 = Clock::now();
        NV(nj->EncoderParamsCreate(def, &params, main_stream));
        NV(nj->EncoderParamsSetQuality(params, 90, main_stream));
        NV(nj->EncoderParamsSetSamplingFactors(params, nv::kCss420, main_stream));
        NV(nj->EncoderParamsSetOptimizedHuffman(params, 0, main_stream));
        for (auto& e : enc) NV(nj->EncoderStateCreate(def, &e, main_stream));
        step("encoder params + states created", t0);
        if (!warm) return;
        t0 = Clock::now();
        auto warm_range = [&](int first, int last) {
            cu->CtxSetCurrent(ctx);
            nv::Stream s = nullptr;
            cu->StreamCreate(&s, nv::kStreamNonBlocking);
            unsigned long long blank = 0;
            mem_alloc(&blank, plane_bytes);
            memset8(blank, 128, plane_bytes);
            const nv::Image img = planes_420(blank, w, h);
            std::vector<unsigned char> out(8 << 20);
            for (int k = first; k < last; ++k) {
                NV(nj->EncodeYUV(def, enc[k], params, &img, nv::kCss420, w, h, s));
                std::size_t len = out.size();
                NV(nj->EncodeRetrieveBitstream(def, enc[k], out.data(), &len, s));
            }
            cu->StreamSynchronize(s);
        };
        std::vector<std::thread> ts;
        for (int k = 0; k < warm_threads; ++k)
            ts.emplace_back(warm_range, states * k / warm_threads, states * (k + 1) / warm_threads);
        for (auto& x : ts) x.join();
        step("encoder warm-up", t0);
    };
    if (probe_init) {
        std::vector<unsigned long long> bufs(128);
        std::vector<nv::Image> dest(128);
        for (int i = 0; i < 128; ++i) {
            mem_alloc(&bufs[i], static_cast<std::size_t>(w) * h * 3);
            dest[i] = planes_420(bufs[i], w, h);
        }
        std::vector<const unsigned char*> data(128, jpeg.data());
        std::vector<std::size_t> lengths(128, jpeg.size());
        auto rates = [&](nv::Handle hd, const char* name, std::initializer_list<int> sizes) {
            for (int bs : sizes) {
                nv::JpegState st = nullptr;
                auto t0 = Clock::now();
                NV(nj->JpegStateCreate(hd, &st));
                NV(nj->DecodeBatchedInitialize(hd, st, bs, 1, nv::kOutputYUV));
                const double init = ms(t0, Clock::now());
                double best = 1e9, first = 0;
                for (int r = 0; r < 4; ++r) {
                    auto t1 = Clock::now();
                    NV(nj->DecodeBatched(hd, st, data.data(), lengths.data(), dest.data(), main_stream));
                    cu->StreamSynchronize(main_stream);
                    const double d = ms(t1, Clock::now());
                    if (r == 0) first = d;
                    best = std::min(best, d);
                }
                std::printf("%-8s batch %3d: state + init %7.1f ms, first decode %6.1f ms, best %6.1f ms (%.0f img/s)\n",
                            name, bs, init, first, best, bs / best * 1e3);
                std::fflush(stdout);
            }
        };
        auto t0 = Clock::now();
        NV(nj->CreateEx(nv::kBackendHardware, nullptr, pinned, flags | hw_flags, &hw));
        step("hardware handle", t0);
        rates(hw, "hardware", {8, 32, 64, 128});
        t0 = Clock::now();
        NV(nj->CreateEx(nv::kBackendDefault, nullptr, pinned, flags, &def));
        step("default handle", t0);
        rates(def, "default", {32, 128});
        nv::Handle hyb = nullptr;
        t0 = Clock::now();
        NV(nj->CreateEx(nv::kBackendGpuHybrid, nullptr, pinned, flags, &hyb));
        step("gpu-hybrid handle", t0);
        rates(hyb, "hybrid", {32, 128});
        std::printf("exit at %.1f ms, epoch %.6f\n", now_ms(),
                    std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
        std::fflush(stdout);
        std::_Exit(0);
    }
    auto t_ready = Clock::now();
    if (parallel) {
        std::thread a(decoder_side), b(encoder_side);
        a.join();
        b.join();
    } else {
        decoder_side();
        encoder_side();
    }
    step("READY (handles, states)", t_ready);

    // Steady state: decode `batch` copies, encode them.
    std::vector<unsigned long long> bufs(static_cast<std::size_t>(batch));
    std::vector<nv::Image> dest(static_cast<std::size_t>(batch));
    for (int i = 0; i < batch; ++i) {
        mem_alloc(&bufs[i], plane_bytes);
        dest[i] = planes_420(bufs[i], w, h);
    }
    std::vector<const unsigned char*> data(static_cast<std::size_t>(batch), jpeg.data());
    std::vector<std::size_t> lengths(static_cast<std::size_t>(batch), jpeg.size());
    std::vector<nv::Stream> enc_streams(static_cast<std::size_t>(enc_threads));
    for (auto& s : enc_streams) cu->StreamCreate(&s, nv::kStreamNonBlocking);
    std::size_t total_bytes = 0;
    for (int b = 0; b < batches; ++b) {
        auto t0 = Clock::now();
        NV(nj->DecodeBatched(hw, hw_state, data.data(), lengths.data(), dest.data(), main_stream));
        cu->StreamSynchronize(main_stream);
        const double dec = ms(t0, Clock::now());
        auto t1 = Clock::now();
        auto encode_range = [&](int thread) {
            cu->CtxSetCurrent(ctx);
            const int first_state = states * thread / enc_threads, last_state = states * (thread + 1) / enc_threads;
            const int ns = last_state - first_state;
            const int first = batch * thread / enc_threads, last = batch * (thread + 1) / enc_threads;
            nv::Stream s = enc_streams[thread];
            std::vector<unsigned char> out(8 << 20);
            std::size_t bytes = 0;
            for (int r = first; r < last; r += ns) {
                const int n = std::min(ns, last - r);
                for (int k = 0; k < n; ++k)
                    NV(nj->EncodeYUV(def, enc[first_state + k], params, &dest[r + k], nv::kCss420, w, h, s));
                for (int k = 0; k < n; ++k) {
                    std::size_t len = out.size();
                    NV(nj->EncodeRetrieveBitstream(def, enc[first_state + k], out.data(), &len, s));
                    bytes += len;
                }
            }
            return bytes;
        };
        std::vector<std::thread> ts;
        std::vector<std::size_t> got(static_cast<std::size_t>(enc_threads));
        for (int k = 0; k < enc_threads; ++k) ts.emplace_back([&, k] { got[k] = encode_range(k); });
        for (auto& x : ts) x.join();
        for (auto g : got) total_bytes += g;
        const double en = ms(t1, Clock::now());
        std::printf("batch %d: decode %d in %.1f ms (%.0f img/s), encode in %.1f ms (%.0f img/s)\n", b, batch, dec,
                    batch / dec * 1e3, en, batch / en * 1e3);
    }
    std::printf("encoded bytes %zu; exit at %.1f ms, epoch %.6f\n", total_bytes, now_ms(),
                std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
    std::fflush(stdout);
    std::_Exit(0);
}
