// imghist._imghist — the compiled half of the `imghist` Python package.
//
// This file defines the module: the single-image operations and histograms, and the classes of array
// arguments (arrays.hpp); batch.cpp adds the batch filters and files.cpp the image files. The package's
// Python half (imghist/__init__.py) recognises frameworks (NumPy, CuPy, PyTorch, other
// __cuda_array_interface__ / DLPack producers), allocates outputs with the input's framework and picks the
// stream. Every library call runs with the GIL released. imghist::Error becomes the Python exception of
// its code (classes in imghist/_errors.py), with the library's message spoken in Python's terms
// (python_message).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "imghist/version.hpp"

namespace imghist_py {
namespace {

// ---- operations ------------------------------------------------------------------------------------------

/// Histogram of a host image: int64 counts, (bins,) for 2-D inputs and (C, bins) for 3-D inputs. `function`
/// is the Python function that asked (it names the arguments in messages).
py::array_t<std::int64_t> hist_host(py::handle src, int bins, py::handle range, py::handle mask,
                                    const std::string& backend, const std::string& function) {
    Image img = image_arg(src, (function + ": image").c_str());
    Image m;
    imghist::Options o;
    o.backend = imghist::parse_backend(backend);
    if (!mask.is_none()) {
        m = image_arg(mask, (function + ": mask").c_str());
        o.mask = m.view;
    }
    const imghist::BinSpec spec = bin_spec(img.view.type, bins, range);
    imghist::Histogram h;
    {
        py::gil_scoped_release nogil;
        h = imghist::calc_hist(img.view, spec, o);
    }
    std::vector<py::ssize_t> shape;
    if (img.ndim == 3) shape.push_back(h.channels);
    shape.push_back(spec.bins);
    py::array_t<std::int64_t> out(shape);
    std::memcpy(out.mutable_data(), h.counts.data(), h.counts.size() * sizeof(std::uint64_t));
    return out;
}

/// cv2.calcHist's result for one channel of a host image: float32 (bins, 1), optionally added to `accumulate`.
py::array_t<float> calc_hist_host(py::handle src, int channel, int bins, py::handle range, py::handle mask,
                                  const std::string& backend, py::handle accumulate) {
    Image img = image_arg(src, "calcHist: image");
    if (channel < 0 || channel >= img.view.channels)
        fail(ErrorCode::InvalidArgument, "calcHist: channel " + std::to_string(channel) + " of an image with " +
                                             std::to_string(img.view.channels) + " channels");
    Image m;
    imghist::Options o;
    o.backend = imghist::parse_backend(backend);
    o.channel = channel;  // the CPU backend then reads only this channel
    if (!mask.is_none()) {
        m = image_arg(mask, "calcHist: mask");
        o.mask = m.view;
    }
    const imghist::BinSpec spec = bin_spec(img.view.type, bins, range);
    py::array_t<float> out(std::vector<py::ssize_t>{spec.bins, 1});
    float* dst = out.mutable_data();
    if (accumulate.is_none()) {
        std::fill(dst, dst + spec.bins, 0.0f);
    } else {
        auto acc = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(accumulate);
        if (!acc || acc.size() != spec.bins)
            fail(ErrorCode::InvalidArgument, "calcHist: hist to accumulate into must hold histSize float32 values");
        std::memcpy(dst, acc.data(), sizeof(float) * static_cast<std::size_t>(spec.bins));
    }
    {
        py::gil_scoped_release nogil;
        const imghist::Histogram h = imghist::calc_hist(img.view, spec, o);
        const std::uint64_t* c = h.channel(0);
        for (int b = 0; b < spec.bins; ++b) dst[b] += static_cast<float>(c[b]);
    }
    return out;
}

/// Histogram of a device image into `out` (device, int64, channels * bins contiguous), enqueued on `stream`.
void hist_device(py::handle src, int bins, py::handle range, py::handle mask, py::handle out, std::uintptr_t stream,
                 const std::string& function) {
    Image img = image_arg(src, (function + ": image").c_str());
    Image m;
    imghist::AsyncOptions ao;
    if (!mask.is_none()) {
        m = image_arg(mask, (function + ": mask").c_str());
        ao.mask = m.view;
    }
    const imghist::BinSpec spec = bin_spec(img.view.type, bins, range);
    void* counts = nullptr;
    if (py::isinstance<DeviceArray>(out)) {
        counts = reinterpret_cast<void*>(out.cast<const DeviceArray&>().ptr());
    } else {
        counts = reinterpret_cast<void*>(out.cast<const ExternalArray&>().ptr());
    }
    const int device = py::isinstance<ExternalArray>(src) ? src.cast<const ExternalArray&>().device_id() : -1;
    imghist::DeviceHistogramView dv;
    dv.counts = counts;
    dv.type = imghist::CountType::U64;
    dv.channel_stride = static_cast<std::size_t>(spec.bins);
    py::gil_scoped_release nogil;
    // CudaHistogrammer reuses its temporaries, so one is kept per (device, stream) and per thread: work on
    // different streams never shares them, and an object is never used by two threads at once.
    thread_local std::map<std::pair<int, std::uintptr_t>, std::unique_ptr<imghist::CudaHistogrammer>> cache;
    auto& h = cache[{device, stream}];
    if (!h) h = std::make_unique<imghist::CudaHistogrammer>(device);
    h->compute(img.view, spec, dv, as_stream(stream), ao);
}

void equalize(py::handle src, py::handle dst, const std::string& backend, int device, std::uintptr_t stream) {
    Image s = image_arg(src, "equalizeHist: src");
    Image d = image_arg(dst, "equalizeHist: dst", true);
    const imghist::FilterOptions o = filter_options(backend, device, stream);
    py::gil_scoped_release nogil;
    imghist::equalize_hist(s.view, d.view, o);
}

void equalize_color(py::handle src, py::handle dst, const std::string& mode, const std::string& backend, int device,
                    std::uintptr_t stream) {
    const imghist::ColorEqualize m = color_equalize_mode(mode);
    Image s = image_arg(src, "equalizeHistColor: src");
    Image d = image_arg(dst, "equalizeHistColor: dst", true);
    const imghist::FilterOptions o = filter_options(backend, device, stream);
    py::gil_scoped_release nogil;
    imghist::equalize_hist_color(s.view, d.view, m, o);
}

/// Applies tables[c] (uint16, one row of 256 or 65536 entries per channel, or one row for every channel) to
/// channel c of a uint8 or uint16 image.
void apply_table(py::handle src, py::handle dst, py::array_t<std::uint16_t, py::array::c_style> tables,
                 const std::string& backend, int device, std::uintptr_t stream, const std::string& function) {
    Image s = image_arg(src, (function + ": image").c_str());
    Image d = image_arg(dst, (function + ": output").c_str(), true);
    const int channels = s.view.channels;
    if (tables.ndim() != 2 || (tables.shape(0) != 1 && tables.shape(0) != channels))
        fail(ErrorCode::InvalidArgument, "tables must be (1 or channels, levels)");
    const auto levels = static_cast<std::size_t>(tables.shape(1));
    std::vector<imghist::LevelTable> t(static_cast<std::size_t>(channels));
    for (int c = 0; c < channels; ++c) {
        const std::uint16_t* row = tables.data(tables.shape(0) == 1 ? 0 : c, 0);
        t[static_cast<std::size_t>(c)].assign(row, row + levels);
    }
    const imghist::FilterOptions o = filter_options(backend, device, stream);
    py::gil_scoped_release nogil;
    imghist::apply_table(s.view, d.view, t.data(), o);
}

double threshold(py::handle src, py::handle dst, double thresh, double maxval, int type, const std::string& backend,
                 int device, std::uintptr_t stream) {
    const ThresholdKind kind = threshold_kind(type);
    Image s = image_arg(src, "threshold: src");
    Image d = image_arg(dst, "threshold: dst", true);
    const imghist::FilterOptions o = filter_options(backend, device, stream);
    py::gil_scoped_release nogil;
    return imghist::threshold(s.view, d.view, thresh, maxval, kind.op, kind.automatic, o);
}

void clahe(py::handle src, py::handle dst, double clip, int tiles_x, int tiles_y, const std::string& backend,
           int device, std::uintptr_t stream) {
    Image s = image_arg(src, "CLAHE.apply: src");
    Image d = image_arg(dst, "CLAHE.apply: dst", true);
    const imghist::FilterOptions o = filter_options(backend, device, stream);
    const imghist::Clahe c(clip, tiles_x, tiles_y);
    py::gil_scoped_release nogil;
    c.apply(s.view, d.view, o);
}

void stretch(py::handle src, py::handle dst, double low, double high, const std::string& mode,
             const std::string& backend, int device, std::uintptr_t stream) {
    const imghist::StretchMode m = stretch_mode(mode);
    Image s = image_arg(src, "stretchContrast: src");
    Image d = image_arg(dst, "stretchContrast: dst", true);
    const imghist::FilterOptions o = filter_options(backend, device, stream);
    py::gil_scoped_release nogil;
    imghist::stretch_contrast(s.view, d.view, low, high, m, o);
}

void match(py::handle src, py::handle reference, py::handle dst, const std::string& backend, int device,
           std::uintptr_t stream) {
    Image s = image_arg(src, "matchHistograms: src");
    Image r = image_arg(reference, "matchHistograms: reference");
    Image d = image_arg(dst, "matchHistograms: dst", true);
    const imghist::FilterOptions o = filter_options(backend, device, stream);
    py::gil_scoped_release nogil;
    imghist::match_histograms(s.view, r.view, d.view, o);
}

std::vector<int> multiotsu(py::handle src, py::handle dst, int classes, const std::string& backend, int device,
                           std::uintptr_t stream) {
    Image s = image_arg(src, "thresholdMultiOtsu: src");
    Image d = image_arg(dst, "thresholdMultiOtsu: dst", true);
    const imghist::FilterOptions o = filter_options(backend, device, stream);
    py::gil_scoped_release nogil;
    return imghist::threshold_multiotsu(s.view, d.view, classes, o);
}

/// scikit-image's multi-Otsu search on float32 probabilities (threshold_multiotsu's `prob`): threshold indices.
std::vector<int> multiotsu_indices(py::array_t<float, py::array::c_style | py::array::forcecast> prob, int classes) {
    if (prob.ndim() != 1) fail(ErrorCode::InvalidArgument, "the histogram must be one-dimensional");
    const float* p = prob.data();
    const int levels = static_cast<int>(std::min<py::ssize_t>(prob.size(), INT32_MAX));
    py::gil_scoped_release nogil;
    return imghist::multiotsu_threshold_indices(p, levels, classes);
}

/// Measurement hook for python/bench/bench_overhead.py: makes `repeats` calls of imghist::calc_hist from C++, on
/// the view and with the options hist_host would use, and returns each call's duration in seconds. The
/// difference to imghist.hist's time per call is the cost of the Python layer.
std::vector<double> time_calc_hist(py::handle src, int bins, const std::string& backend, int repeats) {
    Image img = image_arg(src, "hist: image");
    imghist::Options o;
    o.backend = imghist::parse_backend(backend);
    const imghist::BinSpec spec = bin_spec(img.view.type, bins, py::none());
    std::vector<double> t(static_cast<std::size_t>(std::max(repeats, 0)));
    py::gil_scoped_release nogil;
    for (double& d : t) {
        const auto t0 = std::chrono::steady_clock::now();
        imghist::Histogram h = imghist::calc_hist(img.view, spec, o);
        const auto t1 = std::chrono::steady_clock::now();
        d = std::chrono::duration<double>(t1 - t0).count();
        if (h.counts.empty()) d = -1;  // keeps the call observable
    }
    return t;
}

/// The `shape` property of ExternalArray and DeviceArray: a tuple of ints, as NumPy's.
template <class Array>
py::tuple shape_tuple(const Array& a) {
    py::tuple t(a.shape().size());
    for (std::size_t i = 0; i < a.shape().size(); ++i) t[i] = py::int_(a.shape()[i]);
    return t;
}

}  // namespace
}  // namespace imghist_py

