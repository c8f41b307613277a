// The image-to-image driver shared by equalize, stretch, match, threshold and clahe: output naming and refusals,
// the per-file work, the folder run (run_image_job) and ImageFileJob.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <new>
#include <set>

#include "io/codecs/codec_jpeg.hpp"
#include "commands/image_job.hpp"
#include "commands/file_job.hpp"
#include "io/convert.hpp"
#include "io/errors.hpp"
#include "io/fileio.hpp"
#include "gpu/gpu_jobs.hpp"
#include "pipeline/output_safety.hpp"
#include "pipeline/trace.hpp"
#include "pipeline/tuning.hpp"

namespace cli {

namespace {

std::string replace_extension(const std::string& path, const std::string& ext) {
    auto slash = path.find_last_of('/');
    auto dot = path.find_last_of('.');
    std::string stem = (dot == std::string::npos || (slash != std::string::npos && dot < slash)) ? path : path.substr(0, dot);
    return stem + "." + ext;
}

/// What a job's path arguments mean: the inputs, and where their outputs go.
struct OutputPlan {
    std::vector<std::string> inputs;
    std::string out;          ///< "" = each input replaced (--in-place), "-" = standard output, else a file or folder
    bool out_is_folder = false;
    bool batch = false;       ///< several inputs, a folder or a pattern: outputs go into the folder `out`
    std::string to;           ///< --to without its dot; "" when not given
    bool keep_name = false;   ///< one output file whose extension already names --to's format
};

/// The output argument checked against the inputs and --to, before anything is read or created.
OutputPlan plan_outputs(const ImageJob& job) {
    OutputPlan p;
    p.inputs = job.paths;
    if (!job.in_place) {  // with --in-place every argument is an input
        if (p.inputs.size() < 2) fail_usage("expected IN... OUT (or --in-place with inputs only)");
        p.out = p.inputs.back();
        p.inputs.pop_back();
    }
    p.to = job.to;
    if (!p.to.empty() && p.to[0] == '.') p.to = p.to.substr(1);
    if (!p.to.empty() && format_from_extension(p.to) == Format::Unknown) fail_usage("--to: unknown image format '" + p.to + "'");
    p.out_is_folder = !p.out.empty() && p.out != "-" && is_directory(p.out);
    p.batch = is_batch(p.inputs);
    const Format named = p.out.empty() || p.out == "-" ? Format::Unknown : format_from_extension(extension_of(p.out));
    if (p.batch && p.out == "-") fail_usage("several inputs cannot go to standard output");
    if (p.batch && !p.out.empty() && !p.out_is_folder) {
        // Several outputs cannot go into one file; a folder named like an image would surprise everyone.
        if (path_exists(p.out)) fail_usage(p.out + ": is a file, but several inputs need an output folder");
        if (named != Format::Unknown)
            fail_usage("several inputs need an output folder, and '" + p.out + "' names a " + format_name(named) +
                       " file; give a folder (e.g. '" + p.out.substr(0, p.out.size() - extension_of(p.out).size() - 1) +
                       "/'); nothing was written");
    }
    if (!p.batch && !p.to.empty() && !p.out.empty() && p.out != "-" && !p.out_is_folder && named != Format::Unknown) {
        if (named != format_from_extension(p.to))
            fail_usage("--to " + p.to + " contradicts the output's name " + p.out + " (a " + format_name(named) +
                       " file); give one or the other");
        p.keep_name = true;
    }
    return p;
}

std::string output_path(const OutputPlan& p, const InputFile& in) {
    std::string out;
    if (p.out.empty())
        out = in.path;
    else if (p.out == "-")
        return "-";
    else if (p.batch || p.out_is_folder)
        out = p.out + "/" + in.rel;
    else
        out = p.out;
    return p.to.empty() || p.keep_name ? out : replace_extension(out, p.to);
}

/// The items of this run (its shard, less the outputs --skip-existing leaves alone).
struct JobItems {
    std::vector<Item> items;
    Summary pre;  ///< skipped and unsupported files
    std::size_t outside_shard = 0;
    std::vector<PlannedOutput> mine;  ///< this shard's files in input order; written false: left by --skip-existing
};

/// With --skip-existing (resuming a run that was stopped): our temporaries that a killed run left in the
/// output folders are removed, and said so.
void clear_stale_temporaries(const std::vector<PlannedOutput>& planned, bool quiet) {
    std::set<std::string> dirs;
    for (const PlannedOutput& o : planned)
        if (o.output != "-") dirs.insert(parent_dir(o.output));
    std::vector<std::string> removed;
    for (const std::string& d : dirs)
        for (std::string& r : remove_stale_temporaries(d)) removed.push_back(std::move(r));
    if (removed.empty() || quiet) return;
    std::fprintf(stderr, "imghist: removed %zu stale temporary file%s of an interrupted run (%s%s)\n", removed.size(),
                 removed.size() == 1 ? "" : "s", text_name(removed[0]).c_str(), removed.size() > 1 ? ", ..." : "");
}

/// Collects the inputs and plans every output; refuses (nothing written) when an output is an input or two
/// inputs share an output — over every shard's files, since shards run side by side into one folder.
JobItems collect_items(const ImageJob& job, const OutputPlan& plan) {
    JobItems j;
    const Shard shard = parse_shard(job.shard);
    const std::vector<InputFile> inputs = collect_inputs(plan.inputs, job.recursive, &j.pre.unsupported);
    InputSet ids;
    for (const std::string& other : job.other_inputs) ids.add(other);
    std::vector<PlannedOutput> planned, mine;
    for (const InputFile& in : inputs) {
        ids.add(in);
        PlannedOutput o{output_path(plan, in), in.path, job.in_place, false};
        if (!in_shard(in.rel, shard)) {
            ++j.outside_shard;
        } else if (job.skip_existing && o.output != "-" && path_exists(o.output) && !same_file(in.path, o.output)) {
            ++j.pre.skipped;
            mine.push_back(o);
        } else {
            o.written = true;
            mine.push_back(o);
            Item it;
            it.input = in;
            it.output = o.output;
            it.index = j.items.size();
            j.items.push_back(std::move(it));
        }
        planned.push_back(std::move(o));
    }
    refuse_conflicts(output_conflicts(planned, ids));
    if (job.skip_existing) clear_stale_temporaries(mine, job.common.quiet);
    j.mine = std::move(mine);
    return j;
}

/// The load and encode steps of an image job, and what they share.
class ImageRun {
public:
    ImageRun(const ImageJob& job, const OutputPlan& plan,
             const std::function<bool(const InputFile&, const std::string&)>& planar_ok, GpuImageWork gpu_work)
        : job_(job), plan_(plan), planar_ok_(planar_ok), gpu_work_(gpu_work), dopt_(job.common.decode()),
          background_(parse_colour(job.background)) {
        eopt_ = job.encode;
        eopt_.threads = job.common.threads;
    }
    /// JPEG files through the GPUs when this run takes them (gpu_batch_plan decides, --device auto included);
    /// every other file (and any JPEG a GPU declines) through the CPU codecs.
    Stages stages(const std::function<void(Item&, const Device&)>& process, const std::vector<Device>& devices,
                  std::size_t jpeg_inputs);
    /// The CPU steps of one file, for callers that schedule files themselves (ImageFileJob).
    void load(Item& it) const;
    Bytes encode(Item& it) const;

private:
    Format output_format(const Item& it) const;
    DecodeOptions item_decode(const Item& it) const;
    void cpu_load(Item& it, Bytes&& data) const;
    void load_for_gpu(Item& it) const;

