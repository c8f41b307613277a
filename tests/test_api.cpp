// API behaviour: errors, backend choice, the asynchronous device API, owning buffers.
#include <cuda_runtime.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <random>
#include <thread>

#include "core_support.hpp"
#include "stream_capture.hpp"
#include "core/policy/backend_choice.hpp"  // the counting route and the Auto chooser
#include "cuda/launch_shape.hpp"           // the launch-shape override

using namespace imghist_test;
using imghist::ErrorCode;
using imghist::SampleType;

namespace {
template <class F>
ErrorCode error_code_of(F&& f) {
    const std::optional<imghist::Error> e = thrown<imghist::Error>(std::forward<F>(f));
    if (!e) FAIL("no imghist::Error thrown");
    INFO(e->what());
    CHECK(std::string(e->what()).size() > 10);  // a message, not just a code
    return e->code();
}

/// A histogram request of the output-path cases: sample type, channels, bins.
struct Kind {
    SampleType t;
    int channels;
    BinSpec spec;
};
}  // namespace

IMGHIST_BACKEND_CASE("invalid arguments give a clear error", "[core][errors]") {
    imghist::Options opt;
    opt.backend = backend;
    std::vector<unsigned char> px(64 * 64 * 4, 1);
    const ImageView ok = ImageView::host(px.data(), 64, 64, SampleType::U8, 1);
    auto calc = [&](const ImageView& v, const BinSpec& s) { return imghist::calc_hist(v, s, opt); };

    CHECK(error_code_of([&] { calc(ImageView::host(nullptr, 8, 8), BinSpec::u8()); }) == ErrorCode::InvalidArgument);
    CHECK(error_code_of([&] { calc(ImageView::host(px.data(), 64, 64, SampleType::U8, 1, 32), BinSpec::u8()); }) ==
          ErrorCode::InvalidArgument);  // pitch < row
    CHECK(error_code_of([&] { calc(ok, BinSpec::even(0, 0, 256)); }) == ErrorCode::InvalidArgument);
    CHECK(error_code_of([&] { calc(ok, BinSpec::even(257, 0, 256)); }) == ErrorCode::InvalidArgument);
    CHECK(error_code_of([&] { calc(ImageView::host(px.data(), 8, 8, SampleType::U16), BinSpec::even(65537, 0, 65536)); }) ==
          ErrorCode::InvalidArgument);
    CHECK(error_code_of([&] { calc(ok, BinSpec::even(16, 10, 10)); }) == ErrorCode::InvalidArgument);
    CHECK(error_code_of([&] { calc(ok, BinSpec::even(16, 20, 10)); }) == ErrorCode::InvalidArgument);
    CHECK(error_code_of([&] { calc(ok, BinSpec::even(16, 0, std::numeric_limits<double>::infinity())); }) ==
          ErrorCode::InvalidArgument);
    CHECK(error_code_of([&] { calc(ImageView::host(px.data(), 4, 4, SampleType::U8, 5), BinSpec::u8()); }) ==
          ErrorCode::InvalidArgument);
    CHECK(error_code_of([&] { calc(ImageView::host(px.data() + 1, 4, 4, SampleType::U16), BinSpec::u8()); }) ==
          ErrorCode::InvalidArgument);  // misaligned 16-bit samples
    CHECK(error_code_of([&] { (void)ok.roi(60, 0, 8, 8); }) == ErrorCode::InvalidArgument);

    std::vector<unsigned char> mpx(32 * 32, 1);
    imghist::Options mopt = opt;
    mopt.mask = ImageView::host(mpx.data(), 32, 32);
    CHECK(error_code_of([&] { imghist::calc_hist(ok, BinSpec::u8(), mopt); }) == ErrorCode::InvalidArgument);
    mopt.mask = ImageView::host(mpx.data(), 16, 16, SampleType::U8, 4);
    CHECK(error_code_of([&] { imghist::calc_hist(ImageView::host(px.data(), 16, 16), BinSpec::u8(), mopt); }) ==
          ErrorCode::InvalidArgument);

    Histogram wrong = Histogram::zeros(BinSpec::u8(), 3);
    CHECK(error_code_of([&] { imghist::accumulate_hist(ok, wrong, opt); }) == ErrorCode::InvalidArgument);
    CHECK(error_code_of([&] { BinSpec::full(SampleType::F32, 10); }) == ErrorCode::InvalidArgument);
    CHECK(error_code_of([&] { imghist::parse_backend("gpu"); }) == ErrorCode::InvalidArgument);

    // Batches: mixed types, mask count.
    std::vector<ImageView> mixed = {ok, ImageView::host(px.data(), 4, 4, SampleType::U16)};
    CHECK(error_code_of([&] { imghist::calc_hist_batch(mixed, BinSpec::u8(), opt); }) == ErrorCode::InvalidArgument);
    CHECK(error_code_of([&] { imghist::calc_hist_batch({ok}, BinSpec::u8(), opt, {ok, ok}); }) == ErrorCode::InvalidArgument);
}

TEST_CASE("backend choice: auto picks CUDA only when a device exists, and then the faster backend", "[core][backend]") {
    std::vector<unsigned char> px(100, 3);
    const ImageView v = ImageView::host(px.data(), 10, 10);
    const Histogram h = imghist::calc_hist(v);
    // Whether a device exists, asked of the CUDA runtime directly (not of the library under test).
    int devices = 0;
    const bool have_gpu = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
    (void)cudaGetLastError();
    CHECK(imghist::cuda_available() == have_gpu);
    // Without a device Auto is the CPU; with one, a host image goes to whichever backend was measured faster
    // for calls like it (backend_choice.hpp; its rule is tested in test_backend_choice.cpp), so both occur.
    if (!have_gpu) CHECK(h.backend == Backend::Cpu);
    for (int i = 0; i < 8; ++i) {
        const Histogram again = imghist::calc_hist(v);
        CHECK(again.at(0, 3) == 100);
        CHECK(again.backend == (have_gpu ? again.backend : Backend::Cpu));
        CHECK((again.backend == Backend::Cuda || again.backend == Backend::Cpu));
    }
    CHECK(h.at(0, 3) == 100);
    CHECK(imghist::parse_backend("cpu") == Backend::Cpu);
    CHECK(std::string(imghist::to_string(Backend::Cuda)) == "cuda");
    CHECK(std::string(imghist::version()).size() >= 5);
    CHECK(imghist::built_with_cuda() == bool(IMGHIST_TEST_WITH_CUDA));
    if (!imghist::built_with_cuda()) CHECK(imghist::cuda_device_count() == 0);
    if (!have_gpu) {
        imghist::Options opt;
        opt.backend = Backend::Cuda;
        CHECK(error_code_of([&] { imghist::calc_hist(v, BinSpec::u8(), opt); }) == ErrorCode::NoDevice);
        if (!imghist::built_with_cuda()) {
            // The message says why: not "no device here" but "no CUDA in this build".
            try {
                imghist::calc_hist(v, BinSpec::u8(), opt);
            } catch (const imghist::Error& e) {
                CHECK(std::string(e.what()).find("IMGHIST_WITH_CUDA=OFF") != std::string::npos);
            }
        }
        CHECK(error_code_of([&] { imghist::CudaHistogrammer hg; }) == ErrorCode::NoDevice);
        CHECK(error_code_of([&] { imghist::DeviceImage img(10, 10); }) == ErrorCode::NoDevice);
        CHECK(error_code_of([&] { imghist::calc_hist(ImageView::device(px.data(), 10, 10)); }) == ErrorCode::NoDevice);
    }
}

