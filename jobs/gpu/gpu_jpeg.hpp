// imghist_jobs — nvJPEG on one GPU: the device's shared state (context, handles, the hardware decoder's set-up),
// batched decoding into device memory, and encoders. The folder pipeline (gpu_pipeline.hpp) puts these pieces
// together; GpuJpegEngine is a synchronous convenience around them for tests.
//
// nvJPEG and the CUDA driver are loaded at run time (nvjpeg_api.hpp): without them, or without a GPU,
// gpu_jpeg_available() says why and the CPU codecs run. nvJPEG allows one handle to be used by several threads
// at once as long as each has its own decoder and encoder states ("Thread Safety" in its documentation): the
// handles belong to the device (created once per process), the states to the threads that use them.
//
// What the decoders produce: the stored Y/Cb/Cr planes (identical to libjpeg-turbo's) or interleaved RGB
// (nvJPEG's own upsampling: see tools/imghist/README.md, "GPU JPEG pipeline").
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/nvjpeg_api.hpp"
#include "imghist/buffer.hpp"
#include "imghist/image.hpp"
#include "io/codecs/codec.hpp"
#include "io/codecs/codec_jpeg.hpp"

namespace cli {

struct Item;

/// True when nvJPEG and the CUDA driver load and a CUDA device exists; otherwise `why` says what is missing.
bool gpu_jpeg_available(std::string* why = nullptr);

/// The program's end (main): where a GPU was touched in this process, flushes the output streams and ends
/// the process at once with `code` (the driver's teardown is not waited for: every output is durable by then);
/// otherwise returns `code`. With exit=normal (PipelineTuning) it waits for any GPU set-up still running and
/// returns.
int gpu_jpeg_exit(int code);

/// What one decoded image looks like on the device.
struct GpuDecoded {
    int width = 0, height = 0;
    nv::ChromaSubsampling subsampling = nv::kCssUnknown;
    nv::OutputFormat format = nv::kOutputRGBI;
    nv::Image image{};                     ///< device pointers and pitches
    int plane_w[3] = {}, plane_h[3] = {};  ///< planar formats: each plane's size
    /// Decoded by the hardware decoder, whose planes are libjpeg-turbo's exactly (tests/gpu_jpeg); the other
    /// backends' are within a level of them.
    bool exact = false;
};

/// Y's sampling factors of a YCbCr sampling nvJPEG decodes (Cb and Cr are 1 x 1 in all of them); false for
/// any other.
bool luma_sampling(nv::ChromaSubsampling css, int& h, int& v);
/// nvJPEG's name for a YCbCr header's sampling; kCssUnknown for anything nvJPEG's decoders do not take.
nv::ChromaSubsampling sampling_of(const JpegHeader& h);
/// The samplings the hardware decoder takes (baseline files of them; not 4:1:1 or 4:1:0, which GPU_HYBRID
/// decodes into planes that differ from libjpeg-turbo's: tests/gpu_jpeg).
bool hardware_sampling(nv::ChromaSubsampling css);

/// The decoded images of one batch: slots in one device allocation that grows and is reused. The Y planes of
/// a batch's planar images come first, one after the other, so a batch of one size is a uniform batch for the
/// library's batch filters.
class DecodedBatch {
public:
    struct Shape {
        int width = 0, height = 0;
        nv::ChromaSubsampling subsampling = nv::kCssUnknown;
        nv::OutputFormat format = nv::kOutputYUV;
    };
    /// Lays out one slot per shape (growing the allocation when needed: that frees the old one, which waits
    /// for the device).
    void layout(const std::vector<Shape>& shapes);
    std::size_t size() const noexcept { return slots_.size(); }
    const GpuDecoded& operator[](std::size_t i) const { return slots_.at(i); }
    /// Marks slot i as decoded by the hardware decoder (GpuDecoded::exact).
    void mark_exact(std::size_t i) { slots_.at(i).exact = true; }
    /// Device view of plane c of a planar slot, or of the interleaved image (c = 0, 3 channels).
    imghist::ImageView view(std::size_t i, int c = 0) const;
    /// Copies an interleaved slot to packed host rows (width * 3 bytes) on `stream` (complete once the
    /// stream is synchronised).
    void download(std::size_t i, void* host, const nv::DriverApi& cu, nv::Stream stream) const;

private:
    imghist::DeviceBuffer arena_;
    std::vector<GpuDecoded> slots_;
};

/// One GPU's nvJPEG, shared by every thread that works on it; lives for the process (destroying the handles
/// at exit would race the CUDA runtime's own teardown).
class GpuDevice {
public:
    /// The device `ordinal`'s state, created by the first caller (its context, whose threads wait for the device
    /// spinning with `spin_wait`, else sleeping: the first caller decides). Throws Error(NoDevice).
    static GpuDevice& get(int ordinal, bool spin_wait = false);
    /// Waits until every hardware decoder set-up that was started has ended (before a normal exit).
    static void wait_for_setups();

