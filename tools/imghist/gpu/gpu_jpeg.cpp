#include "gpu/gpu_jpeg.hpp"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "io/codecs/codec_jpeg.hpp"
#include "io/errors.hpp"
#include "imghist/buffer.hpp"
#include "imghist/histogram.hpp"
#include "pipeline/pipeline.hpp"

namespace cli {

bool gpu_jpeg_available(std::string* why) {
    std::string w;
    if (!nv::nvjpeg(&w) || !nv::driver(&w)) {
        if (why) *why = w;
        return false;
    }
    if (imghist::cuda_device_count() == 0) {
        if (why) *why = "no CUDA device";
        return false;
    }
    return true;
}

int gpu_jpeg_batch() {
    if (const char* e = std::getenv("IMGHIST_GPU_BATCH")) {
        int v = std::atoi(e);
        if (v >= 1 && v <= 1024) return v;
    }
    return 128;
}

int gpu_jpeg_lanes() {
    if (const char* e = std::getenv("IMGHIST_GPU_LANES")) {
        int v = std::atoi(e);
        if (v >= 1 && v <= 8) return v;
    }
    // One: with a batch's encode spread over four threads (encode_threads), a second lane only added contention
    // (H100, 1000 and 4000 1920x1080 JPEGs: every run 7-16% slower with two; docs/DESIGN.md).
    return 1;
}

namespace {
std::atomic<bool> g_gpu_used{false};
void wait_for_hardware_setups();  // below, with the GPUs' shared state
// The trace's clock starts at the program's static initialisation, just before main (the dynamic loader's
// part of the start, about 10 ms on the H100 host, is before it).
const std::chrono::steady_clock::time_point g_trace_zero = std::chrono::steady_clock::now();
double trace_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g_trace_zero).count();
}
}

int gpu_jpeg_exit(int code) {
    if (!g_gpu_used.load()) return code;
    std::fflush(nullptr);
    std::cout.flush();
    std::cerr.flush();
    if (gpu_jpeg_trace()) {
        timespec ts{};
        clock_gettime(CLOCK_REALTIME, &ts);
        // The process's peak and current resident memory: the end of the process unmaps it.
        std::string memory;
        if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
            char line[256];
            while (std::fgets(line, sizeof line, f))
                if (std::strncmp(line, "VmHWM:", 6) == 0 || std::strncmp(line, "VmRSS:", 6) == 0)
                    memory += std::string(", ") + std::string(line, std::strcspn(line, "\n"));
            std::fclose(f);
        }
        std::fprintf(stderr, "imghist: gpu: [%.1f ms] exit at %.3f s (epoch)%s\n", trace_ms(),
                     ts.tv_sec + ts.tv_nsec * 1e-9, memory.c_str());
    }
    const char* e = std::getenv("IMGHIST_GPU_EXIT");
    if (e && std::string(e) == "normal") {
        // A hardware decoder's set-up may still be running on its thread (a run whose files all went
        // elsewhere): the process's teardown must not start under it.
        wait_for_hardware_setups();
        return code;
    }
    // Every output is complete by now (written, flushed to disk and renamed), and so is everything printed.
    // What remains is tearing down the CUDA runtime, nvJPEG's handles and the GPU memory they hold, which
    // the driver also does when the process ends: measured on an H100 (docs/DESIGN.md), a 1000-image
    // run's process ended 0.41-0.47 s after this point with the normal exit, 0.19-0.29 s with this one.
    std::_Exit(code);
}

bool gpu_jpeg_trace() {
    static const bool on = [] {
        const char* e = std::getenv("IMGHIST_GPU_TRACE");
        return e && *e && *e != '0';
    }();
    return on;
}

void gpu_jpeg_trace_line(const std::string& line) {
    if (gpu_jpeg_trace()) std::fprintf(stderr, "imghist: gpu: [%.1f ms] %s\n", trace_ms(), line.c_str());
}

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

[[noreturn]] void nv_fail(nv::Status s, const std::string& what) {
    throw Error(ErrorCode::Cuda, what + " failed (" + nv::status_name(s) + ")");
}
void nv_check(nv::Status s, const char* what) {
    if (s != nv::kSuccess) nv_fail(s, what);
}

// Sizes of the planes nvJPEG writes for a sampling: chroma planes are the luma size divided by the
// subsampling factors, rounded up (the same sizes libjpeg reports as downsampled_width/height).
void chroma_divisors(nv::ChromaSubsampling css, int& dx, int& dy) {
    dx = dy = 1;
    switch (css) {
        case nv::kCss422: dx = 2; break;
        case nv::kCss420: dx = dy = 2; break;
        case nv::kCss440: dy = 2; break;
        case nv::kCss411: dx = 4; break;
        case nv::kCss410: dx = 4; dy = 2; break;
        default: break;
    }
}

