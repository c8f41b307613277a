// libFuzzer target: the PNM decoder (see fuzz_decoder.hpp).
#include "fuzz_decoder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::decode(data, size, cli::Format::Pnm, "fuzz.pnm");
    return 0;
}
