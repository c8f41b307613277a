// The batch filters (imghist/batch_filters.hpp, gpuhist/batch.hpp) against OpenCV and the plain-loop references of
// the single-image tests, image by image: equalize (gray, luma, per channel), threshold (fixed, Otsu, Triangle),
// multi-level Otsu, CLAHE, contrast stretch, matching. Batches mix sizes from 1x1 to 4K, constant images, ROI
// offsets 0-15, 8- and 16-bit samples and 1-4 channels; each runs as a list of views and, where the images share
// a size, as a uniform batch (packed, and strided with a ROI offset), on the host (both backends) and, on CUDA, as
// device batches. Expected images come from OpenCV or the plain loops, never from another batch path.
#include <cuda_runtime.h>

#include <climits>
#include <functional>
#include <numeric>
#include <random>

#include "filters_support.hpp"
#include "level_refs.hpp"
#include "stream_capture.hpp"
#include "filters/batch_blocks.hpp"  // white-box: how the passes share their blocks among the images
#include "filters/clahe_bands.hpp"   // white-box: the 8-bit tile counting of clahe_batch on the device
#include "imghist/batch_filters.hpp"

using namespace filters_test;
using namespace level_refs;
using imghist::ImageBatch;
using imghist::ImageView;

namespace {

// ---- batches of test images ---------------------------------------------------------------------------------------

/// ROI x-offset of image i of a batch: every offset 0..15 in sixteen images, -1 (a continuous image) every 17th.
int offset_of(std::size_t i) { return i % 17 == 16 ? -1 : static_cast<int>((i * 5) % 16); }

/// The distributions of a batch's images in turn (the photographs have 1, 3 or 4 channels: 2-channel images take
/// another distribution instead).
Dist dist_of(std::size_t i, int type) {
    const Dist d = all_dists()[i % all_dists().size()];
    return d == Dist::Photo && CV_MAT_CN(type) == 2 ? Dist::Gauss32 : d;
}

/// A mixed batch of `type`: the size classes (1x1 to 640x480), with `frames` 1920x1080 and 3840x2160 too, two
/// constant images, and sixteen small images at ROI offsets 0 to 15; ROI offsets in turn, distributions in turn.
std::vector<cv::Mat> mixed_images(int type, std::uint64_t seed, bool frames) {
    std::vector<Size2> sizes = size_classes();
    if (frames) {  // (under IMGHIST_TEST_SHAPES_ONLY the 4K frame alone, as frame_sizes)
        if (!shapes_only()) sizes.push_back({1920, 1080});
        sizes.push_back({3840, 2160});
    }
    sizes.push_back({45, 17});   // constant
    sizes.push_back({200, 3});   // constant at the type's top
    std::vector<cv::Mat> out;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        const bool constant = i + 2 >= sizes.size();
        const Dist d = constant ? Dist::Constant : dist_of(i, type);
        cv::Mat m = make_image(sizes[i].w, sizes[i].h, type, d, seed + i, offset_of(i));
        if (i + 1 == sizes.size()) m.setTo(cv::Scalar::all(CV_MAT_DEPTH(type) == CV_16U ? 65535 : 255));
        out.push_back(m);
    }
    for (int k = 0; k < 16; ++k)
        out.push_back(make_image(23 + 3 * k, 5 + k, type, dist_of(static_cast<std::size_t>(k), type), seed + 100 + k, k));
    return out;
}

/// `n` images of one size (a uniform batch's), distributions in turn, one of them constant.
std::vector<cv::Mat> same_size_images(int n, int w, int h, int type, std::uint64_t seed) {
    std::vector<cv::Mat> out;
    for (int i = 0; i < n; ++i)
        out.push_back(make_image(w, h, type, i == 2 ? Dist::Constant : dist_of(static_cast<std::size_t>(i), type), seed + i));
    return out;
}

/// A ROI destination of rows x cols at x-offset xo of a parent filled with 0xCD.
cv::Mat host_output(int rows, int cols, int type, int xo) {
    cv::Mat parent(rows, cols + xo + 3, type);
    std::memset(parent.data, 0xCD, parent.step * static_cast<std::size_t>(rows));
    return parent(cv::Rect(xo, 0, cols, rows));
}

ImageBatch host_list(const std::vector<cv::Mat>& m) {
    std::vector<ImageView> v;
    for (const cv::Mat& x : m) v.push_back(imghist::view_of(x));
    return ImageBatch::list(v);
}

/// Device copies of host images, each keeping its ROI placement (DeviceMat), as a list batch.
struct DeviceList {
    std::vector<DeviceMat> mats;
    ImageBatch batch;
    explicit DeviceList(const std::vector<cv::Mat>& host) {
        mats.reserve(host.size());
        std::vector<ImageView> v;
        for (const cv::Mat& m : host) {
            mats.emplace_back(m);
            v.push_back(imghist::view_of(mats.back().mat));
        }
        batch = ImageBatch::list(v);
    }
    /// Outputs of `like`'s sizes and types at x-offsets 1, 4, 7, ...
    static DeviceList outputs(const std::vector<cv::Mat>& like) {
        DeviceList d;
        d.mats.reserve(like.size());
        std::vector<ImageView> v;
        for (std::size_t i = 0; i < like.size(); ++i) {
            d.mats.emplace_back(like[i].rows, like[i].cols, like[i].type(), static_cast<int>((3 * i + 1) % 16));
            v.push_back(imghist::view_of(d.mats.back().mat));
        }
        d.batch = ImageBatch::list(v);
        return d;
    }
    std::vector<cv::Mat> download_all() const {
        std::vector<cv::Mat> out;
        for (const DeviceMat& m : mats) out.push_back(download(m.mat));
        return out;
    }

private:
    DeviceList() = default;
};

/// N images of one size in one buffer: image i at rows i * (h + gap) of a parent whose rows are w + xo + 2 pixels,
/// from column xo (xo < 0: a packed (N, H, W[, C]) array). The same layout, byte for byte, on the device.
struct UniformLayout {
    int n, w, h, type, xo, gap;
    int parent_cols() const { return xo < 0 ? w : w + xo + 2; }
    int parent_rows() const { return n * (h + gap); }
    int col0() const { return xo < 0 ? 0 : xo; }
    cv::Mat parent_of(const std::vector<cv::Mat>& images) const {
        cv::Mat p(parent_rows(), parent_cols(), type);
        std::memset(p.data, 0xCD, p.step * static_cast<std::size_t>(p.rows));
        for (int i = 0; i < n; ++i) images[static_cast<std::size_t>(i)].copyTo(image(p, i));
        return p;
    }
    cv::Mat image(const cv::Mat& parent, int i) const { return parent(cv::Rect(col0(), i * (h + gap), w, h)); }
    ImageBatch batch(const void* base, std::size_t pitch, imghist::Location where) const {
        ImageView v = ImageView::host(static_cast<const std::uint8_t*>(base) + static_cast<std::size_t>(col0()) * CV_ELEM_SIZE(type),
                                      w, h, imghist::sample_type_from_cv_depth(CV_MAT_DEPTH(type)), CV_MAT_CN(type), pitch);
        v.location = where;
        return ImageBatch::uniform(v, static_cast<std::size_t>(n), static_cast<std::ptrdiff_t>(pitch) * (h + gap));
    }
};

/// A host parent copied to the device with the same pitch (complete there when constructed: device_ready).
struct DeviceParent {
    imghist::DeviceBuffer buf;
    cv::Mat shape;
    explicit DeviceParent(const cv::Mat& host) : buf(host.step * static_cast<std::size_t>(host.rows)), shape(host) {
        REQUIRE(host.isContinuous());
        buf.upload(host.data, host.step * static_cast<std::size_t>(host.rows));
        imghist_test::device_ready();
    }
    cv::Mat download_all() const {
        cv::Mat out(shape.rows, shape.cols, shape.type());
        buf.download(out.data, out.step * static_cast<std::size_t>(out.rows));
        return out;
    }
};