// nvJPEG's name for a YCbCr header's sampling: luma factors over chroma factors of 1x1; kCssUnknown for
// anything else (chroma factors above 1, unusual ratios).
nv::ChromaSubsampling sampling_of(const JpegHeader& h) {
    if (h.h_samp[1] != 1 || h.v_samp[1] != 1 || h.h_samp[2] != 1 || h.v_samp[2] != 1) return nv::kCssUnknown;
    const int hs = h.h_samp[0], vs = h.v_samp[0];
    if (hs == 1 && vs == 1) return nv::kCss444;
    if (hs == 2 && vs == 1) return nv::kCss422;
    if (hs == 2 && vs == 2) return nv::kCss420;
    if (hs == 1 && vs == 2) return nv::kCss440;
    if (hs == 4 && vs == 1) return nv::kCss411;
    if (hs == 4 && vs == 2) return nv::kCss410;
    return nv::kCssUnknown;
}

}  // namespace

namespace {

// What the lanes of one GPU share: the primary context and the nvJPEG handles. nvJPEG allows a handle to be
// used by several threads at once as long as each has its own decoder and encoder states (its "Thread
// Safety" section), so every lane (GpuJpegEngine) owns those, and the handles, whose creation is the slow
// part of start-up, are made once per GPU. They live for the rest of the process, as the library itself
// does: destroying them at exit would race the CUDA runtime's own teardown.
//
// The hardware decoder is set up on a thread of its own (start_hardware), started first: it is the longest
// part of a GPU's start-up (measured on an H100, bench/experiments/nvjpeg_startup.cpp: handle 0.28 s, the
// first batched state 0.36 s whatever its batch size, each further state 0.1 s), and a lane's first decode
// waits for it (wait_hardware) while the lane's other set-up goes on.
struct GpuShared {
    int ordinal = 0;
    const nv::NvJpegApi* nj = nullptr;
    const nv::DriverApi* cu = nullptr;
    nv::CuContext ctx = nullptr;
    int cu_device = 0;

    enum class Hw : std::uint8_t { NotStarted, Starting, Ready, None };

    /// Starts the hardware decoder's set-up on its own thread (once; later calls do nothing): the handle and
    /// `states` batched states initialised for `batch` images of `format` (one per lane). The decoder counts
    /// as ready with its first state; the others follow on the same thread, and a lane that finds none left
    /// makes its own.
    void start_hardware(int batch, nv::OutputFormat format, int states) {
        {
            std::lock_guard<std::mutex> l(hw_m_);
            if (hw_status_ != Hw::NotStarted) return;
            hw_status_ = Hw::Starting;
            hw_batch_ = batch;
            hw_format_ = format;
        }
        std::thread([this, batch, format, states] {
            const auto t0 = std::chrono::steady_clock::now();
            nv::Handle h = nullptr;
            double handle_ms = 0, first_ms = 0;
            int made = 0;
            // Only GPUs with JPEG decoders (A100, H100, H200, ...) have the hardware backend: its absence is not
            // an error.
            if (cu->CtxSetCurrent(ctx) != 0 || nj->CreateEx(nv::kBackendHardware, nullptr, nullptr, 0, &h) != nv::kSuccess)
                h = nullptr;
            handle_ms = ms_since(t0);
            for (int k = 0; k < std::max(1, states); ++k) {
                nv::JpegState st = nullptr;
                if (h && nj->JpegStateCreate(h, &st) == nv::kSuccess &&
                    nj->DecodeBatchedInitialize(h, st, batch, 1, format) != nv::kSuccess) {
                    nj->JpegStateDestroy(st);
                    st = nullptr;
                }
                {
                    std::lock_guard<std::mutex> l(hw_m_);
                    if (st) {
                        hw_states_.push_back(st);
                        ++made;
                    }
                    if (k == 0) {
                        hw_ = h;
                        hw_status_ = h ? Hw::Ready : Hw::None;
                    }
                }
                if (k == 0) {
                    first_ms = ms_since(t0);
                    hw_cv_.notify_all();
                }
                if (!st) break;
            }
            gpu_jpeg_trace_line("device " + std::to_string(ordinal) + ": hardware decoder " +
                                (h ? "ready after " + std::to_string(first_ms) + " ms (handle " + std::to_string(handle_ms) +
                                         " ms), " + std::to_string(made) + " batched states of " + std::to_string(batch) +
                                         " after " + std::to_string(ms_since(t0)) + " ms"
                                   : std::string("absent")));
            {
                std::lock_guard<std::mutex> l(hw_m_);
                hw_thread_done_ = true;
            }
            hw_cv_.notify_all();
        }).detach();  // GpuShared lives for the process; the set-up ends on its own or with the process
    }
    /// The hardware decoder's handle, once its set-up has ended (started here when nobody started it);
    /// nullptr on GPUs without one.
    nv::Handle wait_hardware() {
        start_hardware(128, nv::kOutputYUV, 1);
        std::unique_lock<std::mutex> l(hw_m_);
        hw_cv_.wait(l, [&] { return hw_status_ == Hw::Ready || hw_status_ == Hw::None; });
        return hw_;
    }
    /// A batched state the set-up initialised for `format`, with the batch size it was initialised for;
    /// false when none is left (the lane makes its own).
    bool take_hardware_state(nv::OutputFormat format, nv::JpegState& state, int& batch) {
        std::lock_guard<std::mutex> l(hw_m_);
        if (hw_states_.empty() || hw_format_ != format) return false;
        state = hw_states_.back();
        hw_states_.pop_back();
        batch = hw_batch_;
        return true;
    }

