// A program built against an installed imghist (find_package(imghist)): histograms the bytes of a file as
// an 8-bit image and prints the backend used and the 64-bin histogram.
#include <imghist/imghist.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s FILE\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1], std::ios::binary);
    std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.empty()) {
        std::fprintf(stderr, "%s: cannot read or empty\n", argv[1]);
        return 1;
    }
    const auto view = imghist::ImageView::host(bytes.data(), static_cast<int>(bytes.size()), 1);
    const imghist::Histogram h = imghist::calc_hist(view, imghist::BinSpec::u8_64());
    std::printf("imghist %s, backend %s, %zu bytes\n", imghist::version(), imghist::to_string(h.backend), bytes.size());
    for (int b = 0; b < h.bins(); ++b) std::printf("%llu%c", static_cast<unsigned long long>(h.at(0, b)), b + 1 < h.bins() ? ' ' : '\n');
    return h.total(0) == bytes.size() ? 0 : 1;
}