/// A batch operation: runs on (src, dst, options) and returns the values it returns (thresholds), flattened.
using BatchOp = std::function<std::vector<double>(const ImageBatch&, const ImageBatch&, const imghist::FilterOptions&)>;

void require_outputs(const std::vector<cv::Mat>& got, const std::vector<cv::Mat>& expected, const char* what) {
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO(what << ": batch image " << i << " (" << expected[i].cols << "x" << expected[i].rows << ")");
        FILTERS_REQUIRE_IDENTICAL(got[i], expected[i]);
    }
}

void require_values(const std::vector<double>& got, const std::vector<double>& expected, const char* what) {
    if (expected.empty()) return;
    INFO(what);
    REQUIRE(got == expected);
}

imghist::FilterOptions options_for(Backend backend) {
    imghist::FilterOptions o;
    o.backend = backend;
    return o;
}

/// Runs `op` on `src` as a list batch: on the host (for `backend`) and, for CUDA, on device copies; every output and
/// the values returned must equal the expected ones.
void check_list(Backend backend, const std::vector<cv::Mat>& src, const std::vector<cv::Mat>& expected,
                const std::vector<double>& values, const BatchOp& op) {
    std::vector<cv::Mat> dst;
    for (std::size_t i = 0; i < src.size(); ++i)
        dst.push_back(host_output(src[i].rows, src[i].cols, src[i].type(), static_cast<int>((3 * i + 1) % 16)));
    require_values(op(host_list(src), host_list(dst), options_for(backend)), values, "host list");
    require_outputs(dst, expected, "host list");
    if (backend != Backend::Cuda) return;
    const DeviceList in(src);
    const DeviceList out = DeviceList::outputs(src);
    require_values(op(in.batch, out.batch, options_for(backend)), values, "device list");
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    require_outputs(out.download_all(), expected, "device list");
}

/// Runs `op` on same-size `src` as uniform batches: packed and strided (ROI offset 3, two rows between images), on
/// the host and, for CUDA, on the device.
void check_uniform(Backend backend, const std::vector<cv::Mat>& src, const std::vector<cv::Mat>& expected,
                   const std::vector<double>& values, const BatchOp& op) {
    const int n = static_cast<int>(src.size());
    for (const UniformLayout in : {UniformLayout{n, src[0].cols, src[0].rows, src[0].type(), -1, 0},
                                   UniformLayout{n, src[0].cols, src[0].rows, src[0].type(), 3, 2}}) {
        const UniformLayout out{in.n, in.w, in.h, in.type, in.xo < 0 ? -1 : 5, in.gap + 1};
        INFO("uniform batch, ROI offset " << in.xo);
        const cv::Mat host_in = in.parent_of(src);
        cv::Mat host_out = out.parent_of(std::vector<cv::Mat>(src.size(), cv::Mat(in.h, in.w, in.type, cv::Scalar::all(7))));
        require_values(op(in.batch(host_in.data, host_in.step, imghist::Location::Host),
                          out.batch(host_out.data, host_out.step, imghist::Location::Host), options_for(backend)),
                       values, "host uniform");
        std::vector<cv::Mat> got;
        for (int i = 0; i < n; ++i) got.push_back(out.image(host_out, i));
        require_outputs(got, expected, "host uniform");
        if (backend != Backend::Cuda) continue;
        const DeviceParent dev_in(host_in), dev_out(host_out);
        require_values(op(in.batch(dev_in.buf.data(), host_in.step, imghist::Location::Device),
                          out.batch(dev_out.buf.data(), host_out.step, imghist::Location::Device), options_for(backend)),
                       values, "device uniform");
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        const cv::Mat back = dev_out.download_all();
        got.clear();
        for (int i = 0; i < n; ++i) got.push_back(out.image(back, i));
        require_outputs(got, expected, "device uniform");
    }
}

std::vector<cv::Mat> map_images(const std::vector<cv::Mat>& src, const std::function<cv::Mat(const cv::Mat&)>& f) {
    std::vector<cv::Mat> out;
    for (const cv::Mat& m : src) out.push_back(f(m));
    return out;
}

cv::Mat cv_equalize(const cv::Mat& m) {
    cv::Mat e;
    cv::equalizeHist(m, e);
    return e;
}

}  // namespace

// ---- equalize -----------------------------------------------------------------------------------------------------

IMGHIST_BACKEND_CASE("equalize_hist_batch equals cv::equalizeHist per image: sizes 1x1 to 4K, constant images, ROI offsets",
                     "[filters][batch][equalize]") {
    const std::vector<cv::Mat> mixed = mixed_images(CV_8UC1, 11, true);
    const auto op = [](const ImageBatch& s, const ImageBatch& d, const imghist::FilterOptions& o) {
        imghist::equalize_hist_batch(s, d, o);
        return std::vector<double>{};
    };
    check_list(backend, mixed, map_images(mixed, cv_equalize), {}, op);
    for (const Size2 s : {Size2{640, 480}, Size2{33, 17}, Size2{1, 1}}) {
        const std::vector<cv::Mat> same = same_size_images(7, s.w, s.h, CV_8UC1, 40);
        check_uniform(backend, same, map_images(same, cv_equalize), {}, op);
    }
}

IMGHIST_BACKEND_CASE("equalize_hist_batch in place, and one image repeated as a broadcast source", "[filters][batch][equalize]") {
    const std::vector<cv::Mat> src = mixed_images(CV_8UC1, 90, false);
    std::vector<cv::Mat> inplace;
    for (const cv::Mat& m : src) inplace.push_back(m.clone());
    imghist::equalize_hist_batch(host_list(inplace), host_list(inplace), options_for(backend));
    require_outputs(inplace, map_images(src, cv_equalize), "in place");
    // A (N, H, W) view whose images are all one image (a distance of 0) into N separate outputs.
    const cv::Mat one = make_image(129, 65, CV_8UC1, Dist::Photo, 91, 5);
    const cv::Mat expected = cv_equalize(one);
    std::vector<cv::Mat> outs;
    for (int i = 0; i < 4; ++i) outs.push_back(host_output(one.rows, one.cols, CV_8UC1, i));
    imghist::equalize_hist_batch(ImageBatch::uniform(imghist::view_of(one), 4, 0), host_list(outs), options_for(backend));
    require_outputs(outs, std::vector<cv::Mat>(4, expected), "broadcast source");
    if (backend != Backend::Cuda) return;
    DeviceList dev(src);
    imghist::equalize_hist_batch(dev.batch, dev.batch, options_for(backend));
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    require_outputs(dev.download_all(), map_images(src, cv_equalize), "device in place");
}

IMGHIST_BACKEND_CASE("equalize_hist_color_batch: luma and per-channel equal OpenCV's compositions, 3 and 4 channels",
                     "[filters][batch][equalize][color]") {
    for (int cn : {3, 4}) {
        const std::vector<cv::Mat> mixed = mixed_images(CV_8UC(cn), 200 + cn, backend == Backend::Cuda);
        for (const auto mode : {imghist::ColorEqualize::Luma, imghist::ColorEqualize::PerChannel}) {
            INFO(cn << " channels, " << (mode == imghist::ColorEqualize::Luma ? "luma" : "per channel"));
            const auto reference = mode == imghist::ColorEqualize::Luma ? opencv_equalize_luma : opencv_equalize_per_channel;
            const auto op = [mode](const ImageBatch& s, const ImageBatch& d, const imghist::FilterOptions& o) {
                imghist::equalize_hist_color_batch(s, d, mode, o);
                return std::vector<double>{};
            };
            check_list(backend, mixed, map_images(mixed, reference), {}, op);
            const std::vector<cv::Mat> same = same_size_images(5, 97, 31, CV_8UC(cn), 300);
            check_uniform(backend, same, map_images(same, reference), {}, op);
        }
    }
}