    // The default handle (encoder, single-image decode) and the GPU_HYBRID one (batched decode of what the
    // hardware decoder does not take) are created on first use: a hist run on a GPU with a hardware decoder
    // never needs either.
    nv::Handle default_handle() { return lazy(nv::kBackendDefault, handle_, "nvjpegCreateEx (default backend)"); }
    nv::Handle hybrid_handle() {
        // GPU_HYBRID: Huffman decoding on the GPU in batched decodes; where the library refuses it, the default
        // backend (which decides per image) does the same work.
        std::lock_guard<std::mutex> l(m_);
        if (!hybrid_tried_) {
            hybrid_tried_ = true;
            if (nj->CreateEx(nv::kBackendGpuHybrid, nullptr, nullptr, 0, &hybrid_) != nv::kSuccess) hybrid_ = nullptr;
        }
        if (hybrid_) return hybrid_;
        if (!handle_) nv_check(nj->CreateEx(nv::kBackendDefault, nullptr, nullptr, 0, &handle_), "nvjpegCreateEx");
        return handle_;
    }

    void make_current() const {
        if (cu->CtxSetCurrent(ctx) != 0)
            throw Error(ErrorCode::Cuda, "cannot make CUDA device " + std::to_string(ordinal) + " current");
    }

    /// Lanes a worker thread gave back when it ended (for_thread): the next worker on this GPU takes one
    /// instead of creating it again, and a run's end does not wait for their teardown (freeing pinned and
    /// device memory took 250-350 ms per run on an H100).
    std::vector<GpuJpegEngine*> idle_lanes;
    std::mutex lanes_mutex;

    /// The process's shared state for CUDA device `ordinal`, created by the first caller.
    /// GPUs start side by side (--device all): one lock per device while it is created.
    static GpuShared& get(int ordinal) {
        Registry& r = registry();
        Slot* slot = nullptr;
        {
            std::lock_guard<std::mutex> l(r.m);
            slot = &r.all[ordinal];  // std::map nodes stay where they are
        }
        std::lock_guard<std::mutex> l(slot->m);
        if (!slot->g) {
            auto made = std::make_unique<GpuShared>();
            made->open(ordinal);     // throws: the next caller tries again
            slot->g = made.release();  // lives for the process (see above)
        }
        return *slot->g;
    }

    /// Waits for every hardware decoder set-up that was started and has not ended.
    static void wait_for_setups() {
        std::vector<GpuShared*> gpus;
        {
            Registry& r = registry();
            std::lock_guard<std::mutex> l(r.m);
            for (auto& [ordinal, slot] : r.all) {
                std::lock_guard<std::mutex> ls(slot.m);
                if (slot.g) gpus.push_back(slot.g);
            }
        }
        for (GpuShared* g : gpus) {
            std::unique_lock<std::mutex> l(g->hw_m_);
            g->hw_cv_.wait(l, [&] { return g->hw_status_ == Hw::NotStarted || g->hw_thread_done_; });
        }
    }

private:
    struct Slot {
        std::mutex m;
        GpuShared* g = nullptr;
    };
    struct Registry {
        std::mutex m;
        std::map<int, Slot> all;
    };
    static Registry& registry() {
        static Registry r;
        return r;
    }

    std::mutex hw_m_;
    std::condition_variable hw_cv_;
    Hw hw_status_ = Hw::NotStarted;
    bool hw_thread_done_ = false;  // the set-up thread has ended (its later states made too)
    nv::Handle hw_ = nullptr;
    std::vector<nv::JpegState> hw_states_;
    int hw_batch_ = 0;
    nv::OutputFormat hw_format_ = nv::kOutputUnchanged;

    std::mutex m_;
    nv::Handle handle_ = nullptr, hybrid_ = nullptr;
    bool hybrid_tried_ = false;

    nv::Handle lazy(nv::Backend b, nv::Handle& h, const char* what) {
        std::lock_guard<std::mutex> l(m_);
        if (!h) nv_check(nj->CreateEx(b, nullptr, nullptr, 0, &h), what);
        return h;
    }

    void open(int dev) {
        const auto t0 = std::chrono::steady_clock::now();
        std::string why;
        ordinal = dev;
        nj = nv::nvjpeg(&why);
        cu = nj ? nv::driver(&why) : nullptr;
        if (!nj || !cu) throw Error(ErrorCode::NoDevice, "GPU JPEG pipeline unavailable: " + why);
        if (cu->DeviceGet(&cu_device, dev) != 0 || cu->DevicePrimaryCtxRetain(&ctx, cu_device) != 0)
            throw Error(ErrorCode::NoDevice, "CUDA device " + std::to_string(dev) + " is not usable");
        gpu_jpeg_trace_line("device " + std::to_string(dev) + ": context " + std::to_string(ms_since(t0)) + " ms");
    }
};

void wait_for_hardware_setups() { GpuShared::wait_for_setups(); }

}  // namespace