TEST_CASE("CPU backend gives the same answer with any thread count", "[core][cpu]") {
    TestImage img(1999, 301, SampleType::U8, 3);
    fill_dist<std::uint8_t>(img, Dist::Normal, 4, 255);
    const Histogram ref = plain_reference(img.view, BinSpec::u8());
    for (int t : {1, 2, 3, 7, 16}) {
        imghist::Options opt;
        opt.backend = Backend::Cpu;
        opt.cpu_threads = t;
        REQUIRE(imghist::calc_hist(img.view, BinSpec::u8(), opt).counts == ref.counts);
    }
}

// ---- CUDA-only behaviour ---------------------------------------------------------------------------------------

TEST_CASE("counting route: large pageable images counted by the device and CPU threads at once [cuda]",
          "[core][auto][cuda]") {
    IMGHIST_REQUIRE_CUDA_OR_SKIP();
    // Above policy::Constants::split_min_bytes (4 MiB) a pageable image without a mask is counted by the device
    // (rows [0, g), packed into the pinned chunks and copied piece by piece) and CPU threads (the other
    // rows) in one job; g follows the measured balance from call to call, so repeated calls split at
    // different rows. Every result must equal the plain loop: 8-bit gray (contiguous), 8-bit colour seen
    // through an ROI at x-offset 7 (rows packed one by one), 16-bit with 1024 bins, float with values out of
    // range, a 4K and an 8K gray frame (the 8K frame's device rows fill more than one pinned chunk);
    // thread budgets 3 (one packer), 5 and all. Images larger than the pinned chunks (64 MiB) are not split:
    // the route counts them on the device, their rows streamed through the chunks (every CPU thread packing),
    // each chunk counted as it arrives and refilled once its copies have run — a 16K gray frame and an 8K
    // colour frame through an ROI at x-offset 7, and the same device route of explicit Backend::Cuda calls,
    // checked on every case.
    struct Case {
        TestImage img;
        ImageView view;
        BinSpec spec;
    };
    std::vector<Case> cases;
    // An 8-bit image of w x h pixels and `ch` channels (pitch 0: packed rows), filled from distribution d,
    // seen through the columns [x0, w).
    auto add_u8 = [&](int w, int h, int ch, std::size_t pitch, std::size_t offset, Dist d, std::uint64_t seed, int x0,
                      BinSpec spec) {
        Case& c = cases.emplace_back();
        c.img = TestImage(w, h, SampleType::U8, ch, pitch, offset);
        fill_dist<std::uint8_t>(c.img, d, seed, 255);
        c.view = c.img.view.roi(x0, 0, w - x0, h);
        c.spec = spec;
    };
    add_u8(4096, 4096, 1, 0, 0, Dist::Uniform, 11, 0, BinSpec::u8());
    add_u8(2600, 2300, 3, 2600 * 3 + 64, 5, Dist::Normal, 12, 7, BinSpec::u8());
    {
        Case& c = cases.emplace_back();
        c.img = TestImage(3000, 3000, SampleType::U16, 1);
        fill_dist<std::uint16_t>(c.img, Dist::Poisson, 13, 65535);
        c.view = c.img.view;
        c.spec = BinSpec::even(1024, 0, 65536);
    }
    {
        Case& c = cases.emplace_back();
        c.img = TestImage(2100, 2100, SampleType::F32, 1);
        std::mt19937_64 rng(14);
        c.img.fill<float>([&](int, int, int) { return std::uniform_real_distribution<float>(-0.1f, 1.1f)(rng); });
        c.view = c.img.view;
        c.spec = BinSpec::even(256, 0, 1);
    }
    add_u8(3840, 2160, 1, 0, 0, Dist::Normal, 15, 0, BinSpec::u8());
    add_u8(7680, 4320, 1, 0, 0, Dist::Exponential, 16, 0, BinSpec::u8());
    add_u8(15360, 8640, 1, 0, 0, Dist::Uniform, 17, 0, BinSpec::u8());                        // beyond the chunks
    add_u8(7687, 4320, 3, 7687 * 3 + 32, 3, Dist::Normal, 18, 7, BinSpec::even(64, 0, 256));  // beyond, ROI
    for (const Case& k : cases) {
        REQUIRE(k.view.row_bytes() * static_cast<std::size_t>(k.view.height) >= (std::size_t(4) << 20));
        const Histogram ref = plain_reference(k.view, k.spec);
        INFO(imghist::to_string(k.view.type) << " x" << k.view.channels << " " << k.view.width << "x" << k.view.height);
        for (int threads : {3, 5, 0}) {
            imghist::Options opt;
            opt.cpu_threads = threads;
            opt.backend = Backend::Cuda;  // the route's own entry, as the filters call it
            for (int i = 0; i < 4; ++i) {
                INFO(threads << " threads, call " << i);
                Histogram h = Histogram::zeros(k.spec, k.view.channels);
                imghist::detail::count_route_histogram(k.view, h, opt);
                REQUIRE(h.counts == ref.counts);
                REQUIRE(h.out_of_range == ref.out_of_range);
            }
        }
        for (int i = 0; i < 2; ++i) {  // the device route
            INFO("Backend::Cuda call " << i);
            imghist::Options opt;
            opt.backend = Backend::Cuda;
            const Histogram h = imghist::calc_hist(k.view, k.spec, opt);
            REQUIRE(h.counts == ref.counts);
            REQUIRE(h.out_of_range == ref.out_of_range);
        }
        // Through Auto: a fresh class visits CUDA, the counting route and the CPU, three calls each.
        imghist::detail::host_backend_chooser().reset();
        for (int i = 0; i < 3 * (imghist::detail::BackendChooser::kSamples + 1); ++i) {
            INFO("Auto call " << i);
            const Histogram h = imghist::calc_hist(k.view, k.spec);
            REQUIRE(h.counts == ref.counts);
            REQUIRE(h.out_of_range == ref.out_of_range);
        }
    }
}


