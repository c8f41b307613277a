// The options every command takes, the image commands' shared options, and their Command.
#include "options/commands.hpp"
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

void add_image_options(CLI::App& sub, ImageJob& job) {
    sub.add_option("paths", job.paths, "IN... OUT: input files, folders or patterns ('-' = stdin), then the output file or folder ('-' = stdout)")
        ->required()
        ->type_name("PATH");
    sub.add_flag("-r,--recursive", job.recursive, "Descend into sub-folders, mirroring them in the output folder");
    sub.add_flag("--in-place", job.in_place, "Replace each input by its result, atomically (every PATH is then an input: no OUT)");
    sub.add_flag("--skip-existing", job.skip_existing, "Leave outputs that already exist alone (resumes a stopped run)");
    sub.add_option("--shard", job.shard, "Process only part K of N of the inputs (stable per file name), e.g. 3/8")->type_name("K/N");
    sub.add_option("--to", job.to, "Output format by extension (png, jpg, tif, webp, bmp, tga, pgm, ppm); default: the output's or input's")
        ->type_name("EXT");
    sub.add_option("--quality", job.encode.jpeg_quality,
                   "JPEG quality 1-100 (default: the input JPEG's estimated quality, else 90); WebP: lossy at this quality (default: lossless)")
        ->default_str("input's, else 90")
        ->check(CLI::Range(1, 100));
    sub.add_option("--png-level", job.encode.png_level, "PNG zlib level 0-9")->default_str("1")->check(CLI::Range(0, 9));
    sub.add_option("--tiff-compression", job.encode.tiff_compression, "TIFF output compression")
        ->check(CLI::IsMember({"deflate", "lzw", "packbits", "none"}))
        ->default_str("deflate");
    // Metadata and output shaping (the output's format may not hold what the input had).
    sub.add_flag("--strip", job.strip, "Write no metadata (by default EXIF, ICC profile, XMP, comments and resolution are kept)");
    sub.add_flag("--auto-orient", job.auto_orient, "Apply the EXIF orientation to the pixels and reset the tag to 1");
    sub.add_option("--depth", job.depth, "Output sample depth: 8 converts 16-bit images (v * 255 / 65535, rounded)")
        ->check(CLI::IsMember({8}));
    sub.add_flag("--flatten", job.flatten, "Composite alpha over --background and drop it (e.g. for JPEG output)");
    sub.add_option("--background", job.background, "Colour for --flatten: #RRGGBB, white or black")->default_str("white");
    add_common(sub, job.common);
}

const OptionSpelling& program_spelling() {
    static const OptionSpelling s{
        [](const std::string& key) {
            std::string o = "--" + key;
            for (char& c : o)
                if (c == '_') c = '-';
            return o;
        },
        [](const std::string& key) { return program_spelling().option(key); },
        [](const std::string& key, const std::string& value) { return program_spelling().option(key) + " " + value; }};
    return s;
}

Command image_command(CLI::App* sub, std::function<ImageTask()> task) {
    return Command{sub, [task] { return run_image_job(task()); }};
}

}  // namespace cli
