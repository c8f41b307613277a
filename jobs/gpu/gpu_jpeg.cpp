#include "gpu/gpu_jpeg.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include "imghist/histogram.hpp"
#include "io/errors.hpp"
#include "pipeline/batch_worker.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/trace.hpp"
#include "pipeline/tuning.hpp"

namespace cli {

namespace {

std::atomic<bool> g_gpu_used{false};

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

[[noreturn]] void nv_fail(nv::Status s, const std::string& what) {
    throw Error(ErrorCode::Cuda, what + " failed (" + nv::status_name(s) + ")");
}
void nv_check(nv::Status s, const char* what) {
    if (s != nv::kSuccess) nv_fail(s, what);
}

std::size_t align256(std::size_t n) { return (n + 255) & ~std::size_t(255); }

/// A 16x16 baseline JPEG: what pads a hardware batch to its state's size (its decode costs next to nothing).
const Bytes& padding_jpeg() {
    static const Bytes jpeg = [] {
        Image img(16, 16, 3, 8);
        std::memset(img.data(), 128, img.bytes());
        return encode_jpeg(img, EncodeOptions{}, "padding");
    }();
    return jpeg;
}

}  // namespace

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

int gpu_jpeg_exit(int code) {
    if (!g_gpu_used.load() && !batch_threads_started()) return code;
    std::fflush(nullptr);
    std::cout.flush();
    std::cerr.flush();
    if (!pipeline_tuning().fast_exit) {
        // A set-up may still be running on its thread (a run whose files were all done without it): the
        // process's teardown must not start under it.
        wait_for_batch_threads();
        GpuDevice::wait_for_setups();
        return code;
    }
    // Every output is complete by now (written, made durable and renamed), and so is everything printed. What
    // remains is tearing down the CUDA runtime, nvJPEG's handles and the memory they hold, which the driver also
    // does when the process ends: measured on an H100 (docs/DESIGN.md), a 1000-image run's process ended
    // 0.41-0.47 s after this point with the normal exit, 0.19-0.29 s with this one.
    trace_line("exit");
    std::_Exit(code);
}

bool luma_sampling(nv::ChromaSubsampling css, int& h, int& v) {
    switch (css) {
        case nv::kCss444: h = 1, v = 1; return true;
        case nv::kCss422: h = 2, v = 1; return true;
        case nv::kCss420: h = 2, v = 2; return true;
        case nv::kCss440: h = 1, v = 2; return true;
        case nv::kCss411: h = 4, v = 1; return true;
        case nv::kCss410: h = 4, v = 2; return true;
        default: return false;
    }
}

nv::ChromaSubsampling sampling_of(const JpegHeader& h) {
    if (!h.ycbcr || h.h_samp[1] != 1 || h.v_samp[1] != 1 || h.h_samp[2] != 1 || h.v_samp[2] != 1) return nv::kCssUnknown;
    for (const nv::ChromaSubsampling css : {nv::kCss444, nv::kCss422, nv::kCss420, nv::kCss440, nv::kCss411, nv::kCss410}) {
        int hs = 0, vs = 0;
        if (luma_sampling(css, hs, vs) && hs == h.h_samp[0] && vs == h.v_samp[0]) return css;
    }
    return nv::kCssUnknown;
}

bool hardware_sampling(nv::ChromaSubsampling css) {
    return css == nv::kCss444 || css == nv::kCss422 || css == nv::kCss420 || css == nv::kCss440;
}

// ---- DecodedBatch ------------------------------------------------------------------------------------------

void DecodedBatch::layout(const std::vector<Shape>& shapes) {
    slots_.assign(shapes.size(), GpuDecoded{});
    std::vector<std::size_t> offsets[3];
    for (auto& o : offsets) o.assign(shapes.size(), 0);
    std::size_t bytes = 0;
    // Every planar slot's Y plane first (equally spaced when the images have one size), then the rest.
    for (int pass = 0; pass < 2; ++pass)
        for (std::size_t i = 0; i < shapes.size(); ++i) {
            const Shape& s = shapes[i];
            GpuDecoded& d = slots_[i];
            d.width = s.width;
            d.height = s.height;
            d.subsampling = s.subsampling;
            d.format = s.format;
            if (s.format != nv::kOutputYUV) {
                if (pass == 1) {
                    offsets[0][i] = bytes;
                    bytes = align256(bytes + static_cast<std::size_t>(s.width) * 3 * static_cast<std::size_t>(s.height));
                }
                continue;
            }
            // Chroma planes: the luma size divided by Y's sampling factors, rounded up (libjpeg's
            // downsampled_width / height).
            int dx = 1, dy = 1;
            luma_sampling(s.subsampling, dx, dy);
            for (int c = 0; c < 3; ++c) {
                d.plane_w[c] = c == 0 ? s.width : (s.width + dx - 1) / dx;
                d.plane_h[c] = c == 0 ? s.height : (s.height + dy - 1) / dy;
            }
            for (int c = pass == 0 ? 0 : 1; c < (pass == 0 ? 1 : 3); ++c) {
                offsets[c][i] = bytes;
                bytes = align256(bytes + static_cast<std::size_t>(d.plane_w[c]) * static_cast<std::size_t>(d.plane_h[c]));
            }
        }
    arena_.reserve(std::max<std::size_t>(bytes, 256));
    auto* base = arena_.as<unsigned char>();
    for (std::size_t i = 0; i < slots_.size(); ++i) {
        GpuDecoded& d = slots_[i];
        if (d.format == nv::kOutputYUV) {
            for (int c = 0; c < 3; ++c) {
                d.image.channel[c] = base + offsets[c][i];
                d.image.pitch[c] = static_cast<std::size_t>(d.plane_w[c]);
            }
        } else {
            d.image.channel[0] = base + offsets[0][i];
            d.image.pitch[0] = static_cast<std::size_t>(d.width) * 3;
        }
    }
}

imghist::ImageView DecodedBatch::view(std::size_t i, int c) const {
    const GpuDecoded& d = slots_.at(i);
    if (d.format == nv::kOutputYUV)
        return imghist::ImageView::device(d.image.channel[c], d.plane_w[c], d.plane_h[c], imghist::SampleType::U8, 1,
                                          d.image.pitch[c]);
    return imghist::ImageView::device(d.image.channel[0], d.width, d.height, imghist::SampleType::U8, 3,
                                      d.image.pitch[0]);
}

void DecodedBatch::download(std::size_t i, void* host, const nv::DriverApi& cu, nv::Stream stream) const {
    const GpuDecoded& d = slots_.at(i);
    if (d.format == nv::kOutputYUV)
        throw Error(ErrorCode::InvalidArgument, "DecodedBatch::download: an interleaved slot is expected");
    const std::size_t bytes = static_cast<std::size_t>(d.width) * 3 * static_cast<std::size_t>(d.height);
    if (cu.MemcpyDtoHAsync(host, reinterpret_cast<unsigned long long>(d.image.channel[0]), bytes, stream) != 0)
        throw Error(ErrorCode::Cuda, "cannot copy a decoded image to the host");
}

// ---- GpuDevice ---------------------------------------------------------------------------------------------

namespace {
struct Registry {
    std::mutex m;
    std::map<int, std::unique_ptr<std::mutex>> locks;
    std::map<int, GpuDevice*> all;
};
Registry& registry() {
    static Registry* r = new Registry;  // lives for the process, as the devices do
    return *r;
}
}  // namespace

GpuDevice& GpuDevice::get(int ordinal, bool spin_wait) {
    Registry& r = registry();
    std::mutex* lock = nullptr;
    {
        std::lock_guard<std::mutex> l(r.m);
        auto it = r.all.find(ordinal);
        if (it != r.all.end()) return *it->second;
        auto& slot = r.locks[ordinal];
        if (!slot) slot = std::make_unique<std::mutex>();
        lock = slot.get();
    }
    // GPUs start side by side (--device all): one lock per device while it is created.
    std::lock_guard<std::mutex> l(*lock);
    {
        std::lock_guard<std::mutex> lr(r.m);
        auto it = r.all.find(ordinal);
        if (it != r.all.end()) return *it->second;
    }
    std::unique_ptr<GpuDevice> made(new GpuDevice);
    made->open(ordinal, spin_wait);  // throws: the next caller tries again
    g_gpu_used = true;
    std::lock_guard<std::mutex> lr(r.m);
    return *(r.all[ordinal] = made.release());
}

void GpuDevice::wait_for_setups() {
    std::vector<GpuDevice*> devices;
    {
        Registry& r = registry();
        std::lock_guard<std::mutex> l(r.m);
        for (auto& [ordinal, d] : r.all) devices.push_back(d);
    }
    for (GpuDevice* d : devices) {
        std::unique_lock<std::mutex> l(d->hw_m_);
        d->hw_cv_.wait(l, [&] { return d->hw_status_ == Hw::NotStarted || d->hw_thread_done_; });
    }
}

void GpuDevice::open(int dev, bool spin_wait) {
    const auto t0 = std::chrono::steady_clock::now();
    std::string why;
    ordinal_ = dev;
    nj_ = nv::nvjpeg(&why);
    cu_ = nj_ ? nv::driver(&why) : nullptr;
    if (!nj_ || !cu_) throw Error(ErrorCode::NoDevice, "GPU JPEG pipeline unavailable: " + why);
    if (cu_->DeviceGet(&cu_device_, dev) != 0)
        throw Error(ErrorCode::NoDevice, "CUDA device " + std::to_string(dev) + " is not usable");
    // How the threads that wait for the device (decoder states, encoders, counts) wait (tuning.hpp, "wait"). A
    // driver that refuses (the runtime made the context already, on an old driver) keeps its own choice.
    cu_->DevicePrimaryCtxSetFlags(cu_device_, spin_wait ? nv::kCtxSchedAuto : nv::kCtxSchedBlockingSync);
    if (cu_->DevicePrimaryCtxRetain(&ctx_, cu_device_) != 0)
        throw Error(ErrorCode::NoDevice, "CUDA device " + std::to_string(dev) + " is not usable");
    trace_line("cuda:" + std::to_string(dev) + ": context " + std::to_string(ms_since(t0)) + " ms");
}

void GpuDevice::make_current() const {
    if (cu_->CtxSetCurrent(ctx_) != 0)
        throw Error(ErrorCode::Cuda, "cannot make CUDA device " + std::to_string(ordinal_) + " current");
}

nv::Stream GpuDevice::new_stream() const {
    make_current();
    nv::Stream s = nullptr;
    if (cu_->StreamCreate(&s, nv::kStreamNonBlocking) != 0)
        throw Error(ErrorCode::Cuda, "cannot create a CUDA stream on device " + std::to_string(ordinal_));
    return s;
}

nv::Event GpuDevice::new_event(bool timing) const {
    make_current();
    nv::Event e = nullptr;
    if (cu_->EventCreate(&e, timing ? nv::kEventDefault : nv::kEventDisableTiming) != 0)
        throw Error(ErrorCode::Cuda, "cannot create a CUDA event on device " + std::to_string(ordinal_));
    return e;
}

void GpuDevice::start_hardware(int batch, nv::OutputFormat format, int states) {
    {
        std::lock_guard<std::mutex> l(hw_m_);
        if (hw_status_ != Hw::NotStarted) return;
        hw_status_ = Hw::Starting;
        hw_batch_ = batch;
        hw_format_ = format;
    }
    std::thread([this, batch, format, states] {
        name_this_thread("ih:g" + std::to_string(ordinal_) + "-setup");
        const auto t0 = std::chrono::steady_clock::now();
        nv::Handle h = nullptr;
        double handle_ms = 0, first_ms = 0;
        int made = 0;
        // Only GPUs with JPEG decoders (A100, H100, H200, ...) have the hardware backend: its absence is not an
        // error.
        if (cu_->CtxSetCurrent(ctx_) != 0 || nj_->CreateEx(nv::kBackendHardware, nullptr, nullptr, 0, &h) != nv::kSuccess)
            h = nullptr;
        handle_ms = ms_since(t0);
        for (int k = 0; k < std::max(1, states); ++k) {
            nv::JpegState st = nullptr;
            if (h && nj_->JpegStateCreate(h, &st) == nv::kSuccess &&
                nj_->DecodeBatchedInitialize(h, st, batch, 1, format) != nv::kSuccess) {
                nj_->JpegStateDestroy(st);
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
        trace_line("cuda:" + std::to_string(ordinal_) + ": hardware decoder " +
                   (h ? "ready after " + std::to_string(first_ms) + " ms (handle " + std::to_string(handle_ms) + " ms), " +
                            std::to_string(made) + " batched states of " + std::to_string(batch) + " after " +
                            std::to_string(ms_since(t0)) + " ms"
                      : std::string("absent")));
        {
            std::lock_guard<std::mutex> l(hw_m_);
            hw_thread_done_ = true;
        }
        hw_cv_.notify_all();
    }).detach();  // the device lives for the process; the set-up ends on its own or with the process
}

nv::Handle GpuDevice::hardware(const std::function<bool()>& wanted, bool* abandoned) {
    start_hardware(128, nv::kOutputYUV, 1);
    std::unique_lock<std::mutex> l(hw_m_);
    auto ready = [&] { return hw_status_ == Hw::Ready || hw_status_ == Hw::None; };
    while (!ready()) {
        if (wanted && !wanted()) {
            if (abandoned) *abandoned = true;
            return nullptr;
        }
        hw_cv_.wait_for(l, std::chrono::milliseconds(10));
    }
    return hw_;
}

bool GpuDevice::take_hardware_state(nv::OutputFormat format, nv::JpegState& state, int& batch) {
    std::lock_guard<std::mutex> l(hw_m_);
    if (hw_states_.empty() || hw_format_ != format) return false;
    state = hw_states_.back();
    hw_states_.pop_back();
    batch = hw_batch_;
    return true;
}

nv::Handle GpuDevice::lazy(nv::Backend b, nv::Handle& h, const char* what) {
    std::lock_guard<std::mutex> l(m_);
    if (!h) nv_check(nj_->CreateEx(b, nullptr, nullptr, 0, &h), what);
    return h;
}

nv::Handle GpuDevice::default_handle() { return lazy(nv::kBackendDefault, handle_, "nvjpegCreateEx (default backend)"); }

nv::Handle GpuDevice::hybrid_handle() {
    std::lock_guard<std::mutex> l(m_);
    if (!hybrid_tried_) {
        hybrid_tried_ = true;
        if (nj_->CreateEx(nv::kBackendGpuHybrid, nullptr, nullptr, 0, &hybrid_) != nv::kSuccess) hybrid_ = nullptr;
    }
    if (hybrid_) return hybrid_;
    if (!handle_) nv_check(nj_->CreateEx(nv::kBackendDefault, nullptr, nullptr, 0, &handle_), "nvjpegCreateEx");
    return handle_;
}

nv::EncoderParams GpuDevice::encoder_params(nv::ChromaSubsampling css, int quality) {
    const nv::Handle h = default_handle();
    std::lock_guard<std::mutex> l(params_m_);
    const std::pair<int, int> key(static_cast<int>(css), quality);
    auto it = params_.find(key);
    if (it != params_.end()) return it->second;
    // Their own stream: waiting for it below waits for nothing else (an encoder's stream may be behind a batch).
    if (!params_stream_) params_stream_ = new_stream();
    const nv::Stream s = params_stream_;
    nv::EncoderParams p = nullptr;
    nv_check(nj_->EncoderParamsCreate(h, &p, s), "nvjpegEncoderParamsCreate");
    try {
        nv_check(nj_->EncoderParamsSetQuality(p, quality, s), "nvjpegEncoderParamsSetQuality");
        nv_check(nj_->EncoderParamsSetSamplingFactors(p, css, s), "nvjpegEncoderParamsSetSamplingFactors");
        // libjpeg's defaults (the CPU path) use the standard Huffman tables too.
        nv_check(nj_->EncoderParamsSetOptimizedHuffman(p, 0, s), "nvjpegEncoderParamsSetOptimizedHuffman");
        // Whatever the calls above enqueued is complete before any encoder's stream uses the parameters.
        if (cu_->StreamSynchronize(s) != 0) throw Error(ErrorCode::Cuda, "nvjpegEncoderParams set-up failed");
    } catch (...) {
        nj_->EncoderParamsDestroy(p);
        throw;
    }
    params_[key] = p;
    return p;
}

// ---- GpuDecoder --------------------------------------------------------------------------------------------

GpuDecoder::GpuDecoder(GpuDevice& device, int hardware_states) : d_(device), hw_states_(std::max(1, hardware_states)) {}

GpuDecoder::~GpuDecoder() {
    const nv::NvJpegApi& nj = d_.nj();
    const nv::DriverApi& cu = d_.cu();
    auto release = [&](State& s) {
        if (s.used) {
            cu.EventSynchronize(s.used);
            cu.EventDestroy(s.used);
        }
        if (s.state) nj.JpegStateDestroy(s.state);
    };
    for (auto& [format, states] : hw_)
        for (State& s : states) release(s);
    release(hybrid_);
    if (single_) nj.JpegStateDestroy(single_);
}

bool GpuDecoder::shape_of(const JpegHeader& h, nv::OutputFormat format, DecodedBatch::Shape& shape) {
    const nv::ChromaSubsampling css = sampling_of(h);
    if (css == nv::kCssUnknown || h.arithmetic || h.width <= 0 || h.height <= 0) return false;
    shape = DecodedBatch::Shape{h.width, h.height, css, format};
    return true;
}

nv::JpegState GpuDecoder::single() {
    if (!single_) nv_check(d_.nj().JpegStateCreate(d_.default_handle(), &single_), "nvjpegJpegStateCreate");
    return single_;
}

// Ready for a batch of `n` in `format`: the state exists and is initialised for exactly that, or, for the
// hardware decoder, for at least that (the caller pads the batch to s.size: initialising a state again
// allocates). Its previous decode must have completed before it is used again.
nv::Status GpuDecoder::prepare(State& s, nv::Handle h, int n, nv::OutputFormat format, bool hardware) {
    const nv::NvJpegApi& nj = d_.nj();
    if (!s.state) {
        s.handle = h;
        s.size = 0;
        if (hardware && d_.take_hardware_state(format, s.state, s.size)) {
            s.format = format;
        } else {
            const nv::Status st = nj.JpegStateCreate(h, &s.state);
            if (st != nv::kSuccess) {
                s.state = nullptr;
                return st;
            }
        }
        s.used = d_.new_event(false);
    }
    if (s.pending && d_.cu().EventSynchronize(s.used) != 0) return nv::kExecutionFailed;
    s.pending = false;
    if (s.format == format && (s.size == n || (hardware && s.size > n))) return nv::kSuccess;
    // max_cpu_threads is not used by current nvJPEG versions (documented as ignored); 1 is valid everywhere.
    const nv::Status st = nj.DecodeBatchedInitialize(s.handle, s.state, n, 1, format);
    s.size = st == nv::kSuccess ? n : 0;
    s.format = format;
    s.reserved_w = s.reserved_h = 0;
    return st;
}

// Left alone, a hardware state's buffers grow with the largest batch so far: each growth frees buffers inside
// nvjpegDecodeBatched, and a free waits for everything on the device (the encoders' work too) while the
// decoder is the busiest stage (docs/DESIGN.md, "Hardware decoder states sized once"). Sized for the largest
// image the state has seen, they stop growing. The largest single image, each within --max-pixels (checked
// from its header before the batch): not the largest width of one file and height of another, whose product
// no limit bounds.
void GpuDecoder::reserve(State& s, const std::vector<std::size_t>& list, const std::vector<std::size_t>& slots,
                         const DecodedBatch& out, nv::OutputFormat format) {
    const nv::NvJpegApi& nj = d_.nj();
    if (!nj.DecodeBatchedPreAllocate) return;
    int w = s.reserved_w, h = s.reserved_h;
    std::uint64_t area = static_cast<std::uint64_t>(w) * static_cast<std::uint64_t>(h);
    nv::ChromaSubsampling css = s.reserved_css;
    for (std::size_t i : list) {
        const GpuDecoded& d = out[slots[i]];
        const std::uint64_t a = static_cast<std::uint64_t>(d.width) * static_cast<std::uint64_t>(d.height);
        if (a > area) {
            area = a;
            w = d.width;
            h = d.height;
        }
        // One sampling for the whole state: a batch that mixes them is sized as 4:4:4, the largest.
        css = css == nv::kCssUnknown || css == d.subsampling ? d.subsampling : nv::kCss444;
    }
    if (w == s.reserved_w && h == s.reserved_h && css == s.reserved_css) return;
    // A refusal costs nothing: the state then grows as before.
    if (nj.DecodeBatchedPreAllocate(s.handle, s.state, s.size, w, h, css, format) == nv::kSuccess) {
        s.reserved_w = w;
        s.reserved_h = h;
        s.reserved_css = css;
    }
}

bool GpuDecoder::run_batch(bool hardware, const std::vector<std::size_t>& list, const std::vector<Item*>& items,
                           const std::vector<std::size_t>& slots, nv::OutputFormat format, DecodedBatch& out,
                           nv::Stream stream, std::vector<Outcome>& outcomes) {
    if (list.empty()) return true;
    const auto t0 = std::chrono::steady_clock::now();
    State* s = &hybrid_;
    nv::Handle h = nullptr;
    if (hardware) {
        std::vector<State>& states = hw_[format];
        if (states.empty()) states.resize(static_cast<std::size_t>(hw_states_));
        std::size_t& next = hw_next_[format];
        s = &states[next % states.size()];
        ++next;
        h = d_.hardware();
    } else {
        h = d_.hybrid_handle();
    }
    std::vector<const unsigned char*> data;
    std::vector<std::size_t> lengths;
    std::vector<nv::Image> dest;
    for (std::size_t i : list) {
        data.push_back(items[i]->jpeg.data());
        lengths.push_back(items[i]->jpeg.size());
        dest.push_back(out[slots[i]].image);
    }
    nv::Status st = prepare(*s, h, static_cast<int>(list.size()), format, hardware);
    if (st == nv::kSuccess && hardware) reserve(*s, list, slots, out, format);
    const double prepared_ms = ms_since(t0);
    if (st == nv::kSuccess && data.size() < static_cast<std::size_t>(s->size)) {
        // Padding: the hardware state decodes exactly its size; the rest are a 16x16 JPEG into a scratch buffer.
        const Bytes& pad = padding_jpeg();
        const std::size_t per = align256(16 * 16 * 3);
        const std::size_t count = static_cast<std::size_t>(s->size) - data.size();
        // Sized once for a whole state (growing would free the old buffer, which waits for the device). The
        // batches of two states may write their padding here at the same time: nobody reads it.
        pad_out_.reserve(per * static_cast<std::size_t>(s->size));
        for (std::size_t p = 0; p < count; ++p) {
            nv::Image img{};
            auto* base = pad_out_.as<unsigned char>() + p * per;
            if (format == nv::kOutputYUV) {
                img.channel[0] = base;
                img.pitch[0] = 16;
                img.channel[1] = base + 256;
                img.pitch[1] = 8;
                img.channel[2] = base + 256 + 64;
                img.pitch[2] = 8;
            } else {
                img.channel[0] = base;
                img.pitch[0] = 48;
            }
            data.push_back(pad.data());
            lengths.push_back(pad.size());
            dest.push_back(img);
        }
    }
    if (st == nv::kSuccess) st = d_.nj().DecodeBatched(s->handle, s->state, data.data(), lengths.data(), dest.data(), stream);
    if (st == nv::kSuccess && d_.cu().EventRecord(s->used, stream) == 0) {
        s->pending = true;
        if (hardware)
            for (std::size_t i : list) out.mark_exact(slots[i]);
        char line[96];
        // The host's time: readying the state (its set-up, or waiting for its previous decode), then the call
        // (with the padding of a short batch).
        std::snprintf(line, sizeof line, " %s %zu (state %.1f ms, call %.1f ms);", hardware ? "hardware" : "hybrid",
                      list.size(), prepared_ms, ms_since(t0) - prepared_ms);
        trace_ += line;
        return true;
    }
    s->size = 0;  // initialise again next time: a failed call may leave the state half set up
    trace_ += std::string(hardware ? " hardware" : " hybrid") + " batch of " + std::to_string(list.size()) + " failed (" +
              nv::status_name(st) + "), one by one;";
    one_by_one(list, items, slots, format, out, stream, outcomes);
    return false;
}

// The image-by-image retry of a failed batch: each image waits for its own decode, so a damaged file fails
// alone and by name.
void GpuDecoder::one_by_one(const std::vector<std::size_t>& list, const std::vector<Item*>& items,
                            const std::vector<std::size_t>& slots, nv::OutputFormat format, DecodedBatch& out,
                            nv::Stream stream, std::vector<Outcome>& outcomes) {
    for (std::size_t i : list) {
        Item& it = *items[i];
        nv::Image d = out[slots[i]].image;
        nv::Status one = d_.nj().Decode(d_.default_handle(), single(), it.jpeg.data(), it.jpeg.size(), format, &d, stream);
        if (one == nv::kSuccess && d_.cu().StreamSynchronize(stream) != 0) one = nv::kExecutionFailed;
        if (one == nv::kJpegNotSupported) {
            outcomes[i] = Outcome::Declined;
        } else if (one != nv::kSuccess) {
            it.error = display_name(it.input.path) + ": truncated or corrupt JPEG (GPU decoder: " + nv::status_name(one) + ")";
            outcomes[i] = Outcome::Failed;
        }
    }
}

std::vector<GpuDecoder::Outcome> GpuDecoder::decode(const std::vector<Item*>& items, const std::vector<std::size_t>& slots,
                                                    nv::OutputFormat format, DecodedBatch& out, nv::Stream stream) {
    d_.make_current();
    trace_.clear();
    std::vector<Outcome> outcomes(items.size(), Outcome::Decoded);
    const nv::Handle hw = d_.hardware();
    std::vector<std::size_t> hw_list, hybrid_list;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const JpegHeader& h = items[i]->jpeg_header;
        const nv::ChromaSubsampling css = out[slots[i]].subsampling;
        const bool hw_ok = hw && !h.progressive && hardware_sampling(css);
        (hw_ok ? hw_list : hybrid_list).push_back(i);
    }
    run_batch(true, hw_list, items, slots, format, out, stream, outcomes);
    run_batch(false, hybrid_list, items, slots, format, out, stream, outcomes);
    return outcomes;
}

// ---- GpuEncoder --------------------------------------------------------------------------------------------

GpuEncoder::GpuEncoder(GpuDevice& device, int states) : d_(device) {
    stream_ = d_.new_stream();
    handle_ = d_.default_handle();
    states_.assign(static_cast<std::size_t>(std::max(1, states)), nullptr);
    for (auto& s : states_) nv_check(d_.nj().EncoderStateCreate(handle_, &s, stream_), "nvjpegEncoderStateCreate");
}

GpuEncoder::~GpuEncoder() {
    d_.cu().StreamSynchronize(stream_);
    for (auto s : states_)
        if (s) d_.nj().EncoderStateDestroy(s);
    d_.cu().StreamDestroy(stream_);
}

void GpuEncoder::warm_up() {
    d_.make_current();
    const int w = 1920, hgt = 1080;
    imghist::DeviceBuffer blank(static_cast<std::size_t>(w) * hgt * 3 / 2);
    blank.fill_zero(stream_);
    GpuDecoded img;
    img.width = w;
    img.height = hgt;
    img.subsampling = nv::kCss420;
    img.format = nv::kOutputYUV;
    auto* base = blank.as<unsigned char>();
    img.image.channel[0] = base;
    img.image.pitch[0] = w;
    img.image.channel[1] = base + static_cast<std::size_t>(w) * hgt;
    img.image.pitch[1] = w / 2;
    img.image.channel[2] = img.image.channel[1] + static_cast<std::size_t>(w / 2) * (hgt / 2);
    img.image.pitch[2] = w / 2;
    Bytes out;
    for (int k = 0; k < states(); ++k) {
        nv_check(enqueue(k, img, 90), "nvjpegEncodeYUV");
        nv_check(retrieve(k, out), "nvjpegEncodeRetrieveBitstream");
    }
}

nv::Status GpuEncoder::enqueue(int k, const GpuDecoded& img, int quality) {
    const nv::EncoderState st = states_.at(static_cast<std::size_t>(k));
    // Interleaved images are written at 4:2:0, the CPU encoder's default.
    const nv::EncoderParams p = d_.encoder_params(img.format == nv::kOutputYUV ? img.subsampling : nv::kCss420, quality);
    if (img.format == nv::kOutputYUV)
        return d_.nj().EncodeYUV(handle_, st, p, &img.image, img.subsampling, img.width, img.height, stream_);
    const nv::InputFormat in = img.format == nv::kOutputBGRI ? nv::kInputBGRI : nv::kInputRGBI;
    return d_.nj().EncodeImage(handle_, st, p, &img.image, in, img.width, img.height, stream_);
}

nv::Status GpuEncoder::retrieve(int k, Bytes& out) {
    const nv::EncoderState st = states_.at(static_cast<std::size_t>(k));
    // The size first, then the bitstream straight into its buffer: no scratch copy.
    std::size_t length = 0;
    nv::Status s = d_.nj().EncodeRetrieveBitstream(handle_, st, nullptr, &length, stream_);
    if (s != nv::kSuccess) return s;
    out.resize(length);
    s = d_.nj().EncodeRetrieveBitstream(handle_, st, out.data(), &length, stream_);
    out.resize(length);
    return s;
}

// ---- GpuJpegEngine -----------------------------------------------------------------------------------------

GpuJpegEngine& GpuJpegEngine::for_thread(int ordinal) {
    thread_local std::map<int, GpuJpegEngine*> engines;  // one per thread and GPU, for the process
    GpuJpegEngine*& e = engines[ordinal];
    if (!e) {
        try {
            e = new GpuJpegEngine(ordinal);
        } catch (...) {
            engines.erase(ordinal);
            throw;
        }
    }
    return *e;
}

GpuJpegEngine::GpuJpegEngine(int ordinal)
    : device_(GpuDevice::get(ordinal)), stream_(device_.new_stream()), decoder_(device_, 1) {}

std::vector<GpuJpegEngine::Outcome> GpuJpegEngine::decode(const std::vector<Item*>& items, nv::OutputFormat format,
                                                          const DecodeOptions& opt) {
    device_.make_current();
    std::vector<Outcome> outcomes(items.size(), Outcome::Declined);
    std::vector<Item*> take;
    std::vector<std::size_t> index;
    std::vector<DecodedBatch::Shape> shapes;
    for (std::size_t i = 0; i < items.size(); ++i) {
        Item& it = *items[i];
        if (it.jpeg_header.components == 0) read_jpeg_header(it.jpeg, it.jpeg_header);
        DecodedBatch::Shape shape;
        if (!GpuDecoder::shape_of(it.jpeg_header, format, shape)) continue;
        try {
            checked_image_bytes(static_cast<std::uint64_t>(shape.width), static_cast<std::uint64_t>(shape.height), 3, 8,
                                opt, display_name(it.input.path));
            check_jpeg_scans(it.jpeg_header.scans, opt.limits, display_name(it.input.path));
        } catch (const std::exception& e) {
            it.error = file_message(display_name(it.input.path), e);
            outcomes[i] = Outcome::Failed;
            continue;
        }
        take.push_back(&it);
        index.push_back(i);
        shapes.push_back(shape);
    }
    // Slot i for items[i]: slots of images not taken stay empty.
    std::vector<DecodedBatch::Shape> all(items.size(), DecodedBatch::Shape{1, 1, nv::kCss444, format});
    for (std::size_t k = 0; k < take.size(); ++k) all[index[k]] = shapes[k];
    batch_.layout(all);
    const std::vector<Outcome> got = decoder_.decode(take, index, format, batch_, stream_);
    for (std::size_t k = 0; k < take.size(); ++k) outcomes[index[k]] = got[k];
    synchronize();
    return outcomes;
}

void GpuJpegEngine::synchronize() {
    if (device_.cu().StreamSynchronize(stream_) != 0)
        throw Error(ErrorCode::Cuda, "CUDA stream synchronisation failed on device " + std::to_string(device_.ordinal()));
}

}  // namespace cli
