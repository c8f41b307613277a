// libFuzzer target: the JPEG decoder, both entry points: to pixels (decode_image) and to planes at their
// stored sampling (decode_jpeg_planes, the luma-equalization path), which must agree on the size.
#include "io/codecs/codec_jpeg.hpp"
#include "fuzz_decoder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    cli::Image img = fuzz::decode(data, size, cli::Format::Jpeg, "fuzz.jpg");
    cli::Bytes bytes(data, data + size);
    if (!cli::jpeg_planar_ok(bytes)) return 0;
    try {
        cli::JpegPlanes p = cli::decode_jpeg_planes(bytes, "fuzz.jpg", fuzz::options());
        if (!img.empty() && (p.width != img.width() || p.height != img.height())) std::abort();
        unsigned s = 0;
        for (auto& pl : p.planes)
            for (auto b : pl.data) s += b;
        volatile unsigned sink = s;
        (void)sink;
    } catch (const cli::Error&) {
    }
    return 0;
}