struct GpuJpegEngine::Impl {
    GpuShared* g = nullptr;
    const nv::NvJpegApi* nj = nullptr;
    const nv::DriverApi* cu = nullptr;
    nv::Stream stream = nullptr;  // decoding, uploads and the device operations
    // Decoder states of this lane: the hardware decoder's (one per output format), the batched fallback's
    // (GPU_HYBRID) and the one the image-by-image retry uses (default backend). Each batched state remembers
    // the batch size and format it was initialised for: re-initialising costs allocations, so a hardware
    // state decodes fewer images than its size by padding the batch (decode()), and is initialised again
    // only for more.
    struct BatchState {
        nv::JpegState state = nullptr;
        nv::Handle handle = nullptr;
        int size = 0;
        nv::OutputFormat format = nv::kOutputUnchanged;
    };
    std::map<int, BatchState> hw;  // by output format
    BatchState hybrid;
    nv::JpegState single_state = nullptr;
    std::vector<imghist::DeviceBuffer> buffers;
    std::vector<GpuDecoded> slots;
    // Where the padding images of a short hardware batch go (never read).
    std::vector<imghist::DeviceBuffer> pad_buffers;
    std::vector<GpuDecoded> pad_slots;
    // Encoding: encode_threads() host threads, thread t with its own stream and the encoder states
    // [t * per_thread, (t + 1) * per_thread).
    std::vector<nv::Stream> enc_streams;
    std::vector<nv::EncoderState> encoders;
    // One per chroma sampling and quality: a batch mixes qualities (each output takes its input's estimate).
    // Filled on the lane's own thread only (params_for), before any encoding thread reads it.
    std::map<std::pair<int, int>, nv::EncoderParams> params;

    std::size_t per_thread = kEncoderStates;

    void release() {
        if (!nj) return;
        for (auto e : encoders) nj->EncoderStateDestroy(e);
        for (auto& p : params) nj->EncoderParamsDestroy(p.second);
        for (auto& [format, b] : hw)
            if (b.state) nj->JpegStateDestroy(b.state);
        if (hybrid.state) nj->JpegStateDestroy(hybrid.state);
        if (single_state) nj->JpegStateDestroy(single_state);
        buffers.clear();
        for (auto s : enc_streams) cu->StreamDestroy(s);
        if (stream) cu->StreamDestroy(stream);
    }

    nv::JpegState single() {
        if (!single_state) nv_check(nj->JpegStateCreate(g->default_handle(), &single_state), "nvjpegJpegStateCreate");
        return single_state;
    }

    // Ready for a batch of `n` in `format`: the state exists and is initialised for exactly that, or, for the
    // hardware decoder, for at least that (the caller pads the batch to b.size). The hardware decoder's first
    // state comes from the GPU's set-up (GpuShared::start_hardware), initialised already.
    nv::Status prepare(BatchState& b, nv::Handle h, int n, nv::OutputFormat format, bool hardware) {
        if (!b.state) {
            b.handle = h;
            b.size = 0;
            if (hardware && g->take_hardware_state(format, b.state, b.size)) {
                b.format = format;
            } else {
                nv::Status s = nj->JpegStateCreate(h, &b.state);
                if (s != nv::kSuccess) {
                    b.state = nullptr;
                    return s;
                }
            }
        }
        if (b.format == format && (b.size == n || (hardware && b.size > n))) return nv::kSuccess;
        // max_cpu_threads is not used by current nvJPEG versions (documented as ignored); 1 is valid everywhere.
        nv::Status s = nj->DecodeBatchedInitialize(b.handle, b.state, n, 1, format);
        b.size = s == nv::kSuccess ? n : 0;
        b.format = format;
        return s;
    }

    nv::EncoderParams params_for(nv::ChromaSubsampling css, int quality) {
        const std::pair<int, int> key(static_cast<int>(css), quality);
        auto it = params.find(key);
        if (it != params.end()) return it->second;
        nv::EncoderParams p = nullptr;
        nv_check(nj->EncoderParamsCreate(g->default_handle(), &p, stream), "nvjpegEncoderParamsCreate");
        params[key] = p;
        nv_check(nj->EncoderParamsSetQuality(p, quality, stream), "nvjpegEncoderParamsSetQuality");
        nv_check(nj->EncoderParamsSetSamplingFactors(p, css, stream), "nvjpegEncoderParamsSetSamplingFactors");
        // libjpeg's defaults (the CPU path) use the standard Huffman tables too.
        nv_check(nj->EncoderParamsSetOptimizedHuffman(p, 0, stream), "nvjpegEncoderParamsSetOptimizedHuffman");
        return p;
    }

