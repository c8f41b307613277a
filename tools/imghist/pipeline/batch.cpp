// imghist CLI — common options and the image-to-image driver shared by equalize, threshold and clahe.
#include <unistd.h>

#include <cstdio>
#include <mutex>

#include "io/codecs/codec_jpeg.hpp"
#include "commands/commands.hpp"
#include "io/convert.hpp"
#include "io/errors.hpp"
#include "io/fileio.hpp"
#include "gpu/gpu_jobs.hpp"
#include "gpu/gpu_jpeg.hpp"

namespace cli {

void add_common(CLI::App& sub, Common& c) {
    sub.add_option("--device", c.device, "Where to compute: cpu, cuda, cuda:N, all (every GPU), or auto (the CPU; the GPU JPEG pipeline for large JPEG folders)")
        ->default_str("auto")
        ->group("Common");
    sub.add_option("--max-pixels", c.max_pixels, "Refuse images with more pixels than this (checked from the header)")
        ->default_str(std::to_string(c.max_pixels))
        ->group("Common");
    sub.add_option("--threads", c.threads, "Decode/encode threads (0 = one per hardware thread)")
        ->default_str("0")
        ->group("Common");
    sub.add_flag("-q,--quiet", c.quiet, "No progress bar, notes or summary; errors only")->group("Common");
    sub.add_flag("-v,--verbose", c.verbose, "One line per file: the device and the time of each stage")->group("Common");
}

void ImageJob::add_options(CLI::App& sub) {
    sub.add_option("paths", paths, "IN... OUT: input files, folders or patterns ('-' = stdin), then the output file or folder ('-' = stdout)")
        ->required()
        ->type_name("PATH");
    sub.add_flag("-r,--recursive", recursive, "Descend into sub-folders, mirroring them in the output folder");
    sub.add_flag("--in-place", in_place, "Allow overwriting inputs (OUT may then be left out)");
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

}  // namespace

RunOptions run_options(const Common& common, bool batch, const std::vector<Device>& devices) {
    RunOptions ro;
    ro.threads = batch ? common.threads : 1;
    ro.quiet = common.quiet;
    ro.progress = batch;
    ro.verbose = common.verbose;
    for (auto& d : devices) ro.verbose_device += (ro.verbose_device.empty() ? "" : ", ") + describe(d);
    ro.devices = devices;
    return ro;
}

int run_image_job(const ImageJob& job, const std::function<void(Item&, const Device&)>& process,
                  const std::function<bool(const InputFile&, const std::string&)>& planar_ok, GpuImageWork gpu_work) {
    std::vector<std::string> ins = job.paths;
    std::string out;
    if (job.in_place && ins.size() == 1) {
        out = "";  // outputs are the inputs
    } else {
        if (ins.size() < 2) fail_usage("expected IN... OUT (or --in-place with inputs only)");
        out = ins.back();
        ins.pop_back();
    }
    const std::vector<Device> devices = job.common.devices();
    const Shard shard = parse_shard(job.shard);
    const bool batch = is_batch(ins) || (!out.empty() && is_directory(out) && ins.size() > 1);
    std::string to = job.to;
    if (!to.empty() && to[0] == '.') to = to.substr(1);
    if (!to.empty() && format_from_extension(to) == Format::Unknown) fail_usage("--to: unknown image format '" + to + "'");

    std::vector<Item> items;
    Summary pre;
    std::vector<InputFile> inputs = collect_inputs(ins, job.recursive, &pre.unsupported);
    if (batch) {
        if (!out.empty() && out != "-") {
            if (path_exists(out) && !is_directory(out)) fail_io(out, "the output of several inputs must be a folder");
        } else if (out == "-") {
            fail_usage("several inputs cannot go to standard output");
        }
    }
    const Rgb background = parse_colour(job.background);
    std::size_t outside_shard = 0;
    for (const InputFile& in : inputs) {
        if (!in_shard(in.rel, shard)) {
            ++outside_shard;
            continue;
        }
        Item it;
        it.input = in;
        if (out.empty()) {
            it.output = in.path;
        } else if (out == "-") {
            it.output = "-";
        } else if (batch || is_directory(out)) {
            it.output = out + "/" + in.rel;
        } else {
            it.output = out;
        }
        if (!to.empty() && it.output != "-") it.output = replace_extension(it.output, to);
        if (job.skip_existing && it.output != "-" && path_exists(it.output) && !same_file(it.input.path, it.output)) {
            ++pre.skipped;
            continue;
        }
        it.index = items.size();
        items.push_back(std::move(it));
    }

    const DecodeOptions dopt = job.common.decode();
    EncodeOptions eopt = job.encode;
    eopt.threads = job.common.threads;
    std::mutex dir_mutex;

    // The output's format: the output's extension, or for standard output --to, the input's, else PNG.
    auto output_format = [&](const Item& it) {
        Format f = Format::Unknown;
        if (it.output == "-")
            f = !to.empty() ? format_from_extension(to) : format_from_extension(extension_of(it.input.path));
        else
            f = format_from_extension(extension_of(it.output));
        if (f == Format::Unknown && it.output == "-") f = Format::Png;
        return f;
    };
    // The decode options of one item: the output format's size limits are checked with the header, before
    // decoding and processing (on either path).
    auto item_decode = [&](const Item& it) {
        DecodeOptions o = dopt;
        o.output = output_format(it);
        o.output_name = display_name(it.output, true);
        return o;
    };

    // JPEG files through the GPU when this run takes it (gpu_jpeg_devices decides, --device auto included);
    // every other file (and any JPEG the GPU declines) through the CPU codecs below.
    const GpuWorkload workload = gpu_work == GpuImageWork::DecodeOnly ? GpuWorkload::Other : GpuWorkload::Equalize;
    const std::vector<Device> gpus = gpu_jpeg_devices(job.common, devices, count_jpeg_names(items), workload, true, "");
    const bool gpu = !gpus.empty();

    const CpuLoad cpu_load = [&](Item& it, Bytes&& data) {
        const std::string in_name = display_name(it.input.path);
        const DecodeOptions item_dopt = item_decode(it);
        // The planar JPEG path keeps the stored orientation; --auto-orient needs the pixels.
        if (planar_ok && !job.auto_orient && it.output != "-" && planar_ok(it.input, it.output) && !data.empty() &&
            sniff_format(data, it.input.path) == Format::Jpeg && jpeg_planar_ok(data)) {
            it.planes = decode_jpeg_planes(data, in_name, item_dopt);
            it.planar = true;
            return;
        }
        it.image = decode_image(data, in_name, item_dopt);
        if (job.auto_orient) auto_orient(it.image);
    };
    Stages st;
    st.load = [&](Item& it) {
        const std::string in_name = display_name(it.input.path);
        if (it.output != "-" && same_file(it.input.path, it.output) && !job.in_place)
            fail(ErrorCode::InvalidArgument, in_name, "the output " + it.output +
                                                          " is the input file; refusing to overwrite it (use --in-place)");
        Bytes data = read_file(it.input.path);
        if (gpu && take_for_gpu(it, data, true)) {
            // --auto-orient that must turn the pixels: the GPU path has no rotation, so such a file goes through
            // the CPU codecs (cpu_load rotates it and resets the tag). Files stored upright stay on the GPU.
            if (job.auto_orient && exif_orientation(it.jpeg_header.meta.exif) != 1) {
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
    };
    if (gpu) {
        st.process_batch = [&](std::vector<Item*>& b, const Device& d) {
            gpu_image_batch(b, d, gpu_work, eopt, dopt);
        };
        const bool encodes = gpu_work != GpuImageWork::DecodeOnly;
        gpu_jpeg_stages(st, gpu_work == GpuImageWork::EqualizeLuma ? nv::kOutputYUV : nv::kOutputRGBI, encodes);
        st.decode_kept = [&](Item& it) { cpu_load(it, std::move(it.jpeg)); };
    }
    st.process = process;
    st.store = [&](Item& it) {
        const Format f = output_format(it);
        const std::string out_name = display_name(it.output, true);
        if (it.output != "-") {
            std::lock_guard<std::mutex> l(dir_mutex);
            if (batch) make_dirs(parent_dir(it.output));
        }
        if (!it.encoded.empty()) {  // encoded on the GPU: the input's metadata added as the CPU encoder writes it
            Metadata m = it.jpeg_header.meta;
            if (job.strip) m.strip();
            Bytes b = jpeg_with_metadata(it.encoded, m, out_name);
            write_file_atomic(it.output, b.data(), b.size());
        } else if (it.planar) {
            if (job.strip) it.planes.meta.strip();
            Bytes b = encode_jpeg_planes(it.planes, eopt, out_name);
            write_file_atomic(it.output, b.data(), b.size());
        } else {
            if (job.flatten && (it.image.channels() == 2 || it.image.channels() == 4)) it.image = flatten(it.image, background);
            if (job.depth == 8 && it.image.depth() == 16) it.image = to_depth8(it.image);
            if (job.strip) it.image.meta.strip();
            Bytes b = encode_image(it.image, f, eopt, out_name);
            write_file_atomic(it.output, b.data(), b.size());
        }
    };
    // Decode/encode threads: one image is coded alone; the PNG writer spreads it over all threads itself.
    RunOptions ro = run_options(job.common, batch, gpu ? gpus : devices);
    ro.prefix_notes = batch;
    Summary s = run_pipeline(items, st, ro);
    s.skipped = pre.skipped;
    s.unsupported = pre.unsupported;
    if (batch && !job.common.quiet) std::fprintf(stderr, "imghist: %s\n", summary_line(s).c_str());
    const std::string nothing = nothing_processed(s, outside_shard);
    if (!nothing.empty()) {
        std::fprintf(stderr, "imghist: %s\n", nothing.c_str());
        return kExitFailure;
    }
    return s.failed ? kExitFailure : kExitOk;
}

}  // namespace cli