// ---- threshold ----------------------------------------------------------------------------------------------------

namespace {

/// cv::threshold of every image: the outputs and the values it returns.
std::vector<cv::Mat> cv_thresholds(const std::vector<cv::Mat>& src, double t, double maxval, int type,
                                   std::vector<double>& values) {
    std::vector<cv::Mat> out;
    values.clear();
    for (const cv::Mat& m : src) {
        cv::Mat e;
        values.push_back(cv::threshold(m, e, t, maxval, type));
        out.push_back(e);
    }
    return out;
}

const int kTypes[] = {cv::THRESH_BINARY, cv::THRESH_BINARY_INV, cv::THRESH_TRUNC, cv::THRESH_TOZERO, cv::THRESH_TOZERO_INV};

BatchOp threshold_op(double t, double maxval, int cv_type) {
    const auto type = static_cast<imghist::ThresholdType>(cv_type & cv::THRESH_MASK);
    const int flags = cv_type & ~cv::THRESH_MASK;
    const auto automatic = flags == cv::THRESH_OTSU       ? imghist::AutoThreshold::Otsu
                           : flags == cv::THRESH_TRIANGLE ? imghist::AutoThreshold::Triangle
                                                          : imghist::AutoThreshold::None;
    return [=](const ImageBatch& s, const ImageBatch& d, const imghist::FilterOptions& o) {
        return imghist::threshold_batch(s, d, t, maxval, type, automatic, o);
    };
}

}  // namespace

IMGHIST_BACKEND_CASE("threshold_batch with a fixed value equals cv::threshold: u8 u16 f32, 1-4 channels, five types",
                     "[filters][batch][threshold]") {
    struct Case {
        int depth;
        double t, maxval;
    };
    for (const Case c : {Case{CV_8U, 100.7, 200}, Case{CV_8U, -3, 255}, Case{CV_16U, 30000.5, 65535},
                         Case{CV_16U, 70000, 4095.5}, Case{CV_32F, 99.5, 1.0}})
        for (int cn : {1, 2, 3, 4}) {
            const std::vector<cv::Mat> mixed = mixed_images(CV_MAKETYPE(c.depth, cn), 400 + cn, false);
            for (int type : kTypes) {
                INFO("depth " << c.depth << " channels " << cn << " type " << type << " t " << c.t);
                std::vector<double> values;
                const std::vector<cv::Mat> expected = cv_thresholds(mixed, c.t, c.maxval, type, values);
                check_list(backend, mixed, expected, values, threshold_op(c.t, c.maxval, type));
            }
        }
}

IMGHIST_BACKEND_CASE("threshold_batch with Otsu and Triangle: every level and output equals cv::threshold's",
                     "[filters][batch][threshold][otsu]") {
    struct Case {
        int depth, automatic;
    };
    for (const Case c : {Case{CV_8U, cv::THRESH_OTSU}, Case{CV_8U, cv::THRESH_TRIANGLE}, Case{CV_16U, cv::THRESH_OTSU}}) {
        std::vector<cv::Mat> mixed = mixed_images(CV_MAKETYPE(c.depth, 1), 500, c.depth == CV_8U);
        mixed.push_back(bimodal(301, 97, c.depth, 501));
        for (int type : {cv::THRESH_BINARY, cv::THRESH_TRUNC, cv::THRESH_TOZERO_INV}) {
            INFO("depth " << c.depth << " automatic " << c.automatic << " type " << type);
            std::vector<double> values;
            const int t = type | c.automatic;
            const std::vector<cv::Mat> expected = cv_thresholds(mixed, 0, 200, t, values);
            check_list(backend, mixed, expected, values, threshold_op(0, 200, t));
            const std::vector<cv::Mat> same = same_size_images(6, 211, 53, CV_MAKETYPE(c.depth, 1), 510);
            std::vector<double> same_values;
            const std::vector<cv::Mat> same_expected = cv_thresholds(same, 0, 200, t, same_values);
            check_uniform(backend, same, same_expected, same_values, threshold_op(0, 200, t));
        }
    }
}

