// libFuzzer target: raw sample files (hist --raw). The first bytes choose the sample type, the bin count and
// the range (any doubles, infinities and NaN included); the rest is the file. Refusals must be
// imghist::Error; an accepted file's counts plus out-of-range must equal its sample count (NaN and values
// outside the range are out of range).
#include <cstdlib>
#include <cstring>

#include "io/errors.hpp"
#include "io/raw.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 19) return 0;
    static const imghist::SampleType types[] = {imghist::SampleType::U8, imghist::SampleType::U16,
                                                 imghist::SampleType::I32, imghist::SampleType::F32};
    const imghist::SampleType type = types[data[0] % 4];
    const int bins = 1 + (data[1] | (data[2] << 8));
    double low = 0, high = 0;
    std::memcpy(&low, data + 3, 8);
    std::memcpy(&high, data + 11, 8);
    const cli::Bytes file(data + 19, data + size);
    try {
        const imghist::BinSpec spec = imghist::BinSpec::even(bins, low, high);
        imghist::Options cpu;
        cpu.backend = imghist::Backend::Cpu;
        cpu.cpu_threads = 1;
        const cli::HistResult r = cli::raw_histogram(file, "fuzz.raw", type, spec, cpu);
        std::uint64_t total = r.out_of_range();
        for (auto& c : r.channels)
            for (auto v : c.counts) total += v;
        if (total != file.size() / imghist::sample_size(type)) std::abort();
    } catch (const cli::Error&) {
    }
    return 0;
}
