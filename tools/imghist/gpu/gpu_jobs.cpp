#include "gpu/gpu_jobs.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "io/codecs/codec_jpeg.hpp"
#include "io/errors.hpp"
#include "gpu/gpu_jpeg.hpp"
#include "imghist/filters.hpp"
#include "io/parallel.hpp"

namespace cli {

namespace {
// Luma equalization decodes, equalizes and encodes a batch in parts of this many files (gpu_image_batch),
// so the hardware decoder's state for the stored planes is set up for parts of this size.
constexpr std::size_t kEncodePart = 32;
}  // namespace

std::size_t count_jpeg_names(const std::vector<Item>& items) {
    std::size_t n = 0;
    for (const Item& it : items)
        if (format_from_extension(extension_of(it.input.path)) == Format::Jpeg) ++n;
    return n;
}

std::size_t gpu_auto_min_jpegs(GpuWorkload work, int threads) {
    double s = 0, r_gpu = 0, r1 = 0;  // see gpu_jobs.hpp: measured on an H100 host
    switch (work) {
        case GpuWorkload::Equalize: s = 1.42; r_gpu = 2420; r1 = 42; break;
        case GpuWorkload::Hist: s = 1.0; r_gpu = 2960; r1 = 37; break;
        case GpuWorkload::Other: return SIZE_MAX;
    }
    const double cpu = std::max(1, threads) * r1;
    if (cpu >= r_gpu) return SIZE_MAX;
    return static_cast<std::size_t>(std::ceil(1.25 * s / (1 / cpu - 1 / r_gpu)));
}

std::vector<Device> gpu_jpeg_devices(const Common& common, const std::vector<Device>& devices,
                                     std::size_t jpeg_inputs, GpuWorkload work, bool eligible,
                                     const std::string& not_eligible_why) {
    auto say = [&](const std::string& line) {
        if (common.verbose) std::fprintf(stderr, "imghist: %s\n", line.c_str());
    };
    const std::string& spec = common.device;
    if (spec == "cpu" || jpeg_inputs == 0) return {};
    if (!eligible) {
        say("JPEG files on the CPU codecs: " + not_eligible_why);
        return {};
    }
    // --device auto: the GPU pipeline pays once its fixed cost is amortised (gpu_auto_min_jpegs); below that
    // auto does not even probe for a GPU, so a small folder runs exactly as with --device cpu.
    const int threads = common.threads > 0 ? common.threads : hardware_threads();
    const std::size_t auto_min = gpu_auto_min_jpegs(work, threads);
    if (spec == "auto" && jpeg_inputs < auto_min) {
        if (auto_min == SIZE_MAX)
            say("JPEG files on the CPU codecs: --device auto keeps this command's JPEG files there (its GPU path "
                "decodes only and was not measured faster)");
        else
            say("JPEG files on the CPU codecs: --device auto takes the GPU JPEG pipeline from " +
                std::to_string(auto_min) + " JPEG files on with " + std::to_string(threads) +
                " threads, this run has " + std::to_string(jpeg_inputs) +
                " (below that the GPU's start-up costs more than it saves)");
        return {};
    }
    std::string why;
    const auto probe = std::chrono::steady_clock::now();
    const bool available = gpu_jpeg_available(&why);
    gpu_jpeg_trace_line("probe (nvJPEG, CUDA driver and runtime): " +
                        std::to_string(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - probe).count()) + " ms");
    if (!available) {
        say("JPEG files on the CPU codecs: GPU JPEG pipeline unavailable (" + why + ")");
        return {};
    }
    std::vector<Device> gpus;
    if (spec == "auto") {
        // One GPU: on a 2-GPU H200 host, --device all was slower than one GPU for 1000 and 4000 files
        // (equalize 2.94 / 4.44 s against 2.36 / 3.63 s): the GPUs' start-ups contend, and past them
        // reading and writing the files, not the GPU, limit the run.
        gpus.push_back(Device{imghist::Backend::Cuda, 0});
    } else {
        for (const Device& d : devices)
            if (d.cuda()) gpus.push_back(d);
    }
    if (!gpus.empty()) {
        std::string names;
        for (const Device& d : gpus) names += (names.empty() ? "" : ", ") + describe(d);
        say("JPEG files through the GPU (nvJPEG, batches of " + std::to_string(gpu_jpeg_batch()) + ", " +
            std::to_string(gpu_jpeg_lanes()) + " per GPU in flight) on " + names +
            (spec == "auto" ? " (--device auto: " + std::to_string(jpeg_inputs) + " JPEG files, at least " +
                                  std::to_string(auto_min) + ", and nvJPEG and a GPU present)"
                            : std::string()));
    }
    return gpus;
}

