// imghist CLI — JPEG folders through the GPU: batched nvJPEG decode, the library's device operations,
// nvJPEG encode.
//
//   read (host threads) --> [batch of B JPEGs] decode on the GPU (hardware decoder where the GPU has one and
//   the file suits it, nvJPEG's GPU/hybrid decoder otherwise) --> device operations (imghist / filters
//   device APIs, on the worker's stream) --> encode on the GPU (JPEG outputs) or copy back --> write (host
//   threads)
//
// The hardware decoder's set-up takes most of a GPU's start-up (about 0.65 s on an H100 after the context;
// bench/experiments/nvjpeg_startup.cpp), so it runs on a thread of its own while the lanes make their
// encoder states; the first batch waits for it.
//
// The batching, queues, progress, summary and failure isolation are run_pipeline's (pipeline.hpp): this
// file only provides the device work of one batch. nvJPEG and the CUDA driver are loaded at run time
// (nvjpeg_api.hpp); without them, or without a GPU, gpu_jpeg_available() says why and the CPU codecs run.
//
//   command   | GPU path taken for                     | decode to              | on the device          | out
//   ----------+----------------------------------------+------------------------+------------------------+------
//   hist      | YCbCr JPEGs, --mode channels           | Y, Cb, Cr planes       | calc_hist_ycbcr_batch     | host
//   equalize  | YCbCr JPEG -> JPEG, --mode luma        | Y, Cb, Cr at the file's| equalize_hist on Y     | nvJPEG
//             |                                        | sampling               |                        | YUV
//   equalize  | YCbCr JPEG -> JPEG, --mode per-channel | RGB interleaved        | equalize_hist_color    | nvJPEG
//   threshold,| YCbCr JPEG -> JPEG                     | RGB interleaved        | (decode only: the gray | CPU
//   clahe     |                                        |                        | conversion is host-side)|
//
// Everything else (other formats in or out, gray or CMYK JPEGs, JPEGs nvJPEG declines) goes through the CPU
// codecs in the same run. GPU-decoded pixels differ slightly from libjpeg-turbo's (see README.md, "GPU JPEG
// pipeline"); given the same decoded pixels, the device operations are bit-exact with the CPU backend.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/codecs/codec.hpp"
#include "imghist/image.hpp"
#include "gpu/nvjpeg_api.hpp"

namespace cli {

struct Item;

/// True when nvJPEG and the CUDA driver load and a CUDA device exists; otherwise `why` says what is missing.
bool gpu_jpeg_available(std::string* why = nullptr);

/// Default batch: measured on an H200 host (issue notes: 3916 images/s at 64, 4715 at 240 for decode alone).
/// IMGHIST_GPU_BATCH overrides it (1..1024).
int gpu_jpeg_batch();

/// Batches in flight per GPU (GPU worker threads, each with its own streams and nvJPEG states: one decodes
/// while another encodes); 1 by default. IMGHIST_GPU_LANES overrides it (1..8).
int gpu_jpeg_lanes();

/// The program's end (main): where a GPU lane was used in this process, flushes the output streams and
/// ends the process at once with `code` (see gpu_jpeg.cpp for the measured reason); otherwise returns `code`.
/// IMGHIST_GPU_EXIT=normal returns instead (for comparison).
int gpu_jpeg_exit(int code);

/// IMGHIST_GPU_TRACE=1: one line per batch on stderr with the time of each step (for tuning).
bool gpu_jpeg_trace();
void gpu_jpeg_trace_line(const std::string& line);

/// What one decoded image looks like on the device.
struct GpuDecoded {
    int width = 0, height = 0;
    nv::ChromaSubsampling subsampling = nv::kCssUnknown;
    nv::OutputFormat format = nv::kOutputRGBI;
    nv::Image image{};        ///< device pointers and pitches
    int plane_w[3] = {}, plane_h[3] = {};  ///< planar formats: each plane's size
};

/// One lane of a GPU: its streams, decoder and encoder states and decoded-image buffers. A GPU runs several
/// lanes (one per GPU worker thread, see for_thread() and pipeline.cpp), so that one lane's encode overlaps the
/// next batch's decode on another; the lanes of a GPU share its context and nvJPEG handles (created once per
/// GPU and process: the context at once, the hardware decoder by start_hardware_decoder, the others on first
/// use).
class GpuJpegEngine {
public:
    /// The calling thread's lane on CUDA device `ordinal` (created on first use). Throws Error(NoDevice) when
    /// nvJPEG or the device is unusable.
    static GpuJpegEngine& for_thread(int ordinal);

