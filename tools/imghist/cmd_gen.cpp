// imghist gen OUT --dist uniform|normal|binomial|poisson|exponential --size WxH [--seed S] [parameters]
//
// Test images (or raw sample files, by --dtype or a .bin/.raw name) with the classic distributions. The
// result depends only on the arguments, not on the thread count: blocks of samples draw from generators
// seeded by (seed, block).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>

#include "io/codecs/codec.hpp"
#include "program_commands.hpp"
#include "io/errors.hpp"
#include "io/fileio.hpp"
#include "io/parallel.hpp"
#include "io/raw.hpp"

namespace cli {
namespace {

struct GenArgs {
    Common common;
    std::string out, dist = "uniform", size, dtype, to;
    std::uint64_t seed = 1;
    int channels = 1, depth = 8;
    double low = 0, high = NAN, mean = NAN, stddev = NAN, p = 0.5, lambda = NAN, scale = NAN;
    int trials = -1;
    EncodeOptions encode;
};

std::uint64_t splitmix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/// Fills n values with the distribution; integer outputs are rounded and clamped to [0, maxv].
template <class T>
void generate(T* out, std::size_t n, const GenArgs& a, double maxv, bool integral) {
    const std::size_t block = 1 << 16;
    const std::size_t nblocks = (n + block - 1) / block;
    parallel_for(nblocks, a.common.threads, [&](std::size_t b) {
        std::mt19937_64 rng(splitmix(a.seed * 0x100000001b3ull + b));
        const std::size_t i0 = b * block, i1 = std::min(n, i0 + block);
        auto put = [&](std::size_t i, double v) {
            if (integral) {
                v = std::nearbyint(v);
                v = std::min(std::max(v, 0.0), maxv);
            }
            out[i] = static_cast<T>(v);
        };
        if (a.dist == "uniform") {
            if (integral) {
                std::uniform_int_distribution<long long> d(static_cast<long long>(a.low), static_cast<long long>(a.high) - 1);
                for (std::size_t i = i0; i < i1; ++i) put(i, static_cast<double>(d(rng)));
            } else {
                std::uniform_real_distribution<double> d(a.low, a.high);
                for (std::size_t i = i0; i < i1; ++i) put(i, d(rng));
            }
        } else if (a.dist == "normal") {
            std::normal_distribution<double> d(a.mean, a.stddev);
            for (std::size_t i = i0; i < i1; ++i) put(i, d(rng));
        } else if (a.dist == "binomial") {
            std::binomial_distribution<int> d(a.trials, a.p);
            for (std::size_t i = i0; i < i1; ++i) put(i, d(rng));
        } else if (a.dist == "poisson") {
            std::poisson_distribution<long long> d(a.lambda);
            for (std::size_t i = i0; i < i1; ++i) put(i, static_cast<double>(d(rng)));
        } else {
            std::exponential_distribution<double> d(1.0 / a.scale);
            for (std::size_t i = i0; i < i1; ++i) put(i, d(rng));
        }
    });
}

int run_gen(GenArgs& a) {
    long long w = 0, h = 1;
    char x = 0;
    int fields = std::sscanf(a.size.c_str(), "%lld%c%lld", &w, &x, &h);
    if (!((fields == 1) || (fields == 3 && (x == 'x' || x == 'X'))) || w < 1 || h < 1)
        fail_usage("--size: expected WxH (or a sample count N for raw files), got '" + a.size + "'");
    const std::string ext = extension_of(a.out);
    const bool raw = !a.dtype.empty() || ext == "bin" || ext == "raw";
    imghist::SampleType type = imghist::SampleType::U8;
    if (raw) {
        type = parse_dtype(a.dtype.empty() ? "u8" : a.dtype);
    } else {
        if (a.depth != 8 && a.depth != 16) fail_usage("--depth: 8 or 16");
        if (a.channels < 1 || a.channels > 4) fail_usage("--channels: 1 to 4");
        type = a.depth == 16 ? imghist::SampleType::U16 : imghist::SampleType::U8;
    }
    // The sample count (raw files) or pixel count, without overflow, within --max-pixels.
    std::uint64_t count = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(w), static_cast<std::uint64_t>(h), &count) ||
        count > a.common.limits.max_pixels || (!raw && (w > 0x7fffffff || h > 0x7fffffff)))
        fail_usage("--size " + a.size + " is above the pixel limit (--max-pixels)");
    const double maxv = type == imghist::SampleType::U8    ? 255.0
                        : type == imghist::SampleType::U16 ? 65535.0
                        : type == imghist::SampleType::I32 ? 2147483647.0
                                                           : std::numeric_limits<double>::infinity();
    const bool integral = type != imghist::SampleType::F32;
    // Defaults that suit the output's range.
    const double span = std::isinf(maxv) ? 256.0 : (type == imghist::SampleType::I32 ? 1024.0 : maxv + 1);
    if (std::isnan(a.high)) a.high = span;
    if (std::isnan(a.mean)) a.mean = span / 2;
    if (std::isnan(a.stddev)) a.stddev = span / 8;
    if (std::isnan(a.lambda)) a.lambda = span / 4;
    if (std::isnan(a.scale)) a.scale = span / 8;
    if (a.trials < 0) a.trials = static_cast<int>(std::min(span - 1, 1e9));
    if (a.dist == "uniform" && !(a.high > a.low)) fail_usage("--high must be greater than --low");
    if (a.dist == "normal" && !(a.stddev > 0)) fail_usage("--stddev must be positive");
    if (a.dist == "binomial" && !(a.p >= 0 && a.p <= 1)) fail_usage("--p must lie in [0, 1]");
    if (a.dist == "poisson" && !(a.lambda > 0)) fail_usage("--lambda must be positive");
    if (a.dist == "exponential" && !(a.scale > 0)) fail_usage("--scale must be positive");

