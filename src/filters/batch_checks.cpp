// imghist filters — the checks of a filter batch (imghist/batch_filters.hpp): pairs, one type and location for
// every image, no destination overlapping another image, and whether the batch is uniform.
#include "filters/batch_checks.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "filters/level_table.hpp"  // check_pair

namespace imghist::detail {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error(ErrorCode::InvalidArgument, msg); }

/// The views of a batch; uniform batches are checked to stay inside the address space first.
std::vector<ImageView> views_of(const ImageBatch& b, const char* op, const char* role) {
    if (!b.is_uniform()) return b.views();
    const std::size_t n = b.size();
    if (n > 1 && b.image_stride() != 0) {
        const auto base = reinterpret_cast<std::uintptr_t>(b.first().data);
        const std::uintptr_t step = b.image_stride() < 0 ? 0 - static_cast<std::uintptr_t>(b.image_stride())
                                                          : static_cast<std::uintptr_t>(b.image_stride());
        const std::uintptr_t room = b.image_stride() < 0 ? base : std::numeric_limits<std::uintptr_t>::max() - base;
        if (step > room / (n - 1))
            fail(std::string(op) + ": the " + role + " batch's " + std::to_string(n) + " images at a distance of " +
                 std::to_string(b.image_stride()) + " bytes leave the address space");
    }
    std::vector<ImageView> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = b[i];
    return v;
}

/// Whether the views are equally spaced copies of views[0]'s geometry; `stride` is the distance.
bool equally_spaced(const std::vector<ImageView>& v, std::ptrdiff_t& stride) {
    stride = 0;
    if (v.size() < 2) return true;
    const ImageView& f = v[0];
    const auto at = [](const ImageView& x) { return reinterpret_cast<std::uintptr_t>(x.data); };
    stride = static_cast<std::ptrdiff_t>(at(v[1]) - at(f));
    for (std::size_t i = 1; i < v.size(); ++i) {
        if (v[i].width != f.width || v[i].height != f.height || v[i].pitch != f.pitch) return false;
        if (at(v[i]) - at(f) != static_cast<std::uintptr_t>(i) * static_cast<std::uintptr_t>(stride)) return false;
    }
    return true;
}

/// The bytes a view spans, [begin, end).
struct Span {
    std::uintptr_t begin, end;
    std::size_t image;
    bool dst;
};

Span span_of(const ImageView& v, std::size_t image, bool dst) {
    const auto b = reinterpret_cast<std::uintptr_t>(v.data);
    return Span{b, b + v.pitch * static_cast<std::size_t>(v.height - 1) + v.row_bytes(), image, dst};
}

/// Whether two views share a byte. Views of one pitch are compared row by row (tiles side by side in one image
/// interleave their spans without sharing a byte); views of different pitches whose spans meet are taken to.
bool views_overlap(const ImageView& x, const ImageView& y) {
    const Span sx = span_of(x, 0, false), sy = span_of(y, 0, false);
    if (sx.end <= sy.begin || sy.end <= sx.begin) return false;
    if (x.pitch != y.pitch || x.height == 1 || y.height == 1) return true;
    const bool x_first = sx.begin <= sy.begin;
    const ImageView& a = x_first ? x : y;  // the view that starts first
    const ImageView& b = x_first ? y : x;
    const std::uintptr_t d = (x_first ? sy.begin - sx.begin : sx.begin - sy.begin);
    const std::uintptr_t p = a.pitch, q = d / p, r = d % p;
    const auto rows_a = static_cast<std::uintptr_t>(a.height);
    // Row j of b covers bytes [r, r + b's row) of a's row q + j, running into a's row q + j + 1 when it passes
    // the pitch; a's rows hold data in [0, a's row).
    if (q < rows_a && r < a.row_bytes()) return true;
    return r + b.row_bytes() > p && q + 1 < rows_a;
}

/// No destination may share a byte with another destination or with another image's source. A sweep over the
/// spans in address order: only pairs whose spans meet, and of those only pairs with a destination, are
/// compared.
void check_no_overlap(const std::vector<ImageView>& src, const std::vector<ImageView>& dst, const char* op) {
    std::vector<Span> spans;
    spans.reserve(2 * src.size());
    for (std::size_t i = 0; i < src.size(); ++i) {
        spans.push_back(span_of(src[i], i, false));
        spans.push_back(span_of(dst[i], i, true));
    }
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
    std::vector<Span> open_src, open_dst;
    auto expire = [](std::vector<Span>& open, std::uintptr_t at) {
        open.erase(std::remove_if(open.begin(), open.end(), [at](const Span& s) { return s.end <= at; }), open.end());
    };
    auto report = [op](const Span& d, const Span& other) {
        fail(std::string(op) + ": the destination of batch image " + std::to_string(d.image) + " overlaps the " +
             (other.dst ? "destination" : "source") + " of batch image " + std::to_string(other.image));
    };
    for (const Span& s : spans) {
        expire(open_src, s.begin);
        expire(open_dst, s.begin);
        const ImageView& sv = s.dst ? dst[s.image] : src[s.image];
        for (const Span& o : open_dst)
            if (o.image != s.image && views_overlap(sv, dst[o.image])) report(o, s);
        if (s.dst)
            for (const Span& o : open_src)
                if (o.image != s.image && views_overlap(sv, src[o.image])) report(s, o);
        (s.dst ? open_dst : open_src).push_back(s);
    }
}

}  // namespace

PreparedBatch prepare_batch(const ImageBatch& src, const ImageBatch& dst, const char* op) {
    if (src.size() != dst.size())
        fail(std::string(op) + ": the source batch has " + std::to_string(src.size()) + " images, the destination " +
             std::to_string(dst.size()));
    PreparedBatch b;
    b.src = views_of(src, op, "source");
    b.dst = views_of(dst, op, "destination");
    if (b.src.empty()) return b;
    const ImageView& f = b.src[0];
    for (std::size_t i = 0; i < b.src.size(); ++i) {
        const ImageView& s = b.src[i];
        try {
            check_pair(s, b.dst[i], op);
        } catch (const Error& e) {
            throw Error(e.code(), "batch image " + std::to_string(i) + ": " + e.what());
        }
        if (s.type != f.type || s.channels != f.channels)
            fail(std::string(op) + ": batch image " + std::to_string(i) + " is " + to_string(s.type) + " with " +
                 std::to_string(s.channels) + " channels, image 0 " + to_string(f.type) + " with " +
                 std::to_string(f.channels) + ": a batch has one sample type and channel count");
        if (s.location != f.location)
            fail(std::string(op) + ": batch image " + std::to_string(i) +
                 " is not where image 0 is: a batch is all on the host or all on the device");
    }
    check_no_overlap(b.src, b.dst, op);
    b.uniform = equally_spaced(b.src, b.src_stride) && equally_spaced(b.dst, b.dst_stride);
    return b;
}

DeviceBatch PreparedBatch::device() const {
    DeviceBatch d;
    d.src = src.data();
    d.dst = dst.data();
    d.count = src.size();
    d.uniform = uniform;
    d.src_stride = src_stride;
    d.dst_stride = dst_stride;
    return d;
}

}  // namespace imghist::detail