    // Lays out slot `i` for an image of this header and format, growing its buffer when needed.
    void layout(std::size_t i, int w, int h, nv::ChromaSubsampling css, nv::OutputFormat format) {
        layout_into(slots[i], buffers[i], w, h, css, format);
    }
    static void layout_into(GpuDecoded& d, imghist::DeviceBuffer& buffer, int w, int h, nv::ChromaSubsampling css,
                            nv::OutputFormat format) {
        d = GpuDecoded{};
        d.width = w;
        d.height = h;
        d.subsampling = css;
        d.format = format;
        std::size_t bytes = 0;
        std::size_t offsets[3] = {};
        if (format == nv::kOutputYUV) {
            int dx = 1, dy = 1;
            chroma_divisors(css, dx, dy);
            for (int c = 0; c < 3; ++c) {
                d.plane_w[c] = c == 0 ? w : (w + dx - 1) / dx;
                d.plane_h[c] = c == 0 ? h : (h + dy - 1) / dy;
                offsets[c] = bytes;
                bytes += static_cast<std::size_t>(d.plane_w[c]) * static_cast<std::size_t>(d.plane_h[c]);
                bytes = (bytes + 255) & ~std::size_t(255);
            }
        } else {
            bytes = static_cast<std::size_t>(w) * 3 * static_cast<std::size_t>(h);
        }
        buffer.reserve(std::max<std::size_t>(bytes, 256));
        auto* base = buffer.as<unsigned char>();
        if (format == nv::kOutputYUV) {
            for (int c = 0; c < 3; ++c) {
                d.image.channel[c] = base + offsets[c];
                d.image.pitch[c] = static_cast<std::size_t>(d.plane_w[c]);
            }
        } else {
            d.image.channel[0] = base;
            d.image.pitch[0] = static_cast<std::size_t>(w) * 3;
        }
    }
};

std::size_t GpuJpegEngine::encode_threads() {
    static const std::size_t n = [] {
        const char* e = std::getenv("IMGHIST_GPU_ENCODE_THREADS");
        const int v = e ? std::atoi(e) : 0;
        return v == 1 || v == 2 || v == 4 || v == 8 ? static_cast<std::size_t>(v) : std::size_t(4);
    }();
    return n;
}

GpuJpegEngine& GpuJpegEngine::for_thread(int ordinal) {
    // A thread borrows one lane per GPU and gives it back to that GPU's idle lanes when it ends; lanes live
    // for the process, as the GPU's handles do.
    struct Borrowed {
        std::map<int, GpuJpegEngine*> lanes;
        ~Borrowed() {
            for (auto& [dev, lane] : lanes) {
                GpuShared& g = GpuShared::get(dev);
                std::lock_guard<std::mutex> l(g.lanes_mutex);
                g.idle_lanes.push_back(lane);
            }
        }
    };
    thread_local Borrowed borrowed;
    GpuJpegEngine*& e = borrowed.lanes[ordinal];
    if (!e) {
        GpuShared& g = GpuShared::get(ordinal);
        {
            std::lock_guard<std::mutex> l(g.lanes_mutex);
            if (!g.idle_lanes.empty()) {
                e = g.idle_lanes.back();
                g.idle_lanes.pop_back();
            }
        }
        if (!e) {
            try {
                e = new GpuJpegEngine(ordinal);  // lives for the process (see above)
            } catch (...) {
                borrowed.lanes.erase(ordinal);
                throw;
            }
        }
    }
    return *e;
}

GpuJpegEngine::GpuJpegEngine(int ordinal) : impl_(std::make_unique<Impl>()) {
    const auto t0 = std::chrono::steady_clock::now();
    Impl& m = *impl_;
    m.g = &GpuShared::get(ordinal);  // throws Error(NoDevice) when nvJPEG or the device is unusable
    g_gpu_used = true;
    m.nj = m.g->nj;
    m.cu = m.g->cu;
    try {
        // The primary context is the one the CUDA runtime (and so libimghist) uses: making it current here
        // selects this GPU for nvJPEG and for the library's allocations on this thread.
        m.g->make_current();
        if (m.cu->StreamCreate(&m.stream, nv::kStreamNonBlocking) != 0)
            throw Error(ErrorCode::Cuda, "cannot create a CUDA stream on device " + std::to_string(ordinal));
        m.enc_streams.resize(encode_threads(), nullptr);
        m.per_thread = kEncoderStates / encode_threads();
        for (auto& s : m.enc_streams)
            if (m.cu->StreamCreate(&s, nv::kStreamNonBlocking) != 0)
                throw Error(ErrorCode::Cuda, "cannot create a CUDA stream on device " + std::to_string(ordinal));
    } catch (...) {
        m.release();
        throw;
    }
    gpu_jpeg_trace_line("lane on device " + std::to_string(ordinal) + ": " + std::to_string(ms_since(t0)) + " ms");
}

GpuJpegEngine::~GpuJpegEngine() {
    if (impl_) {
        if (impl_->stream) impl_->cu->StreamSynchronize(impl_->stream);
        impl_->release();
    }
}

int GpuJpegEngine::device() const noexcept { return impl_->g->ordinal; }
nv::Stream GpuJpegEngine::stream() const noexcept { return impl_->stream; }
bool GpuJpegEngine::hardware() { return impl_->g->wait_hardware() != nullptr; }