IMGHIST_BACKEND_CASE("threshold_batch writes the levels to a caller's array: device memory without waiting, host memory",
                     "[filters][batch][threshold][otsu]") {
    std::vector<cv::Mat> src = mixed_images(CV_8UC1, 520, backend == Backend::Cuda);
    std::vector<double> values;
    const std::vector<cv::Mat> expected = cv_thresholds(src, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU, values);
    std::vector<cv::Mat> dst;
    for (const cv::Mat& m : src) dst.push_back(host_output(m.rows, m.cols, CV_8UC1, 2));
    std::vector<int> levels(src.size(), -1);
    imghist::threshold_batch(host_list(src), host_list(dst), 0, 255, imghist::ThresholdType::Binary,
                             imghist::AutoThreshold::Otsu, options_for(backend), levels.data());
    require_outputs(dst, expected, "host batch");
    for (std::size_t i = 0; i < src.size(); ++i) REQUIRE(levels[i] == values[i]);
    if (backend != Backend::Cuda) return;
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    int* d_levels = nullptr;
    REQUIRE(cudaMalloc(&d_levels, src.size() * sizeof(int)) == cudaSuccess);
    const DeviceList in(src);
    const DeviceList out = DeviceList::outputs(src);
    imghist::FilterOptions o = options_for(backend);
    o.stream = stream;
    const std::vector<double> returned = imghist::threshold_batch(in.batch, out.batch, 0, 255, imghist::ThresholdType::Binary,
                                                                  imghist::AutoThreshold::Otsu, o, d_levels);
    CHECK(returned.empty());  // the asynchronous form returns nothing
    std::vector<int> back(src.size(), -1);
    REQUIRE(cudaMemcpyAsync(back.data(), d_levels, back.size() * sizeof(int), cudaMemcpyDeviceToHost, stream) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    for (std::size_t i = 0; i < src.size(); ++i) REQUIRE(back[i] == values[i]);
    require_outputs(out.download_all(), expected, "device batch, levels on the device");
    cudaFree(d_levels);
    cudaStreamDestroy(stream);
}

TEST_CASE("threshold_batch on a uniform device batch is captured into a CUDA graph and replays exactly",
          "[filters][batch][threshold][otsu][cuda]") {
    IMGHIST_REQUIRE_CUDA_OR_SKIP();
    // Stream capture fails on any synchronisation or allocation: the asynchronous batch threshold must make none
    // once its workspace has the batch's size. The graph holds the histograms, the levels and the pass: a few
    // kernels for the whole batch, not a few per image.
    const int n = 16, w = 640, h = 480;
    const UniformLayout layout{n, w, h, CV_8UC1, -1, 0};
    const cv::Mat first = layout.parent_of(same_size_images(n, w, h, CV_8UC1, 600));
    DeviceParent in(first), out(first);
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    int* d_levels = nullptr;
    REQUIRE(cudaMalloc(&d_levels, n * sizeof(int)) == cudaSuccess);
    imghist::FilterOptions o;
    o.stream = stream;
    const ImageBatch src = layout.batch(in.buf.data(), first.step, imghist::Location::Device);
    const ImageBatch dst = layout.batch(out.buf.data(), first.step, imghist::Location::Device);
    auto call = [&] {
        imghist::threshold_batch(src, dst, 0, 255, imghist::ThresholdType::BinaryInv, imghist::AutoThreshold::Otsu, o,
                                 d_levels);
    };
    call();  // sizes the workspace
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    imghist_test::StreamCapture capture(stream, cudaStreamCaptureModeGlobal);
    call();
    const cudaGraph_t graph = capture.end();
    std::size_t nodes = 0;
    REQUIRE(cudaGraphGetNodes(graph, nullptr, &nodes) == cudaSuccess);
    std::vector<cudaGraphNode_t> list(nodes);
    REQUIRE(cudaGraphGetNodes(graph, list.data(), &nodes) == cudaSuccess);
    int kernels = 0;
    for (cudaGraphNode_t node : list) {
        cudaGraphNodeType t;
        REQUIRE(cudaGraphNodeGetType(node, &t) == cudaSuccess);
        kernels += t == cudaGraphNodeTypeKernel;
    }
    // At most: the histograms' zeroing (images cut into several tiles each), the histograms, the levels, the pass.
    INFO("graph nodes " << nodes << ", kernels " << kernels);
    CHECK(kernels >= 1);
    CHECK(kernels <= 4);
    CHECK(nodes <= 4);
    const cudaGraphExec_t exec = capture.instantiate();
    for (int round = 0; round < 3; ++round) {
        const std::vector<cv::Mat> images = same_size_images(n, w, h, CV_8UC1, 700 + 50 * round);
        const cv::Mat host = layout.parent_of(images);
        REQUIRE(cudaMemcpyAsync(in.buf.data(), host.data, host.step * host.rows, cudaMemcpyHostToDevice, stream) == cudaSuccess);
        REQUIRE(cudaGraphLaunch(exec, stream) == cudaSuccess);
        std::vector<int> levels(n, -1);
        REQUIRE(cudaMemcpyAsync(levels.data(), d_levels, n * sizeof(int), cudaMemcpyDeviceToHost, stream) == cudaSuccess);
        REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
        std::vector<double> values;
        const std::vector<cv::Mat> expected = cv_thresholds(images, 0, 255, cv::THRESH_BINARY_INV | cv::THRESH_OTSU, values);
        const cv::Mat back = out.download_all();
        for (int i = 0; i < n; ++i) {
            INFO("replay " << round << " image " << i);
            REQUIRE(levels[static_cast<std::size_t>(i)] == values[static_cast<std::size_t>(i)]);
            FILTERS_REQUIRE_IDENTICAL(layout.image(back, i), expected[static_cast<std::size_t>(i)]);
        }
    }
    cudaFree(d_levels);
    cudaStreamDestroy(stream);
}

namespace {

/// The stream of a capture test, destroyed on every path out of it.
struct TestStream {
    cudaStream_t s = nullptr;
    TestStream() { REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess); }
    TestStream(const TestStream&) = delete;
    TestStream& operator=(const TestStream&) = delete;
    ~TestStream() { cudaStreamDestroy(s); }
};

/// A batch call on a stream being captured that must be refused: Error(Unsupported) before it enqueues anything,
/// so the capture ends valid (a wait or a failed call inside it would have invalidated it) and holds no node.
void require_refused_in_capture(cudaStream_t stream, const char* what, const std::function<void()>& call) {
    INFO(what);
    imghist_test::StreamCapture capture(stream, cudaStreamCaptureModeGlobal);
    bool refused = false;
    try {
        call();
    } catch (const imghist::Error& e) {
        INFO(e.what());
        CHECK(e.code() == imghist::ErrorCode::Unsupported);
        refused = true;
    }
    CHECK(refused);
    const cudaGraph_t graph = capture.end();
    std::size_t nodes = 1;
    REQUIRE(cudaGraphGetNodes(graph, nullptr, &nodes) == cudaSuccess);
    CHECK(nodes == 0);
}

}  // namespace

TEST_CASE("batch filters on a capturing stream: uniform calls replay exactly, the others are refused before they "
          "enqueue anything",
          "[filters][batch][capture][cuda]") {
    IMGHIST_REQUIRE_CUDA_OR_SKIP();
    const TestStream stream;
    imghist::FilterOptions o;
    o.backend = Backend::Cuda;
    o.stream = stream.s;
    const imghist::Clahe clahe(2.0, 8, 8);
    // Captured: one call on a uniform device batch (a batch of one image too), replayed on new inputs; expected
    // images from OpenCV and the single calls on the CPU.
    struct Captured {
        const char* what;
        int n;
        std::function<void(const ImageBatch&, const ImageBatch&)> call;
        std::function<cv::Mat(const cv::Mat&)> expected;
    };
    const Captured captured[] = {
        {"equalize_hist_batch", 5, [&](const ImageBatch& s, const ImageBatch& d) { imghist::equalize_hist_batch(s, d, o); },
         cv_equalize},
        {"equalize_hist_batch of one image", 1,
         [&](const ImageBatch& s, const ImageBatch& d) { imghist::equalize_hist_batch(s, d, o); }, cv_equalize},
        {"clahe_batch", 5, [&](const ImageBatch& s, const ImageBatch& d) { imghist::clahe_batch(clahe, s, d, o); },
         [&](const cv::Mat& m) {
             cv::Mat e(m.size(), m.type());
             clahe.apply(imghist::view_of(m), imghist::view_of(e), options_for(Backend::Cpu));
             return e;
         }},
        {"threshold_batch, a fixed level", 5,
         [&](const ImageBatch& s, const ImageBatch& d) {
             imghist::threshold_batch(s, d, 99.5, 200, imghist::ThresholdType::Trunc, imghist::AutoThreshold::None, o);
         },
         [](const cv::Mat& m) {
             cv::Mat e;
             cv::threshold(m, e, 99.5, 200, cv::THRESH_TRUNC);
             return e;
         }},
    };
    for (const Captured& c : captured) {
        INFO(c.what);
        const int w = 211, h = 97;
        const UniformLayout in{c.n, w, h, CV_8UC1, 3, 2}, out{c.n, w, h, CV_8UC1, 5, 1};
        const cv::Mat host_in = in.parent_of(same_size_images(c.n, w, h, CV_8UC1, 1300));
        const cv::Mat host_out = out.parent_of(std::vector<cv::Mat>(static_cast<std::size_t>(c.n), cv::Mat(h, w, CV_8UC1, cv::Scalar(7))));
        DeviceParent dev_in(host_in), dev_out(host_out);
        const ImageBatch src = in.batch(dev_in.buf.data(), host_in.step, imghist::Location::Device);
        const ImageBatch dst = out.batch(dev_out.buf.data(), host_out.step, imghist::Location::Device);
        c.call(src, dst);  // sizes the stream's workspace: no allocation inside the capture
        REQUIRE(cudaStreamSynchronize(stream.s) == cudaSuccess);
        imghist_test::StreamCapture capture(stream.s, cudaStreamCaptureModeGlobal);
        c.call(src, dst);
        capture.end();
        const cudaGraphExec_t exec = capture.instantiate();
        for (int round = 0; round < 2; ++round) {
            const std::vector<cv::Mat> images = same_size_images(c.n, w, h, CV_8UC1, 1400 + 50 * round);
            const cv::Mat next = in.parent_of(images);
            REQUIRE(cudaMemcpyAsync(dev_in.buf.data(), next.data, next.step * static_cast<std::size_t>(next.rows),
                                    cudaMemcpyHostToDevice, stream.s) == cudaSuccess);
            REQUIRE(cudaGraphLaunch(exec, stream.s) == cudaSuccess);
            REQUIRE(cudaStreamSynchronize(stream.s) == cudaSuccess);
            const cv::Mat back = dev_out.download_all();
            for (int i = 0; i < c.n; ++i) {
                INFO("replay " << round << " image " << i);
                FILTERS_REQUIRE_IDENTICAL(out.image(back, i), c.expected(images[static_cast<std::size_t>(i)]));
            }
        }
    }
    // Refused: calls that copy descriptors per call, wait for the values they return or for host-made tables, or
    // take host images.
    const std::vector<cv::Mat> mixed = mixed_images(CV_8UC1, 1500, false);
    const DeviceList list_in(mixed);
    const DeviceList list_out = DeviceList::outputs(mixed);
    const int n = 4, w = 64, h = 32;
    const UniformLayout u8{n, w, h, CV_8UC1, -1, 0}, u16{n, w, h, CV_16UC1, -1, 0};
    std::vector<cv::Mat> images8, images16;  // no constant image: multi-level Otsu must work outside the capture
    for (int i = 0; i < n; ++i) {
        images8.push_back(make_image(w, h, CV_8UC1, Dist::Uniform, 1600 + i));
        images16.push_back(make_image(w, h, CV_16UC1, Dist::Uniform, 1700 + i));
    }
    const cv::Mat host8 = u8.parent_of(images8), host16 = u16.parent_of(images16);
    const DeviceParent in8(host8), out8(host8), in16(host16), out16(host16);
    const ImageBatch s8 = u8.batch(in8.buf.data(), host8.step, imghist::Location::Device);
    const ImageBatch d8 = u8.batch(out8.buf.data(), host8.step, imghist::Location::Device);
    const ImageBatch s16 = u16.batch(in16.buf.data(), host16.step, imghist::Location::Device);
    const ImageBatch d16 = u16.batch(out16.buf.data(), host16.step, imghist::Location::Device);
    cv::Mat host_dst = host8.clone();
    const ImageBatch h_src = u8.batch(host8.data, host8.step, imghist::Location::Host);
    const ImageBatch h_dst = u8.batch(host_dst.data, host_dst.step, imghist::Location::Host);
    const imghist::Histogram target = imghist::calc_hist(imghist::view_of(host8), imghist::BinSpec::u8());
    // Each once outside a capture first, as a caller would have: the workspace is sized, and the call works there.
    const std::pair<const char*, std::function<void()>> refused[] = {
        {"equalize_hist_batch on a list", [&] { imghist::equalize_hist_batch(list_in.batch, list_out.batch, o); }},
        {"clahe_batch on a list", [&] { imghist::clahe_batch(clahe, list_in.batch, list_out.batch, o); }},
        {"threshold_batch, Otsu levels returned",
         [&] { imghist::threshold_batch(s8, d8, 0, 255, imghist::ThresholdType::Binary, imghist::AutoThreshold::Otsu, o); }},
        {"threshold_multiotsu_batch", [&] { imghist::threshold_multiotsu_batch(s8, d8, 3, o); }},
        {"stretch_contrast_batch, 16-bit", [&] { imghist::stretch_contrast_batch(s16, d16, 1, 1, imghist::StretchMode::PerChannel, o); }},
        {"match_to_histogram_batch, a host target", [&] { imghist::match_to_histogram_batch(s8, d8, target, o); }},
        {"equalize_hist_batch on host images through the device", [&] { imghist::equalize_hist_batch(h_src, h_dst, o); }},
    };
    for (const auto& [what, call] : refused) {
        INFO(what);
        call();
        REQUIRE(cudaStreamSynchronize(stream.s) == cudaSuccess);
        require_refused_in_capture(stream.s, what, call);
        // The stream works on after the refusal.
        call();
        REQUIRE(cudaStreamSynchronize(stream.s) == cudaSuccess);
    }
}

