// imghist._imghist — the batch filters (imghist/batch_filters.hpp) for imghist.batch: one library call for a
// whole batch, whatever its size.
//
// A batch argument is a Python list (or tuple) of images, each as image_arg reads it, or one array whose first
// axis counts the images: (N, H, W) or (N, H, W, C), its image 0 read as image_arg reads an image and the
// distance between images taken from the first stride (any sign; NumPy arrays that cannot be viewed so are
// copied, external arrays never). A list becomes ImageBatch::list, an array ImageBatch::uniform. Empty images
// are the Python layer's business (imghist/batch.py): the library refuses them.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "imghist/batch_filters.hpp"

namespace imghist_py {
namespace {

struct Batch {
    imghist::ImageBatch batch;
    std::vector<Image> images;  ///< a list's images (copies of NumPy inputs live here)
    py::object keep;            ///< a C-contiguous copy of a NumPy batch array that could not be viewed in place
};

Batch list_batch(py::sequence items, const std::string& role, bool writable) {
    Batch b;
    std::vector<ImageView> views;
    const std::size_t n = py::len(items);
    b.images.reserve(n);
    views.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::string r = role + " " + std::to_string(i);
        b.images.push_back(image_arg(items[i], r.c_str(), writable));
        views.push_back(b.images.back().view);
    }
    b.batch = imghist::ImageBatch::list(std::move(views));
    return b;
}

/// The uniform batch of a NumPy (N, H, W[, C]) array; false when its images cannot be viewed in place.
bool numpy_batch(const py::array& arr, const char* role, Batch& b) {
    const int nd = static_cast<int>(arr.ndim());
    const SampleType t = numpy_sample_type(arr, role);
    std::int64_t shape[4] = {0, 0, 0, 0}, strides[4] = {0, 0, 0, 0};
    for (int i = 0; i < nd; ++i) {
        shape[i] = arr.shape(i);
        strides[i] = arr.strides(i);
    }
    ImageView first;
    if (!make_view(arr.data(), nd - 1, shape + 1, strides + 1, t, Location::Host, role, first)) return false;
    // Every image must be aligned as image 0 is.
    if (strides[0] % static_cast<std::int64_t>(imghist::sample_size(t)) != 0) return false;
    b.batch = imghist::ImageBatch::uniform(first, static_cast<std::size_t>(shape[0]),
                                           static_cast<std::ptrdiff_t>(strides[0]));
    return true;
}

Batch batch_arg(py::handle obj, const std::string& function, const char* name, bool writable = false) {
    const std::string role = function + ": " + name;
    if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj))
        return list_batch(py::reinterpret_borrow<py::sequence>(obj), role, writable);
    Batch b;
    if (py::isinstance<ExternalArray>(obj)) {
        std::size_t count = 0;
        std::ptrdiff_t stride = 0;
        const ImageView first = obj.cast<const ExternalArray&>().batch_view(role.c_str(), count, stride);
        b.batch = imghist::ImageBatch::uniform(first, count, stride);
        return b;
    }
    if (!py::isinstance<py::array>(obj))
        fail(ErrorCode::Unsupported, role + ": expected a list of images or an (N, H, W[, C]) array");
    auto arr = py::reinterpret_borrow<py::array>(obj);
    if (arr.ndim() != 3 && arr.ndim() != 4)
        fail(ErrorCode::InvalidArgument, role + ": expected an (N, H, W) or (N, H, W, C) array, got " +
                                             std::to_string(arr.ndim()) + " dimensions");
    if (writable && !arr.writeable()) fail(ErrorCode::InvalidArgument, role + ": array is read-only");
    if (numpy_batch(arr, role.c_str(), b)) return b;
    if (writable)
        fail(ErrorCode::InvalidArgument, role + ": an output batch needs adjacent samples and pixels in each row, "
                                                "aligned to the sample size");
    b.keep = arr.attr("copy")("C");
    numpy_batch(py::reinterpret_borrow<py::array>(b.keep), role.c_str(), b);
    return b;
}

// ---- operations: one batch call each; `function` names the Python function in messages ----------------------

void equalize_batch(py::handle src, py::handle dst, const std::string& backend, int device, std::uintptr_t stream) {
    const char* f = "batch.equalizeHist";
    Batch s = batch_arg(src, f, "images"), d = batch_arg(dst, f, "dst", true);
    const imghist::FilterOptions o = filter_options(backend, device, stream);
    py::gil_scoped_release nogil;
    imghist::equalize_hist_batch(s.batch, d.batch, o);
}

void equalize_color_batch(py::handle src, py::handle dst, const std::string& mode, const std::string& backend,
                          int device, std::uintptr_t stream) {
    const char* f = "batch.equalizeHistColor";
    const bool luma = luma_mode(mode);
    Batch s = batch_arg(src, f, "images"), d = batch_arg(dst, f, "dst", true);
    const imghist::FilterOptions o = filter_options(backend, device, stream);
    py::gil_scoped_release nogil;
    imghist::equalize_hist_color_batch(s.batch, d.batch,
                                       luma ? imghist::ColorEqualize::Luma : imghist::ColorEqualize::PerChannel, o);
}

