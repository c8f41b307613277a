// libFuzzer target: the BMP decoder (see fuzz_decoder.hpp).
#include "fuzz_decoder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::decode(data, size, cli::Format::Bmp, "fuzz.bmp");
    return 0;
}
