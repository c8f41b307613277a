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

/// Y's sampling of a planar image (Cb and Cr are 1 x 1 in every sampling nvJPEG decodes).
bool luma_sampling(nv::ChromaSubsampling css, int& h, int& v) {
    switch (css) {
        case nv::kCss444: h = 1, v = 1; return true;
        case nv::kCss422: h = 2, v = 1; return true;
        case nv::kCss420: h = 2, v = 2; return true;
        case nv::kCss440: h = 1, v = 2; return true;
        case nv::kCss411: h = 4, v = 1; return true;
        case nv::kCss410: h = 4, v = 2; return true;
        default: return false;
    }
}

/// Images of one launch together hold at most this many blocks (a block takes 140 bytes of device memory); one image of more goes alone (--max-pixels bounds it).
constexpr std::uint64_t kBlocksPerLaunch = std::uint64_t{1} << 22;


/// Makes a buffer hold at least `bytes`, with half again as much room when it must grow: a device buffer's
/// reallocation frees the old one, which waits for the whole device (the decoder too), so buffers sized by
/// varying rounds grow a few times at the start of a run, not round after round.
template <class Buffer>
void room_for(Buffer& b, std::size_t bytes) {
    if (bytes > b.size()) b.reserve(bytes + bytes / 2);
}

}  // namespace

struct GpuJpegEncoder::Impl {
    const nv::DriverApi& cu;
    std::map<int, jb::QuantTables> quant_by_quality;
    imghist::DeviceBuffer codes, frames, quant, coef, nonzero, ac_bits, run_start, image_bits, word_start, overflow, words, out, out_size;
    imghist::PinnedBuffer readback, staging;

    explicit Impl(const nv::DriverApi& api) : cu(api) {}

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
    void read_sizes(int n, nv::Stream s) {
        const std::size_t count = static_cast<std::size_t>(n);
        room_for(readback, (2 * count + 2) * sizeof(std::uint64_t));
        auto* r = readback.as<std::uint64_t>();
        download(r, word_start.data(), (count + 1) * sizeof(std::uint64_t), s);
        download(r + count + 1, out_size.data(), count * sizeof(std::uint64_t), s);
        download(r + 2 * count + 1, overflow.data(), sizeof(std::uint32_t), s);
        sync(s);
    }

    void launch(const std::vector<Input>& in, std::size_t from, std::size_t to, nv::Stream s, std::vector<Bytes>& out);
};

GpuJpegEncoder::GpuJpegEncoder(const nv::DriverApi& cu, nv::Stream stream) : impl_(std::make_unique<Impl>(cu)) {
    const jb::CodeTables t = jb::code_tables();
    impl_->codes.reserve(sizeof t);
    impl_->codes.upload(&t, sizeof t, stream);
    impl_->sync(stream);  // t is gone after this call
}

GpuJpegEncoder::~GpuJpegEncoder() = default;

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
    out.assign(in.size(), Bytes());
    std::size_t from = 0;
    while (from < in.size()) {
        // As many images as kBlocksPerLaunch holds (at least one).
        std::size_t to = from;
        std::uint64_t blocks = 0;
        while (to < in.size()) {
            const GpuDecoded& d = *in[to].image;
            int h = 1, v = 1;
            if (d.format != nv::kOutputYUV || !luma_sampling(d.subsampling, h, v) || d.width <= 0 || d.height <= 0)
                throw Error(ErrorCode::InvalidArgument, "JPEG encoder: an image is not in planes of a sampling it codes");
            const jb::Frame f = jb::make_frame(d.width, d.height, h, v);
            const std::uint64_t n = std::uint64_t{f.mcus} * static_cast<std::uint64_t>(f.blocks_per_mcu);
            if (to > from && blocks + n > kBlocksPerLaunch) break;
            blocks += n;
            ++to;
        }
        impl_->launch(in, from, to, stream, out);
        from = to;
    }
}

