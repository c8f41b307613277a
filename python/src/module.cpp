// imghist._imghist — the compiled half of the `imghist` Python package.
//
// This file turns Python arrays into imghist::ImageView and calls the core and filters libraries; the
// package's Python half (imghist/__init__.py) recognises frameworks (NumPy, CuPy, PyTorch, other
// __cuda_array_interface__ / DLPack producers), allocates outputs with the input's framework and picks the
// stream. Every library call runs with the GIL released. imghist::Error becomes the Python exception of
// its code (classes in imghist/_errors.py), with the library's message spoken in Python's terms
// (python_message below).
//
// Image arguments are either NumPy arrays (host memory) or ExternalArray objects (a pointer, shape and byte
// strides taken from __cuda_array_interface__, a DLPack capsule, or a framework's own accessors). An array
// is an image when it is 2-D (H, W) or 3-D (H, W, C) with C in {1, 3, 4}, its samples are uint8, uint16,
// int32 or float32 in native byte order, the samples of a pixel and the pixels of a row are adjacent, rows
// are at least a row's bytes apart (any row stride: ROI views work without a copy), and samples are aligned
// to their size. NumPy arrays that are not laid out so (column steps, negative strides, Fortran order,
// unaligned data) are copied to a C-contiguous array first; external arrays are never copied and are
// refused instead.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dlpack_abi.hpp"
#include "imghist/buffer.hpp"
#include "imghist/error.hpp"
#include "imghist/filters.hpp"
#include "imghist/histogram.hpp"
#include "imghist/image.hpp"
#include "imghist/version.hpp"

namespace py = pybind11;
using imghist::Backend;
using imghist::ErrorCode;
using imghist::ImageView;
using imghist::Location;
using imghist::SampleType;