void GpuJpegEngine::synchronize() {
    if (impl_->cu->StreamSynchronize(impl_->stream) != 0)
        throw Error(ErrorCode::Cuda, "CUDA stream synchronisation failed on device " + std::to_string(impl_->g->ordinal));
}

void GpuJpegEngine::start_hardware_decoder(int batch, nv::OutputFormat format, int lanes) {
    impl_->g->start_hardware(batch, format, lanes);
}


void GpuJpegEngine::reserve_slots(std::size_t count) {
    Impl& m = *impl_;
    if (m.buffers.size() < count) m.buffers.resize(count);
    if (m.slots.size() < count) m.slots.resize(count);
}

std::vector<GpuJpegEngine::Outcome> GpuJpegEngine::decode(const std::vector<Item*>& items, nv::OutputFormat format,
                                                          const DecodeOptions& opt, std::size_t first_slot) {
    Impl& m = *impl_;
    m.g->make_current();
    const std::size_t n = items.size();
    reserve_slots(first_slot + n);
    std::vector<Outcome> out(n, Outcome::Decoded);

    const auto t0 = std::chrono::steady_clock::now();
    // The hardware decoder: its set-up may still be running (it starts on its own thread in the lane's
    // warm-up, start_hardware_decoder).
    const nv::Handle hwh = m.g->wait_hardware();
    // Headers: size, sampling, pixel limit, from the header the load stage read with libjpeg-turbo on the
    // reader threads (in parallel, before the batch reaches this thread). Anything the GPU decoders do not
    // take is left to the CPU, whose decoder then names any problem.
    std::vector<std::size_t> hw_list, gpu_list;
    for (std::size_t i = 0; i < n; ++i) {
        Item& it = *items[i];
        if (it.jpeg_header.components == 0) read_jpeg_header(it.jpeg, it.jpeg_header);
        const JpegHeader& h = it.jpeg_header;
        const nv::ChromaSubsampling css = h.ycbcr ? sampling_of(h) : nv::kCssUnknown;
        if (css == nv::kCssUnknown || h.arithmetic || h.width <= 0 || h.height <= 0) {
            out[i] = Outcome::Declined;
            continue;
        }
        try {
            // The CPU decoders' header check (the pixel limit; the output format's limits where opt names one).
            checked_image_bytes(static_cast<std::uint64_t>(h.width), static_cast<std::uint64_t>(h.height), 3, 8, opt,
                                display_name(it.input.path));
            check_jpeg_scans(h.scans, opt.limits, display_name(it.input.path));
            m.layout(first_slot + i, h.width, h.height, css, format);
        } catch (const std::exception& e) {
            it.error = file_message(display_name(it.input.path), e);
            out[i] = Outcome::Failed;
            continue;
        }
        // The hardware decoder takes baseline (sequential, Huffman) files, not 4:1:1 / 4:1:0.
        const bool hw_ok = hwh && !h.progressive && css != nv::kCss411 && css != nv::kCss410;
        (hw_ok ? hw_list : gpu_list).push_back(i);
    }

    // One batched call per backend; when a batch fails, its images are decoded one at a time so that only
    // the damaged file fails.
    const double layout_ms = ms_since(t0);
    std::string trace;
    auto run_batch = [&](bool hardware, const std::vector<std::size_t>& list) {
        if (list.empty()) return;
        const auto tb = std::chrono::steady_clock::now();
        std::vector<const unsigned char*> data;
        std::vector<std::size_t> lengths;
        std::vector<nv::Image> dest;
        for (std::size_t i : list) {
            data.push_back(items[i]->jpeg.data());
            lengths.push_back(items[i]->jpeg.size());
            dest.push_back(m.slots[first_slot + i].image);
        }
        Impl::BatchState& b = hardware ? m.hw[format] : m.hybrid;
        nv::Status s = m.prepare(b, hardware ? hwh : m.g->hybrid_handle(), static_cast<int>(list.size()), format, hardware);
        // A hardware state initialised for more images: the batch is padded with copies of its first file,
        // decoded into slots of their own (cheaper than initialising the state again, which allocates).
        for (std::size_t p = 0; s == nv::kSuccess && data.size() < static_cast<std::size_t>(b.size); ++p) {
            if (m.pad_slots.size() <= p) {
                m.pad_slots.resize(p + 1);
                m.pad_buffers.resize(p + 1);
            }
            const GpuDecoded& first = m.slots[first_slot + list[0]];
            Impl::layout_into(m.pad_slots[p], m.pad_buffers[p], first.width, first.height, first.subsampling, format);
            data.push_back(data[0]);
            lengths.push_back(lengths[0]);
            dest.push_back(m.pad_slots[p].image);
        }
        if (s == nv::kSuccess) s = m.nj->DecodeBatched(b.handle, b.state, data.data(), lengths.data(), dest.data(), m.stream);
        if (s == nv::kSuccess && m.cu->StreamSynchronize(m.stream) == 0) {
            if (gpu_jpeg_trace())
                trace += std::string(hardware ? " hardware" : " gpu") + " batch of " + std::to_string(list.size()) + " " +
                         std::to_string(ms_since(tb)) + " ms;";
            return;
        }
        b.size = 0;  // initialise again next time: a failed call may leave the state half set up
        if (gpu_jpeg_trace())
            trace += std::string(hardware ? " hardware" : " gpu") + " batch of " + std::to_string(list.size()) +
                     " failed (" + nv::status_name(s) + "), one by one;";
        for (std::size_t i : list) {
            Item& it = *items[i];
            nv::Image d = m.slots[first_slot + i].image;
            nv::Status one = m.nj->Decode(m.g->default_handle(), m.single(), it.jpeg.data(), it.jpeg.size(), format, &d,
                                          m.stream);
            if (one == nv::kSuccess && m.cu->StreamSynchronize(m.stream) != 0) one = nv::kExecutionFailed;
            if (one == nv::kJpegNotSupported) {
                out[i] = Outcome::Declined;
            } else if (one != nv::kSuccess) {
                it.error = display_name(it.input.path) + ": truncated or corrupt JPEG (GPU decoder: " +
                           nv::status_name(one) + ")";
                out[i] = Outcome::Failed;
            }
        }
    };
    run_batch(true, hw_list);
    run_batch(false, gpu_list);
    if (gpu_jpeg_trace())
        gpu_jpeg_trace_line("decode " + std::to_string(n) + ": layout " + std::to_string(layout_ms) + " ms;" + trace +
                            " total " + std::to_string(ms_since(t0)) + " ms");
    return out;
}