    const ImageJob& job_;
    const OutputPlan& plan_;
    const std::function<bool(const InputFile&, const std::string&)> planar_ok_;
    const GpuImageWork gpu_work_;
    const DecodeOptions dopt_;
    EncodeOptions eopt_;
    const Rgb background_;
};

// The output's format: the output's extension; for standard output --to, else the input's (read from its
// bytes, so `imghist equalize - -` keeps a JPEG a JPEG), else PNG.
Format ImageRun::output_format(const Item& it) const {
    if (it.output != "-") return format_from_extension(extension_of(it.output));
    Format f = !plan_.to.empty() ? format_from_extension(plan_.to) : it.input_format;
    return f == Format::Unknown ? Format::Png : f;
}

// The decode options of one item: the output format's size limits are checked with the header, before
// decoding and processing (on either path).
DecodeOptions ImageRun::item_decode(const Item& it) const {
    DecodeOptions o = dopt_;
    o.output = output_format(it);
    o.output_name = display_name(it.output, true);
    return o;
}

void ImageRun::cpu_load(Item& it, Bytes&& data) const {
    const std::string in_name = display_name(it.input.path);
    DecodeOptions item_dopt = item_decode(it);
    item_dopt.memory = &it.memory;
    item_dopt.input_bytes = data.size();
    // The planar JPEG path keeps the stored orientation; --auto-orient needs the pixels.
    if (planar_ok_ && !job_.auto_orient && it.output != "-" && planar_ok_(it.input, it.output) && !data.empty() &&
        sniff_format(data, it.input.path) == Format::Jpeg && jpeg_planar_ok(data)) {
        it.planes = decode_jpeg_planes(data, in_name, item_dopt);
        it.planar = true;
        return;
    }
    it.image = decode_image(data, in_name, item_dopt);
    if (job_.auto_orient) auto_orient(it.image);
}

void ImageRun::load(Item& it) const {
    Bytes data = read_image_file(it.input.path, dopt_.limits);
    it.input_format = sniff_format(data, it.input.path);
    cpu_load(it, std::move(data));
}

void ImageRun::load_for_gpu(Item& it) const {
    const std::string in_name = display_name(it.input.path);
    Bytes data = read_image_file(it.input.path, dopt_.limits);
    it.input_format = sniff_format(data, it.input.path);
    if (take_for_gpu(it, data, true)) {
        // --auto-orient that must turn the pixels: the GPU path has no rotation, so such a file goes through
        // the CPU codecs (cpu_load rotates it and resets the tag). Files stored upright stay on the GPU.
        if (job_.auto_orient && exif_orientation(it.jpeg_header.meta.exif) != 1) {
            it.gpu = false;
            cpu_load(it, std::move(it.jpeg));
            return;
        }
        // The same header check as the CPU decoders' (pixel limit, the output format's limits), before
        // the GPU allocates anything.
        checked_image_bytes(static_cast<std::uint64_t>(it.jpeg_header.width),
                            static_cast<std::uint64_t>(it.jpeg_header.height), 3, 8, item_decode(it), in_name);
        return;
    }
    cpu_load(it, std::move(data));
}

Bytes ImageRun::encode(Item& it) const {
    const Format f = output_format(it);
    const std::string out_name = display_name(it.output, true);
    if (!it.encoded.empty()) {  // encoded on the GPU: the input's metadata added as the CPU encoder writes it
        Metadata m = it.jpeg_header.meta;
        if (job_.strip) m.strip();
        return jpeg_with_metadata(it.encoded, m, out_name);
    }
    if (it.planar) {
        if (job_.strip) it.planes.meta.strip();
        return encode_jpeg_planes(it.planes, eopt_, out_name);
    }
    if (job_.flatten && (it.image.channels() == 2 || it.image.channels() == 4)) it.image = flatten(it.image, background_);
    if (job_.depth == 8 && it.image.depth() == 16) it.image = to_depth8(it.image);
    if (job_.strip) it.image.meta.strip();
    return encode_image(it.image, f, eopt_, out_name);
}

Stages ImageRun::stages(const std::function<void(Item&, const Device&)>& process, const std::vector<Device>& devices,
                        std::size_t jpeg_inputs) {
    Stages st;
    st.load = [this](Item& it) { load(it); };
    st.process = process;
    st.encode = [this](Item& it) { return encode(it); };
    GpuCommand c;
    c.work = gpu_work_ == GpuImageWork::EqualizeLuma         ? GpuWorkload::EqualizeLuma
             : gpu_work_ == GpuImageWork::EqualizePerChannel ? GpuWorkload::EqualizePerChannel
                                                             : GpuWorkload::DecodeOnly;
    c.load = [this](Item& it) { load_for_gpu(it); };
    c.decode_kept = [this](Item& it) { cpu_load(it, std::move(it.jpeg)); };
    c.decode = dopt_;
    c.encode = eopt_;
    st.batch = gpu_batch_plan(job_.common.device, job_.common.verbose, devices, jpeg_inputs, true, "", c);
    return st;
}

}  // namespace

RunOptions run_options(const Common& common, bool batch, const std::vector<Device>& devices) {
    pipeline_tuning();  // a mistake in --pipeline is a usage error before anything runs
    RunOptions ro;
    ro.threads = batch ? common.threads : 1;
    ro.quiet = common.quiet;
    ro.progress = batch;
    ro.verbose = common.verbose;
    ro.max_memory = common.limits.max_memory;
    for (auto& d : devices) ro.verbose_device += (ro.verbose_device.empty() ? "" : ", ") + describe(d);
    ro.devices = devices;
    ro.make_parent_dirs = batch;
    return ro;
}

int run_image_job(const ImageTask& task) {
    const ImageJob& job = task.job;
    set_tracing(job.common.trace);
    const OutputPlan plan = plan_outputs(job);
    const std::vector<Device> devices = job.common.devices();
    trace_devices(job.common.device, devices);
    JobItems j = collect_items(job, plan);
    trace_line("planned: " + std::to_string(j.items.size()) + " files");
    ImageRun run(job, plan, task.planar_ok, task.gpu_work);
    // Decode/encode threads: one image is coded alone; the PNG writer spreads it over all threads itself.
    RunOptions ro = run_options(job.common, plan.batch, devices);
    ro.prefix_notes = plan.batch;
    ro.skipped = j.pre.skipped;
    const Stages stages = run.stages(task.process, devices, count_jpeg_names(j.items));
    Summary s = run_pipeline(j.items, stages, ro);
    s.skipped = j.pre.skipped;
    s.unsupported = j.pre.unsupported;
    if (plan.batch && !job.common.quiet) std::fprintf(stderr, "imghist: %s\n", summary_line(s).c_str());
    const std::string nothing = nothing_processed(s, j.outside_shard);
    if (!nothing.empty()) {
        std::fprintf(stderr, "imghist: %s\n", nothing.c_str());
        return kExitFailure;
    }
    return s.failed ? kExitFailure : kExitOk;
}

struct ImageFileJob::State {
    ImageTask task;
    OutputPlan plan;
    Device device;
    std::unique_ptr<ImageRun> run;
};

ImageFileJob::ImageFileJob(ImageTask task) : state_(std::make_unique<State>()) {
    State& st = *state_;
    st.task = std::move(task);
    st.plan = plan_outputs(st.task.job);
    st.device = st.task.job.common.devices().front();
    // Each file is one task of the caller's scheduler: --threads is what one file's work may use.
    st.device.cpu_threads = st.task.job.common.threads;
    st.run = std::make_unique<ImageRun>(st.task.job, st.plan, st.task.planar_ok, st.task.gpu_work);
}

ImageFileJob::~ImageFileJob() = default;

std::vector<ImageFileJob::Planned> ImageFileJob::plan() const {
    std::vector<Planned> out;
    for (const PlannedOutput& o : collect_items(state_->task.job, state_->plan).mine)
        out.push_back(Planned{o.input, o.output, !o.written});
    return out;
}

std::string ImageFileJob::run(const std::string& input, const std::string& output) const {
    const State& st = *state_;
    Item it;
    it.input = InputFile{input, input.substr(input.find_last_of('/') + 1)};
    it.output = output;
    try {
        make_dirs(parent_dir(output));
        st.run->load(it);
        st.task.process(it, st.device);
        const Bytes b = st.run->encode(it);
        write_file_atomic(output, b.data(), b.size());
    } catch (const std::exception& e) {
        // As the folder run's log lines: every message names the file (the library's about the processing
        // itself do not).
        const auto* error = dynamic_cast<const Error*>(&e);
        const ErrorCode code = error ? error->code()
                               : dynamic_cast<const std::bad_alloc*>(&e) ? ErrorCode::OutOfMemory
                                                                         : ErrorCode::InvalidArgument;
        const std::string what = user_message(e);
        if (what.rfind(input, 0) == 0 || what.rfind(output, 0) == 0) throw Error(code, what);
        throw Error(code, input + ": " + what);
    }
    return it.note;
}

}  // namespace cli