void gpu_jpeg_stages(Stages& st, nv::OutputFormat warm_format, bool encodes) {
    const int batch = gpu_jpeg_batch();
    const int lanes = gpu_jpeg_lanes();
    st.batch = batch;
    st.workers_per_gpu = lanes;
    st.warm_up = [batch, lanes, warm_format, encodes](const Device& d) {
        GpuJpegEngine& e = GpuJpegEngine::for_thread(d.ordinal);
        // The hardware decoder first: the first batch waits for it, and its set-up is the longest part of the
        // start-up (once per GPU: later lanes find it started). The encoder states after it: made side by
        // side, the two contended in the driver and the decoder was ready 0.3 s later (H100: 0.91 s against
        // 0.62 s after the context), while the encoder's warm-up takes about 0.1 s. An error surfaces again, per
        // file, in the real calls.
        // Luma equalization decodes in parts (gpu_image_batch), hist a batch at once.
        e.start_hardware_decoder(encodes && warm_format == nv::kOutputYUV ? static_cast<int>(kEncodePart) : batch,
                                 warm_format, lanes);
        if (encodes) {
            try {
                e.hardware();  // waits for the set-up
                e.prepare_encoders(true);
            } catch (const std::exception&) {
            }
        }
    };
    if (gpu_jpeg_trace()) st.trace = [](const std::string& line) { gpu_jpeg_trace_line(line); };
}

namespace {
// GPU decoders may decode a truncated file without an error (the missing blocks come out grey), where
// libjpeg-turbo reports "premature end of data". A file without its end-of-image marker is therefore left to
// the CPU decoder, which names the problem as it does in a CPU run. (Trailing bytes after the marker are
// allowed, as libjpeg-turbo allows them.)
bool has_end_marker(const Bytes& data) {
    const std::size_t window = std::min<std::size_t>(data.size(), 64 * 1024);
    for (std::size_t k = data.size() - 1; k + window >= data.size() && k >= 1; --k)
        if (data[k - 1] == 0xFF && data[k] == 0xD9) return true;
    return false;
}
}  // namespace

bool take_for_gpu(Item& item, Bytes& data, bool writes_images) {
    if (data.size() < 4 || sniff_format(data, item.input.path) != Format::Jpeg || !has_end_marker(data))
        return false;
    JpegHeader h;
    if (!read_jpeg_header(data, h) || !h.ycbcr) return false;
    // nvJPEG's encoder writes baseline JPEG only, and an output keeps its input's progressive coding (as the
    // CPU encoder does): progressive inputs of image commands go through the CPU codecs.
    if (writes_images && h.progressive) return false;
    item.jpeg_header = h;
    item.jpeg = std::move(data);
    item.gpu = true;
    return true;
}

namespace {

imghist::FilterOptions device_filter_options(const GpuJpegEngine& e) {
    imghist::FilterOptions o;
    o.backend = imghist::Backend::Cuda;
    o.device = e.device();
    o.stream = e.stream();
    return o;
}

// Decodes `group` (items that all want `format`) into slots first_slot + k. The ones nvJPEG declines keep
// their bytes and are deferred: the store threads decode them on the CPU (Stages::decode_kept), in parallel,
// instead of this GPU thread. Returns the positions k in `group` of the decoded items.
std::vector<std::size_t> decode_group(GpuJpegEngine& e, const std::vector<Item*>& group, nv::OutputFormat format,
                                      const DecodeOptions& dopt, std::size_t first_slot = 0) {
    std::vector<GpuJpegEngine::Outcome> out = e.decode(group, format, dopt, first_slot);
    std::vector<std::size_t> ok;
    for (std::size_t k = 0; k < group.size(); ++k) {
        if (out[k] == GpuJpegEngine::Outcome::Decoded)
            ok.push_back(k);
        else if (out[k] == GpuJpegEngine::Outcome::Declined)
            group[k]->deferred = true;
    }
    return ok;
}

void download_and_defer(GpuJpegEngine& e, Item& it, std::size_t slot) {
    const GpuDecoded& d = e.decoded(slot);
    it.image = Image(d.width, d.height, 3, 8);
    e.download(slot, it.image.data(), it.image.row_bytes());
    it.image.meta = it.jpeg_header.meta;  // as decode_jpeg fills it: the CPU encoder writes it back
    it.jpeg = Bytes();  // decoded: nothing left for the CPU decoder
    it.deferred = true;
}

}  // namespace