// ---- multi-level Otsu ---------------------------------------------------------------------------------------------

namespace {

BatchOp multiotsu_op(int classes) {
    return [classes](const ImageBatch& s, const ImageBatch& d, const imghist::FilterOptions& o) {
        std::vector<double> flat;
        for (const std::vector<int>& t : imghist::threshold_multiotsu_batch(s, d, classes, o))
            flat.insert(flat.end(), t.begin(), t.end());
        return flat;
    };
}

}  // namespace

IMGHIST_BACKEND_CASE("threshold_multiotsu_batch: skimage's thresholds and labels per image, u8 and u16, ties and sparse levels",
                     "[filters][batch][multiotsu]") {
    for (int classes : {2, 3, 5}) {
        std::vector<cv::Mat> src;
        std::uint64_t seed = 800 + static_cast<std::uint64_t>(classes);
        for (const Size2 s : {Size2{333, 127}, Size2{640, 480}, Size2{64, 64}})
            src.push_back(make_image(s.w, s.h, CV_8UC1, classes == 5 ? Dist::Gauss4 : Dist::Photo, seed++, offset_of(seed)));
        // Sparse equal levels: exact ties that may overflow the device search's frontier (the host searches those).
        // (Five classes over 120 levels keep the exhaustive reference quick.)
        const int span = classes == 5 ? 120 : 256;
        std::vector<std::uint64_t> sparse(256, 0);
        for (int k = 0; k < 12; ++k) sparse[static_cast<std::size_t>(k * (span - 1) / 11)] = 40;
        src.push_back(image_with(sparse));
        std::vector<cv::Mat> expected;
        std::vector<double> values;
        for (const cv::Mat& m : src) {
            const std::vector<int> t = ref_multiotsu(level_hist(m), classes);
            values.insert(values.end(), t.begin(), t.end());
            expected.push_back(ref_labels(m, t));
        }
        INFO("u8, " << classes << " classes");
        check_list(backend, src, expected, values, multiotsu_op(classes));
    }
    // 16-bit images spanning at most 4096 levels.
    std::vector<cv::Mat> src16;
    for (int i = 0; i < 4; ++i) {
        cv::Mat m = make_image(97 + 40 * i, 31 + 7 * i, CV_16UC1, Dist::Gauss32, 900 + i, offset_of(static_cast<std::size_t>(i)));
        for (int y = 0; y < m.rows; ++y)
            for (int x = 0; x < m.cols; ++x)
                m.at<std::uint16_t>(y, x) = static_cast<std::uint16_t>(1000 * i + m.at<std::uint16_t>(y, x) % (300 + 100 * i));
        src16.push_back(m);
    }
    std::vector<cv::Mat> expected16;
    std::vector<double> values16;
    for (const cv::Mat& m : src16) {
        const std::vector<int> t = ref_multiotsu(level_hist(m), 3);
        values16.insert(values16.end(), t.begin(), t.end());
        expected16.push_back(ref_labels(m, t));
    }
    check_list(backend, src16, expected16, values16, multiotsu_op(3));
}

IMGHIST_BACKEND_CASE("threshold_multiotsu_batch names the image with too few levels", "[filters][batch][multiotsu][errors]") {
    std::vector<cv::Mat> src{make_image(64, 64, CV_8UC1, Dist::Photo, 950), cv::Mat(8, 8, CV_8UC1, cv::Scalar(3))};
    std::vector<cv::Mat> dst{host_output(64, 64, CV_8UC1, 0), host_output(8, 8, CV_8UC1, 0)};
    try {
        imghist::threshold_multiotsu_batch(host_list(src), host_list(dst), 3, options_for(backend));
        FAIL("a constant image was split into three classes");
    } catch (const imghist::Error& e) {
        CHECK(e.code() == imghist::ErrorCode::InvalidArgument);
        CHECK(std::string(e.what()).find("batch image 1") != std::string::npos);
    }
}

// ---- CLAHE --------------------------------------------------------------------------------------------------------