    if (raw) {
        const std::size_t n = static_cast<std::size_t>(w) * static_cast<std::size_t>(h);
        if (n > static_cast<std::size_t>(PTRDIFF_MAX) / imghist::sample_size(type))
            fail_usage("--size " + a.size + ": the file would not fit in memory's address range");
        Bytes buf(n * imghist::sample_size(type));
        switch (type) {
            case imghist::SampleType::U8: generate(buf.data(), n, a, maxv, integral); break;
            case imghist::SampleType::U16: generate(reinterpret_cast<std::uint16_t*>(buf.data()), n, a, maxv, integral); break;
            case imghist::SampleType::I32: generate(reinterpret_cast<std::int32_t*>(buf.data()), n, a, maxv, integral); break;
            case imghist::SampleType::F32: generate(reinterpret_cast<float*>(buf.data()), n, a, maxv, integral); break;
        }
        write_file_atomic(a.out, buf.data(), buf.size());
        return kExitOk;
    }
    Format f = format_from_extension(!a.to.empty() ? a.to : ext);
    if (a.out == "-" && a.to.empty()) f = Format::Png;
    check_encodable(f, a.depth, a.channels, display_name(a.out, true));
    check_output_size(f, static_cast<std::uint64_t>(w), static_cast<std::uint64_t>(h), a.channels, display_name(a.out, true));
    Image img(static_cast<int>(w), static_cast<int>(h), a.channels, a.depth);
    const std::size_t n = img.pixels() * static_cast<std::size_t>(a.channels);
    if (a.depth == 8)
        generate(img.data(), n, a, maxv, true);
    else
        generate(reinterpret_cast<std::uint16_t*>(img.data()), n, a, maxv, true);
    EncodeOptions e = a.encode;
    e.threads = a.common.threads;
    write_image(a.out, img, f, e);
    return kExitOk;
}

}  // namespace

Command add_gen(CLI::App& app) {
    auto* sub = app.add_subcommand("gen", "Generate test images or raw sample files with classic distributions");
    auto a = std::make_shared<GenArgs>();
    sub->add_option("OUT", a->out, "Output image (format by extension), raw file (.bin/.raw or --dtype), or '-'")->required();
    sub->add_option("--dist", a->dist, "Distribution")
        ->check(CLI::IsMember({"uniform", "normal", "binomial", "poisson", "exponential"}))
        ->required();
    sub->add_option("--size", a->size, "Image size WxH, or sample count N for raw files")->required()->type_name("WxH");
    sub->add_option("--seed", a->seed, "Random seed (same seed, same output)")->default_str("1");
    sub->add_option("--channels", a->channels, "Image channels: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA")->default_str("1");
    sub->add_option("--depth", a->depth, "Image bits per sample: 8 or 16")->default_str("8");
    sub->add_option("--dtype", a->dtype, "Write a raw sample file of this type: u8, u16, i32, f32")
        ->check(CLI::IsMember({"u8", "u16", "i32", "f32"}));
    sub->add_option("--to", a->to, "Image format when OUT is '-' (png, jpg, tif, webp, bmp, tga, pgm, ppm)")->type_name("EXT");
    auto* params = sub->add_option_group("Distribution parameters",
                                         "Defaults fit the output range R (256 for 8-bit, 65536 for 16-bit, 1024 for i32)");
    params->add_option("--low", a->low, "uniform: lowest value")->default_str("0");
    params->add_option("--high", a->high, "uniform: values are below this")->default_str("R");
    params->add_option("--mean", a->mean, "normal: mean")->default_str("R/2");
    params->add_option("--stddev", a->stddev, "normal: standard deviation")->default_str("R/8");
    params->add_option("--trials", a->trials, "binomial: number of trials")->default_str("R-1");
    params->add_option("--p", a->p, "binomial: success probability")->default_str("0.5");
    params->add_option("--lambda", a->lambda, "poisson: mean")->default_str("R/4");
    params->add_option("--scale", a->scale, "exponential: mean (1/rate)")->default_str("R/8");
    sub->add_option("--quality", a->encode.jpeg_quality, "JPEG quality 1-100")->default_str("90")->check(CLI::Range(1, 100));
    add_common(*sub, a->common);
    sub->footer(
        "Examples:\n"
        "  imghist gen noise.png --dist normal --size 1920x1080 --mean 100 --stddev 20\n"
        "  imghist gen data.bin --dist uniform --size 33554432 --dtype i32 --high 1024   # 2^25 10-bit samples");
    return Command{sub, [a] { return run_gen(*a); }};
}

}  // namespace cli