void gpu_image_batch(std::vector<Item*>& batch, const Device& device, GpuImageWork work, const EncodeOptions& eopt,
                     const DecodeOptions& dopt) {
    GpuJpegEngine& e = GpuJpegEngine::for_thread(device.ordinal);
    const auto t0 = std::chrono::steady_clock::now();
    const imghist::FilterOptions fo = device_filter_options(e);
    // Two groups by what the decoder must produce: the stored planes (luma equalization into a JPEG) or RGB.
    std::vector<Item*> planar, rgb;
    for (Item* it : batch) {
        const bool jpeg_out = format_from_extension(extension_of(it->output)) == Format::Jpeg;
        (work == GpuImageWork::EqualizeLuma && jpeg_out ? planar : rgb).push_back(it);
    }
    if (!planar.empty()) {
        // In parts of kEncodePart: while the encoding threads work on one part, this thread decodes and
        // equalizes the next (each part in slots of its own). Measured on an H100, 128 1920x1080 files: decode
        // 21 ms, encode 20-37 ms, one after the other.
        e.reserve_slots(planar.size());
        std::thread encoding;
        struct Join {  // the part in flight is finished whatever happens to this one
            std::thread& t;
            ~Join() {
                if (t.joinable()) t.join();
            }
        } join{encoding};
        double decode_ms = 0, equalize_ms = 0, waited_ms = 0;
        for (std::size_t first = 0; first < planar.size(); first += kEncodePart) {
            auto ms_from = [](std::chrono::steady_clock::time_point t) {
                return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
            };
            const std::vector<Item*> part(planar.begin() + static_cast<std::ptrdiff_t>(first),
                                          planar.begin() + static_cast<std::ptrdiff_t>(std::min(planar.size(), first + kEncodePart)));
            auto tp = std::chrono::steady_clock::now();
            const std::vector<std::size_t> ok = decode_group(e, part, nv::kOutputYUV, dopt, first);
            decode_ms += ms_from(tp);
            tp = std::chrono::steady_clock::now();
            // The Y plane holds exactly the visible samples: its histogram is the CPU path's (equalize_luma_planes).
            std::vector<Item*> items;
            std::vector<std::size_t> slots;
            for (std::size_t k : ok) {
                imghist::equalize_hist(e.view(first + k, 0), e.view(first + k, 0), fo);
                items.push_back(part[k]);
                slots.push_back(first + k);
            }
            e.synchronize();  // the encoding threads read these slots; the lane's stream moves on to the next part
            equalize_ms += ms_from(tp);
            tp = std::chrono::steady_clock::now();
            if (encoding.joinable()) encoding.join();  // the encoder states are the previous part's until then
            waited_ms += ms_from(tp);
            // Metadata: the store stage adds the input's (it.jpeg_header.meta) to it.encoded, as the CPU encoder
            // writes it (jpeg_with_metadata).
            encoding = std::thread([&e, &eopt, items = std::move(items), slots = std::move(slots)] {
                try {
                    e.encode(items, slots, eopt, false);
                } catch (const std::exception& ex) {
                    for (Item* it : items) {
                        it->encoded.clear();
                        it->error = display_name(it->output, true) + ": cannot encode JPEG on the GPU (" + user_message(ex) + ")";
                    }
                }
            });
        }
        const auto tw = std::chrono::steady_clock::now();
        encoding.join();
        if (gpu_jpeg_trace())
            gpu_jpeg_trace_line("parts of " + std::to_string(planar.size()) + ": decode " + std::to_string(decode_ms) +
                                " ms, equalize " + std::to_string(equalize_ms) + " ms, waiting for the encoder " +
                                std::to_string(waited_ms + std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tw).count()) +
                                " ms");
    }
    if (!rgb.empty()) {
        std::vector<std::size_t> slots = decode_group(e, rgb, nv::kOutputRGBI, dopt);
        std::vector<Item*> encode_items;
        std::vector<std::size_t> encode_slots;
        for (std::size_t k : slots) {
            Item& it = *rgb[k];
            const bool jpeg_out = format_from_extension(extension_of(it.output)) == Format::Jpeg;
            if (work == GpuImageWork::EqualizePerChannel && jpeg_out) {
                imghist::equalize_hist_color(e.view(k), e.view(k), imghist::ColorEqualize::PerChannel, fo);
                encode_items.push_back(&it);
                encode_slots.push_back(k);
            } else {
                try {
                    download_and_defer(e, it, k);
                } catch (const std::exception& ex) {
                    it.error = file_message(display_name(it.input.path), ex);
                }
            }
        }
        if (!encode_slots.empty()) e.encode(encode_items, encode_slots, eopt);
    }
    if (gpu_jpeg_trace())
        gpu_jpeg_trace_line("batch of " + std::to_string(batch.size()) + ": " +
                            std::to_string(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()) + " ms");
}

