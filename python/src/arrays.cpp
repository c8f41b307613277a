#include "arrays.hpp"

#include <cctype>
#include <cstring>

namespace imghist_py {

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

SampleType numpy_sample_type(const py::array& arr, const char* role) {
    const py::dtype dt = arr.dtype();
    const char kind = dt.kind();
    const int itemsize = static_cast<int>(dt.itemsize());
    const bool native = dt.byteorder() != '>';
    if (!((kind == 'u' && (itemsize == 1 || itemsize == 2)) || ((kind == 'i' || kind == 'f') && itemsize == 4)) ||
        !native)
        fail(ErrorCode::Unsupported, std::string(role) + ": unsupported dtype " +
                                         std::string(py::str(static_cast<const py::handle&>(dt))) +
                                         "; supported: uint8, uint16, int32, float32 (native byte order)");
    return sample_type(kind, itemsize, native, role);
}

Image image_arg(py::handle obj, const char* role, bool writable) {
    Image img;
    if (py::isinstance<py::array>(obj)) {
        auto arr = py::reinterpret_borrow<py::array>(obj);
        if (writable && !arr.writeable()) fail(ErrorCode::InvalidArgument, std::string(role) + ": array is read-only");
        const SampleType t = numpy_sample_type(arr, role);
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


ThresholdKind threshold_kind(int type) {
    const int op = type & 7, automatic = type & ~7;
    if (op > 4 || (automatic != 0 && automatic != 8 && automatic != 16))
        fail(ErrorCode::InvalidArgument, "threshold: unknown type " + std::to_string(type) +
                                             " (THRESH_BINARY..THRESH_TOZERO_INV, optionally | THRESH_OTSU or "
                                             "| THRESH_TRIANGLE)");
    return {static_cast<imghist::ThresholdType>(op), automatic == 8    ? imghist::AutoThreshold::Otsu
                                                     : automatic == 16 ? imghist::AutoThreshold::Triangle
                                                                       : imghist::AutoThreshold::None};
}

bool luma_mode(const std::string& mode) {
    if (mode != "luma" && mode != "per-channel")
        fail(ErrorCode::InvalidArgument, "mode must be 'luma' or 'per-channel', got '" + mode + "'");
    return mode == "luma";
}

imghist::ColorEqualize color_equalize_mode(const std::string& mode) {
    return luma_mode(mode) ? imghist::ColorEqualize::Luma : imghist::ColorEqualize::PerChannel;
}

imghist::StretchMode stretch_mode(const std::string& mode) {
    return luma_mode(mode) ? imghist::StretchMode::Luma : imghist::StretchMode::PerChannel;
}

namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// Whether `w` (the text before a ": ") names an operation of the libraries: a C++ identifier with '_' or
/// '::' ("calc_hist", "imghist::equalize_hist"), a capitalised word ("Otsu", "CLAHE"), or one of the few prose
/// names the libraries use.
bool is_operation_name(const std::string& w) {
    static const char* const prose[] = {"threshold",       "calcHist",           "calcHistBatch", "calcHistYCbCrBatch",
                                        "filters",         "multi-Otsu",         "multi-Otsu labels",
                                        "contrast stretch", "histogram matching", "luma histogram", "histogram",
                                        "staged transfer", "pinned memory"};
    for (const char* p : prose)
        if (w == p) return true;
    if (w.empty() || !std::isalnum(static_cast<unsigned char>(w[0]))) return false;
    std::size_t k = 0;
    while (k < w.size() && std::isalnum(static_cast<unsigned char>(w[k]))) ++k;
    if (k == w.size()) return std::isupper(static_cast<unsigned char>(w[0])) != 0;  // one capitalised word
    const bool joined = w[k] == '_' || w.compare(k, 2, "::") == 0;
    for (; k < w.size(); ++k)
        if (!std::isalnum(static_cast<unsigned char>(w[k])) && w[k] != '_' && w[k] != ':') return false;
    return joined;
}

/// Replaces every whole-word `from` in `s` by `to`.
void replace_words(std::string& s, const std::string& from, const std::string& to) {
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at)) {
        const bool starts = at == 0 || !word_char(s[at - 1]);
        const bool ends = at + from.size() == s.size() || !word_char(s[at + from.size()]);
        if (starts && ends) {
            s.replace(at, from.size(), to);
            at += to.size();
        } else {
            at += from.size();
        }
    }
}

}  // namespace

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
    // Leading operation names of the libraries ("calc_hist: ", "imghist::equalize_hist: ", "Otsu: "), one after
    // the other: the Python function's name replaces them.
    for (std::size_t colon = msg.find(": "); colon != std::string::npos && is_operation_name(msg.substr(0, colon));
         colon = msg.find(": "))
        msg.erase(0, colon + 2);
    // The libraries' short sample-type names, as whole words, in NumPy's words.
    static const std::pair<const char*, const char*> dtypes[] = {
        {"u8", "uint8"}, {"u16", "uint16"}, {"i32", "int32"}, {"f32", "float32"}};
    for (const auto& [from, to] : dtypes) replace_words(msg, from, to);
    if (msg.compare(0, function.size() + 1, function + ":") != 0) msg = function + ": " + msg;
    return msg;
}


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

}  // namespace imghist_py