TEST_CASE("one-pass overwrite: a captured CUDA graph replays it, with few blocks and with thousands [cuda]",
          "[core][async][cuda]") {
    IMGHIST_REQUIRE_CUDA_OR_SKIP();
    // The kernel zeroes its output and coordinates its blocks through workspace words that every launch
    // leaves as it found them (no per-launch value from the host), so replays of one captured launch stay
    // exact. Stale values are written into the output before every replay.
    TestImage img(641, 479, SampleType::U8, 1, 0, 5);  // packed rows from an odd address
    fill_dist<std::uint8_t>(img, Dist::Uniform, 33, 255);
    const Histogram ref = plain_reference(img.view, BinSpec::u8());
    DeviceCopy d(img.view);
    cudaStream_t stream;
    REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    imghist::DeviceBuffer counts(256 * sizeof(unsigned int));
    imghist::DeviceHistogramView out;
    out.counts = counts.data();
    out.type = imghist::CountType::U32;
    imghist::detail::LaunchShape plan{}, many{};
    many.block_bytes = 256;  // about 1200 blocks: more than are resident at once
    for (const auto& shape : {plan, many}) {
        imghist::CudaHistogrammer hg;
        imghist::detail::set_launch_shape(hg, shape);
        hg.compute(d.view, BinSpec::u8(), out, stream);  // the workspace is allocated outside the capture
        REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
        imghist_test::StreamCapture capture(stream, cudaStreamCaptureModeThreadLocal);
        hg.compute(d.view, BinSpec::u8(), out, stream);
        capture.end();
        const cudaGraphExec_t exec = capture.instantiate();
        for (int rep = 0; rep < 4; ++rep) {
            REQUIRE(cudaMemsetAsync(counts.data(), 0xA5 + rep, 256 * sizeof(unsigned int), stream) == cudaSuccess);
            REQUIRE(cudaGraphLaunch(exec, stream) == cudaSuccess);
            std::vector<unsigned int> host(256);
            REQUIRE(cudaMemcpyAsync(host.data(), counts.data(), 256 * 4, cudaMemcpyDeviceToHost, stream) == cudaSuccess);
            REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
            CAPTURE(rep, shape.block_bytes, imghist::detail::last_kernel(hg));
            for (int b = 0; b < 256; ++b) REQUIRE(host[b] == ref.counts[b]);
        }
    }
    REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("async device API: streams, accumulation, 32-bit overflow flag [cuda]", "[core][async][cuda]") {
    IMGHIST_REQUIRE_CUDA_OR_SKIP();
    TestImage img(1000, 77, SampleType::U8, 1);
    fill_dist<std::uint8_t>(img, Dist::Uniform, 21, 255);
    DeviceCopy d(img.view);
    const Histogram ref = plain_reference(img.view, BinSpec::u8());

    cudaStream_t stream;
    REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    imghist::CudaHistogrammer hg;
    imghist::DeviceBuffer counts(256 * sizeof(unsigned int) * 2), oor(sizeof(unsigned long long)), flag(sizeof(unsigned int));
    imghist::DeviceHistogramView out;
    out.counts = counts.data();
    out.type = imghist::CountType::U32;
    out.out_of_range = oor.as<unsigned long long>();
    // Overwrite mode, repeated: the workspace must come back clean every time.
    for (int rep = 0; rep < 5; ++rep) hg.compute(d.view, BinSpec::u8(), out, stream);
    std::vector<unsigned int> host(256);
    REQUIRE(cudaMemcpyAsync(host.data(), counts.data(), 256 * 4, cudaMemcpyDeviceToHost, stream) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    for (int b = 0; b < 256; ++b) REQUIRE(host[b] == ref.counts[b]);
    CHECK(imghist::detail::last_kernel(hg).find("hist<u8,c1,direct,smem") == 0);

    // Accumulate twice more into the same 32-bit counts.
    imghist::AsyncOptions acc;
    acc.accumulate = true;
    out.overflow_flag = flag.as<unsigned int>();
    flag.fill_zero();
    hg.compute(d.view, BinSpec::u8(), out, stream, acc);
    hg.compute(d.view, BinSpec::u8(), out, stream, acc);
    REQUIRE(cudaMemcpyAsync(host.data(), counts.data(), 256 * 4, cudaMemcpyDeviceToHost, stream) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    for (int b = 0; b < 256; ++b) REQUIRE(host[b] == 3 * ref.counts[b]);
    unsigned int f = 7;
    flag.download(&f, sizeof f);
    CHECK(f == 0);

    // Push one counter to the edge: the next accumulation must raise the flag.
    host[ref.counts[0] ? 0 : 1] = 0xFFFFFFF0u;
    counts.upload(host.data(), 256 * 4);
    hg.compute(d.view, BinSpec::u8(), out, stream, acc);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    flag.download(&f, sizeof f);
    CHECK(f != 0);

    // 32-bit accumulation without a flag is refused; more than 2^32 samples into 32-bit counts too.
    out.overflow_flag = nullptr;
    CHECK(error_code_of([&] { hg.compute(d.view, BinSpec::u8(), out, stream, acc); }) == ErrorCode::InvalidArgument);
    const ImageView huge = ImageView::device(d.view.data, 70000, 70000);
    CHECK(error_code_of([&] { hg.compute(huge, BinSpec::u8(), out, stream); }) == ErrorCode::Overflow);
    CHECK(error_code_of([&] { hg.compute(img.view, BinSpec::u8(), out, stream); }) == ErrorCode::InvalidArgument);
    cudaStreamDestroy(stream);
}

TEST_CASE("workspaces: more streams than a device keeps, and host threads at once, give exact counts [cuda]",
          "[core][async][cuda]") {
    IMGHIST_REQUIRE_CUDA_OR_SKIP();
    // One workspace per (device, stream), at most 16 per device: 24 streams make the oldest ones go while
    // their work may still be queued. Each stream's overwrite-mode results must stay exact.
    TestImage img(1531, 97, SampleType::U8, 1);
    fill_dist<std::uint8_t>(img, Dist::Uniform, 31, 255);
    DeviceCopy d(img.view);
    const Histogram ref = plain_reference(img.view, BinSpec::u8());
    constexpr int kStreams = 24;
    std::vector<cudaStream_t> streams(kStreams);
    for (auto& s : streams) REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    imghist::DeviceBuffer counts(sizeof(unsigned int) * 256 * kStreams);
    imghist::CudaHistogrammer hg;
    for (int round = 0; round < 3; ++round)
        for (int i = 0; i < kStreams; ++i) {
            imghist::DeviceHistogramView out;
            out.counts = counts.as<unsigned int>() + 256 * i;
            out.type = imghist::CountType::U32;
            hg.compute(d.view, BinSpec::u8(), out, streams[static_cast<std::size_t>(i)]);
        }
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    std::vector<unsigned int> host(256 * kStreams);
    REQUIRE(cudaMemcpyAsync(host.data(), counts.data(), host.size() * 4, cudaMemcpyDeviceToHost) == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    for (int i = 0; i < kStreams; ++i)
        for (int b = 0; b < 256; ++b)
            REQUIRE(host[static_cast<std::size_t>(256 * i + b)] == ref.counts[static_cast<std::size_t>(b)]);
    for (auto& s : streams) cudaStreamDestroy(s);

    // Blocking calls on host images from several threads: each takes a private workspace and stream. The
    // image is above the direct-upload size, so its upload goes through the workspace's pinned chunks.
    TestImage big(2500, 1800, SampleType::U8, 1);
    fill_dist<std::uint8_t>(big, Dist::Uniform, 32, 255);
    const Histogram big_ref = plain_reference(big.view, BinSpec::u8());
    imghist::Options o;
    o.backend = imghist::Backend::Cuda;
    std::vector<std::thread> threads;
    std::vector<int> bad(4, 0);
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int rep = 0; rep < 10; ++rep)
                if (imghist::calc_hist(big.view, BinSpec::u8(), o).counts != big_ref.counts)
                    ++bad[static_cast<std::size_t>(t)];
        });
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; ++t) CHECK(bad[static_cast<std::size_t>(t)] == 0);
}

