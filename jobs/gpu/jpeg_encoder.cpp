#include "gpu/jpeg_encoder.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "gpu/jpeg_blocks.hpp"
#include "gpu/jpeg_kernels.hpp"
#include "io/errors.hpp"

namespace cli {

namespace jb = jpeg_blocks;
namespace jk = jpeg_kernels;

namespace {

/// Images of one launch: the transform pass's grid has one row per image.
constexpr std::size_t kImagesPerLaunch = 65535;

/// Makes a buffer hold at least `bytes`, with half again as much room when it must grow: a device buffer's
/// reallocation frees the old one, which waits for the whole device (the decoder too), so buffers sized by
/// varying rounds grow a few times at the start of a run, not round after round.
template <class Buffer>
void room_for(Buffer& b, std::size_t bytes) {
    if (bytes > b.size()) b.reserve(bytes + bytes / 2);
}

/// The frame of a planar image; Error(InvalidArgument) for one the encoder does not code (not planar, a
/// sampling without factors, a size JPEG cannot hold, planes other than libjpeg's sizes).
jb::Frame frame_of(const GpuDecoded& d) {
    int h = 1, v = 1;
    if (d.format != nv::kOutputYUV || !luma_sampling(d.subsampling, h, v))
        throw Error(ErrorCode::InvalidArgument, "JPEG encoder: an image is not in planes of a sampling it codes");
    if (d.width <= 0 || d.height <= 0 || d.width > 65535 || d.height > 65535)
        throw Error(ErrorCode::InvalidArgument, "JPEG encoder: " + std::to_string(d.width) + "x" +
                                                    std::to_string(d.height) + " is not a JPEG's size");
    jb::Frame f = jb::make_frame(d.width, d.height, h, v);
    for (int c = 0; c < 3; ++c) {
        // The kernels read every visible sample of each plane: the planes must be the sizes they expect.
        if (d.plane_w[c] != f.width[c] || d.plane_h[c] != f.height[c])
            throw Error(ErrorCode::InvalidArgument, "JPEG encoder: plane " + std::to_string(c) + " is " +
                                                        std::to_string(d.plane_w[c]) + "x" + std::to_string(d.plane_h[c]) +
                                                        ", not " + std::to_string(f.width[c]) + "x" + std::to_string(f.height[c]));
        f.plane[c] = d.image.channel[c];
        f.pitch[c] = static_cast<std::uint32_t>(d.image.pitch[c]);
    }
    return f;
}

}  // namespace

struct GpuJpegEncoder::Impl {
    const nv::DriverApi& cu;
    const std::uint64_t blocks_per_launch;
    int regrown = 0;
    std::map<int, jb::QuantTables> quant_by_quality;
    imghist::DeviceBuffer codes, frames, quant, coef, nonzero, ac_bits, run_start, image_bits, word_start, overflow, words, out, out_size;
    imghist::PinnedBuffer readback, staging;

    Impl(const nv::DriverApi& api, std::uint64_t blocks) : cu(api), blocks_per_launch(blocks) {}

    const jb::QuantTables& quant_tables(int q) {
        auto it = quant_by_quality.find(q);
        if (it == quant_by_quality.end()) it = quant_by_quality.emplace(q, jb::quant_tables(q)).first;
        return it->second;
    }

    void sync(nv::Stream s) {
        if (cu.StreamSynchronize(s) != 0) throw Error(ErrorCode::Cuda, "JPEG encoder: the device failed");
    }

    void download(void* host, const void* device, std::size_t bytes, nv::Stream s) {
        if (bytes && cu.MemcpyDtoHAsync(host, reinterpret_cast<unsigned long long>(device), bytes, s) != 0)
            throw Error(ErrorCode::Cuda, "JPEG encoder: copying the coded data back failed");
    }

    /// The sizes the last passes wrote: word_start (n + 1), out_size (n), overflow, into `readback`.
    void read_sizes(std::size_t n, nv::Stream s) {
        room_for(readback, (2 * n + 2) * sizeof(std::uint64_t));
        auto* r = readback.as<std::uint64_t>();
        download(r, word_start.data(), (n + 1) * sizeof(std::uint64_t), s);
        download(r + n + 1, out_size.data(), n * sizeof(std::uint64_t), s);
        download(r + 2 * n + 1, overflow.data(), sizeof(std::uint32_t), s);
        sync(s);
    }
    bool overflowed(std::size_t n) { return *reinterpret_cast<const std::uint32_t*>(readback.as<std::uint64_t>() + 2 * n + 1) != 0; }