/// `computed`: 0, or device memory for one int32 level per image (automatic thresholds of device batches: the
/// call then waits for nothing and returns no values).
std::vector<double> threshold_batch(py::handle src, py::handle dst, double thresh, double maxval, int type,
                                    std::uintptr_t computed, const std::string& backend, int device,
                                    std::uintptr_t stream) {
    const char* f = "batch.threshold";
    const ThresholdKind kind = threshold_kind(type);
    Batch s = batch_arg(src, f, "images"), d = batch_arg(dst, f, "dst", true);
    const imghist::FilterOptions o = filter_options(backend, device, stream);
    py::gil_scoped_release nogil;
    return imghist::threshold_batch(s.batch, d.batch, thresh, maxval, kind.op, kind.automatic, o,
                                    reinterpret_cast<int*>(computed));
}

void clahe_batch(py::handle src, py::handle dst, double clip, int tiles_x, int tiles_y, const std::string& backend,
                 int device, std::uintptr_t stream) {
    const char* f = "batch.CLAHE.apply";
    Batch s = batch_arg(src, f, "images"), d = batch_arg(dst, f, "dst", true);
    const imghist::FilterOptions o = filter_options(backend, device, stream);
    const imghist::Clahe c(clip, tiles_x, tiles_y);
    py::gil_scoped_release nogil;
    imghist::clahe_batch(c, s.batch, d.batch, o);
}

void stretch_batch(py::handle src, py::handle dst, double low, double high, const std::string& mode,
                   const std::string& backend, int device, std::uintptr_t stream) {
    const char* f = "batch.stretchContrast";
    const bool luma = luma_mode(mode);
    Batch s = batch_arg(src, f, "images"), d = batch_arg(dst, f, "dst", true);
    const imghist::FilterOptions o = filter_options(backend, device, stream);
    py::gil_scoped_release nogil;
    imghist::stretch_contrast_batch(s.batch, d.batch, low, high,
                                    luma ? imghist::StretchMode::Luma : imghist::StretchMode::PerChannel, o);
}

void match_batch(py::handle src, py::handle reference, py::handle dst, const std::string& backend, int device,
                 std::uintptr_t stream) {
    const char* f = "batch.matchHistograms";
    Batch s = batch_arg(src, f, "images"), d = batch_arg(dst, f, "dst", true);
    Image r = image_arg(reference, "batch.matchHistograms: reference");
    const imghist::FilterOptions o = filter_options(backend, device, stream);
    py::gil_scoped_release nogil;
    imghist::match_histograms_batch(s.batch, r.view, d.batch, o);
}

std::vector<std::vector<int>> multiotsu_batch(py::handle src, py::handle dst, int classes, const std::string& backend,
                                              int device, std::uintptr_t stream) {
    const char* f = "batch.thresholdMultiOtsu";
    Batch s = batch_arg(src, f, "images"), d = batch_arg(dst, f, "dst", true);
    const imghist::FilterOptions o = filter_options(backend, device, stream);
    py::gil_scoped_release nogil;
    return imghist::threshold_multiotsu_batch(s.batch, d.batch, classes, o);
}

/// Measurement hook for python/bench/bench_batch_equalize.py: enqueues `repeats` equalize_hist_batch calls on
/// the batch views built once, from C++ (what the batch costs without the Python layer), and returns.
void enqueue_equalize_batch(py::handle src, py::handle dst, int repeats, int device, std::uintptr_t stream) {
    Batch s = batch_arg(src, "batch.equalizeHist", "images"), d = batch_arg(dst, "batch.equalizeHist", "dst", true);
    const imghist::FilterOptions o = filter_options("auto", device, stream);
    py::gil_scoped_release nogil;
    for (int i = 0; i < repeats; ++i) imghist::equalize_hist_batch(s.batch, d.batch, o);
}

}  // namespace

void add_batch_functions(py::module_& m) {
    m.def("equalize_batch", named("batch.equalizeHist", &equalize_batch), py::arg("src"), py::arg("dst"),
          py::arg("backend"), py::arg("device"), py::arg("stream"));
    m.def("equalize_color_batch", named("batch.equalizeHistColor", &equalize_color_batch), py::arg("src"),
          py::arg("dst"), py::arg("mode"), py::arg("backend"), py::arg("device"), py::arg("stream"));
    m.def("threshold_batch", named("batch.threshold", &threshold_batch), py::arg("src"), py::arg("dst"),
          py::arg("thresh"), py::arg("maxval"), py::arg("type"), py::arg("computed"), py::arg("backend"),
          py::arg("device"), py::arg("stream"));
    m.def("clahe_batch", named("batch.CLAHE.apply", &clahe_batch), py::arg("src"), py::arg("dst"), py::arg("clip"),
          py::arg("tiles_x"), py::arg("tiles_y"), py::arg("backend"), py::arg("device"), py::arg("stream"));
    m.def("stretch_batch", named("batch.stretchContrast", &stretch_batch), py::arg("src"), py::arg("dst"),
          py::arg("low"), py::arg("high"), py::arg("mode"), py::arg("backend"), py::arg("device"), py::arg("stream"));
    m.def("match_batch", named("batch.matchHistograms", &match_batch), py::arg("src"), py::arg("reference"),
          py::arg("dst"), py::arg("backend"), py::arg("device"), py::arg("stream"));
    m.def("multiotsu_batch", named("batch.thresholdMultiOtsu", &multiotsu_batch), py::arg("src"), py::arg("dst"),
          py::arg("classes"), py::arg("backend"), py::arg("device"), py::arg("stream"));
    m.def("_enqueue_equalize_batch", &enqueue_equalize_batch, py::arg("src"), py::arg("dst"), py::arg("repeats"),
          py::arg("device"), py::arg("stream"));
}

}  // namespace imghist_py