namespace imghist_py {
namespace {

[[noreturn]] void fail(ErrorCode code, const std::string& msg) { throw imghist::Error(code, msg); }

/// The sample type of a dtype given as (kind, itemsize, byte order); throws Unsupported for the others.
SampleType sample_type(char kind, int itemsize, bool native, const char* role) {
    if (native) {
        if (kind == 'u' && itemsize == 1) return SampleType::U8;
        if (kind == 'u' && itemsize == 2) return SampleType::U16;
        if (kind == 'i' && itemsize == 4) return SampleType::I32;
        if (kind == 'f' && itemsize == 4) return SampleType::F32;
    }
    fail(ErrorCode::Unsupported, std::string(role) + ": unsupported dtype " + (native ? "" : "(non-native byte order) ") +
                                     kind + std::to_string(itemsize) +
                                     "; supported: uint8, uint16, int32, float32");
}

/// Parses an array-interface type string ("|u1", "<u2", "<i4", "<f4").
SampleType sample_type(const std::string& typestr, const char* role) {
    if (typestr.size() < 3) fail(ErrorCode::InvalidArgument, std::string(role) + ": bad typestr '" + typestr + "'");
    const char order = typestr[0];
    const bool native = order == '|' || order == '=' || order == '<';  // little-endian hosts (x86-64, aarch64)
    return sample_type(typestr[1], std::stoi(typestr.substr(2)), native, role);
}

const char* typestr_of(SampleType t) {
    switch (t) {
        case SampleType::U8: return "|u1";
        case SampleType::U16: return "<u2";
        case SampleType::I32: return "<i4";
        case SampleType::F32: return "<f4";
    }
    return "";
}

/// Builds an ImageView from a strided array; returns false when the layout is not representable
/// (see the header comment), throws for shapes that are not images.
bool make_view(const void* data, int ndim, const std::int64_t* shape, const std::int64_t* strides, SampleType type,
               Location loc, const char* role, ImageView& out) {
    if (ndim != 2 && ndim != 3)
        fail(ErrorCode::InvalidArgument, std::string(role) + ": expected a 2-D (H, W) or 3-D (H, W, C) array, got " +
                                             std::to_string(ndim) + " dimensions");
    const std::int64_t h = shape[0], w = shape[1], c = ndim == 3 ? shape[2] : 1;
    if (c != 1 && c != 3 && c != 4)
        fail(ErrorCode::InvalidArgument,
             std::string(role) + ": " + std::to_string(c) + " channels; 1, 3 or 4 interleaved channels are supported");
    if (h > INT32_MAX || w > INT32_MAX)
        fail(ErrorCode::InvalidArgument, std::string(role) + ": image dimensions above 2^31-1");
    const std::int64_t ss = static_cast<std::int64_t>(imghist::sample_size(type));
    const std::int64_t row = w * c * ss;
    std::int64_t pitch = row;
    if (h > 0 && w > 0) {
        // Samples of a pixel, then pixels of a row, must be adjacent (dimensions of extent 1 have any stride).
        if (ndim == 3 && c > 1 && strides[2] != ss) return false;
        if (w > 1 && strides[1] != c * ss) return false;
        if (h > 1) {
            if (strides[0] < row) return false;  // negative, overlapping or transposed rows
            pitch = strides[0];
        }
        // The library reads whole samples: unaligned data (NumPy allows it, e.g. arrays unpickled from a
        // byte stream) is not viewable.
        if (reinterpret_cast<std::uintptr_t>(data) % static_cast<std::uintptr_t>(ss) != 0 || pitch % ss != 0)
            return false;
    }
    out = ImageView{};
    out.data = data;
    out.width = static_cast<int>(w);
    out.height = static_cast<int>(h);
    out.pitch = static_cast<std::size_t>(pitch);
    out.channels = static_cast<int>(c);
    out.type = type;
    out.location = loc;
    return true;
}

// ---- arrays from outside NumPy ---------------------------------------------------------------------------

/// An array described by a pointer, shape and byte strides (host or device), kept alive by `owner` or by
/// a consumed DLPack tensor, whose deleter runs when this object dies.
class ExternalArray {
public:
    ExternalArray(std::uintptr_t ptr, std::vector<std::int64_t> shape, py::object strides, const std::string& typestr,
                  bool device, int device_id, py::object owner)
        : ptr_(ptr), shape_(std::move(shape)), counts_(typestr == "<i8"),
          type_(counts_ ? SampleType::U8 : sample_type(typestr, "array")), device_(device), device_id_(device_id),
          owner_(std::move(owner)) {
        // int64 arrays are histogram results (the counts a call writes), never images: see view().
        if (strides.is_none()) {
            strides_ = compact_strides(shape_, counts_ ? 8 : static_cast<std::int64_t>(imghist::sample_size(type_)));
        } else {
            strides_ = strides.cast<std::vector<std::int64_t>>();
            if (strides_.size() != shape_.size())
                fail(ErrorCode::InvalidArgument, "array: strides and shape differ in length");
        }
    }

    /// Consumes a "dltensor" capsule (renaming it "used_dltensor", as the protocol requires).
    static std::unique_ptr<ExternalArray> from_dlpack(py::capsule cap) {
        const char* name = cap.name();
        if (name == nullptr || std::string(name) != "dltensor")
            fail(ErrorCode::InvalidArgument, "DLPack: expected an unused capsule named 'dltensor'");
        auto* mt = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
        if (mt == nullptr) throw py::error_already_set();
        // From here on this object owns the tensor: the capsule's destructor must not free it again.
        if (PyCapsule_SetName(cap.ptr(), "used_dltensor") != 0) throw py::error_already_set();
        std::unique_ptr<ExternalArray> a(new ExternalArray());
        a->managed_ = mt;
        const dlpack::Tensor& t = mt->dl_tensor;
        const int dt = t.device.device_type;
        if (dt == dlpack::kDLCUDA || dt == dlpack::kDLCUDAManaged) {
            a->device_ = true;
        } else if (dt == dlpack::kDLCPU || dt == dlpack::kDLCUDAHost) {
            a->device_ = false;
        } else {
            fail(ErrorCode::Unsupported, "DLPack: device type " + std::to_string(dt) +
                                             " is not supported (CPU, CUDA, CUDA host and managed memory are)");
        }
        a->device_id_ = a->device_ ? t.device.device_id : -1;
        if (t.dtype.lanes != 1) fail(ErrorCode::Unsupported, "DLPack: vector dtypes (lanes > 1) are not supported");
        const char kind = t.dtype.code == dlpack::kDLUInt ? 'u'
                          : t.dtype.code == dlpack::kDLInt ? 'i'
                          : t.dtype.code == dlpack::kDLFloat ? 'f'
                                                             : '?';
        a->type_ = sample_type(kind, t.dtype.bits / 8, t.dtype.bits % 8 == 0, "array");
        a->ptr_ = reinterpret_cast<std::uintptr_t>(t.data) + t.byte_offset;
        a->shape_.assign(t.shape, t.shape + t.ndim);
        const auto ss = static_cast<std::int64_t>(imghist::sample_size(a->type_));
        if (t.strides == nullptr) {
            a->strides_ = compact_strides(a->shape_, ss);
        } else {
            a->strides_.resize(static_cast<std::size_t>(t.ndim));
            for (int i = 0; i < t.ndim; ++i) a->strides_[static_cast<std::size_t>(i)] = t.strides[i] * ss;
        }
        return a;
    }

