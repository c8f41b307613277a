// imghist._imghist — image files: imghist_io's codecs and metadata rules for imghist.io.read / write and the
// cv2-shaped imghist.imread / imwrite, and the image commands' per-file work (imghist_jobs, jobs/) for
// imghist.dask.process_files, whose job is built from the operation's name and its keyword options as Python
// values (no command line). Built with IMGHIST_PYTHON_FILES (python/CMakeLists.txt).
//
// Images cross as NumPy arrays of uint8 or uint16 samples, (H, W) for one channel, else (H, W, C), C in 2..4:
// RGB(A) order for read / write (imghist_io's), BGR(A) for imread / imwrite (cv2's). Read arrays own the
// decoded buffer (no copy). Metadata crosses as a dict (imghist/io.py makes it an io.Metadata). Every call
// runs with the GIL released while it reads, decodes, encodes or writes; errors name the file.
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "io/codecs/codec.hpp"
#include "io/convert.hpp"
#include "io/errors.hpp"
#include "io/fileio.hpp"
#include "io/metadata.hpp"
#include "commands/file_job.hpp"
#include "commands/image_tasks.hpp"
#include "cv_read.hpp"

namespace imghist_py {
namespace {

using cli::Format;

// ---- arrays and metadata ----------------------------------------------------------------------------------

/// The image as a NumPy array that owns it: (H, W) for one channel, else (H, W, C).
py::array to_numpy(cli::Image&& img) {
    auto* owned = new cli::Image(std::move(img));
    py::capsule owner(owned, [](void* p) { delete static_cast<cli::Image*>(p); });
    const auto h = static_cast<py::ssize_t>(owned->height()), w = static_cast<py::ssize_t>(owned->width());
    const auto c = static_cast<py::ssize_t>(owned->channels()), ss = static_cast<py::ssize_t>(owned->sample_bytes());
    const py::dtype dt = owned->depth() == 16 ? py::dtype::of<std::uint16_t>() : py::dtype::of<std::uint8_t>();
    if (c == 1) return py::array(dt, {h, w}, {w * ss, ss}, owned->data(), owner);
    return py::array(dt, {h, w, c}, {w * c * ss, c * ss, ss}, owned->data(), owner);
}

/// An owning copy of a C-contiguous uint8 / uint16 array of 1 to 4 channels.
cli::Image from_numpy(const py::array& arr, const std::string& function) {
    const int nd = static_cast<int>(arr.ndim());
    if (nd != 2 && nd != 3)
        fail(ErrorCode::InvalidArgument, function + ": expected an (H, W) or (H, W, C) array, got " +
                                             std::to_string(nd) + " dimensions");
    const int channels = nd == 3 ? static_cast<int>(arr.shape(2)) : 1;
    if (channels < 1 || channels > 4)
        fail(ErrorCode::InvalidArgument, function + ": " + std::to_string(channels) + " channels; 1 to 4 are supported");
    const py::dtype dt = arr.dtype();
    int depth = 0;
    if (dt.kind() == 'u' && dt.itemsize() == 1) depth = 8;
    if (dt.kind() == 'u' && dt.itemsize() == 2 && dt.byteorder() != '>') depth = 16;
    if (depth == 0)
        fail(ErrorCode::Unsupported, function + ": unsupported dtype " +
                                         std::string(py::str(static_cast<const py::handle&>(dt))) +
                                         "; image files hold uint8 or uint16 samples");
    if (arr.shape(0) < 1 || arr.shape(1) < 1 || arr.shape(0) > INT32_MAX || arr.shape(1) > INT32_MAX)
        fail(ErrorCode::InvalidArgument, function + ": an image needs 1 to 2^31-1 rows and columns");
    cli::Image img(static_cast<int>(arr.shape(1)), static_cast<int>(arr.shape(0)), channels, depth);
    std::memcpy(img.data(), arr.data(), img.bytes());
    return img;
}

py::bytes blob_bytes(const cli::Blob& b) { return py::bytes(reinterpret_cast<const char*>(b.data()), b.size()); }

cli::Blob bytes_blob(py::handle h) {
    const std::string s = py::cast<std::string>(py::bytes(py::reinterpret_borrow<py::object>(h)));
    return cli::Blob(s.begin(), s.end());
}

py::dict metadata_dict(const cli::Metadata& m, Format format) {
    py::dict d;
    d["exif"] = blob_bytes(m.exif);
    d["icc"] = blob_bytes(m.icc);
    d["xmp"] = py::bytes(m.xmp);
    d["comments"] = m.comments;
    d["dpi"] = m.has_resolution() ? py::object(py::make_tuple(m.dpi_x, m.dpi_y)) : py::object(py::none());
    d["orientation"] = cli::exif_orientation(m.exif);
    const int q = cli::lossy_input_quality(m);
    d["quality"] = q > 0 ? py::object(py::int_(q)) : py::object(py::none());
    d["progressive"] = m.progressive;
    d["format"] = format == Format::Unknown ? py::object(py::none()) : py::object(py::str(cli::format_name(format)));
    return d;
}

/// The metadata a write carries (io.Metadata's fields, as metadata_dict makes them). The quality estimate
/// guides the lossy outputs' default quality; the orientation is written into the EXIF block's tag.
cli::Metadata metadata_of(const py::dict& d) {
    cli::Metadata m;
    if (d.contains("exif")) {
        const cli::Blob exif = bytes_blob(d["exif"]);
        m.exif = cli::normalize_exif(exif.data(), exif.size());
    }
    if (d.contains("icc")) m.icc = bytes_blob(d["icc"]);
    if (d.contains("xmp")) {
        const cli::Blob x = bytes_blob(d["xmp"]);
        m.xmp.assign(x.begin(), x.end());
    }
    if (d.contains("comments")) m.comments = d["comments"].cast<std::vector<std::string>>();
    if (d.contains("dpi") && !d["dpi"].is_none()) {
        const auto dpi = d["dpi"].cast<std::pair<double, double>>();
        m.dpi_x = dpi.first;
        m.dpi_y = dpi.second;
    }
    if (d.contains("quality") && !d["quality"].is_none()) m.jpeg_quality = d["quality"].cast<int>();
    if (d.contains("progressive")) m.progressive = d["progressive"].cast<bool>();
    if (d.contains("orientation") && !d["orientation"].is_none()) {
        const int o = d["orientation"].cast<int>();
        if (o < 1 || o > 8)
            fail(ErrorCode::InvalidArgument, "metadata orientation must be 1 to 8, got " + std::to_string(o));
        if (o != cli::exif_orientation(m.exif)) cli::set_exif_orientation(m.exif, o);
    }
    return m;
}

// ---- imghist.io ----------------------------------------------------------------------------------------------

py::tuple read_image(const std::string& path, bool auto_orient, std::uint64_t max_pixels) {
    cli::Image img;
    Format format = Format::Unknown;
    {
        py::gil_scoped_release nogil;
        cli::DecodeOptions o;
        o.limits.max_pixels = max_pixels;
        const cli::Bytes data = cli::read_image_file(path, o.limits);
        format = cli::sniff_format(data, path);
        img = cli::decode_image(data, path, o);
        if (auto_orient) cli::auto_orient(img);
    }
    py::dict meta = metadata_dict(img.meta, format);
    return py::make_tuple(to_numpy(std::move(img)), meta);
}

Format output_format(const std::string& path) {
    const Format f = cli::format_from_extension(cli::extension_of(path));
    if (f == Format::Unknown)
        fail(ErrorCode::Unsupported, path + ": unknown image format '." + cli::extension_of(path) +
                                         "' (png, jpg, jpeg, tif, tiff, webp, bmp, tga, pnm, pgm, ppm)");
    return f;
}

/// Writes `img` to `path` atomically and durably (a temporary name, fsync, rename, the folder's fsync).
void write_encoded(const std::string& path, const cli::Image& img, const cli::EncodeOptions& opt) {
    const Format f = output_format(path);
    py::gil_scoped_release nogil;
    cli::check_encodable(f, img.depth(), img.channels(), path);
    cli::check_output_size(f, static_cast<std::uint64_t>(img.width()), static_cast<std::uint64_t>(img.height()),
                           img.channels(), path);
    const cli::Bytes b = cli::encode_image(img, f, opt, path);
    cli::write_file_atomic(path, b.data(), b.size());
}

void write_image(const std::string& path, py::array array, py::object metadata, int quality, int png_level,
                 const std::string& tiff_compression, int threads) {
    cli::Image img = from_numpy(array, "io.write");
    if (!metadata.is_none()) img.meta = metadata_of(metadata.cast<py::dict>());
    cli::EncodeOptions opt;
    opt.jpeg_quality = quality;
    opt.png_level = png_level;
    opt.tiff_compression = tiff_compression;
    opt.threads = threads;
    write_encoded(path, img, opt);
}

// ---- cv2-shaped imread / imwrite ---------------------------------------------------------------------------

py::array imread(const std::string& path, int flags, std::uint64_t max_pixels) {
    cli::Image img;
    {
        py::gil_scoped_release nogil;
        img = cv_read(path, flags, max_pixels);
    }
    return to_numpy(std::move(img));
}

cv::Mat mat_of(cli::Image& img) {
    return cv::Mat(img.height(), img.width(), CV_MAKETYPE(img.depth() == 16 ? CV_16U : CV_8U, img.channels()),
                   img.data(), img.row_bytes());
}

/// cv2.imwrite of a BGR(A) or gray image: no metadata, the given encoder settings.
void imwrite(const std::string& path, py::array array, int quality, int png_level) {
    cli::Image img = from_numpy(array, "imwrite");
    if (img.channels() == 3 || img.channels() == 4) {
        cli::Image rgb(img.width(), img.height(), img.channels(), img.depth());
        cv::Mat d = mat_of(rgb);
        cv::cvtColor(mat_of(img), d, img.channels() == 3 ? cv::COLOR_BGR2RGB : cv::COLOR_BGRA2RGBA);
        img = std::move(rgb);
    }
    cli::EncodeOptions opt;
    opt.jpeg_quality = quality;
    opt.png_level = png_level;
    write_encoded(path, img, opt);
}

// ---- imghist.dask.process_files: an image command's job from its keyword options ---------------------------

constexpr double kInf = std::numeric_limits<double>::infinity();
/// The upper bound of the limits (64-bit counts and sizes): none that a caller could reach.
constexpr long long kNoMax = std::numeric_limits<long long>::max();

/// "expected an integer from 1 to 100", "expected a number of at least 0", "expected 8": `what` within
/// [lo, hi], where an infinite bound or kNoMax is none.
std::string expected(const char* what, double lo, double hi) {
    auto number = [](double x) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.15g", x);
        return std::string(buf);
    };
    const bool no_max = hi == kInf || hi >= static_cast<double>(kNoMax);
    if (lo == hi) return "expected " + number(lo);
    if (lo == -kInf && no_max) return std::string("expected ") + what;
    if (no_max) return std::string("expected ") + what + " of at least " + number(lo);
    return std::string("expected ") + what + " from " + number(lo) + " to " + number(hi);
}

/// The value of an int or a NumPy integer (anything with __index__, but not a bool); nothing for another
/// object or one beyond 64 bits.
std::optional<long long> integer_of(const py::handle& v) {
    if (PyBool_Check(v.ptr()) || !PyIndex_Check(v.ptr())) return std::nullopt;
    int overflow = 0;
    const long long n = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
    if (n == -1 && PyErr_Occurred()) {  // its __index__ raised
        PyErr_Clear();
        return std::nullopt;
    }
    if (overflow != 0) return std::nullopt;
    return n;
}

/// The keyword options of one process_files call (the command's options, --name value as name=value), each
/// taken once, by name, as the type the job holds it in; None is the same as not given (the command's
/// default), as an option left out of a command line. Each accessor returns whether the option was given;
/// messages name the keyword as the caller wrote it.
class Keywords {
public:
    explicit Keywords(const py::dict& options) {
        for (const auto& [key, value] : options)
            if (!value.is_none())
                left_.emplace_back(py::cast<std::string>(key), py::reinterpret_borrow<py::object>(value));
    }

