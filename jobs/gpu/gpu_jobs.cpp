#include "gpu/gpu_jobs.hpp"

#include <algorithm>
#include <cstdio>

#include "gpu/gpu_jpeg.hpp"
#include "gpu/gpu_pipeline.hpp"
#include "imghist/batch_filters.hpp"
#include "io/codecs/codec_jpeg.hpp"
#include "io/errors.hpp"
#include "pipeline/trace.hpp"
#include "pipeline/tuning.hpp"

namespace cli {

std::size_t count_jpeg_names(const std::vector<Item>& items) {
    std::size_t n = 0;
    for (const Item& it : items)
        if (format_from_extension(extension_of(it.input.path)) == Format::Jpeg) ++n;
    return n;
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

bool is_jpeg_output(const Item& it) { return format_from_extension(extension_of(it.output)) == Format::Jpeg; }

/// The GPU's part of each command (gpu_jobs.hpp's table).
std::shared_ptr<GpuJob> make_job(const GpuCommand& c) {
    auto job = std::make_shared<GpuJob>();
    job->decode = c.decode;
    job->encode = c.encode;
    switch (c.work) {
        case GpuWorkload::EqualizeLuma:
            // JPEG outputs are the CPU path's bytes: the GPU encodes only planes the hardware decoder decoded
            // (GpuDecoded::exact; the others go to the CPU workers at encoding), with the CPU encoder's
            // arithmetic (jpeg_encoder.hpp). 4:1:1 and 4:1:0 files, which the hardware decoder does not take,
            // go to them before decoding.
            job->action = [](const Item& it) {
                if (!is_jpeg_output(it)) return GpuJob::Action::Download;
                return hardware_sampling(sampling_of(it.jpeg_header)) ? GpuJob::Action::EncodePlanar : GpuJob::Action::Cpu;
            };
            // The Y planes hold exactly the visible samples: each one's histogram is the CPU path's
            // (equalize_luma_planes). One call equalizes the whole batch.
            job->operate = [](const std::vector<imghist::ImageView>& luma, const std::vector<imghist::ImageView>&,
                              const imghist::FilterOptions& fo) {
                if (luma.empty()) return;
                const imghist::ImageBatch b = imghist::ImageBatch::list(luma);
                imghist::equalize_hist_batch(b, b, fo);
            };
            job->warm_format = nv::kOutputYUV;
            break;
        case GpuWorkload::EqualizePerChannel:
            job->action = [](const Item& it) {
                return is_jpeg_output(it) ? GpuJob::Action::EncodeRgb : GpuJob::Action::Download;
            };
            job->operate = [](const std::vector<imghist::ImageView>&, const std::vector<imghist::ImageView>& rgb,
                              const imghist::FilterOptions& fo) {
                if (rgb.empty()) return;
                const imghist::ImageBatch b = imghist::ImageBatch::list(rgb);
                imghist::equalize_hist_color_batch(b, b, imghist::ColorEqualize::PerChannel, fo);
            };
            job->warm_format = nv::kOutputRGBI;
            job->encodes_rgb = true;
            break;
        case GpuWorkload::DecodeOnly:
            job->action = [](const Item&) { return GpuJob::Action::Download; };
            job->warm_format = nv::kOutputRGBI;
            job->encodes = false;
            break;
        case GpuWorkload::Hist: {
            // hist --mode channels counts R, G and B of the image the CPU path decodes (libjpeg-turbo's RGB). The
            // GPU decodes the stored planes, which equal libjpeg-turbo's (tests/gpu_jpeg), and
            // calc_hist_ycbcr_batch counts the RGB values they decode to with libjpeg-turbo's upsampling and
            // conversion: the CPU path's counts (nvJPEG's own RGB output replicates chroma where libjpeg-turbo
            // interpolates it).
            job->action = [](const Item&) { return GpuJob::Action::Count; };
            const HistParams p = c.hist;
            const auto done = c.hist_done;
            job->count = [p, done](const std::vector<Item*>& items, const std::vector<imghist::YCbCrPlanes>& planes,
                                   const imghist::Options& o) {
                const std::vector<imghist::Histogram> hs = imghist::calc_hist_ycbcr_batch(planes, p.spec_for(8), o);
                const std::vector<std::string> names = {channel_name(3, 0), channel_name(3, 1), channel_name(3, 2)};
                for (std::size_t j = 0; j < items.size(); ++j) {
                    Item& it = *items[j];
                    it.hist = HistResult::from(hs[j], names);
                    it.hist.width = planes[j].y.width;
                    it.hist.height = planes[j].y.height;
                    it.hist.dtype = "u8";
                    done(it);
                }
            };
            job->warm_format = nv::kOutputYUV;
            job->encodes = false;
            break;
        }
    }
    return job;
}

const char* workload_name(GpuWorkload w) {
    switch (w) {
        case GpuWorkload::Hist: return "hist";
        case GpuWorkload::EqualizeLuma:
        case GpuWorkload::EqualizePerChannel: return "equalize";
        case GpuWorkload::DecodeOnly: return "this command";
    }
    return "";
}

}  // namespace

bool take_for_gpu(Item& item, Bytes& data, bool writes_images) {
    if (data.size() < 4 || sniff_format(data, item.input.path) != Format::Jpeg || !has_end_marker(data)) return false;
    JpegHeader h;
    if (!read_jpeg_header(data, h) || !h.ycbcr) return false;
    // The GPU's encoders write baseline JPEG only, and an output keeps its input's progressive coding (as the
    // CPU encoder does): progressive inputs of image commands go through the CPU codecs.
    if (writes_images && h.progressive) return false;
    item.jpeg_header = h;
    item.jpeg = std::move(data);
    item.gpu = true;
    return true;
}

std::shared_ptr<BatchPlan> gpu_batch_plan(const std::string& spec, bool verbose, const std::vector<Device>& devices,
                                          std::size_t jpeg_inputs, bool eligible, const std::string& not_eligible_why,
                                          GpuCommand command) {
    auto say = [&](const std::string& line) {
        if (verbose) std::fprintf(stderr, "imghist: %s\n", line.c_str());
    };
    if (spec == "cpu" || jpeg_inputs == 0) return nullptr;
    if (!eligible) {
        say("JPEG files on the CPU codecs: " + not_eligible_why);
        return nullptr;
    }
    const bool automatic = spec == "auto";
    if (automatic && command.work == GpuWorkload::DecodeOnly) {
        say(std::string("JPEG files on the CPU codecs: --device auto leaves ") + workload_name(command.work) +
            " to them (its GPU path only decodes; --device all or cuda takes it)");
        return nullptr;
    }
    std::vector<int> ordinals;
    for (const Device& d : devices)
        if (d.cuda()) ordinals.push_back(d.ordinal);
    if (!automatic && ordinals.empty()) return nullptr;  // --device all on a host without GPUs: the CPU
    auto plan = std::make_shared<BatchPlan>();
    // The devices are found on the run's batch thread: loading nvJPEG and the driver and asking for the
    // devices takes ~0.1 s that the CPU workers do not wait for. By value: the command may be gone by then.
    plan->devices = [automatic, ordinals](std::string& why) {
        std::vector<Device> out;
        if (!gpu_jpeg_available(&why)) {
            why = "GPU JPEG pipeline unavailable: " + why;
            return out;
        }
        std::vector<int> use = ordinals;
        if (automatic)
            for (int k = 0; k < imghist::cuda_device_count(); ++k) use.push_back(k);
        for (int k : use) out.push_back(Device{imghist::Backend::Cuda, k});
        return out;
    };
    const std::shared_ptr<const GpuJob> job = make_job(command);
    const PipelineTuning tuning = pipeline_tuning();
    plan->make = [job, tuning](const Device& d) { return make_gpu_pipeline(d, job, tuning); };
    plan->load = command.load;
    plan->decode_kept = command.decode_kept;
    plan->cpu_takes_files = automatic || spec == "all";
    plan->say_unavailable = !automatic;
    if (automatic) plan->start_when_cpu_needs_s = kGpuStartupSeconds;
    say("JPEG files: the CPU workers and " +
        (automatic ? std::string("every usable GPU") : std::to_string(ordinals.size()) + " GPU(s)") +
        " take them from one queue (" + describe(tuning) + ")" +
        (plan->cpu_takes_files ? "" : "; the CPU workers take only what the GPU cannot"));
    return plan;
}

}  // namespace cli