    int ordinal() const noexcept { return ordinal_; }
    const nv::NvJpegApi& nj() const noexcept { return *nj_; }
    const nv::DriverApi& cu() const noexcept { return *cu_; }
    /// Makes the device's primary context (the CUDA runtime's, so libimghist's too) current on this thread.
    void make_current() const;
    nv::Stream new_stream() const;
    nv::Event new_event(bool timing) const;

    /// Starts the hardware decoder's set-up on a thread of its own (once; later calls do nothing): its handle
    /// and `states` batched states for `batch` images of `format`. It is the longest part of a GPU's start-up
    /// (H100: handle 0.28 s, first state 0.36 s, each further one 0.1 s; bench/experiments/nvjpeg_startup.cpp);
    /// the decoder counts as ready with its first state, the others follow on the same thread.
    void start_hardware(int batch, nv::OutputFormat format, int states);
    /// The hardware decoder's handle once its set-up has ended (started here when nobody did); nullptr on GPUs
    /// without one. With `wanted`, gives up (returns nullptr, `abandoned` set) once it turns false.
    nv::Handle hardware(const std::function<bool()>& wanted = {}, bool* abandoned = nullptr);
    /// A batched state the set-up initialised for `format`, and its batch size; false when none is left.
    bool take_hardware_state(nv::OutputFormat format, nv::JpegState& state, int& batch);
    /// The default backend's handle (encoder, one-by-one decode) and GPU_HYBRID's (batched decode of what the
    /// hardware decoder does not take; the default backend where the library refuses it); made on first use.
    nv::Handle default_handle();
    nv::Handle hybrid_handle();
    /// Encoder parameters for a sampling and quality (libjpeg's standard Huffman tables, as the CPU encoder);
    /// made once on a stream of their own (and waited for: any stream may use them), then shared read-only.
    /// Throws Error(Cuda) naming the nvJPEG call that failed.
    nv::EncoderParams encoder_params(nv::ChromaSubsampling css, int quality);

private:
    GpuDevice() = default;
    void open(int ordinal, bool spin_wait);
    nv::Handle lazy(nv::Backend b, nv::Handle& h, const char* what);

    int ordinal_ = 0;
    const nv::NvJpegApi* nj_ = nullptr;
    const nv::DriverApi* cu_ = nullptr;
    nv::CuContext ctx_ = nullptr;
    int cu_device_ = 0;

    enum class Hw : std::uint8_t { NotStarted, Starting, Ready, None };
    std::mutex hw_m_;
    std::condition_variable hw_cv_;
    Hw hw_status_ = Hw::NotStarted;
    bool hw_thread_done_ = false;
    nv::Handle hw_ = nullptr;
    std::vector<nv::JpegState> hw_states_;
    int hw_batch_ = 0;
    nv::OutputFormat hw_format_ = nv::kOutputUnchanged;

    std::mutex m_;
    nv::Handle handle_ = nullptr, hybrid_ = nullptr;
    bool hybrid_tried_ = false;
    std::mutex params_m_;  // not m_: the handles are not held up while parameters are made
    nv::Stream params_stream_ = nullptr;
    std::map<std::pair<int, int>, nv::EncoderParams> params_;
};

/// Batched decoding on one stream: the hardware decoder for baseline files, its states used in turn (a state
/// is reused once its previous decode has completed, so the host part of one batch overlaps the device part
/// of the one before), GPU_HYBRID for the rest; image by image on the default backend when a batch call
/// fails, so that only a damaged file fails. One thread at a time.
class GpuDecoder {
public:
    GpuDecoder(GpuDevice& device, int hardware_states);
    ~GpuDecoder();
    GpuDecoder(const GpuDecoder&) = delete;
    GpuDecoder& operator=(const GpuDecoder&) = delete;