    /// A flag: True or False.
    bool flag(const char* name, bool& out) {
        const py::object v = take(name);
        if (!v) return false;
        if (!PyBool_Check(v.ptr())) bad(name, v, "expected True or False");
        out = v.cast<bool>();
        return true;
    }
    /// An integer in [lo, hi].
    template <class T>
    bool integer(const char* name, T& out, long long lo, long long hi) {
        const py::object v = take(name);
        if (!v) return false;
        const std::optional<long long> n = integer_of(v);
        if (!n || *n < lo || *n > hi)
            bad(name, v, expected("an integer", static_cast<double>(lo), static_cast<double>(hi)));
        out = static_cast<T>(*n);
        return true;
    }
    /// A number (an int or a float, not a bool) in [lo, hi].
    bool real(const char* name, double& out, double lo, double hi) {
        const py::object v = take(name);
        if (!v) return false;
        double x = 0;
        bool ok = !PyBool_Check(v.ptr()) && PyNumber_Check(v.ptr());
        if (ok) {
            x = PyFloat_AsDouble(v.ptr());
            if (x == -1.0 && PyErr_Occurred()) {  // a complex number
                PyErr_Clear();
                ok = false;
            }
        }
        if (!ok || !(x >= lo && x <= hi)) bad(name, v, expected("a number", lo, hi));
        out = x;
        return true;
    }
    /// A string; with `choices`, one of them.
    bool text(const char* name, std::string& out, const std::vector<std::string>& choices = {}) {
        const py::object v = take(name);
        if (!v) return false;
        std::string one_of;
        for (const std::string& c : choices) one_of += (one_of.empty() ? "expected one of '" : ", '") + c + "'";
        if (!py::isinstance<py::str>(v)) bad(name, v, choices.size() == 0 ? "expected a string" : one_of);
        const auto s = v.cast<std::string>();
        if (choices.size() != 0 && std::find(choices.begin(), choices.end(), s) == choices.end()) bad(name, v, one_of);
        out = s;
        return true;
    }
    /// Two integers of at least `lo`, as a tuple or a list.
    bool pair(const char* name, int& first, int& second, int lo) {
        const py::object v = take(name);
        if (!v) return false;
        std::optional<long long> a, b;
        if ((py::isinstance<py::tuple>(v) || py::isinstance<py::list>(v)) && py::len(v) == 2) {
            a = integer_of(v[py::int_(0)]);
            b = integer_of(v[py::int_(1)]);
        }
        constexpr long long max = std::numeric_limits<int>::max();
        if (!a || !b || *a < lo || *a > max || *b < lo || *b > max)
            bad(name, v, "expected a pair of integers of at least " + std::to_string(lo));
        first = static_cast<int>(*a);
        second = static_cast<int>(*b);
        return true;
    }
    /// Refuses the first option left: one that `operation` does not have (named as the CLI spells it too).
    void finish(const std::string& operation) const {
        if (left_.empty()) return;
        const std::string& name = left_.front().first;
        std::string cli = "--" + name;
        std::replace(cli.begin(), cli.end(), '_', '-');
        fail(ErrorCode::InvalidArgument, "'" + operation + "' has no option " + name + "= (" + cli + ")");
    }

private:
    py::object take(const char* name) {
        for (auto it = left_.begin(); it != left_.end(); ++it) {
            if (it->first != name) continue;
            py::object v = std::move(it->second);
            left_.erase(it);
            return v;
        }
        return py::object();
    }
    [[noreturn]] static void bad(const char* name, const py::handle& v, const std::string& problem) {
        fail(ErrorCode::InvalidArgument, std::string(name) + "=" + std::string(py::repr(v)) + ": " + problem);
    }