TEST_CASE("blocking calls on device images are ordered after the caller's default-stream work [cuda]",
          "[core][async][cuda]") {
    IMGHIST_REQUIRE_CUDA_OR_SKIP();
    // The image is zero, then the default stream is held up by a host function before a memset writes the
    // real pixels. A call without a stream must see the memset's values, and so must a batch. A first call
    // of each kind sets up the library's storage, so the timed calls allocate nothing (an allocation could
    // itself wait for the default stream and hide a missing order).
    const int w = 1920, h = 1080;
    imghist::DeviceBuffer buf(static_cast<std::size_t>(w) * h);
    buf.fill_zero();
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    auto delay = [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(100)); };
    const ImageView v = ImageView::device(buf.data(), w, h);
    imghist::Options warm;
    warm.backend = Backend::Cuda;
    REQUIRE(imghist::calc_hist(v, BinSpec::u8(), warm).at(0, 0) == static_cast<std::uint64_t>(w) * h);
    REQUIRE(imghist::calc_hist_batch({v}, BinSpec::u8(), warm).at(0).at(0, 0) == static_cast<std::uint64_t>(w) * h);
    for (bool batch : {false, true}) {
        INFO((batch ? "calc_hist_batch" : "calc_hist"));
        const int value = batch ? 201 : 200;
        REQUIRE(cudaLaunchHostFunc(cudaStreamLegacy, delay, nullptr) == cudaSuccess);
        REQUIRE(cudaMemsetAsync(buf.data(), value, buf.size(), cudaStreamLegacy) == cudaSuccess);
        imghist::Options opt;
        opt.backend = Backend::Cuda;
        const Histogram got = batch ? imghist::calc_hist_batch({v}, BinSpec::u8(), opt).at(0)
                                    : imghist::calc_hist(v, BinSpec::u8(), opt);
        CHECK(got.at(0, value) == static_cast<std::uint64_t>(w) * h);
        CHECK(got.at(0, 0) == 0);
    }
}

TEST_CASE("every launch shape gives the same histogram [cuda]", "[core][shapes][cuda]") {
    IMGHIST_REQUIRE_CUDA_OR_SKIP();
    TestImage img(4099, 61, SampleType::U8, 4, 4099 * 4 + 13);
    fill_dist<std::uint8_t>(img, Dist::Normal, 8, 255);
    DeviceCopy d(img.view);
    const Histogram ref = plain_reference(img.view, BinSpec::u8());
    imghist::CudaHistogrammer hg;
    imghist::DeviceBuffer counts(4 * 256 * 8);
    imghist::DeviceHistogramView out;
    out.counts = counts.data();
    out.type = imghist::CountType::U64;
    for (int threads : {64, 256, 1024})
        for (int vectors : {1, 3, 4})
            for (int copies : {1, 4, 32})
                for (int bps : {1, 8}) {
                    imghist::detail::set_launch_shape(hg, {threads, vectors, bps, copies});
                    hg.compute(d.view, BinSpec::u8(), out);
                    std::vector<std::uint64_t> host(4 * 256);
                    counts.download(host.data(), host.size() * 8);
                    CAPTURE(threads, vectors, copies, bps);
                    REQUIRE(host == ref.counts);
                }
}