TEST_CASE("CLAHE bands: the units of a tile's bands count each of its samples once, padded as cv::CLAHE pads",
          "[filters][batch][clahe][bands]") {
    // The device's 8-bit tile counting (clahe_bands.hpp) run on the host, against a plain loop over the tile with
    // cv::borderInterpolate: every band of every tile, images from 1x1 to 1080p at ROI offsets that put the rows at
    // every alignment, with and without pixels beyond the image to pad from, tiles past the image's edge.
    struct Case {
        int w, h, tiles_x, tiles_y, xo, extra_right, extra_bottom;
    };
    const Case cases[] = {{1, 1, 8, 8, 0, 0, 0},      {5, 3, 8, 8, 3, 0, 0},       {5, 3, 8, 8, 1, 2, 9},
                          {97, 61, 8, 8, 13, 0, 0},   {97, 61, 8, 8, 7, 4, 3},     {240, 135, 1, 1, 0, 0, 0},
                          {333, 127, 3, 5, 1, 20, 10}, {641, 480, 8, 8, 5, 0, 0},  {300, 2, 16, 2, 15, 0, 0},
                          {16, 200, 2, 16, 2, 0, 0},   {1920, 1080, 8, 8, 0, 0, 0}, {1921, 1081, 8, 8, 9, 3, 1}};
    std::uint64_t seed = 1900;
    for (const Case& c : cases) {
        cv::Mat parent(c.h + c.extra_bottom, c.xo + c.w + c.extra_right + 3, CV_8UC1);
        fill(parent, seed % 2 ? Dist::Photo : Dist::Uniform, seed);
        ++seed;
        const cv::Mat img = parent(cv::Rect(c.xo, 0, c.w, c.h));
        const imghist::fmath::ClaheGeometry g =
            imghist::fmath::clahe_geometry(c.w, c.h, c.tiles_x, c.tiles_y, 256, 2.0, c.extra_right, c.extra_bottom);
        for (int tile = 0; tile < c.tiles_x * c.tiles_y; ++tile) {
            const int tx = tile % c.tiles_x, ty = tile / c.tiles_x;
            std::vector<std::uint64_t> want(256, 0);
            for (int r = 0; r < g.tile_h; ++r)
                for (int x = 0; x < g.tile_w; ++x) {
                    const int sy = cv::borderInterpolate(ty * g.tile_h + r, g.ext_h, cv::BORDER_REFLECT_101);
                    const int sx = cv::borderInterpolate(tx * g.tile_w + x, g.ext_w, cv::BORDER_REFLECT_101);
                    ++want[img.data[static_cast<std::size_t>(sy) * img.step + static_cast<std::size_t>(sx)]];
                }
            for (const int splits : {1, 2, 3, 7}) {
                INFO(c.w << "x" << c.h << " at offset " << c.xo << ", tiles " << c.tiles_x << "x" << c.tiles_y
                          << ", tile " << tile << ", " << splits << " bands");
                std::vector<std::uint64_t> got(256, 0);
                int next_row = 0;
                for (int split = 0; split < splits; ++split) {
                    const imghist::detail::ClaheBand band = imghist::detail::clahe_band_of(g, tile, split, splits);
                    REQUIRE(band.r0 == next_row);  // the bands partition the tile's rows
                    next_row = band.r1;
                    for (long long k = 0; k < band.units; ++k)
                        imghist::detail::clahe_count_unit(g, band, img.data, img.step, k, [&](unsigned int v) {
                            REQUIRE(v < 256u);
                            ++got[v];
                        });
                }
                REQUIRE(next_row == g.tile_h);
                REQUIRE(got == want);
            }
        }
    }
}

IMGHIST_BACKEND_CASE("clahe_batch: every image within one level of cv::CLAHE and equal to the single apply",
                     "[filters][batch][clahe]") {
    for (int depth : {CV_8U, CV_16U})
        for (const double clip : {0.0, 2.0, 40.0}) {
            std::vector<cv::Mat> src;
            std::uint64_t seed = 1000;
            const std::vector<Size2> sizes{{640, 480}, {333, 127}, {5, 3}, {1, 1}, {641, 480}, {100, 60}};
            for (std::size_t i = 0; i < sizes.size(); ++i)
                src.push_back(make_image(sizes[i].w, sizes[i].h, CV_MAKETYPE(depth, 1),
                                         i % 2 ? Dist::Photo : Dist::Gauss4, seed++, offset_of(i)));
            if (backend == Backend::Cuda && depth == CV_8U) src.push_back(make_image(1920, 1080, CV_8UC1, Dist::Photo, seed++, 3));
            const imghist::Clahe clahe(clip, 8, 8);
            cv::Ptr<cv::CLAHE> ref = cv::createCLAHE(clip, cv::Size(8, 8));
            std::vector<cv::Mat> single;
            for (const cv::Mat& m : src) {
                cv::Mat s(m.size(), m.type()), e;
                clahe.apply(imghist::view_of(m), imghist::view_of(s), options_for(backend));
                ref->apply(m.clone(), e);  // a clone: isolated, as clahe_batch takes views without their parents
                cv::Mat diff;
                cv::absdiff(s, e, diff);
                double worst = 0;
                cv::minMaxLoc(diff.reshape(1), nullptr, &worst);
                REQUIRE(worst <= 1.0);
                single.push_back(s);
            }
            INFO("depth " << depth << " clip " << clip);
            const auto op = [&clahe](const ImageBatch& s, const ImageBatch& d, const imghist::FilterOptions& o) {
                imghist::clahe_batch(clahe, s, d, o);
                return std::vector<double>{};
            };
            check_list(backend, src, single, {}, op);
            const std::vector<cv::Mat> same = same_size_images(4, 97, 61, CV_MAKETYPE(depth, 1), 1100);
            std::vector<cv::Mat> same_single;
            for (const cv::Mat& m : same) {
                cv::Mat s(m.size(), m.type());
                clahe.apply(imghist::view_of(m), imghist::view_of(s), options_for(backend));
                same_single.push_back(s);
            }
            check_uniform(backend, same, same_single, {}, op);
        }
}

IMGHIST_BACKEND_CASE("claheBatch on ROIs pads from the parents' pixels, as cv::CLAHE does", "[filters][batch][clahe]") {
    std::vector<cv::Mat> parents, src;
    for (int i = 0; i < 3; ++i) {
        parents.push_back(make_image(120 + 9 * i, 70 + 5 * i, CV_8UC1, Dist::Photo, 1200 + i));
        src.push_back(parents.back()(cv::Rect(3, 2, 101 + 3 * i, 61 + i)));
    }
    std::vector<cv::Mat> expected;
    for (const cv::Mat& m : src) {
        cv::Mat e;
        cv::createCLAHE(2.0, cv::Size(8, 8))->apply(m, e);
        expected.push_back(e);
    }
    BackendScope scope(backend);
    std::vector<cv::Mat> dst;
    gpuhist::claheBatch(src, dst, 2.0, cv::Size(8, 8));
    REQUIRE(dst.size() == src.size());
    for (std::size_t i = 0; i < src.size(); ++i) {
        cv::Mat single;
        gpuhist::createCLAHE(2.0, cv::Size(8, 8))->apply(src[i], single);
        INFO("batch image " << i);
        FILTERS_REQUIRE_IDENTICAL(dst[i], single);
        cv::Mat diff;
        cv::absdiff(dst[i], expected[i], diff);
        double worst = 0;
        cv::minMaxLoc(diff, nullptr, &worst);
        REQUIRE(worst <= 1.0);
    }
    if (backend != Backend::Cuda) return;
    std::vector<DeviceMat> dev;
    std::vector<cv::cuda::GpuMat> gsrc, gdst;
    dev.reserve(src.size());
    for (const cv::Mat& m : src) {
        dev.emplace_back(m);  // the whole parent, viewed at the ROI
        gsrc.push_back(dev.back().mat);
    }
    std::vector<DeviceMat> outs;
    outs.reserve(src.size());
    for (const cv::Mat& m : src) {
        outs.emplace_back(m.rows, m.cols, CV_8UC1, 1);
        gdst.push_back(outs.back().mat);
    }
    gpuhist::claheBatch(gsrc, gdst, 2.0, cv::Size(8, 8));
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    for (std::size_t i = 0; i < src.size(); ++i) FILTERS_REQUIRE_IDENTICAL(download(gdst[i]), dst[i]);
}

