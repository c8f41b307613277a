// Test helper: decodes one image file with the program's decoders (decode_image, as `imghist` does) and
// writes "WIDTH HEIGHT CHANNELS DEPTH\n" and the samples (interleaved, 16-bit ones little-endian) to
// standard output, for comparisons with an independent reader (tests/cli/png_vs_pil.py). A refusal prints
// the error on standard error and exits 1.
#include <cstdio>
#include <exception>

#include "io/codecs/codec.hpp"
#include "io/errors.hpp"
#include "io/fileio.hpp"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: imghist_decode_dump FILE\n");
        return 2;
    }
    try {
        const cli::DecodeOptions opt;
        const cli::Image img = cli::decode_image(cli::read_image_file(argv[1], opt.limits), argv[1], opt);
        std::printf("%d %d %d %d\n", img.width(), img.height(), img.channels(), img.depth());
        std::fwrite(img.data(), 1, img.bytes(), stdout);
        return std::fflush(stdout) == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", cli::user_message(e).c_str());
        return 1;
    }
}