TEST_CASE("every tile size gives the same histogram [cuda]", "[core][shapes][cuda]") {
    IMGHIST_REQUIRE_CUDA_OR_SKIP();
    // Images that take each path of the tile loop: multi-row tiles (pitch a multiple of 16, so the rows
    // share one alignment; one image large enough for several 1 MiB tiles), rows of different alignments
    // (pitch 531), one long row cut into chunks (contiguous), an ROI starting mid-vector, a mask, and 2- and
    // 4-byte samples.
    TestImage gray(4099, 61, SampleType::U8, 1, 4112);
    fill_dist<std::uint8_t>(gray, Dist::Normal, 31, 255);
    TestImage big(2050, 1500, SampleType::U8, 1, 2064);
    fill_dist<std::uint8_t>(big, Dist::Uniform, 35, 255);
    TestImage odd(517, 301, SampleType::U8, 1, 531);
    fill_dist<std::uint8_t>(odd, Dist::Exponential, 36, 255);
    TestImage mask(1001, 77, SampleType::U8, 1);
    mask.fill<std::uint8_t>([](int x, int y, int) { return ((x * 31 + y * 17) % 5) != 0 ? 1 : 0; });
    TestImage rgb(1000, 333, SampleType::U8, 3);
    fill_dist<std::uint8_t>(rgb, Dist::Uniform, 32, 255);
    TestImage wide(517, 77, SampleType::U16, 1, 1056);
    fill_dist<std::uint16_t>(wide, Dist::Exponential, 33, 65535);
    TestImage flt(333, 101, SampleType::F32, 1, 1344);
    // [-0.1, 1.1): samples below, inside and above the range
    flt.fill<float>([](int x, int y, int) { return static_cast<float>((x * 7919 + y * 104729) % 12007) / 10000.0f - 0.1f; });
    struct Case {
        ImageView view;
        BinSpec spec;
        const ImageView* mask;
    };
    const Case cases[] = {{gray.view, BinSpec::u8(), nullptr},
                          {gray.view.roi(3, 1, 4000, 59), BinSpec::u8_64(), nullptr},
                          {big.view, BinSpec::u8(), nullptr},
                          {odd.view, BinSpec::even(100, 10, 200), nullptr},
                          {rgb.view, BinSpec::u8(), nullptr},
                          {wide.view, BinSpec::even(4096, 0, 65536), nullptr},
                          {flt.view, BinSpec::even(256, 0, 1), nullptr}};
    imghist::CudaHistogrammer hg;
    imghist::DeviceBuffer counts(3 * 4096 * 8), oor(3 * 8);
    imghist::DeviceHistogramView out;
    out.counts = counts.data();
    out.type = imghist::CountType::U64;
    out.out_of_range = oor.as<unsigned long long>();
    auto run_case = [&](const ImageView& view, const BinSpec& spec, const ImageView* host_mask) {
        DeviceCopy d(view);
        std::optional<DeviceCopy> dm;
        imghist::AsyncOptions opt;
        if (host_mask) {
            dm.emplace(*host_mask);
            opt.mask = dm->view;
        }
        const Histogram ref = plain_reference(view, spec, host_mask);
        for (int tile : {1024, 4096, 65536, 512 * 1024, 1 << 20})
            for (int vectors : {1, 3, 4})
                for (int threads : {64, 512}) {
                    imghist::detail::LaunchShape sh;
                    sh.threads = threads;
                    sh.vectors = vectors;
                    sh.tile_bytes = tile;
                    imghist::detail::set_launch_shape(hg, sh);
                    hg.compute(d.view, spec, out, nullptr, opt);
                    std::vector<std::uint64_t> host(ref.counts.size()), host_oor(view.channels);
                    counts.download(host.data(), host.size() * 8);
                    oor.download(host_oor.data(), host_oor.size() * 8);
                    CAPTURE(view.width, view.height, view.channels, view.pitch, spec.bins, host_mask != nullptr, tile,
                            vectors, threads);
                    REQUIRE(imghist::detail::last_launch_shape(hg).tile_bytes == tile);  // an explicit tile size is taken as given
                    REQUIRE(host == ref.counts);
                    REQUIRE(host_oor == ref.out_of_range);
                }
    };
    for (const Case& c : cases) run_case(c.view, c.spec, c.mask);
    const ImageView mask_roi = mask.view.roi(0, 0, 1001, 61);
    run_case(gray.view.roi(7, 0, 1001, 61), BinSpec::u8(), &mask_roi);
}

TEST_CASE("owning device buffers and images [cuda]", "[core][buffer][cuda]") {
    IMGHIST_REQUIRE_CUDA_OR_SKIP();
    TestImage img(123, 45, SampleType::U16, 3);
    fill_dist<std::uint16_t>(img, Dist::Uniform, 2, 65535);
    imghist::DeviceImage di(123, 45, SampleType::U16, 3);
    REQUIRE(di.pitch() >= 123 * 3 * 2);
    di.upload(img.view);
    TestImage back(123, 45, SampleType::U16, 3);
    di.download(back.buf.ptr, back.view.pitch);
    for (int y = 0; y < 45; ++y) REQUIRE(std::memcmp(back.view.row(y), img.view.row(y), img.view.row_bytes()) == 0);
    const Histogram h = imghist::calc_hist(di.view(), BinSpec::even(4096, 0, 65536));
    REQUIRE(h.counts == plain_reference(img.view, BinSpec::even(4096, 0, 65536)).counts);
    imghist::DeviceImage moved = std::move(di);
    CHECK(di.empty());
    CHECK(moved.width() == 123);
    imghist::PinnedBuffer pinned(1 << 20);
    CHECK(pinned.size() == (1u << 20));
}

TEST_CASE("small grids: few blocks, and split siblings, still count every sample [cuda]", "[core][shapes][cuda]") {
    IMGHIST_REQUIRE_CUDA_OR_SKIP();
    TestImage img(1000, 300, SampleType::U16, 1);
    std::mt19937_64 rng(44);
    img.fill<std::uint16_t>([&](int x, int, int) { return x % 4 == 0 ? 12345 : static_cast<int>(rng() & 0xFFFF); });
    DeviceCopy d(img.view);
    imghist::CudaHistogrammer hg;
    imghist::DeviceBuffer counts(65536 * 8);
    imghist::DeviceHistogramView out;
    out.counts = counts.data();
    out.type = imghist::CountType::U64;
    for (const BinSpec& s : {BinSpec::even(65536, 0, 65536), BinSpec::even(1024, 0, 65536)}) {
        const Histogram ref = plain_reference(img.view, s);
        for (int blocks : {1, 2, 3}) {
            imghist::detail::LaunchShape shape;
            shape.max_blocks = blocks;
            imghist::detail::set_launch_shape(hg, shape);
            hg.compute(d.view, s, out);
            std::vector<std::uint64_t> host(s.bins);
            counts.download(host.data(), host.size() * 8);
            CAPTURE(blocks, s.bins, imghist::detail::last_kernel(hg));
            // A split kernel launches whole groups of siblings: at least one group.
            const bool split = imghist::detail::last_kernel(hg).find("split") != std::string::npos;
            REQUIRE(imghist::detail::last_launch_shape(hg).max_blocks <= (split ? std::max(blocks / 2, 1) * 2 : blocks));
            REQUIRE(host == ref.counts);
        }
    }
}

