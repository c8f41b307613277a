#include "commands/image_tasks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/codecs/codec.hpp"
#include "io/errors.hpp"
#include "io/fileio.hpp"

namespace cli {

namespace {

// A JPEG going to a JPEG in luma mode only needs its Y plane: no colour conversion, no resampling.
bool jpeg_to_jpeg(const std::string& out) { return format_from_extension(extension_of(out)) == Format::Jpeg; }

std::string fmt_threshold(double t) {
    char buf[64];
    if (t == std::floor(t))
        std::snprintf(buf, sizeof buf, "%.0f", t);
    else
        std::snprintf(buf, sizeof buf, "%.6g", t);
    return buf;
}

MatchTarget load_target(const std::string& path, const Common& common) {
    const std::string name = display_name(path);
    if (extension_of(path) == "json") {
        const Bytes data = read_file(path, common.limits.max_input);
        return match_target(hist_from_json(parse_histogram_json(data.data(), data.size(), name), name), name);
    }
    const Bytes data = read_image_file(path, common.limits);
    const Image ref = decode_image(data, name, common.decode());
    return match_target(ref, common.devices().front());
}

}  // namespace

ImageTask equalize_task(const ImageJob& job, EqualizeMode mode) {
    auto planar_ok = [mode](const InputFile&, const std::string& out) {
        return mode == EqualizeMode::Luma && jpeg_to_jpeg(out);
    };
    auto process = [mode](Item& it, const Device& d) {
        if (it.planar)
            equalize_luma_planes(it.planes, d);
        else
            equalize(it.image, mode, d);
    };
    return ImageTask{job, process, planar_ok,
                     mode == EqualizeMode::Luma ? GpuImageWork::EqualizeLuma : GpuImageWork::EqualizePerChannel};
}

StretchParams stretch_params(const StretchChoice& c, const OptionSpelling& s) {
    if (c.normalize && c.auto_level) fail_usage(s.flag("normalize") + " and " + s.flag("auto_level") + " exclude each other");
    if ((c.normalize || c.auto_level) && (c.low || c.high))
        fail_usage(s.flag(c.normalize ? "normalize" : "auto_level") + " sets low and high: give " + s.option("low") +
                   " / " + s.option("high") + " or it, not both");
    StretchParams p;
    p.mode = c.mode;
    if (c.auto_level) p.low = p.high = 0;
    p.low = c.low.value_or(p.low);
    p.high = c.high.value_or(p.high);
    if (p.low + p.high > 100) fail_usage(s.option("low") + " + " + s.option("high") + " must not exceed 100 (percent)");
    return p;
}

ImageTask stretch_task(const ImageJob& job, const StretchParams& p) {
    // As equalize's: Y'CbCr planes, no colour conversion, no chroma resampling (stretch_luma_planes says how it
    // relates to the RGB route).
    auto planar_ok = [p](const InputFile&, const std::string& out) {
        return p.mode == StretchMode::Luma && jpeg_to_jpeg(out);
    };
    auto process = [p](Item& it, const Device& d) {
        if (it.planar)
            stretch_luma_planes(it.planes, p, d);
        else
            stretch(it.image, p, d);
    };
    return ImageTask{job, process, planar_ok};
}

ImageTask clahe_task(const ImageJob& job, ClaheParams p) {
    p.max_memory = job.common.limits.max_memory;
    return ImageTask{job, [p](Item& it, const Device& d) { clahe(it.image, p, d); }};
}

ImageTask threshold_task(const ImageJob& job, const ThresholdParams& p) {
    return ImageTask{job, [p](Item& it, const Device& d) {
        Image out;
        const double t = threshold(it.image, p, d, out);
        out.meta = std::move(it.image.meta);  // the binary image is still the same photo
        it.image = std::move(out);
        it.note = "threshold: " + fmt_threshold(t);
    }};
}

ImageTask multiotsu_task(const ImageJob& job, int classes) {
    return ImageTask{job, [classes](Item& it, const Device& d) {
        Image out;
        const std::vector<int> t = threshold_multiotsu(it.image, classes, d, out);
        it.image = std::move(out);
        std::string note = "thresholds:";
        for (int v : t) note += " " + std::to_string(v);
        it.note = note;
    }};
}

const std::vector<std::string>& threshold_methods() {
    static const std::vector<std::string> methods = {"otsu", "triangle", "value", "multiotsu"};
    return methods;
}

ImageTask threshold_command_task(const ImageJob& job, const ThresholdChoice& c, const OptionSpelling& s) {
    const std::string multiotsu = s.choice("method", "multiotsu"), by_value = s.choice("method", "value");
    if (c.method == "multiotsu") {
        if (c.value || c.invert)
            fail_usage(s.option("value") + " and " + s.flag("invert") + " do not apply to " + multiotsu);
        return multiotsu_task(job, c.classes.value_or(3));
    }
    const std::vector<std::string>& methods = threshold_methods();
    if (std::find(methods.begin(), methods.end(), c.method) == methods.end())
        fail_usage(s.choice("method", c.method) + ": expected otsu, triangle, value or multiotsu");
    if (c.classes) fail_usage(s.option("classes") + " is only used with " + multiotsu);
    ThresholdParams p;
    p.method = c.method == "otsu" ? ThresholdMethod::Otsu : c.method == "triangle" ? ThresholdMethod::Triangle : ThresholdMethod::Value;
    if (p.method == ThresholdMethod::Value && !c.value) fail_usage(by_value + " needs " + s.option("value"));
    if (p.method != ThresholdMethod::Value && c.value) fail_usage(s.option("value") + " is only used with " + by_value);
    p.value = c.value.value_or(p.value);
    p.invert = c.invert;
    return threshold_task(job, p);
}

ImageTask match_task(ImageJob job) {
    const std::size_t min_args = job.in_place ? 2 : 3;
    if (job.paths.size() < min_args) fail_usage(job.in_place ? "expected IN... REF with --in-place" : "expected IN... REF OUT");
    const std::size_t ref_at = job.paths.size() - (job.in_place ? 1 : 2);
    const std::string ref = job.paths[ref_at];
    job.paths.erase(job.paths.begin() + static_cast<std::ptrdiff_t>(ref_at));
    job.other_inputs.push_back(ref);
    // The reference is read once, before the inputs; its histogram's JSON "total" serves folders.
    auto target = std::make_shared<MatchTarget>(load_target(ref, job.common));
    return ImageTask{job, [target](Item& it, const Device& d) { match(it.image, *target, d); }};
}

}  // namespace cli