    std::vector<std::pair<std::string, py::object>> left_;  ///< in the caller's order
};

/// Options as process_files' keywords in messages: "low=", "auto_level=True", "method='value'".
const cli::OptionSpelling& python_spelling() {
    static const cli::OptionSpelling s{
        [](const std::string& key) { return key + "="; },
        [](const std::string& key) { return key + "=True"; },
        [](const std::string& key, const std::string& value) { return key + "='" + value + "'"; }};
    return s;
}

/// The job of `operation` over `paths` (IN... [REF] OUT, as the command takes them) with process_files' keyword
/// options: the structures (jobs/) that the CLI's parser fills from its command line, filled from typed values
/// under the same rules.
cli::ImageTask image_task(const std::string& operation, std::vector<std::string> paths, const py::dict& options) {
    Keywords o(options);
    cli::ImageJob job;
    job.paths = std::move(paths);
    cli::Common& common = job.common;
    common.quiet = true;  // process_files reports through its results, never on stderr
    o.text("device", common.device);
    o.integer("threads", common.threads, 0, common.limits.max_threads);
    cli::Limits& limits = common.limits;  // sizes in bytes
    o.integer("max_pixels", limits.max_pixels, 0, kNoMax);
    o.integer("max_memory", limits.max_memory, 0, kNoMax);
    o.integer("max_input", limits.max_input, 0, kNoMax);
    o.integer("max_metadata", limits.max_metadata, 0, kNoMax);
    o.integer("max_metadata_items", limits.max_metadata_items, 0, kNoMax);
    o.integer("max_scans", limits.max_scans, 0, kNoMax);
    o.integer("max_ratio", limits.max_ratio, 1, kNoMax);
    o.flag("recursive", job.recursive);
    o.flag("skip_existing", job.skip_existing);
    o.text("to", job.to);
    o.integer("quality", job.encode.jpeg_quality, 1, 100);
    o.integer("png_level", job.encode.png_level, 0, 9);
    o.text("tiff_compression", job.encode.tiff_compression, {"deflate", "lzw", "packbits", "none"});
    o.flag("strip", job.strip);
    o.flag("auto_orient", job.auto_orient);
    o.integer("depth", job.depth, 8, 8);
    o.flag("flatten", job.flatten);
    o.text("background", job.background);
    // Each command's own options. Its task is made once no option is left over (match's reads the reference).
    std::function<cli::ImageTask()> task;
    if (operation == "equalize") {
        std::string mode = "luma";
        o.text("mode", mode, {"luma", "per-channel"});
        const auto m = mode == "luma" ? cli::EqualizeMode::Luma : cli::EqualizeMode::PerChannel;
        task = [&job, m] { return cli::equalize_task(job, m); };
    } else if (operation == "stretch") {
        cli::StretchChoice c;
        std::string mode = "luma";
        double low = 0, high = 0;
        if (o.real("low", low, 0, 100)) c.low = low;
        if (o.real("high", high, 0, 100)) c.high = high;
        o.text("mode", mode, {"luma", "per-channel"});
        o.flag("normalize", c.normalize);
        o.flag("auto_level", c.auto_level);
        c.mode = mode == "luma" ? cli::StretchMode::Luma : cli::StretchMode::PerChannel;
        task = [&job, c] { return cli::stretch_task(job, cli::stretch_params(c, python_spelling())); };
    } else if (operation == "match") {
        task = [&job] { return cli::match_task(job); };
    } else if (operation == "threshold") {
        cli::ThresholdChoice c;
        double value = 0;
        int classes = 0;
        o.text("method", c.method, cli::threshold_methods());
        if (o.real("value", value, -kInf, kInf)) c.value = value;
        o.flag("invert", c.invert);
        if (o.integer("classes", classes, 2, 5)) c.classes = classes;
        task = [&job, c] { return cli::threshold_command_task(job, c, python_spelling()); };
    } else if (operation == "clahe") {
        cli::ClaheParams p;
        o.real("clip", p.clip, 0, kInf);
        o.pair("tiles", p.tiles_x, p.tiles_y, 1);
        task = [&job, p] { return cli::clahe_task(job, p); };
    } else {
        fail(ErrorCode::InvalidArgument, "unknown operation '" + operation + "'");
    }
    o.finish(operation);
    return task();
}

}  // namespace