    void launch(const std::vector<Input>& in, std::vector<jb::Frame>& fr, std::size_t from, nv::Stream s,
                std::vector<Bytes>& result);
};

GpuJpegEncoder::GpuJpegEncoder(const nv::DriverApi& cu, nv::Stream stream, std::uint64_t blocks_per_launch)
    : impl_(std::make_unique<Impl>(cu, blocks_per_launch)) {
    const jb::CodeTables t = jb::code_tables();
    impl_->codes.reserve(sizeof t);
    impl_->codes.upload(&t, sizeof t, stream);
    impl_->sync(stream);  // t is gone after this call
}

GpuJpegEncoder::~GpuJpegEncoder() = default;

int GpuJpegEncoder::regrown() const noexcept { return impl_->regrown; }

void GpuJpegEncoder::warm_up(nv::Stream stream) {
    imghist::DeviceBuffer blank(16 * 16 + 2 * 8 * 8);
    blank.fill_zero(stream);
    GpuDecoded d;
    d.width = d.height = 16;
    d.subsampling = nv::kCss420;
    d.format = nv::kOutputYUV;
    for (int c = 0; c < 3; ++c) {
        d.plane_w[c] = d.plane_h[c] = c == 0 ? 16 : 8;
        d.image.channel[c] = blank.as<unsigned char>() + (c == 0 ? 0 : 256 + 64 * (c - 1));
        d.image.pitch[c] = static_cast<std::size_t>(d.plane_w[c]);
    }
    std::vector<Bytes> files;
    encode({Input{&d, 90, 0}}, stream, files);  // waits for the stream: `blank` may go
}

void GpuJpegEncoder::encode(const std::vector<Input>& in, nv::Stream stream, std::vector<Bytes>& out) {
    // Every image is checked before anything is launched.
    std::vector<jb::Frame> frames;
    for (const Input& x : in) {
        frames.push_back(frame_of(*x.image));
        if (x.quality < 1 || x.quality > 100)
            throw Error(ErrorCode::InvalidArgument, "JPEG encoder: quality " + std::to_string(x.quality) + " is outside 1-100");
    }
    out.assign(in.size(), Bytes());
    std::size_t from = 0;
    while (from < in.size()) {
        // As many images as a launch holds (at least one).
        std::size_t to = from;
        std::uint64_t blocks = 0;
        while (to < in.size() && to - from < kImagesPerLaunch) {
            const std::uint64_t n = std::uint64_t{frames[to].mcus} * static_cast<std::uint64_t>(frames[to].blocks_per_mcu);
            if (to > from && blocks + n > impl_->blocks_per_launch) break;
            blocks += n;
            ++to;
        }
        std::vector<jb::Frame> group(frames.begin() + static_cast<std::ptrdiff_t>(from), frames.begin() + static_cast<std::ptrdiff_t>(to));
        try {
            impl_->launch(in, group, from, stream, out);
        } catch (...) {
            // Nothing of this launch may still read the images or the buffers once the caller has them back.
            impl_->cu.StreamSynchronize(stream);
            throw;
        }
        from = to;
    }
}

void GpuJpegEncoder::Impl::launch(const std::vector<Input>& in, std::vector<jb::Frame>& fr, std::size_t from, nv::Stream s,
                                  std::vector<Bytes>& result) {
    const std::size_t n = fr.size();
    std::vector<jb::QuantTables> tables;
    std::map<int, int> table_of_quality;
    std::uint64_t blocks = 0, hint = 0;
    std::uint32_t most = 0;
    for (std::size_t i = 0; i < n; ++i) {
        jb::Frame& f = fr[i];
        const int quality = in[from + i].quality;
        const auto q = table_of_quality.find(quality);
        if (q == table_of_quality.end()) {
            f.quant = static_cast<int>(tables.size());
            tables.push_back(quant_tables(quality));
            table_of_quality.emplace(quality, f.quant);
        } else {
            f.quant = q->second;
        }
        f.first_block = blocks;
        const std::uint32_t nb = f.mcus * static_cast<std::uint32_t>(f.blocks_per_mcu);
        blocks += nb;
        most = std::max(most, nb);
        hint += in[from + i].size_hint + 4096;
    }
    room_for(frames, n * sizeof(jb::Frame));
    frames.upload(fr.data(), n * sizeof(jb::Frame), s);
    room_for(quant, tables.size() * sizeof(jb::QuantTables));
    quant.upload(tables.data(), tables.size() * sizeof(jb::QuantTables), s);
    room_for(coef, blocks * 64 * sizeof(std::int16_t));
    room_for(nonzero, blocks * sizeof(std::uint64_t));
    room_for(ac_bits, blocks * sizeof(std::uint32_t));
    room_for(run_start, n * jk::kRunThreads * sizeof(std::uint64_t));
    room_for(image_bits, n * sizeof(std::uint64_t));
    room_for(word_start, (n + 1) * sizeof(std::uint64_t));
    room_for(out_size, n * sizeof(std::uint64_t));
    room_for(overflow, sizeof(std::uint32_t));
    // Room for the coded words: what the inputs' sizes suggest (zeroed for this launch); a launch that needs
    // more grows it and codes again.
    const std::size_t room = static_cast<std::size_t>((hint + 3) / 4 * 4);
    room_for(words, room);
    room_for(out, 2 * words.size());

    jk::Batch b;
    b.images = static_cast<int>(n);
    b.most_blocks = most;
    b.frames = frames.as<jb::Frame>();
    b.quant = quant.as<jb::QuantTables>();
    b.codes = codes.as<jb::CodeTables>();
    b.coef = coef.as<std::int16_t>();
    b.nonzero = nonzero.as<std::uint64_t>();
    b.ac_bits = ac_bits.as<std::uint32_t>();
    b.run_start = run_start.as<std::uint64_t>();
    b.image_bits = image_bits.as<std::uint64_t>();
    b.word_start = word_start.as<std::uint64_t>();
    b.overflow = overflow.as<std::uint32_t>();
    b.words = words.as<std::uint32_t>();
    b.capacity_words = room / 4;
    b.out = out.as<std::uint8_t>();
    b.out_size = out_size.as<std::uint64_t>();
    jk::enqueue_zero_words(b, s);
    jk::enqueue_all(b, s);
    read_sizes(n, s);
    if (overflowed(n)) {
        ++regrown;
        const std::uint64_t need = readback.as<std::uint64_t>()[n];  // words
        room_for(words, static_cast<std::size_t>(need) * 4);
        room_for(out, 2 * words.size());
        b.words = words.as<std::uint32_t>();
        b.capacity_words = need;
        b.out = out.as<std::uint8_t>();
        jk::enqueue_zero_words(b, s);
        jk::enqueue_code(b, s);
        read_sizes(n, s);
        if (overflowed(n)) throw Error(ErrorCode::Cuda, "JPEG encoder: the coded data outgrew the room made for it");
    }
    // Each image's bytes, one after the other, into pinned memory; then its file.
    const std::uint64_t* r = readback.as<std::uint64_t>();
    const std::vector<std::uint64_t> word_at(r, r + n), size(r + n + 1, r + 2 * n + 1);
    std::size_t total = 0;
    for (std::uint64_t z : size) total += static_cast<std::size_t>(z);
    room_for(staging, std::max<std::size_t>(total, 1));
    std::size_t at = 0;
    for (std::size_t i = 0; i < n; ++i) {
        download(staging.as<std::uint8_t>() + at, out.as<std::uint8_t>() + 8 * word_at[i], static_cast<std::size_t>(size[i]), s);
        at += static_cast<std::size_t>(size[i]);
    }
    sync(s);
    at = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const jb::Frame& f = fr[i];
        const int hs[3] = {f.h, 1, 1}, vs[3] = {f.v, 1, 1};
        result[from + i] = baseline_jpeg(f.width[0], f.height[0], hs, vs, in[from + i].quality,
                                         staging.as<std::uint8_t>() + at, static_cast<std::size_t>(size[i]));
        at += static_cast<std::size_t>(size[i]);
    }
}

}  // namespace cli