    ~ExternalArray() {
        if (managed_ != nullptr && managed_->deleter != nullptr) managed_->deleter(managed_);
    }
    ExternalArray(const ExternalArray&) = delete;
    ExternalArray& operator=(const ExternalArray&) = delete;

    ImageView view(const char* role) const {
        if (counts_)
            fail(ErrorCode::Unsupported, std::string(role) + ": unsupported dtype i8 (int64 arrays receive counts); "
                                                             "supported: uint8, uint16, int32, float32");
        ImageView v;
        if (!make_view(reinterpret_cast<const void*>(ptr_), static_cast<int>(shape_.size()), shape_.data(),
                       strides_.data(), type_, device_ ? Location::Device : Location::Host, role, v))
            fail(ErrorCode::InvalidArgument,
                 std::string(role) +
                     ": this array's samples or pixels are not adjacent (a column step, a transposed or "
                     "channel-first layout) or not aligned to the sample size; external arrays are used without "
                     "copies, so pass one with C-contiguous, aligned rows (row padding and ROI views are fine)");
        return v;
    }
    bool device() const noexcept { return device_; }
    int device_id() const noexcept { return device_id_; }
    const std::vector<std::int64_t>& shape() const noexcept { return shape_; }
    std::string typestr() const { return counts_ ? "<i8" : typestr_of(type_); }
    std::uintptr_t ptr() const noexcept { return ptr_; }

private:
    ExternalArray() = default;
    static std::vector<std::int64_t> compact_strides(const std::vector<std::int64_t>& shape, std::int64_t ss) {
        std::vector<std::int64_t> s(shape.size());
        std::int64_t step = ss;
        for (std::size_t i = shape.size(); i-- > 0;) {
            s[i] = step;
            step *= shape[i];
        }
        return s;
    }

    std::uintptr_t ptr_ = 0;
    std::vector<std::int64_t> shape_, strides_;
    bool counts_ = false;  ///< int64 counts (a result), not samples; declared before type_, which depends on it
    SampleType type_ = SampleType::U8;
    bool device_ = false;
    int device_id_ = -1;
    py::object owner_;
    dlpack::ManagedTensor* managed_ = nullptr;
};

/// Device memory owned by the module, for results of inputs whose framework is neither CuPy nor PyTorch.
/// Readable by any consumer of __cuda_array_interface__ (version 3, with the stream the result was
/// written on, so that consumers order their reads after it).
class DeviceArray {
public:
    DeviceArray(std::vector<std::int64_t> shape, const std::string& typestr)
        : shape_(std::move(shape)), type_(sample_type(typestr, "DeviceArray")) {
        std::size_t bytes = imghist::sample_size(type_);
        for (std::int64_t d : shape_) {
            if (d < 0) fail(ErrorCode::InvalidArgument, "DeviceArray: negative dimension");
            bytes *= static_cast<std::size_t>(d);
        }
        if (bytes > 0) buffer_ = imghist::DeviceBuffer(bytes);
    }
    // Holds int64 counts too, which are not an image sample type.
    DeviceArray(std::vector<std::int64_t> shape, bool int64_counts) : shape_(std::move(shape)), counts_(int64_counts) {
        std::size_t bytes = 8;
        for (std::int64_t d : shape_) bytes *= static_cast<std::size_t>(d);
        if (bytes > 0) buffer_ = imghist::DeviceBuffer(bytes);
    }

