// imghist._imghist — the array arguments of the compiled module, shared by its parts (module.cpp: single images
// and histograms; batch.cpp: batches; files.cpp: image files and the image commands' per-file work).
//
// Image arguments are either NumPy arrays (host memory) or ExternalArray objects (a pointer, shape and byte
// strides taken from __cuda_array_interface__, a DLPack capsule, or a framework's own accessors). An array
// is an image when it is 2-D (H, W) or 3-D (H, W, C) with C in {1, 3, 4}, its samples are uint8, uint16,
// int32 or float32 in native byte order, the samples of a pixel and the pixels of a row are adjacent, rows
// are at least a row's bytes apart (any row stride: ROI views work without a copy), and samples are aligned
// to their size. NumPy arrays that are not laid out so (column steps, negative strides, Fortran order,
// unaligned data) are copied to a C-contiguous array first; external arrays are never copied and are
// refused instead. A batch is a list of images, or one array whose first axis counts the images (batch.cpp).
//
// Errors: imghist::Error, whose message the bindings put in Python's terms (python_message) and the module's
// translator turns into the Python exception of its code (imghist/_errors.py).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
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

namespace py = pybind11;

namespace imghist_py {

using imghist::Backend;
using imghist::ErrorCode;
using imghist::ImageView;
using imghist::Location;
using imghist::SampleType;

[[noreturn]] inline void fail(ErrorCode code, const std::string& msg) { throw imghist::Error(code, msg); }

/// The sample type of a dtype given as (kind, itemsize, byte order); throws Unsupported for the others.
SampleType sample_type(char kind, int itemsize, bool native, const char* role);
/// Parses an array-interface type string ("|u1", "<u2", "<i4", "<f4").
SampleType sample_type(const std::string& typestr, const char* role);
const char* typestr_of(SampleType t);

/// Builds an ImageView from a strided array; returns false when the layout is not representable
/// (see the header comment), throws for shapes that are not images.
bool make_view(const void* data, int ndim, const std::int64_t* shape, const std::int64_t* strides, SampleType type,
               Location loc, const char* role, ImageView& out);

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
    /// A batch (batch.cpp): the first axis counts the images. Returns image 0's view and sets the number of
    /// images and the distance in bytes between two; refuses what view() refuses, for one image.
    ImageView batch_view(const char* role, std::size_t& count, std::ptrdiff_t& image_stride) const {
        if (counts_ || shape_.size() < 3)
            fail(ErrorCode::InvalidArgument, std::string(role) + ": expected an (N, H, W) or (N, H, W, C) array");
        ImageView v;
        if (!make_view(reinterpret_cast<const void*>(ptr_), static_cast<int>(shape_.size()) - 1, shape_.data() + 1,
                       strides_.data() + 1, type_, device_ ? Location::Device : Location::Host, role, v))
            fail(ErrorCode::InvalidArgument,
                 std::string(role) + ": the images' samples or pixels are not adjacent or not aligned to the sample "
                                     "size; external arrays are used without copies, so pass one with C-contiguous, "
                                     "aligned rows");
        count = static_cast<std::size_t>(shape_[0]);
        image_stride = static_cast<std::ptrdiff_t>(strides_[0]);
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
    /// Zeroes the memory, in order on the stream the array is written on.
    void fill_zero() { buffer_.fill_zero(reinterpret_cast<imghist::Stream>(stream_)); }

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


/// The sample type of a NumPy array's dtype; throws Unsupported, naming it, for the others.
SampleType numpy_sample_type(const py::array& arr, const char* role);
/// The image an argument holds (see the header comment); `writable` for destinations (never copied).
Image image_arg(py::handle obj, const char* role, bool writable = false);

inline imghist::Stream as_stream(std::uintptr_t s) { return reinterpret_cast<imghist::Stream>(s); }
imghist::BinSpec bin_spec(SampleType type, int bins, py::handle range);
imghist::FilterOptions filter_options(const std::string& backend, int device, std::uintptr_t stream);

/// A threshold type in cv2's encoding: the operation in the low 3 bits, | THRESH_OTSU (8) or | THRESH_TRIANGLE (16).
struct ThresholdKind {
    imghist::ThresholdType op;
    imghist::AutoThreshold automatic;
};
ThresholdKind threshold_kind(int type);
/// "luma" or "per-channel" (equalizeHistColor's and stretchContrast's mode).
bool luma_mode(const std::string& mode);
/// That mode as the library's enum of each function, single-image and batch alike.
imghist::ColorEqualize color_equalize_mode(const std::string& mode);
imghist::StretchMode stretch_mode(const std::string& mode);

// ---- messages in Python's terms -----------------------------------------------------------------------------

/// A library message as the user of the Python function `function` reads it: the library's own operation
/// name at the front (a C++ name such as equalize_hist or BinSpec::full) becomes `function`, the library's
/// sample-type names become NumPy's dtype names (u8 -> uint8, ...), and the few phrases that name C++
/// API (other functions, enumerators) name the Python equivalent.
std::string python_message(std::string msg, const std::string& function);

/// Runs `body` (a binding's work) and rethrows imghist::Error with its message in Python's terms.
template <class F>
auto in_python_terms(const std::string& function, F&& body) -> decltype(body()) {
    try {
        return body();
    } catch (const imghist::Error& e) {
        throw imghist::Error(e.code(), python_message(e.what(), function));
    }
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

/// The class in imghist._errors of an error code.
const char* error_class(ErrorCode code);

}  // namespace imghist_py