PYBIND11_MODULE(_imghist, m) {
    using namespace imghist_py;
    m.doc() = "Compiled part of the imghist package; use the functions of the imghist package instead.";

    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const imghist::Error& e) {
            py::object cls = py::module_::import("imghist._errors").attr(error_class(e.code()));
            PyErr_SetString(cls.ptr(), e.what());
        }
    });

    py::class_<ExternalArray>(m, "ExternalArray",
                              "An array in memory owned elsewhere (host or CUDA device), described by pointer, "
                              "shape and byte strides; used by imghist without a copy.")
        .def(py::init<std::uintptr_t, std::vector<std::int64_t>, py::object, const std::string&, bool, int, py::object>(),
             py::arg("ptr"), py::arg("shape"), py::arg("strides"), py::arg("typestr"), py::arg("device"),
             py::arg("device_id"), py::arg("owner"))
        .def_static("from_dlpack", &ExternalArray::from_dlpack, py::arg("capsule"),
                    "Consumes a 'dltensor' capsule from a producer's __dlpack__().")
        .def_property_readonly("device", &ExternalArray::device)
        .def_property_readonly("device_id", &ExternalArray::device_id)
        .def_property_readonly("shape", &shape_tuple<ExternalArray>)
        .def_property_readonly("typestr", &ExternalArray::typestr)
        .def_property_readonly("ptr", &ExternalArray::ptr);

    py::class_<DeviceArray>(m, "DeviceArray",
                            "Device memory holding an imghist result; readable through __cuda_array_interface__.")
        .def(py::init<std::vector<std::int64_t>, const std::string&>(), py::arg("shape"), py::arg("typestr"))
        .def_static("counts", [](std::vector<std::int64_t> shape) { return new DeviceArray(std::move(shape), true); },
                    py::arg("shape"), "int64 counts of the given shape")
        .def_property_readonly("__cuda_array_interface__", &DeviceArray::cuda_array_interface)
        .def_property_readonly("shape", &shape_tuple<DeviceArray>)
        .def_property_readonly("typestr", &DeviceArray::typestr)
        .def_property_readonly("ptr", &DeviceArray::ptr)
        .def("_set_stream", &DeviceArray::set_stream)
        .def("_fill_zero", &DeviceArray::fill_zero);

    m.def("hist_host", named_by_caller(&hist_host), py::arg("src"), py::arg("bins"), py::arg("range"),
          py::arg("mask"), py::arg("backend"), py::arg("function") = "hist");
    m.def("calc_hist_host", named("calcHist", &calc_hist_host), py::arg("src"), py::arg("channel"), py::arg("bins"), py::arg("range"),
          py::arg("mask"), py::arg("backend"), py::arg("accumulate"));
    m.def("hist_device", named_by_caller(&hist_device), py::arg("src"), py::arg("bins"), py::arg("range"),
          py::arg("mask"), py::arg("out"), py::arg("stream"), py::arg("function") = "hist");
    m.def("equalize", named("equalizeHist", &equalize), py::arg("src"), py::arg("dst"), py::arg("backend"),
          py::arg("device"), py::arg("stream"));
    m.def("equalize_color", named("equalizeHistColor", &equalize_color), py::arg("src"), py::arg("dst"),
          py::arg("mode"), py::arg("backend"), py::arg("device"), py::arg("stream"));
    m.def("apply_table", named_by_caller(&apply_table), py::arg("src"), py::arg("dst"), py::arg("tables"),
          py::arg("backend"), py::arg("device"), py::arg("stream"), py::arg("function"));
    m.def("threshold", named("threshold", &threshold), py::arg("src"), py::arg("dst"), py::arg("thresh"), py::arg("maxval"),
          py::arg("type"), py::arg("backend"), py::arg("device"), py::arg("stream"));
    m.def("clahe", named("CLAHE.apply", &clahe), py::arg("src"), py::arg("dst"), py::arg("clip"), py::arg("tiles_x"), py::arg("tiles_y"),
          py::arg("backend"), py::arg("device"), py::arg("stream"));
    m.def("stretch", named("stretchContrast", &stretch), py::arg("src"), py::arg("dst"), py::arg("low"), py::arg("high"), py::arg("mode"),
          py::arg("backend"), py::arg("device"), py::arg("stream"));
    m.def("match", named("matchHistograms", &match), py::arg("src"), py::arg("reference"), py::arg("dst"), py::arg("backend"),
          py::arg("device"), py::arg("stream"));
    m.def("multiotsu", named("thresholdMultiOtsu", &multiotsu), py::arg("src"), py::arg("dst"), py::arg("classes"), py::arg("backend"),
          py::arg("device"), py::arg("stream"));
    m.def("multiotsu_indices", named("filters.threshold_multiotsu", &multiotsu_indices), py::arg("prob"),
          py::arg("classes"));
    m.def("_time_calc_hist", &time_calc_hist, py::arg("src"), py::arg("bins"), py::arg("backend"), py::arg("repeats"));
    m.def("cuda_device_count", &imghist::cuda_device_count);
    m.def("version", &imghist::version);
    m.def("built_with_cuda", &imghist::built_with_cuda);
    m.def("cuda_device_name", &imghist::cuda_device_name, py::arg("ordinal") = 0);
    add_batch_functions(m);
#if IMGHIST_PY_FILES
    add_file_functions(m);
    m.attr("has_files") = true;
#else
    m.attr("has_files") = false;
#endif
}