void add_file_functions(py::module_& m) {
    m.def("read_image", named("io.read", &read_image), py::arg("path"), py::arg("auto_orient"), py::arg("max_pixels"));
    m.def("write_image", named("io.write", &write_image), py::arg("path"), py::arg("array"), py::arg("metadata"),
          py::arg("quality"), py::arg("png_level"), py::arg("tiff_compression"), py::arg("threads"));
    m.def("imread", named("imread", &imread), py::arg("path"), py::arg("flags"), py::arg("max_pixels"));
    m.def("imwrite", named("imwrite", &imwrite), py::arg("path"), py::arg("img"), py::arg("quality"),
          py::arg("png_level"));
    m.def("remove_stale_temporaries", &cli::remove_stale_temporaries, py::arg("folder"),
          "Removes the temporaries of imghist writes in `folder` whose writer is gone; returns their paths.");
    py::class_<cli::ImageFileJob>(m, "FileJob",
                                  "An image command's job (imghist.dask.process_files'), run file by file.")
        .def(py::init([](const std::string& operation, std::vector<std::string> paths, const py::dict& options) {
                 return in_python_terms("dask.process_files", [&] {
                     return std::make_unique<cli::ImageFileJob>(image_task(operation, std::move(paths), options));
                 });
             }),
             py::arg("operation"), py::arg("paths"), py::arg("options"))
        .def("plan",
             [](const cli::ImageFileJob& j) {
                 return in_python_terms("dask.process_files", [&] {
                     std::vector<std::tuple<std::string, std::string, bool>> out;
                     for (const auto& p : j.plan()) out.emplace_back(p.input, p.output, p.skipped);
                     return out;
                 });
             })
        .def("run", [](const cli::ImageFileJob& j, const std::string& input, const std::string& output) {
            py::gil_scoped_release nogil;
            return j.run(input, output);
        }, py::arg("input"), py::arg("output"));
}

}  // namespace imghist_py
