// imghist._imghist — image files: imghist_io's codecs and metadata rules for imghist.io.read / write and the
// cv2-shaped imghist.imread / imwrite, and the image commands' per-file work (imghist_jobs, jobs/) for
// imghist.dask.process_files. Built with IMGHIST_PYTHON_FILES (python/CMakeLists.txt).
//
// Images cross as NumPy arrays of uint8 or uint16 samples, (H, W) for one channel, else (H, W, C), C in 2..4:
// RGB(A) order for read / write (imghist_io's), BGR(A) for imread / imwrite (cv2's). Read arrays own the
// decoded buffer (no copy). Metadata crosses as a dict (imghist/io.py makes it an io.Metadata). Every call
// runs with the GIL released while it reads, decodes, encodes or writes; errors name the file.
#include <opencv2/imgproc.hpp>

#include <cstdint>
#include <cstring>
#include <memory>
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
#include "options/parse_file_job.hpp"
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
                                  "An image command of the imghist CLI, parsed from its arguments, run file by file.")
        .def(py::init([](const std::vector<std::string>& args) {
                 return in_python_terms("dask.process_files", [&] { return cli::parse_file_job(args); });
             }),
             py::arg("args"))
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