    py::dict cuda_array_interface() const {
        py::dict d;
        py::tuple shape(shape_.size());
        for (std::size_t i = 0; i < shape_.size(); ++i) shape[i] = py::int_(shape_[i]);
        d["shape"] = shape;
        d["typestr"] = typestr();
        d["data"] = py::make_tuple(py::int_(ptr()), false);
        d["strides"] = py::none();
        d["version"] = 3;
        // 0 would mean "no synchronisation needed", which is wrong for work on the legacy default stream.
        d["stream"] = stream_ == 0 ? py::object(py::int_(1)) : py::object(py::int_(stream_));
        return d;
    }
    std::uintptr_t ptr() const noexcept { return reinterpret_cast<std::uintptr_t>(buffer_.data()); }
    std::string typestr() const { return counts_ ? "<i8" : typestr_of(type_); }
    const std::vector<std::int64_t>& shape() const noexcept { return shape_; }
    void set_stream(std::uintptr_t s) noexcept { stream_ = s; }

private:
    std::vector<std::int64_t> shape_;
    SampleType type_ = SampleType::U8;
    bool counts_ = false;
    imghist::DeviceBuffer buffer_;
    std::uintptr_t stream_ = 0;
};

// ---- image arguments -------------------------------------------------------------------------------------

struct Image {
    ImageView view;
    int ndim = 2;
    py::object keep;  ///< a C-contiguous copy of a NumPy input that could not be viewed in place
};


Image image_arg(py::handle obj, const char* role, bool writable = false) {
    Image img;
    if (py::isinstance<py::array>(obj)) {
        auto arr = py::reinterpret_borrow<py::array>(obj);
        if (writable && !arr.writeable()) fail(ErrorCode::InvalidArgument, std::string(role) + ": array is read-only");
        const py::dtype dt = arr.dtype();
        const char kind = dt.kind();
        const int itemsize = static_cast<int>(dt.itemsize());
        const bool native = dt.byteorder() != '>';
        if (!((kind == 'u' && (itemsize == 1 || itemsize == 2)) || ((kind == 'i' || kind == 'f') && itemsize == 4)) ||
            !native)
            fail(ErrorCode::Unsupported, std::string(role) + ": unsupported dtype " + std::string(py::str(static_cast<const py::handle&>(dt))) +
                                             "; supported: uint8, uint16, int32, float32 (native byte order)");
        const SampleType t = sample_type(kind, itemsize, native, role);
        const int nd = static_cast<int>(arr.ndim());
        std::int64_t shape[3] = {0, 0, 0}, strides[3] = {0, 0, 0};
        for (int i = 0; i < nd && i < 3; ++i) {
            shape[i] = arr.shape(i);
            strides[i] = arr.strides(i);
        }
        img.ndim = nd;
        if (make_view(arr.data(), nd, shape, strides, t, Location::Host, role, img.view)) return img;
        if (writable)
            fail(ErrorCode::InvalidArgument, std::string(role) + ": an output array needs adjacent samples and "
                                                                 "pixels in each row, aligned to the sample size");
        img.keep = arr.attr("copy")("C");  // C-contiguous and aligned
        auto copy = py::reinterpret_borrow<py::array>(img.keep);
        for (int i = 0; i < nd; ++i) strides[i] = copy.strides(i);
        make_view(copy.data(), nd, shape, strides, t, Location::Host, role, img.view);
        return img;
    }
    if (py::isinstance<ExternalArray>(obj)) {
        const auto& ext = obj.cast<const ExternalArray&>();
        img.view = ext.view(role);
        img.ndim = static_cast<int>(ext.shape().size());
        return img;
    }
    fail(ErrorCode::Unsupported, std::string(role) + ": expected a NumPy array or an imghist.ExternalArray, got " +
                                     std::string(py::str(py::type::handle_of(obj).attr("__name__"))));
}

imghist::Stream as_stream(std::uintptr_t s) { return reinterpret_cast<imghist::Stream>(s); }

imghist::BinSpec bin_spec(SampleType type, int bins, py::handle range) {
    if (bins < 1) fail(ErrorCode::InvalidArgument, "bins must be at least 1, got " + std::to_string(bins));
    if (range.is_none()) return imghist::BinSpec::full(type, bins);
    auto seq = py::reinterpret_borrow<py::sequence>(range);
    if (py::len(seq) != 2) fail(ErrorCode::InvalidArgument, "range must be (low, high)");
    return imghist::BinSpec::even(bins, seq[0].cast<double>(), seq[1].cast<double>());
}

imghist::FilterOptions filter_options(const std::string& backend, int device, std::uintptr_t stream) {
    imghist::FilterOptions o;
    o.backend = imghist::parse_backend(backend);
    o.device = device;
    o.stream = as_stream(stream);
    return o;
}

// ---- messages in Python's terms -----------------------------------------------------------------------------

/// A library message as the user of the Python function `function` reads it: the library's own operation
/// name at the front (a C++ name such as equalize_hist or BinSpec::full) becomes `function`, the library's
/// sample-type names become NumPy's dtype names (u8 -> uint8, ...), and the few phrases that name C++
/// API (other functions, enumerators) name the Python equivalent.
std::string python_message(std::string msg, const std::string& function) {
    static const std::pair<const char*, const char*> phrases[] = {
        {"(use equalize_hist_color for 3 or 4 channels)", "(use imghist.equalizeHistColor for 3- or 4-channel images)"},
        {"use Backend::Cuda or Auto", "use backend='cuda' or 'auto'"},
        {"; use CountType::U64", ""},
        {"; give low and high", "; pass the range (low, high)"},
        {"unsupported sample type", "unsupported dtype"},
        {"8-bit images only", "uint8 images only"},
        {"must be 8-bit with", "must be uint8 with"},
        {"source and destination", "src and dst"},
    };
    for (const auto& [from, to] : phrases) {
        const std::size_t at = msg.find(from);
        if (at != std::string::npos) msg.replace(at, std::strlen(from), to);
    }
    // Leading operation names of the libraries (C++ identifiers, or the few prose names they use).
    static const std::regex op_prefix(
        "^(?:(?:[A-Za-z0-9]+(?:_|::)[A-Za-z0-9_:]*|[A-Z][A-Za-z0-9]*|threshold|calcHist(?:Batch|YCbCrBatch)?|filters|"
        "multi-Otsu(?: labels)?|contrast stretch|histogram matching|luma histogram|histogram|staged transfer|"
        "pinned memory): )+");
    msg = std::regex_replace(msg, op_prefix, "", std::regex_constants::format_first_only);
    static const std::pair<std::regex, const char*> dtypes[] = {
        {std::regex("\\bu8\\b"), "uint8"}, {std::regex("\\bu16\\b"), "uint16"},
        {std::regex("\\bi32\\b"), "int32"}, {std::regex("\\bf32\\b"), "float32"}};
    for (const auto& [re, name] : dtypes) msg = std::regex_replace(msg, re, name);
    if (msg.compare(0, function.size() + 1, function + ":") != 0) msg = function + ": " + msg;
    return msg;
}

/// Runs `body` (a binding's work) and rethrows imghist::Error with its message in Python's terms.
template <class F>
auto in_python_terms(const std::string& function, F&& body) -> decltype(body()) {
    try {
        return body();
    } catch (const imghist::Error& e) {
        throw imghist::Error(e.code(), python_message(e.what(), function));
    }
}

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
    if (mode != "luma" && mode != "per-channel")
        fail(ErrorCode::InvalidArgument, "mode must be 'luma' or 'per-channel', got '" + mode + "'");
    Image s = image_arg(src, "equalizeHistColor: src");
    Image d = image_arg(dst, "equalizeHistColor: dst", true);
    const imghist::FilterOptions o = filter_options(backend, device, stream);
    py::gil_scoped_release nogil;
    imghist::equalize_hist_color(s.view, d.view,
                                 mode == "luma" ? imghist::ColorEqualize::Luma : imghist::ColorEqualize::PerChannel, o);
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
    // cv2's encoding: the operation in the low 3 bits, THRESH_OTSU = 8, THRESH_TRIANGLE = 16.
    const int op = type & 7, automatic = type & ~7;
    if (op > 4 || (automatic != 0 && automatic != 8 && automatic != 16))
        fail(ErrorCode::InvalidArgument, "threshold: unknown type " + std::to_string(type) +
                                             " (THRESH_BINARY..THRESH_TOZERO_INV, optionally | THRESH_OTSU or "
                                             "| THRESH_TRIANGLE)");
    Image s = image_arg(src, "threshold: src");
    Image d = image_arg(dst, "threshold: dst", true);
    const imghist::FilterOptions o = filter_options(backend, device, stream);
    const auto at = automatic == 8    ? imghist::AutoThreshold::Otsu
                    : automatic == 16 ? imghist::AutoThreshold::Triangle
                                      : imghist::AutoThreshold::None;
    py::gil_scoped_release nogil;
    return imghist::threshold(s.view, d.view, thresh, maxval, static_cast<imghist::ThresholdType>(op), at, o);
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
    if (mode != "luma" && mode != "per-channel")
        fail(ErrorCode::InvalidArgument, "mode must be 'luma' or 'per-channel', got '" + mode + "'");
    Image s = image_arg(src, "stretchContrast: src");
    Image d = image_arg(dst, "stretchContrast: dst", true);
    const imghist::FilterOptions o = filter_options(backend, device, stream);
    py::gil_scoped_release nogil;
    imghist::stretch_contrast(s.view, d.view, low, high,
                              mode == "luma" ? imghist::StretchMode::Luma : imghist::StretchMode::PerChannel, o);
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

/// Measurement hook for python/bench_overhead.py: makes `repeats` calls of imghist::calc_hist from C++, on
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

/// A binding of `f` whose errors speak of the Python function `function` (in_python_terms).
template <class R, class... A>
auto named(const char* function, R (*f)(A...)) {
    return [function, f](A... a) -> R { return in_python_terms(function, [&]() -> R { return f(a...); }); };
}

/// A binding of `f`, whose last argument names the Python function that asks, with errors in its terms.
template <class R, class... A>
auto named_by_caller(R (*f)(A...)) {
    return [f](A... a) -> R {
        const std::string& function = std::get<sizeof...(A) - 1>(std::forward_as_tuple(a...));
        return in_python_terms(function, [&]() -> R { return f(a...); });
    };
}

// ---- errors ----------------------------------------------------------------------------------------------

const char* error_class(ErrorCode code) {
    switch (code) {
        case ErrorCode::InvalidArgument: return "InvalidArgumentError";
        case ErrorCode::Unsupported: return "UnsupportedError";
        case ErrorCode::OutOfMemory: return "OutOfMemoryError";
        case ErrorCode::NoDevice: return "NoDeviceError";
        case ErrorCode::Cuda: return "CudaError";
        case ErrorCode::Overflow: return "CountOverflowError";
        case ErrorCode::Io: return "IoError";
    }
    return "Error";
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
        .def_property_readonly("shape", [](const ExternalArray& a) {
            py::tuple t(a.shape().size());
            for (std::size_t i = 0; i < a.shape().size(); ++i) t[i] = py::int_(a.shape()[i]);
            return t;
        })
        .def_property_readonly("typestr", &ExternalArray::typestr)
        .def_property_readonly("ptr", &ExternalArray::ptr);

    py::class_<DeviceArray>(m, "DeviceArray",
                            "Device memory holding an imghist result; readable through __cuda_array_interface__.")
        .def(py::init<std::vector<std::int64_t>, const std::string&>(), py::arg("shape"), py::arg("typestr"))
        .def_static("counts", [](std::vector<std::int64_t> shape) { return new DeviceArray(std::move(shape), true); },
                    py::arg("shape"), "int64 counts of the given shape")
        .def_property_readonly("__cuda_array_interface__", &DeviceArray::cuda_array_interface)
        .def_property_readonly("shape", [](const DeviceArray& a) {
            py::tuple t(a.shape().size());
            for (std::size_t i = 0; i < a.shape().size(); ++i) t[i] = py::int_(a.shape()[i]);
            return t;
        })
        .def_property_readonly("typestr", &DeviceArray::typestr)
        .def_property_readonly("ptr", &DeviceArray::ptr)
        .def("_set_stream", &DeviceArray::set_stream);

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
}