void GpuJpegEncoder::Impl::launch(const std::vector<Input>& in, std::size_t from, std::size_t to, nv::Stream s,
                                  std::vector<Bytes>& result) {
    const int n = static_cast<int>(to - from);
    std::vector<jb::Frame> fr;
    std::vector<jb::QuantTables> tables;
    std::map<int, int> table_of_quality;
    std::uint64_t blocks = 0, hint = 0;
    std::uint32_t most = 0;
    for (std::size_t i = from; i < to; ++i) {
        const GpuDecoded& d = *in[i].image;
        int h = 1, v = 1;
        luma_sampling(d.subsampling, h, v);
        jb::Frame f = jb::make_frame(d.width, d.height, h, v);
        for (int c = 0; c < 3; ++c) {
            f.plane[c] = static_cast<const std::uint8_t*>(d.image.channel[c]);
            f.pitch[c] = static_cast<std::uint32_t>(d.image.pitch[c]);
        }
        const auto q = table_of_quality.find(in[i].quality);
        if (q == table_of_quality.end()) {
            f.quant = static_cast<int>(tables.size());
            tables.push_back(quant_tables(in[i].quality));
            table_of_quality.emplace(in[i].quality, f.quant);
        } else {
            f.quant = q->second;
        }
        f.first_block = blocks;
        const std::uint32_t nb = f.mcus * static_cast<std::uint32_t>(f.blocks_per_mcu);
        blocks += nb;
        most = std::max(most, nb);
        hint += in[i].size_hint + 4096;
        fr.push_back(f);
    }
    const std::size_t count = static_cast<std::size_t>(n);
    room_for(frames, fr.size() * sizeof(jb::Frame));
    frames.upload(fr.data(), fr.size() * sizeof(jb::Frame), s);
    room_for(quant, tables.size() * sizeof(jb::QuantTables));
    quant.upload(tables.data(), tables.size() * sizeof(jb::QuantTables), s);
    room_for(coef, blocks * 64 * sizeof(std::int16_t));
    room_for(nonzero, blocks * sizeof(std::uint64_t));
    room_for(ac_bits, blocks * sizeof(std::uint32_t));
    room_for(run_start, count * jk::kRunThreads * sizeof(std::uint64_t));
    room_for(image_bits, count * sizeof(std::uint64_t));
    room_for(word_start, (count + 1) * sizeof(std::uint64_t));
    room_for(out_size, count * sizeof(std::uint64_t));
    room_for(overflow, sizeof(std::uint32_t));
    // Room for the coded words: what the inputs' sizes suggest; a batch that needs more grows it and codes
    // again.
    room_for(words, (hint + 3) / 4 * 4);
    room_for(out, 2 * words.size());
    words.fill_zero(s);

    jk::Batch b;
    b.images = n;
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
    b.capacity_words = words.size() / 4;
    b.out = out.as<std::uint8_t>();
    b.out_size = out_size.as<std::uint64_t>();
    jk::enqueue_all(b, s);
    read_sizes(n, s);
    const std::uint64_t* r = readback.as<std::uint64_t>();
    if (*reinterpret_cast<const std::uint32_t*>(r + 2 * count + 1) != 0) {
        const std::uint64_t need = r[count];  // words
        room_for(words, static_cast<std::size_t>(need) * 4);
        room_for(out, 2 * words.size());
        words.fill_zero(s);
        b.words = words.as<std::uint32_t>();
        b.capacity_words = words.size() / 4;
        b.out = out.as<std::uint8_t>();
        jk::enqueue_code(b, s);
        read_sizes(n, s);
        r = readback.as<std::uint64_t>();
        if (*reinterpret_cast<const std::uint32_t*>(r + 2 * count + 1) != 0)
            throw Error(ErrorCode::Cuda, "JPEG encoder: the coded data outgrew the room made for it");
    }
    // Each image's bytes, one after the other, into pinned memory; then its file.
    std::vector<std::uint64_t> word_at(r, r + count), size(r + count + 1, r + 2 * count + 1);
    std::size_t total = 0;
    for (std::uint64_t z : size) total += static_cast<std::size_t>(z);
    room_for(staging, std::max<std::size_t>(total, 1));
    std::size_t at = 0;
    for (std::size_t i = 0; i < count; ++i) {
        download(staging.as<std::uint8_t>() + at, out.as<std::uint8_t>() + 8 * word_at[i], static_cast<std::size_t>(size[i]), s);
        at += static_cast<std::size_t>(size[i]);
    }
    sync(s);
    at = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const Input& x = in[from + i];
        const jb::Frame& f = fr[i];
        const int hs[3] = {f.h, 1, 1}, vs[3] = {f.v, 1, 1};
        result[from + i] = baseline_jpeg(x.image->width, x.image->height, hs, vs, x.quality,
                                         staging.as<std::uint8_t>() + at, static_cast<std::size_t>(size[i]));
        at += static_cast<std::size_t>(size[i]);
    }
}

}  // namespace cli