    explicit GpuJpegEngine(int ordinal);
    ~GpuJpegEngine();
    GpuJpegEngine(const GpuJpegEngine&) = delete;
    GpuJpegEngine& operator=(const GpuJpegEngine&) = delete;

    int device() const noexcept;
    nv::Stream stream() const noexcept;
    /// True when this GPU has the hardware decoder backend (waits for its set-up, starting it if need be).
    bool hardware();

    enum class Outcome : std::uint8_t { Decoded, Failed, Declined };
    /// Decodes items[i]->jpeg into slot i, using items[i]->jpeg_header (read here when the load stage did not).
    /// Failed: items[i]->error names the file and the problem (a corrupt file fails alone: a batch that fails
    /// is decoded again image by image). Declined: nvJPEG cannot take this file (unsupported sampling or
    /// coding); the caller decodes it on the CPU instead. The pixel limit of `opt` is checked from the header
    /// before anything is allocated. Waits for the hardware decoder's set-up when it is still running.
    /// Slots: items[i] goes to slot first_slot + i (a caller decoding a batch in parts gives each part its
    /// own slots, so that one part can be encoded while the next decodes).
    std::vector<Outcome> decode(const std::vector<Item*>& items, nv::OutputFormat format, const DecodeOptions& opt,
                                std::size_t first_slot = 0);
    /// Makes slots 0 .. count-1 exist, so that decode() does not move them while another thread encodes some.
    void reserve_slots(std::size_t count);
    const GpuDecoded& decoded(std::size_t slot) const;
    /// Device view of plane c of a planar slot, or of the interleaved image (c = 0, 3 channels).
    imghist::ImageView view(std::size_t slot, int c = 0) const;

    /// Encodes slots[k] into items[k]->encoded (planar: at their stored sampling; interleaved: RGBI/BGRI at 4:2:0,
    /// as the CPU encoder's defaults), at the quality the CPU encoder would take
    /// (jpeg_quality_for: --quality, else the input's estimate from items[k]->jpeg_header.meta, else 90);
    /// baseline coding only (progressive inputs are left to the CPU path, see take_for_gpu). The metadata is
    /// added by the store stage (jpeg_with_metadata). A failure sets items[k]->error. With `wait_for_lane`,
    /// waits for the lane's stream first (the caller may instead have synchronised it, and then decode the
    /// next part on this lane from another thread meanwhile); returns when every bitstream is in its item.
    void encode(const std::vector<Item*>& items, const std::vector<std::size_t>& slots, const EncodeOptions& opt,
                bool wait_for_lane = true);

    /// Starts this GPU's hardware decoder set-up on a thread of its own (once per GPU; later calls do
    /// nothing): the handle and `lanes` batched states for `batch` images of `format`.
    void start_hardware_decoder(int batch, nv::OutputFormat format, int lanes);
    /// Encoder states per lane: two per encoding thread. The warm-up makes each state's first, allocating
    /// encode; with 8 states instead of 32 a run started 60-90 ms sooner, and its batches took as long
    /// (H100 host, 1000 and 4000 1920x1080 JPEGs, alternating: docs/DESIGN.md).
    static constexpr std::size_t kEncoderStates = 8;
    /// Host threads a batch's encode is split over, each with its own stream and kEncoderStates / threads
    /// states (encoding in rounds of that many images): 4, or IMGHIST_GPU_ENCODE_THREADS (1, 2, 4 or 8).
    static std::size_t encode_threads();
    /// Creates the lane's encoder states ahead of the first encode; with `warm`, also makes each state's
    /// first (allocating) encode, on a blank 1920x1080 image, on the encoding threads (warm-up).
    void prepare_encoders(bool warm);
    /// Copies an interleaved slot to a host image of its size (RGB stays RGB). Waits for the stream.
    void download(std::size_t slot, void* host, std::size_t host_pitch);
    void synchronize();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace cli