// ---- contrast stretch, matching ------------------------------------------------------------------------------------

IMGHIST_BACKEND_CASE("stretch_contrast_batch follows the percentile rule per image: u8 u16, 1-4 channels, luma and per channel",
                     "[filters][batch][stretch]") {
    for (int depth : {CV_8U, CV_16U})
        for (int cn : {1, 2, 3, 4})
            for (const auto mode : {imghist::StretchMode::Luma, imghist::StretchMode::PerChannel}) {
                if (cn < 3 && mode == imghist::StretchMode::Luma) continue;  // the mode is ignored there
                const bool frames = backend == Backend::Cuda && depth == CV_8U && cn == 1;
                const std::vector<cv::Mat> src = mixed_images(CV_MAKETYPE(depth, cn), 1300 + cn, frames);
                const bool luma = mode == imghist::StretchMode::Luma;
                INFO("depth " << depth << " channels " << cn << (luma ? " luma" : " per channel"));
                const auto expected = map_images(src, [&](const cv::Mat& m) { return ref_stretch(m, 2.0, 1.0, luma); });
                const auto op = [mode](const ImageBatch& s, const ImageBatch& d, const imghist::FilterOptions& o) {
                    imghist::stretch_contrast_batch(s, d, 2.0, 1.0, mode, o);
                    return std::vector<double>{};
                };
                check_list(backend, src, expected, {}, op);
                const std::vector<cv::Mat> same = same_size_images(4, 64, 33, CV_MAKETYPE(depth, cn), 1400);
                check_uniform(backend, same, map_images(same, [&](const cv::Mat& m) { return ref_stretch(m, 2.0, 1.0, luma); }),
                              {}, op);
            }
}

IMGHIST_BACKEND_CASE("match_histograms_batch and match_to_histogram_batch follow the np.interp rule per image",
                     "[filters][batch][match]") {
    for (int depth : {CV_8U, CV_16U})
        for (int cn : sampled({1, 3, 4})) {
            const int type = CV_MAKETYPE(depth, cn);
            const std::vector<cv::Mat> src = mixed_images(type, 1500 + cn, backend == Backend::Cuda && cn == 1 && depth == CV_8U);
            const cv::Mat ref = make_image(97, 61, type, Dist::Gauss32, 1600, 1);
            const auto expected = map_images(src, [&](const cv::Mat& m) { return ref_match(m, counts_of(ref)); });
            INFO("depth " << depth << " channels " << cn);
            check_list(backend, src, expected, {},
                       [&ref](const ImageBatch& s, const ImageBatch& d, const imghist::FilterOptions& o) {
                           imghist::match_histograms_batch(s, imghist::view_of(ref), d, o);
                           return std::vector<double>{};
                       });
            // The same target as a histogram, and a one-channel target for every channel.
            const auto counts = counts_of(ref);
            for (const bool one : {false, true}) {
                imghist::Histogram target = imghist::Histogram::zeros(
                    depth == CV_8U ? imghist::BinSpec::u8() : imghist::BinSpec::full(imghist::SampleType::U16, 65536),
                    one ? 1 : cn);
                for (int c = 0; c < target.channels; ++c)
                    for (const auto& [level, n] : counts[static_cast<std::size_t>(c)]) target.channel(c)[level] = n;
                const std::vector<std::map<int, std::uint64_t>> tc(counts.begin(), counts.begin() + target.channels);
                const auto exp = map_images(src, [&](const cv::Mat& m) { return ref_match(m, tc); });
                check_list(backend, src, exp, {},
                           [&target](const ImageBatch& s, const ImageBatch& d, const imghist::FilterOptions& o) {
                               imghist::match_to_histogram_batch(s, d, target, o);
                               return std::vector<double>{};
                           });
            }
            if (backend == Backend::Cuda) {
                // A device reference for a device batch.
                const DeviceMat dref(ref);
                const DeviceList in(src);
                const DeviceList out = DeviceList::outputs(src);
                imghist::match_histograms_batch(in.batch, imghist::view_of(dref.mat), out.batch, options_for(backend));
                REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
                require_outputs(out.download_all(), expected, "device reference");
            }
        }
}

// ---- the OpenCV layer and refusals ------------------------------------------------------------------------------

IMGHIST_BACKEND_CASE("gpuhist batch functions: vectors of cv::Mat and GpuMat in OpenCV's spelling", "[filters][batch][gpuhist]") {
    const std::vector<cv::Mat> src = mixed_images(CV_8UC1, 1700, false);
    BackendScope scope(backend);
    std::vector<cv::Mat> eq, th;
    gpuhist::equalizeHistBatch(src, eq);
    require_outputs(eq, map_images(src, cv_equalize), "equalizeHistBatch");
    std::vector<double> values;
    const std::vector<cv::Mat> expected = cv_thresholds(src, 0, 255, cv::THRESH_BINARY | cv::THRESH_TRIANGLE, values);
    REQUIRE(gpuhist::thresholdBatch(src, th, 0, 255, cv::THRESH_BINARY | cv::THRESH_TRIANGLE) == values);
    require_outputs(th, expected, "thresholdBatch");
    // OpenCV's codes, naming the image.
    std::vector<cv::Mat> bad{src[0], cv::Mat(4, 4, CV_32FC1, cv::Scalar(1))}, out;
    try {
        gpuhist::equalizeHistBatch(bad, out);
        FAIL("a float image was equalized");
    } catch (const cv::Exception& e) {
        CHECK(e.code == cv::Error::StsUnsupportedFormat);
        CHECK(e.err.find("batch image 1") != std::string::npos);
    }
    if (backend != Backend::Cuda) return;
    const DeviceList in(src);
    std::vector<cv::cuda::GpuMat> gsrc;
    for (const DeviceMat& m : in.mats) gsrc.push_back(m.mat);
    const DeviceList out_store = DeviceList::outputs(src);
    std::vector<cv::cuda::GpuMat> gdst;
    for (const DeviceMat& m : out_store.mats) gdst.push_back(m.mat);
    REQUIRE(gpuhist::thresholdBatch(gsrc, gdst, 0, 255, cv::THRESH_BINARY | cv::THRESH_TRIANGLE) == values);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    require_outputs(out_store.download_all(), expected, "thresholdBatch (GpuMat)");
    gpuhist::equalizeHistBatch(gsrc, gdst);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    require_outputs(out_store.download_all(), map_images(src, cv_equalize), "equalizeHistBatch (GpuMat)");
}