// hist --mode channels counts R, G and B of the image the CPU path decodes (libjpeg-turbo's RGB). The GPU
// decodes the stored planes, which equal libjpeg-turbo's (tests/gpu_jpeg), and calc_hist_ycbcr_batch counts the
// RGB values they decode to with libjpeg-turbo's upsampling and conversion: the counts are the CPU path's
// (nvJPEG's own RGB output replicates chroma where libjpeg-turbo interpolates it).
// --mode gray counts OpenCV's gray conversion of those RGB pixels, which differs from the file's Y samples,
// so gray runs stay on the CPU codecs (cmd_hist.cpp).
void gpu_hist_batch(std::vector<Item*>& batch, const Device& device, const HistParams& params,
                    const std::function<std::string(const Item&)>& file_name, const DecodeOptions& dopt) {
    GpuJpegEngine& e = GpuJpegEngine::for_thread(device.ordinal);
    std::vector<std::size_t> slots = decode_group(e, batch, nv::kOutputYUV, dopt);
    std::vector<std::size_t> counted;
    std::vector<imghist::YCbCrPlanes> planes;
    for (std::size_t k : slots) {
        const GpuDecoded& d = e.decoded(k);
        imghist::YCbCrPlanes p;
        if (d.subsampling == nv::kCss444) {
            p.chroma_x = p.chroma_y = 1;
        } else if (d.subsampling == nv::kCss422) {
            p.chroma_x = 2;
        } else if (d.subsampling == nv::kCss420) {
            p.chroma_x = p.chroma_y = 2;
        } else {
            batch[k]->deferred = true;  // 4:4:0, 4:1:1, 4:1:0: the CPU decodes it (Stages::decode_kept)
            continue;
        }
        p.y = e.view(k, 0);
        p.cb = e.view(k, 1);
        p.cr = e.view(k, 2);
        planes.push_back(p);
        counted.push_back(k);
    }
    if (counted.empty()) return;
    imghist::Options o;
    o.backend = imghist::Backend::Cuda;
    o.device = e.device();
    o.stream = e.stream();
    // One launch for the whole batch; the results come back finished.
    std::vector<imghist::Histogram> hs = imghist::calc_hist_ycbcr_batch(planes, params.spec_for(8), o);
    const std::vector<std::string> names = {channel_name(3, 0), channel_name(3, 1), channel_name(3, 2)};
    for (std::size_t j = 0; j < counted.size(); ++j) {
        Item& it = *batch[counted[j]];
        const GpuDecoded& d = e.decoded(counted[j]);
        it.hist = HistResult::from(hs[j], names);
        it.hist.width = d.width;
        it.hist.height = d.height;
        it.hist.dtype = "u8";
        it.hist.file = file_name(it);
        it.jpeg = Bytes();
    }
}

}  // namespace cli