const GpuDecoded& GpuJpegEngine::decoded(std::size_t slot) const { return impl_->slots.at(slot); }

imghist::ImageView GpuJpegEngine::view(std::size_t slot, int c) const {
    const GpuDecoded& d = impl_->slots.at(slot);
    if (d.format == nv::kOutputYUV)
        return imghist::ImageView::device(d.image.channel[c], d.plane_w[c], d.plane_h[c], imghist::SampleType::U8, 1,
                                          d.image.pitch[c]);
    return imghist::ImageView::device(d.image.channel[0], d.width, d.height, imghist::SampleType::U8, 3,
                                      d.image.pitch[0]);
}

namespace {
// Runs work(t) for t = 0 .. threads-1, t = 0 on the calling thread, the others on threads of their own
// (a few per batch: their creation costs microseconds against milliseconds of encoding).
void on_threads(std::size_t threads, const std::function<void(std::size_t)>& work) {
    std::vector<std::thread> others;
    for (std::size_t t = 1; t < threads; ++t) others.emplace_back(work, t);
    work(0);
    for (auto& th : others) th.join();
}
}  // namespace

void GpuJpegEngine::prepare_encoders(bool warm) {
    Impl& m = *impl_;
    m.g->make_current();
    const nv::Handle h = m.g->default_handle();
    const bool made = m.encoders.empty();
    if (made) {
        m.encoders.resize(kEncoderStates, nullptr);
        for (std::size_t k = 0; k < kEncoderStates; ++k)
            nv_check(m.nj->EncoderStateCreate(h, &m.encoders[k], m.enc_streams[k / m.per_thread]),
                     "nvjpegEncoderStateCreate");
    }
    if (!warm || !made) return;
    // A state's first encode allocates its buffers (about 9 ms each on an H100; 32 states one after the other
    // took 0.26-0.33 s, on four threads 0.09-0.12 s): do that now, on a blank 1920x1080 4:2:0 image, while the
    // first files are read. Larger images grow the buffers later.
    const int w = 1920, hgt = 1080;
    imghist::DeviceBuffer blank(static_cast<std::size_t>(w) * hgt * 3 / 2);
    blank.fill_zero(m.stream);
    nv::Image img{};
    auto* base = blank.as<unsigned char>();
    img.channel[0] = base;
    img.pitch[0] = w;
    img.channel[1] = base + static_cast<std::size_t>(w) * hgt;
    img.pitch[1] = w / 2;
    img.channel[2] = img.channel[1] + static_cast<std::size_t>(w / 2) * (hgt / 2);
    img.pitch[2] = w / 2;
    const nv::EncoderParams p = m.params_for(nv::kCss420, 90);
    synchronize();
    std::vector<std::string> errors(m.enc_streams.size());
    on_threads(m.enc_streams.size(), [&](std::size_t t) {
        try {
            m.g->make_current();
            const nv::Stream s = m.enc_streams[t];
            Bytes out;
            for (std::size_t k = t * m.per_thread; k < (t + 1) * m.per_thread; ++k) {
                nv_check(m.nj->EncodeYUV(h, m.encoders[k], p, &img, nv::kCss420, w, hgt, s), "nvjpegEncodeYUV");
                std::size_t length = 0;
                nv_check(m.nj->EncodeRetrieveBitstream(h, m.encoders[k], nullptr, &length, s), "nvjpegEncodeRetrieveBitstream");
                out.resize(length);
                nv_check(m.nj->EncodeRetrieveBitstream(h, m.encoders[k], out.data(), &length, s), "nvjpegEncodeRetrieveBitstream");
            }
        } catch (const std::exception& e) {
            errors[t] = user_message(e);
        }
    });
    for (const std::string& e : errors)
        if (!e.empty()) throw Error(ErrorCode::Cuda, e);
}