TEST_CASE("batch passes: every image gets one block per unit of its work, and every block finds its image",
          "[filters][batch][blocks]") {
    // The layout the device passes of a batch run on (batch_blocks.hpp), against a plain count of each image's
    // blocks: empty images, exact multiples of the unit, one past them, frames, and a random mix.
    struct Image {
        unsigned int block_begin;
    };
    const std::size_t unit = 64 * 1024;
    std::vector<std::size_t> works{0, 1, unit - 1, unit, unit + 1, 640 * 480, 1920 * 1080, 3840 * 2160, 7, 2 * unit};
    std::mt19937_64 rng(33);
    for (int i = 0; i < 300; ++i) works.push_back(rng() % (5 * unit));
    std::vector<Image> images(works.size());
    const std::size_t total = imghist::detail::lay_out_pass(
        works.size(), unit, [&](std::size_t i) { return works[i]; },
        [&](std::size_t i, std::size_t begin) { images[i].block_begin = static_cast<unsigned int>(begin); });
    std::size_t block = 0;
    for (std::size_t i = 0; i < works.size(); ++i) {
        std::size_t blocks = 1;  // one per started unit, at least one
        while (blocks * unit < works[i]) ++blocks;
        INFO("image " << i << " of " << works[i] << " bytes");
        REQUIRE(imghist::detail::pass_blocks(works[i], unit) == blocks);
        REQUIRE(images[i].block_begin == block);
        for (std::size_t j = 0; j < blocks; ++j, ++block)
            REQUIRE(imghist::detail::image_of_block(images.data(), static_cast<unsigned int>(images.size()),
                                                    static_cast<unsigned int>(block)) == i);
    }
    REQUIRE(total == block);
    // A uniform batch finds its images by a division: the same answer.
    std::vector<Image> same(9);
    const std::size_t per = imghist::detail::pass_blocks(3 * unit + 5, unit);
    const std::size_t same_total = imghist::detail::lay_out_pass(
        same.size(), unit, [&](std::size_t) { return 3 * unit + 5; },
        [&](std::size_t i, std::size_t begin) { same[i].block_begin = static_cast<unsigned int>(begin); });
    REQUIRE(same_total == per * same.size());
    for (unsigned int b = 0; b < same_total; ++b) REQUIRE(imghist::detail::image_of_block(same.data(), 9u, b) == b / per);
    // Beyond a grid's 2^31 - 1 blocks: refused, also where 32-bit arithmetic would wrap.
    const auto nothing = [](std::size_t, std::size_t) {};
    CHECK(imghist::detail::lay_out_pass(1, 1, [](std::size_t) { return std::size_t(INT_MAX); }, nothing) == INT_MAX);
    for (const std::size_t w : {std::size_t(1) << 30, std::size_t(1) << 32, std::size_t(-1)}) {
        try {
            imghist::detail::lay_out_pass(3, 1, [w](std::size_t) { return w; }, nothing);
            FAIL("a pass of 3 x " << w << " blocks was laid out");
        } catch (const imghist::Error& e) {
            CHECK(e.code() == imghist::ErrorCode::Unsupported);
        }
    }
}

TEST_CASE("batch arguments: counts, types, locations and overlapping destinations are refused, naming the image",
          "[filters][batch][errors]") {
    const cv::Mat a = make_image(64, 32, CV_8UC1, Dist::Photo, 1800), b = make_image(64, 32, CV_8UC1, Dist::Uniform, 1801);
    const imghist::FilterOptions cpu = options_for(Backend::Cpu);
    auto code_of = [](auto&& f) -> std::pair<imghist::ErrorCode, std::string> {
        try {
            f();
        } catch (const imghist::Error& e) {
            return {e.code(), e.what()};
        }
        return {imghist::ErrorCode::Io, "no error"};
    };
    cv::Mat o1 = host_output(32, 64, CV_8UC1, 0), o2 = host_output(32, 64, CV_8UC1, 0);
    // Counts differ.
    auto r = code_of([&] { imghist::equalize_hist_batch(host_list({a, b}), host_list({o1}), cpu); });
    CHECK(r.first == imghist::ErrorCode::InvalidArgument);
    CHECK(r.second.find("2 images") != std::string::npos);
    // Sizes of a pair differ.
    cv::Mat small = host_output(31, 64, CV_8UC1, 0);
    r = code_of([&] { imghist::equalize_hist_batch(host_list({a, b}), host_list({o1, small}), cpu); });
    CHECK(r.first == imghist::ErrorCode::InvalidArgument);
    CHECK(r.second.find("batch image 1") != std::string::npos);
    // Types differ between images.
    const cv::Mat c16(32, 64, CV_16UC1, cv::Scalar(5));
    cv::Mat o16(32, 64, CV_16UC1);
    r = code_of([&] { imghist::stretch_contrast_batch(host_list({a, c16}), host_list({o1, o16}), 2, 1, imghist::StretchMode::Luma, cpu); });
    CHECK(r.first == imghist::ErrorCode::InvalidArgument);
    CHECK(r.second.find("batch image 1") != std::string::npos);
    // A destination repeated (a uniform destination at a distance of 0), or overlapping another image's source.
    r = code_of([&] {
        imghist::equalize_hist_batch(host_list({a, b}), ImageBatch::uniform(imghist::view_of(o1), 2, 0), cpu);
    });
    CHECK(r.first == imghist::ErrorCode::InvalidArgument);
    CHECK(r.second.find("overlaps") != std::string::npos);
    cv::Mat a2 = a.clone(), b2 = b.clone();
    r = code_of([&] { imghist::equalize_hist_batch(host_list({a2, b2}), host_list({b2, o2}), cpu); });
    CHECK(r.first == imghist::ErrorCode::InvalidArgument);
    CHECK(r.second.find("overlaps the source of batch image 1") != std::string::npos);
    // Tiles side by side in one image interleave their spans without sharing a byte: accepted.
    cv::Mat canvas(40, 100, CV_8UC1, cv::Scalar(9));
    cv::Mat left = canvas(cv::Rect(0, 0, 50, 40)), right = canvas(cv::Rect(50, 0, 50, 40));
    const cv::Mat lsrc = make_image(50, 40, CV_8UC1, Dist::Photo, 1802), rsrc = make_image(50, 40, CV_8UC1, Dist::Gauss4, 1803);
    imghist::equalize_hist_batch(host_list({lsrc, rsrc}), host_list({left, right}), cpu);
    FILTERS_REQUIRE_IDENTICAL(left, cv_equalize(lsrc));
    FILTERS_REQUIRE_IDENTICAL(right, cv_equalize(rsrc));
    // One type per filter, as the single calls.
    r = code_of([&] { imghist::equalize_hist_batch(host_list({c16}), host_list({o16}), cpu); });
    CHECK(r.first == imghist::ErrorCode::Unsupported);
    r = code_of([&] {
        imghist::threshold_batch(host_list({c16}), host_list({o16}), 0, 255, imghist::ThresholdType::Binary,
                                 imghist::AutoThreshold::Triangle, cpu);
    });
    CHECK(r.first == imghist::ErrorCode::Unsupported);
    // An empty batch does nothing.
    imghist::equalize_hist_batch(ImageBatch(), ImageBatch(), cpu);
    CHECK(imghist::threshold_batch(ImageBatch(), ImageBatch(), 0, 255, imghist::ThresholdType::Binary,
                                   imghist::AutoThreshold::Otsu, cpu).empty());
    // A uniform batch whose images would leave the address space.
    ImageView far = imghist::view_of(a);
    r = code_of([&] {
        imghist::equalize_hist_batch(ImageBatch::uniform(far, 3, PTRDIFF_MAX), ImageBatch::uniform(far, 3, PTRDIFF_MAX), cpu);
    });
    CHECK(r.first == imghist::ErrorCode::InvalidArgument);
    // Device batches need a device, and the CPU backend cannot read them.
    if (!imghist::cuda_available()) {
        r = code_of([&] {
            imghist::equalize_hist_batch(host_list({a}), host_list({o1}), options_for(Backend::Cuda));
        });
        CHECK(r.first == imghist::ErrorCode::NoDevice);
    }
}
