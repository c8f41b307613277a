// The options every command takes, and the image-to-image driver shared by equalize, stretch, match, threshold
// and clahe: output naming and refusals, the per-file work, the folder run (run_image_job) and ImageFileJob.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <new>
#include <set>

#include "io/codecs/codec_jpeg.hpp"
#include "commands/commands.hpp"
#include "commands/file_job.hpp"
#include "pipeline/trace.hpp"
#include "io/convert.hpp"
#include "io/errors.hpp"
#include "io/fileio.hpp"
#include "gpu/gpu_jobs.hpp"
#include "pipeline/output_safety.hpp"
#include "pipeline/trace.hpp"
#include "gpu/nvjpeg_api.hpp"
#include "pipeline/tuning.hpp"

namespace cli {

void add_common(CLI::App& sub, Common& c) {
    sub.add_option("--device", c.device, "Where to compute: cpu, cuda, cuda:N, all (every GPU and the CPU), or auto (the CPU, and every GPU for JPEG files where the GPU does the whole job)")
        ->default_str("auto")
        ->group("Common");
    sub.add_option("--threads", c.threads, "Decode/encode threads (0 = one per hardware thread)")
        ->default_str("0")
        ->check(CLI::Validator(
            [max = c.limits.max_threads](std::string& v) {
                long long n = 0;
                if (!CLI::detail::lexical_cast(v, n) || n < 0) return std::string("expected a count (0 = one per hardware thread)");
                if (n > max)
                    return v + " is above the limit of " + std::to_string(max) +
                           " (each stage of a folder run starts that many threads)";
                return std::string();
            },
            "0-" + std::to_string(c.limits.max_threads), "THREADS"))
        ->group("Common");
    // The resource model's limits (io/limits.hpp; README: "What one input may cost").
    Limits& l = c.limits;
    const std::string limits = "Limits (per input; see the README)";
    sub.add_option("--max-pixels", l.max_pixels, "Refuse images with more pixels than this (checked from the header)")
        ->default_str(std::to_string(l.max_pixels))
        ->group(limits);
    sub.add_option("--max-memory", l.max_memory,
                   "Memory for images held at once (each counts its file and 3x its decoded size); a folder run waits for room, "
                   "a larger image is refused")
        ->transform(CLI::AsSizeValue(false))
        ->default_str(format_bytes(l.max_memory) + " (half the RAM)")
        ->type_name("SIZE")
        ->group(limits);
    sub.add_option("--max-input", l.max_input, "Refuse input files (and standard input) larger than this")
        ->transform(CLI::AsSizeValue(false))
        ->default_str(format_bytes(l.max_input))
        ->type_name("SIZE")
        ->group(limits);
    sub.add_option("--max-metadata", l.max_metadata, "Refuse inputs with more metadata than this, decoded (text, ICC, XMP, EXIF)")
        ->transform(CLI::AsSizeValue(false))
        ->default_str(format_bytes(l.max_metadata))
        ->type_name("SIZE")
        ->group(limits);
    sub.add_option("--max-metadata-items", l.max_metadata_items, "Refuse inputs with more metadata chunks or segments than this")
        ->default_str(std::to_string(l.max_metadata_items))
        ->group(limits);
    sub.add_option("--max-scans", l.max_scans, "Refuse JPEGs of more scans than this (progressive JPEGs have about 10)")
        ->default_str(std::to_string(l.max_scans))
        ->group(limits);
    sub.add_option("--max-ratio", l.max_ratio,
                   "Refuse images over " + format_bytes(l.ratio_exempt_bytes) +
                       " that decode to more than this many bytes per stored byte (TIFF ZSTD/LZMA/JPEG/..., WebP)")
        ->default_str(std::to_string(l.max_ratio))
        ->check(CLI::PositiveNumber)
        ->group(limits);
    sub.add_flag("-q,--quiet", c.quiet, "No progress bar, notes or summary; errors only")->group("Common");
    sub.add_flag("-v,--verbose", c.verbose, "One line per file: the device and the time of each stage")->group("Common");
    sub.add_flag("--trace", c.trace,
                 "Where a folder run's time goes: each stage's busy and waiting time, per GPU batch and in total "
                 "(stderr; sizes: --pipeline)")
        ->group("Common");
    // Settings for measurements and unusual installations, not for everyday runs.
    const std::string tuning = "Tuning";
    sub.add_option("--pipeline", "A folder run's sizes, key=value,... (batch, depth, readers, decoders, encoders, "
                                 "states, writers, sync, sync_threads, pending, wait, exit; README)")
        ->type_name("SPEC")
        ->each([](const std::string& spec) { set_pipeline_spec(spec); })
        ->group(tuning);
    sub.add_option("--nvjpeg", "The nvJPEG library file to load (default: the loader's search path, then "
                               "/usr/local/cuda/lib64)")
        ->type_name("FILE")
        ->each([](const std::string& file) { nv::set_nvjpeg_library(file); })
        ->group(tuning);
}

void ImageJob::add_options(CLI::App& sub) {
    sub.add_option("paths", paths, "IN... OUT: input files, folders or patterns ('-' = stdin), then the output file or folder ('-' = stdout)")
        ->required()
        ->type_name("PATH");
    sub.add_flag("-r,--recursive", recursive, "Descend into sub-folders, mirroring them in the output folder");
    sub.add_flag("--in-place", in_place, "Replace each input by its result, atomically (every PATH is then an input: no OUT)");
    sub.add_flag("--skip-existing", skip_existing, "Leave outputs that already exist alone (resumes a stopped run)");
    sub.add_option("--shard", shard, "Process only part K of N of the inputs (stable per file name), e.g. 3/8")->type_name("K/N");
    sub.add_option("--to", to, "Output format by extension (png, jpg, tif, webp, bmp, tga, pgm, ppm); default: the output's or input's")
        ->type_name("EXT");
    sub.add_option("--quality", encode.jpeg_quality,
                   "JPEG quality 1-100 (default: the input JPEG's estimated quality, else 90); WebP: lossy at this quality (default: lossless)")
        ->default_str("input's, else 90")
        ->check(CLI::Range(1, 100));
    sub.add_option("--png-level", encode.png_level, "PNG zlib level 0-9")->default_str("1")->check(CLI::Range(0, 9));
    sub.add_option("--tiff-compression", encode.tiff_compression, "TIFF output compression")
        ->check(CLI::IsMember({"deflate", "lzw", "packbits", "none"}))
        ->default_str("deflate");
    // Metadata and output shaping (the output's format may not hold what the input had).
    sub.add_flag("--strip", strip, "Write no metadata (by default EXIF, ICC profile, XMP, comments and resolution are kept)");
    sub.add_flag("--auto-orient", auto_orient, "Apply the EXIF orientation to the pixels and reset the tag to 1");
    sub.add_option("--depth", depth, "Output sample depth: 8 converts 16-bit images (v * 255 / 65535, rounded)")
        ->check(CLI::IsMember({8}));
    sub.add_flag("--flatten", flatten, "Composite alpha over --background and drop it (e.g. for JPEG output)");
    sub.add_option("--background", background, "Colour for --flatten: #RRGGBB, white or black")->default_str("white");
    add_common(sub, common);
}

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
        if (in.known)
            ids.add(in.path, in.dev, in.ino);
        else
            ids.add(in.path);
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
    set_tracing(common.trace);
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

Command image_command(CLI::App* sub, std::function<ImageTask()> task) {
    Command c;
    c.app = sub;
    c.image_task = task;
    c.run = [task] { return run_image_job(task()); };
    return c;
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

std::unique_ptr<ImageFileJob> parse_file_job(const std::vector<std::string>& args) {
    if (args.empty()) fail_usage("no operation (equalize, stretch, match, threshold, clahe)");
    CLI::App app{"imghist", "imghist"};
    app.require_subcommand(1);
    const std::vector<Command> commands = {add_equalize(app), add_stretch(app), add_match(app), add_threshold(app),
                                           add_clahe(app)};
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes its arguments last first
    try {
        app.parse(reversed);
    } catch (const CLI::ParseError& e) {
        fail_usage(e.what());
    }
    for (const Command& c : commands)
        if (c.app->parsed()) return std::make_unique<ImageFileJob>(c.image_task());
    fail_usage("unknown operation '" + args[0] + "' (equalize, stretch, match, threshold, clahe)");
}

}  // namespace cli