TEST_CASE("merge paths: the one-pass overwrite and the last-block merge under many blocks, one block; u32/u64 "
          "and mapped host results [cuda]",
          "[core][shapes][cuda]") {
    IMGHIST_REQUIRE_CUDA_OR_SKIP();
    struct Geo {
        int w, h;
        std::size_t pad;    // extra samples per row (0: tightly packed)
        std::size_t offset; // first sample's offset from a 64-byte boundary, in samples
        std::size_t align;  // > 0: the pitch is the row rounded up to this many bytes (pad unused), as
                            // cudaMallocPitch and OpenCV's GpuMats lay rows out: the contiguous kernel's rows
    };
    const Geo geos[] = {{1, 1, 0, 0, 0},      {1, 999, 0, 3, 0},    {999, 1, 0, 7, 0},   {17, 13, 5, 1, 0},
                        {640, 480, 0, 0, 0},  {641, 479, 3, 9, 0},  {1000, 1001, 16, 15, 0},
                        {640, 480, 0, 0, 512}, {333, 77, 0, 5, 16}, {1000, 300, 0, 3, 512},
                        {20, 50, 0, 0, 16}};  // 20-byte rows: fewer than two vectors per row, the general kernel
    const Kind kinds[] = {{SampleType::U8, 1, BinSpec::u8()},
                          {SampleType::U8, 3, BinSpec::even(64, 0, 256)},
                          {SampleType::U8, 4, BinSpec::even(100, 10, 250)},
                          {SampleType::U16, 1, BinSpec::even(4096, 0, 65536)},
                          // 8192 counters: wider than the one-pass zeroing, so device outputs are merged too
                          {SampleType::U16, 2, BinSpec::even(4096, 0, 65536)},
                          {SampleType::U16, 1, BinSpec::even(1024, 0, 65536)},  // a shift: the contiguous kernel
                          {SampleType::U16, 3, BinSpec::even(256, 0, 4096)},    // a shift and a range test
                          {SampleType::F32, 1, BinSpec::even(256, 0.0, 1.0)},
                          {SampleType::F32, 3, BinSpec::even(100, -0.5, 1.5)}};  // the rule itself (Arith)
    imghist::CudaHistogrammer hg;
    imghist::DeviceBuffer counts(4 * 4096 * 8), oor(4 * 8);
    std::uint64_t seed = 1;
    // Kernels seen: the contiguous kernel (8-bit, 16-bit and float; contiguous images and rows) and the general
    // one must all have run.
    bool saw_contiguous = false, saw_contiguous_u16 = false, saw_contiguous_f32 = false, saw_general_u8 = false;
    bool saw_rows_u8 = false, saw_rows_u16 = false, saw_rows_f32 = false;
    for (const Geo& g : geos) {
        for (const Kind& k : kinds) {
            // Pads and offsets in samples: views of 2- and 4-byte samples must stay aligned to the sample.
            const std::size_t ss = imghist::sample_size(k.t);
            const std::size_t row = static_cast<std::size_t>(g.w) * k.channels * ss;
            const std::size_t pitch = g.align ? (row + g.align - 1) / g.align * g.align : row + g.pad * ss;
            TestImage img(g.w, g.h, k.t, k.channels, pitch, g.offset * ss);
            std::mt19937_64 rng(seed++);
            // Out-of-range samples included (the f32 range is [0, 1), the 100-bin range [10, 250)).
            if (k.t == SampleType::F32)
                img.fill<float>([&](int, int, int) { return static_cast<float>((rng() % 1100) / 1000.0); });
            else if (k.t == SampleType::U16)
                img.fill<std::uint16_t>([&](int, int, int) { return static_cast<int>(rng() & 0xFFFF); });
            else
                img.fill<std::uint8_t>([&](int x, int, int) { return x % 3 == 0 ? 200 : static_cast<int>(rng() & 0xFF); });
            const Histogram ref = plain_reference(img.view, k.spec);
            DeviceCopy d(img.view);
            // The default plan, the last-block merge over many blocks (256-byte blocks: up to thousands of
            // them), and a single block.
            imghist::detail::LaunchShape plan{}, many{}, one{};
            many.block_bytes = 256;
            one.max_blocks = 1;
            for (const auto& shape : {plan, many, one}) {
                for (imghist::CountType type : {imghist::CountType::U32, imghist::CountType::U64}) {
                    imghist::detail::set_launch_shape(hg, shape);
                    imghist::DeviceHistogramView out;
                    out.counts = counts.data();
                    out.type = type;
                    out.out_of_range = oor.as<unsigned long long>();
                    // Stale values in the outputs: an overwrite that adds to what is there fails below.
                    REQUIRE(cudaMemset(counts.data(), 0xA5, 4 * 4096 * 8) == cudaSuccess);
                    REQUIRE(cudaMemset(oor.data(), 0x5A, 4 * 8) == cudaSuccess);
                    hg.compute(d.view, k.spec, out);
                    const bool contiguous = imghist::detail::last_kernel(hg).find(",contiguous") != std::string::npos;
                    const bool rows = imghist::detail::last_kernel(hg).find(",contiguous-rows") != std::string::npos;
                    if (k.t == SampleType::U8) (contiguous ? saw_contiguous : saw_general_u8) = true;
                    if (k.t == SampleType::U16 && contiguous) saw_contiguous_u16 = true;
                    if (k.t == SampleType::F32 && contiguous) saw_contiguous_f32 = true;
                    if (rows) (k.t == SampleType::U8 ? saw_rows_u8 : k.t == SampleType::U16 ? saw_rows_u16 : saw_rows_f32) = true;
                    const std::size_t n = static_cast<std::size_t>(k.channels) * k.spec.bins;
                    std::vector<std::uint64_t> got(n), got_oor(k.channels);
                    if (type == imghist::CountType::U64) {
                        counts.download(got.data(), n * 8);
                    } else {
                        std::vector<std::uint32_t> g32(n);
                        counts.download(g32.data(), n * 4);
                        got.assign(g32.begin(), g32.end());
                    }
                    oor.download(got_oor.data(), got_oor.size() * 8);
                    CAPTURE(g.w, g.h, g.pad, g.offset, k.channels, imghist::to_string(k.t), k.spec.bins,
                            imghist::detail::last_kernel(hg), imghist::detail::last_launch_shape(hg).max_blocks, type == imghist::CountType::U64);
                    REQUIRE(got == ref.counts);
                    REQUIRE(got_oor == ref.out_of_range);
                }
            }
            imghist::detail::set_launch_shape(hg, {});
            // The blocking call: its last block writes the counts into page-locked host memory.
            const Histogram h = imghist::calc_hist(d.view, k.spec);
            REQUIRE(h.counts == ref.counts);
            REQUIRE(h.out_of_range == ref.out_of_range);
        }
    }
    CHECK(saw_contiguous);
    CHECK(saw_contiguous_u16);
    CHECK(saw_contiguous_f32);
    CHECK(saw_general_u8);
    CHECK(saw_rows_u8);
    CHECK(saw_rows_u16);
    CHECK(saw_rows_f32);
    // 0 x 0: the output is zeroed, nothing is launched; the blocking call returns zeros.
    imghist::DeviceHistogramView out;
    out.counts = counts.data();
    out.type = imghist::CountType::U32;
    std::vector<std::uint32_t> ones(256, 1u);
    counts.upload(ones.data(), 256 * 4);
    const ImageView empty = ImageView::device(nullptr, 0, 0, SampleType::U8, 1);
    hg.compute(empty, BinSpec::u8(), out);
    std::vector<std::uint32_t> back(256, 7u);
    counts.download(back.data(), 256 * 4);
    REQUIRE(back == std::vector<std::uint32_t>(256, 0u));
    const Histogram h0 = imghist::calc_hist(empty, BinSpec::u8());
    REQUIRE(h0.counts == std::vector<std::uint64_t>(256, 0));
}