    enum class Outcome : std::uint8_t { Decoded, Failed, Declined };
    /// Enqueues the decode of items[k]->jpeg into slots[k] of `out` (laid out for `format` by the caller, from
    /// shape_of) on `stream`: the Decoded ones are complete where the stream reaches this point. Failed: the
    /// item's error names the file. Declined: nvJPEG does not take it (the CPU decodes it). Each decode's
    /// host part runs here; the call waits only for a state's previous use (or, on a failed batch, for the
    /// image-by-image retries).
    std::vector<Outcome> decode(const std::vector<Item*>& items, const std::vector<std::size_t>& slots,
                                nv::OutputFormat format, DecodedBatch& out, nv::Stream stream);
    /// The slot shape of a header the GPU decoders take (false: they do not take it: declined).
    static bool shape_of(const JpegHeader& h, nv::OutputFormat format, DecodedBatch::Shape& shape);
    /// What the last decode call did, for --trace: each batched call's backend, images and host time.
    std::string last_trace() const { return trace_; }

private:
    struct State {
        nv::JpegState state = nullptr;
        nv::Handle handle = nullptr;
        int size = 0;
        nv::OutputFormat format = nv::kOutputUnchanged;
        nv::Event used = nullptr;  // recorded after its last decode
        bool pending = false;
        // What its buffers were pre-allocated for (hardware states): images up to this size and sampling.
        int reserved_w = 0, reserved_h = 0;
        nv::ChromaSubsampling reserved_css = nv::kCssUnknown;
    };
    void reserve(State& s, const std::vector<std::size_t>& list, const std::vector<std::size_t>& slots,
                 const DecodedBatch& out, nv::OutputFormat format);
    nv::Status prepare(State& s, nv::Handle h, int n, nv::OutputFormat format, bool hardware);
    bool run_batch(bool hardware, const std::vector<std::size_t>& list, const std::vector<Item*>& items,
                   const std::vector<std::size_t>& slots, nv::OutputFormat format, DecodedBatch& out,
                   nv::Stream stream, std::vector<Outcome>& outcomes);
    void one_by_one(const std::vector<std::size_t>& list, const std::vector<Item*>& items,
                    const std::vector<std::size_t>& slots, nv::OutputFormat format, DecodedBatch& out,
                    nv::Stream stream, std::vector<Outcome>& outcomes);
    nv::JpegState single();

    GpuDevice& d_;
    const int hw_states_;
    std::map<int, std::vector<State>> hw_;  // by output format, used in turn
    std::map<int, std::size_t> hw_next_;
    State hybrid_;
    nv::JpegState single_ = nullptr;
    imghist::DeviceBuffer pad_out_;  // where the padding images of a short hardware batch go (never read)
    std::string trace_;
};

/// One encoding thread's nvJPEG encoder: a stream and `states` states, used in rounds — enqueue up to
/// states() images, then collect each bitstream (a state holds one until it is collected; the first
/// collection waits for the stream).
class GpuEncoder {
public:
    GpuEncoder(GpuDevice& device, int states);
    ~GpuEncoder();
    GpuEncoder(const GpuEncoder&) = delete;
    GpuEncoder& operator=(const GpuEncoder&) = delete;

    int states() const noexcept { return static_cast<int>(states_.size()); }
    nv::Stream stream() const noexcept { return stream_; }
    /// Makes each state's first (allocating: ~9 ms on an H100) encode on a blank 1920x1080 4:2:0 image now.
    void warm_up();
    /// Enqueues the encode of `img` in state k at `quality` (planar: at its stored sampling; interleaved: RGB
    /// written at 4:2:0, the CPU encoder's default). Throws Error(Cuda) when the parameters cannot be made.
    nv::Status enqueue(int k, const GpuDecoded& img, int quality);
    /// The bitstream of state k's encode (waits for the stream).
    nv::Status retrieve(int k, Bytes& out);

private:
    GpuDevice& d_;
    nv::Handle handle_ = nullptr;  // the device's default handle
    nv::Stream stream_ = nullptr;
    std::vector<nv::EncoderState> states_;
};

/// A synchronous decoder on one GPU for tests and single calls: decode() returns with the images ready.
class GpuJpegEngine {
public:
    /// The calling thread's engine on CUDA device `ordinal` (created on first use). Throws Error(NoDevice).
    static GpuJpegEngine& for_thread(int ordinal);
    explicit GpuJpegEngine(int ordinal);

    using Outcome = GpuDecoder::Outcome;
    int device() const noexcept { return device_.ordinal(); }
    nv::Stream stream() const noexcept { return stream_; }
    /// True when this GPU has the hardware decoder (waits for its set-up, starting it if need be).
    bool hardware() { return device_.hardware() != nullptr; }
    /// Decodes items[i]->jpeg into slot i (headers read here when the load stage did not; the pixel limit of
    /// `opt` checked before anything is allocated) and waits for it.
    std::vector<Outcome> decode(const std::vector<Item*>& items, nv::OutputFormat format, const DecodeOptions& opt);
    const GpuDecoded& decoded(std::size_t slot) const { return batch_[slot]; }
    imghist::ImageView view(std::size_t slot, int c = 0) const { return batch_.view(slot, c); }
    void synchronize();

private:
    GpuDevice& device_;
    nv::Stream stream_ = nullptr;
    GpuDecoder decoder_;
    DecodedBatch batch_;
};

}  // namespace cli