void GpuJpegEngine::encode(const std::vector<Item*>& items, const std::vector<std::size_t>& slots,
                           const EncodeOptions& opt, bool wait_for_lane) {
    Impl& m = *impl_;
    const auto t0 = std::chrono::steady_clock::now();
    if (items.size() != slots.size())
        throw Error(ErrorCode::InvalidArgument, "GpuJpegEngine::encode: one slot per item expected");
    prepare_encoders(false);
    const nv::Handle h = m.g->default_handle();
    // Each image's parameters, made here on the lane's thread (params_for fills a map) before the encoding
    // threads read them. As the CPU encoder: --quality, else the input's estimated quality, else 90.
    const std::size_t n = slots.size();
    std::vector<nv::EncoderParams> params(n);
    for (std::size_t k = 0; k < n; ++k) {
        const GpuDecoded& d = m.slots.at(slots[k]);
        const int quality = jpeg_quality_for(opt, items[k]->jpeg_header.meta);
        params[k] = m.params_for(d.format == nv::kOutputYUV ? d.subsampling : nv::kCss420, quality);
    }
    // The encoding streams read what the lane's stream decoded and processed.
    if (wait_for_lane) synchronize();
    // nvJPEG's encoder takes one image per call (there is no batched encode in nvJPEG 11-13), and a call
    // keeps the host busy while the GPU's part is short: the batch is split over encode_threads(), each
    // with its own stream and states (measured on an H100, 128 1920x1080 images: 25 ms on one thread,
    // 17.5 ms on two, 13-14 ms on four). A thread works in rounds of its states: it enqueues a round's
    // encodes, then collects their bitstreams (each state holds one until it is retrieved; the first
    // retrieval waits for the round).
    const std::size_t threads = std::clamp<std::size_t>((n + m.per_thread - 1) / m.per_thread, 1, m.enc_streams.size());
    on_threads(threads, [&](std::size_t t) {
        const std::size_t first = n * t / threads, last = n * (t + 1) / threads;
        auto fail = [&](std::size_t k, const std::string& why) {
            Item& it = *items[k];
            it.encoded.clear();
            it.error = display_name(it.output, true) + ": cannot encode JPEG on the GPU (" + why + ")";
        };
        try {
            m.g->make_current();
        } catch (const std::exception& e) {
            for (std::size_t k = first; k < last; ++k) fail(k, user_message(e));
            return;
        }
        const nv::Stream stream = m.enc_streams[t];
        const nv::EncoderState* states = &m.encoders[t * m.per_thread];
        for (std::size_t round = first; round < last; round += m.per_thread) {
            const std::size_t end = std::min(last, round + m.per_thread);
            bool queued[kEncoderStates] = {};
            for (std::size_t k = round; k < end; ++k) {
                const GpuDecoded& d = m.slots.at(slots[k]);
                const nv::EncoderState st = states[k - round];
                nv::Status s;
                if (d.format == nv::kOutputYUV) {
                    s = m.nj->EncodeYUV(h, st, params[k], &d.image, d.subsampling, d.width, d.height, stream);
                } else {
                    const nv::InputFormat in = d.format == nv::kOutputBGRI ? nv::kInputBGRI : nv::kInputRGBI;
                    s = m.nj->EncodeImage(h, st, params[k], &d.image, in, d.width, d.height, stream);
                }
                if (s != nv::kSuccess)
                    fail(k, nv::status_name(s));
                else
                    queued[k - round] = true;
            }
            for (std::size_t k = round; k < end; ++k) {
                if (!queued[k - round]) continue;
                Item& it = *items[k];
                const nv::EncoderState st = states[k - round];
                // The size first, then the bitstream straight into the item: no scratch buffer, one copy.
                std::size_t length = 0;
                nv::Status s = m.nj->EncodeRetrieveBitstream(h, st, nullptr, &length, stream);
                if (s == nv::kSuccess) {
                    it.encoded.resize(length);
                    s = m.nj->EncodeRetrieveBitstream(h, st, it.encoded.data(), &length, stream);
                    it.encoded.resize(length);
                }
                if (s != nv::kSuccess) fail(k, nv::status_name(s));
            }
        }
    });
    if (gpu_jpeg_trace())
        gpu_jpeg_trace_line("encode " + std::to_string(n) + " on " + std::to_string(threads) + " threads: " +
                            std::to_string(ms_since(t0)) + " ms");
}

void GpuJpegEngine::download(std::size_t slot, void* host, std::size_t host_pitch) {
    Impl& m = *impl_;
    const GpuDecoded& d = m.slots.at(slot);
    const std::size_t row = static_cast<std::size_t>(d.width) * 3;
    if (d.format == nv::kOutputYUV || host_pitch != row)
        throw Error(ErrorCode::InvalidArgument, "GpuJpegEngine::download: an interleaved slot and packed rows are expected");
    m.buffers.at(slot).download(host, row * static_cast<std::size_t>(d.height), m.stream);
    synchronize();
}

}  // namespace cli