TEST_CASE("one-pass overwrite into strided and offset outputs: the counters zeroed, the gaps untouched [cuda]",
          "[core][shapes][cuda]") {
    IMGHIST_REQUIRE_CUDA_OR_SKIP();
    // The first block zeroes a device output in 16-byte stores only where every channel's counters start and end
    // on 16-byte boundaries, else counter by counter: strides of bins + 3 and bins + 4 counters, outputs 0, 1 and
    // 2 counters past an aligned address, bin counts that are and are not multiples of four. Words outside the
    // counters (before them and in the gaps between channels) hold a pattern that must survive.
    const Kind kinds[] = {{SampleType::U8, 1, BinSpec::u8()},
                          {SampleType::U8, 3, BinSpec::even(100, 10, 250)},
                          {SampleType::U8, 4, BinSpec::even(10, 5, 250)},
                          {SampleType::U16, 1, BinSpec::even(4096, 0, 65536)},
                          {SampleType::U16, 1, BinSpec::even(1001, 0, 65536)}};
    imghist::CudaHistogrammer hg;
    const std::size_t words = 4 * (4096 + 4) + 2;
    imghist::DeviceBuffer buf(words * 8);
    std::uint64_t seed = 7;
    for (const Kind& k : kinds) {
        TestImage img(640, 480, k.t, k.channels);
        std::mt19937_64 rng(seed++);
        if (k.t == SampleType::U16) img.fill<std::uint16_t>([&](int, int, int) { return static_cast<int>(rng() & 0xFFFF); });
        else img.fill<std::uint8_t>([&](int, int, int) { return static_cast<int>(rng() & 0xFF); });
        const Histogram ref = plain_reference(img.view, k.spec);
        DeviceCopy d(img.view);
        const std::size_t bins = static_cast<std::size_t>(k.spec.bins);
        for (imghist::CountType type : {imghist::CountType::U32, imghist::CountType::U64}) {
            const std::size_t cs = type == imghist::CountType::U64 ? 8 : 4;
            for (std::size_t first : {0, 1, 2}) {
                for (std::size_t stride : {bins, bins + 3, bins + 4}) {
                    std::vector<unsigned char> before(words * cs);
                    for (std::size_t i = 0; i < before.size(); ++i) before[i] = static_cast<unsigned char>(0xA5 ^ i);
                    buf.upload(before.data(), before.size());
                    imghist::DeviceHistogramView out;
                    out.counts = static_cast<unsigned char*>(buf.data()) + first * cs;
                    out.type = type;
                    out.channel_stride = stride;
                    hg.compute(d.view, k.spec, out);
                    std::vector<unsigned char> after(words * cs);
                    buf.download(after.data(), after.size());
                    CAPTURE(k.channels, imghist::to_string(k.t), bins, cs, first, stride, imghist::detail::last_kernel(hg));
                    // Counter j of channel c is word first + c * stride + j.
                    for (std::size_t w = 0; w < words; ++w) {
                        const std::size_t rel = w - first, c = rel / stride, j = rel % stride;
                        const bool counter = w >= first && c < static_cast<std::size_t>(k.channels) && j < bins;
                        std::uint64_t got = 0, was = 0;
                        std::memcpy(&got, after.data() + w * cs, cs);
                        std::memcpy(&was, before.data() + w * cs, cs);
                        CAPTURE(w);
                        if (counter) REQUIRE(got == ref.counts[c * bins + j]);
                        else REQUIRE(got == was);
                    }
                }
            }
        }
    }
}

TEST_CASE("batch paths: equally spaced frames without descriptors, whole images stored, shared images added, "
          "nothing written outside the outputs [cuda]",
          "[core][batch][cuda]") {
    IMGHIST_REQUIRE_CUDA_OR_SKIP();
    // N frames in one device allocation, `gap` bytes between them; outputs in one allocation, `out_gap`
    // counters between them and between channels. Every output is stale before each call, and the gaps must
    // stay as they were.
    struct Case {
        const char* what;
        int n, w, h, channels;
        SampleType t;
        BinSpec spec;
        std::size_t gap;      // bytes between frames
        std::size_t out_gap;  // counters after each channel's bins
        bool reverse;         // views[i] is frame n - 1 - i (a negative stride)
        bool shuffle;         // views in a random order (descriptors)
        bool with_oor;
    };
    const Case cases[] = {
        {"600 gray frames, 256 bins (a tile per frame, counts stored)", 600, 64, 48, 1, SampleType::U8, BinSpec::u8(), 0, 0, false, false, true},
        {"the same with gaps and out-of-range counters", 600, 61, 47, 1, SampleType::U8, BinSpec::u8(), 32, 3, false, false, true},
        {"the same in reverse order", 600, 64, 48, 1, SampleType::U8, BinSpec::u8(), 16, 0, true, false, true},
        {"the same shuffled (descriptors)", 600, 64, 48, 1, SampleType::U8, BinSpec::u8(), 0, 1, false, true, true},
        {"64 bins over 16..240 (folded: zeroed, added)", 600, 64, 48, 1, SampleType::U8, BinSpec::even(64, 16, 240), 0, 0, false, false, true},
        {"3 frames (cut into tiles, shared between blocks)", 3, 640, 480, 1, SampleType::U8, BinSpec::u8(), 0, 0, false, false, true},
        {"colour frames", 300, 40, 30, 3, SampleType::U8, BinSpec::u8(), 0, 2, false, false, true},
        {"16-bit frames, 4096 bins", 300, 50, 40, 1, SampleType::U16, BinSpec::even(4096, 0, 65536), 0, 5, false, false, true},
        {"float frames", 300, 33, 20, 1, SampleType::F32, BinSpec::even(256, 0.0, 1.0), 4, 0, false, false, false},
    };
    imghist::CudaHistogrammer hg;
    std::uint64_t seed = 77;
    for (const Case& k : cases) {
        CAPTURE(k.what);
        const std::size_t ss = imghist::sample_size(k.t);
        const std::size_t frame = static_cast<std::size_t>(k.w) * k.h * k.channels * ss;
        const std::size_t stride = frame + k.gap;
        std::vector<unsigned char> host(stride * k.n, 0);
        std::mt19937_64 rng(seed++);
        std::vector<TestImage> frames;
        frames.reserve(k.n);
        for (int i = 0; i < k.n; ++i) {
            frames.emplace_back(k.w, k.h, k.t, k.channels);
            TestImage& f = frames.back();
            // Every third frame constant (one counter holds everything), the others random with out-of-range
            // samples for the narrower rules.
            const bool constant = i % 3 == 0;
            const int level = static_cast<int>(rng() & 0xFF);
            if (k.t == SampleType::F32)
                f.fill<float>([&](int, int, int) { return constant ? 0.25f : static_cast<float>((rng() % 1100) / 1000.0); });
            else if (k.t == SampleType::U16)
                f.fill<std::uint16_t>([&](int, int, int) { return constant ? level * 200 : static_cast<int>(rng() & 0xFFFF); });
            else
                f.fill<std::uint8_t>([&](int, int, int) { return constant ? level : static_cast<int>(rng() & 0xFF); });
            std::memcpy(host.data() + stride * i, f.buf.ptr, frame);
        }
        imghist::DeviceBuffer images(host.size());
        images.upload(host.data(), host.size());
        std::vector<int> order(k.n);
        for (int i = 0; i < k.n; ++i) order[i] = k.reverse ? k.n - 1 - i : i;
        if (k.shuffle) std::shuffle(order.begin(), order.end(), rng);
        std::vector<ImageView> views(k.n);
        for (int i = 0; i < k.n; ++i)
            views[i] = ImageView::device(static_cast<const unsigned char*>(images.data()) + stride * order[i], k.w, k.h,
                                         k.t, k.channels);
        const std::size_t ch_stride = k.spec.bins + k.out_gap;
        const std::size_t per = ch_stride * k.channels;  // counters per output
        for (imghist::CountType type : {imghist::CountType::U32, imghist::CountType::U64}) {
            const std::size_t cs = type == imghist::CountType::U64 ? 8 : 4;
            imghist::DeviceBuffer counts(per * k.n * cs), oor(2 * 8 * k.channels * k.n);
            std::vector<imghist::DeviceHistogramView> outs(k.n);
            for (int i = 0; i < k.n; ++i) {
                outs[i].counts = static_cast<unsigned char*>(counts.data()) + per * i * cs;
                outs[i].type = type;
                outs[i].channel_stride = ch_stride;
                // Out-of-range counters two channel-sets apart: the second set is a gap.
                if (k.with_oor) outs[i].out_of_range = oor.as<unsigned long long>() + 2 * k.channels * i;
            }
            imghist::detail::LaunchShape plan{}, one{};
            one.max_blocks = 1;  // every image held whole by the one block
            for (const auto& shape : {plan, one}) {
                imghist::detail::set_launch_shape(hg, shape);
                REQUIRE(cudaMemset(counts.data(), 0xA5, per * k.n * cs) == cudaSuccess);
                REQUIRE(cudaMemset(oor.data(), 0x5A, 2 * 8 * k.channels * k.n) == cudaSuccess);
                hg.compute_batch(views.data(), views.size(), k.spec, outs.data());
                std::vector<unsigned char> got(per * k.n * cs);
                std::vector<std::uint64_t> got_oor(2 * k.channels * k.n);
                counts.download(got.data(), got.size());
                oor.download(got_oor.data(), got_oor.size() * 8);
                CAPTURE(type == imghist::CountType::U64, imghist::detail::last_kernel(hg), shape.max_blocks);
                for (int i = 0; i < k.n; ++i) {
                    CAPTURE(i, order[i]);
                    const Histogram ref = plain_reference(frames[order[i]].view, k.spec);
                    for (int c = 0; c < k.channels; ++c) {
                        for (std::size_t j = 0; j < ch_stride; ++j) {
                            const unsigned char* w = got.data() + (per * i + c * ch_stride + j) * cs;
                            std::uint64_t v = 0;
                            std::memcpy(&v, w, cs);
                            if (j < static_cast<std::size_t>(k.spec.bins)) {
                                REQUIRE(v == ref.counts[c * k.spec.bins + j]);
                            } else {
                                const std::uint64_t stale = cs == 8 ? 0xA5A5A5A5A5A5A5A5ull : 0xA5A5A5A5ull;
                                REQUIRE(v == stale);  // a gap between channels: untouched
                            }
                        }
                        if (k.with_oor) {
                            REQUIRE(got_oor[2 * k.channels * i + c] == ref.out_of_range[c]);
                            REQUIRE(got_oor[2 * k.channels * i + k.channels + c] == 0x5A5A5A5A5A5A5A5Aull);
                        }
                    }
                }
            }
            imghist::detail::set_launch_shape(hg, {});
            // Accumulation over the previous results (64-bit only: 32-bit needs an overflow flag): twice the
            // counts.
            if (type == imghist::CountType::U64) {
                hg.compute_batch(views.data(), views.size(), k.spec, outs.data(), nullptr, /*accumulate=*/true);
                std::vector<std::uint64_t> got(per * k.n);
                counts.download(got.data(), got.size() * 8);
                for (int i = 0; i < k.n; ++i) {
                    const Histogram ref = plain_reference(frames[order[i]].view, k.spec);
                    for (int c = 0; c < k.channels; ++c)
                        for (int j = 0; j < k.spec.bins; ++j)
                            REQUIRE(got[per * i + c * ch_stride + j] == 2 * ref.counts[c * k.spec.bins + j]);
                }
            }
        }
    }
}
