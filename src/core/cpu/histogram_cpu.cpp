// The CPU backend: rows are split into bands, run by the CPU side's parallel_for; each worker counts into its own
// 32-bit histogram (a band never holds 2^32 samples: bands are capped below that), then the bands are
// summed into the caller's 64-bit counts.
#include "core/cpu/histogram_cpu.hpp"

#include "core/parallel_for.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace imghist::detail {

namespace {

template <class T>
inline T load(const std::uint8_t* p) noexcept {
    T v;
    std::memcpy(&v, p, sizeof(T));  // rows of an ROI are aligned to the sample size, but stay strict
    return v;
}

// Slot per evaluation mode (binning.hpp's functions, the kernels' too): the bin, or `bins` when out of range.
template <class T>
struct ArithBin {
    const BinParams& p;
    unsigned int operator()(T v) const noexcept {
        return arith_slot(static_cast<double>(v), p.low, p.high, p.a, p.b, p.bins);
    }
};

template <class T>
struct ShiftBin {
    int shift, bins;
    unsigned int operator()(T v) const noexcept { return shift_slot(static_cast<std::uint32_t>(v), shift, bins); }
};

struct ScaleBin {
    float scale, high_f;
    int bins;
    unsigned int operator()(float v) const noexcept { return scale_f32_slot(v, scale, high_f, bins); }
};

struct LutBin {
    const std::int16_t* lut;  // Lut8 table with `bins` (not -1) for out of range
    unsigned int operator()(std::uint8_t v) const noexcept { return static_cast<unsigned int>(lut[v]); }
};

// Counts rows [y0, y1) into hist (C * bins, 32-bit) and oor.
template <class T, class BinFn>
void count_band(const ImageView& img, const ImageView* mask, int bins, BinFn bin, int y0, int y1,
                std::uint32_t* hist, std::uint64_t* oor) {
    const int C = img.channels;
    for (int y = y0; y < y1; ++y) {
        const std::uint8_t* row = img.row(y);
        const std::uint8_t* mrow = mask ? mask->row(y) : nullptr;
        if (C == 1 && !mrow) {
            for (int x = 0; x < img.width; ++x) {
                const unsigned int b = bin(load<T>(row + sizeof(T) * x));
                if (b < static_cast<unsigned int>(bins)) ++hist[b]; else ++oor[0];
            }
            continue;
        }
        for (int x = 0; x < img.width; ++x) {
            if (mrow && mrow[x] == 0) continue;
            const std::uint8_t* px = row + sizeof(T) * static_cast<std::size_t>(x) * C;
            for (int c = 0; c < C; ++c) {
                const unsigned int b = bin(load<T>(px + sizeof(T) * c));
                if (b < static_cast<unsigned int>(bins)) ++hist[c * bins + b]; else ++oor[c];
            }
        }
    }
}

// Gray 8-bit without mask: the values themselves are counted (no bin lookup per pixel) into eight
// interleaved sub-histograms, fed by 8-byte loads, so that runs of equal values do not serialise on one
// counter (store-to-load forwarding on the same address); the bins are applied once per value at the end.
// lut1: the bin of each value plus one (0 = out of range); sub: kGraySubs x 256 counters, zeroed here.
// Measured on one x86-64 core, 1920x1080 uniform data: 1.5x the speed of four sub-histograms with a
// per-pixel bin lookup (582 vs 908 us).
constexpr int kGraySubs = 8;
void count_band_u8_gray(const ImageView& img, const std::int16_t* lut1, std::uint32_t* sub, int y0, int y1,
                        std::uint32_t* hist, std::uint64_t* oor) {
    std::fill(sub, sub + kGraySubs * 256, 0u);
    for (int y = y0; y < y1; ++y) {
        const std::uint8_t* p = img.row(y);
        int x = 0;
        for (; x + 8 <= img.width; x += 8) {
            std::uint64_t u;
            std::memcpy(&u, p + x, 8);
            for (int k = 0; k < kGraySubs; ++k) ++sub[k * 256 + ((u >> (8 * k)) & 255)];
        }
        for (; x < img.width; ++x) ++sub[p[x]];
    }
    for (int v = 0; v < 256; ++v) {
        std::uint32_t n = 0;
        for (int k = 0; k < kGraySubs; ++k) n += sub[k * 256 + v];
        if (lut1[v] == 0) oor[0] += n;
        else hist[lut1[v] - 1] += n;
    }
}

template <class T, class BinFn>
void run_bands(const ImageView& img, const ImageView* mask, const BinParams& p, BinFn bin, std::uint64_t* counts,
               std::uint64_t* oor, int threads, bool u8_gray_fast, const std::int16_t* lut) {
    const int C = img.channels;
    const std::size_t hist_len = static_cast<std::size_t>(C) * p.bins;
    const std::size_t row_samples = static_cast<std::size_t>(img.width) * C;
    // Work per band: at least 64 KiB of samples to be worth a worker of the pool (tens of microseconds of
    // counting against a few microseconds to hand it out); at most 2^31 samples (32-bit counters cannot
    // overflow).
    const std::size_t total = row_samples * img.height;
    int hw = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::size_t by_size = std::max<std::size_t>(1, total / (std::size_t(1) << 16));
    int nthreads = static_cast<int>(std::min<std::size_t>({static_cast<std::size_t>(hw), by_size,
                                                           static_cast<std::size_t>(img.height)}));
    nthreads = std::max(nthreads, 1);
    const std::size_t max_rows_per_band =
        std::max<std::size_t>(1, (std::size_t(1) << 31) / std::max<std::size_t>(1, row_samples));
    int nbands = std::max<int>(nthreads, static_cast<int>((img.height + max_rows_per_band - 1) / max_rows_per_band));

    // The gray fast path's table, shifted by one so that out-of-range (-1) lands in slot 0: built once.
    std::int16_t lut1[256] = {};
    if (u8_gray_fast)
        for (int v = 0; v < 256; ++v) lut1[v] = static_cast<std::int16_t>(lut[v] + 1);
    std::mutex merge_mutex;
    auto worker = [&](int first_band, int end_band) {
        std::vector<std::uint32_t> hist(hist_len);
        std::vector<std::uint64_t> local_oor(C);
        std::vector<std::uint32_t> sub(u8_gray_fast ? kGraySubs * 256 : 0);
        for (int band = first_band; band < end_band; ++band) {
            std::fill(hist.begin(), hist.end(), 0u);
            std::fill(local_oor.begin(), local_oor.end(), 0u);
            int y0 = static_cast<int>(static_cast<long long>(img.height) * band / nbands);
            int y1 = static_cast<int>(static_cast<long long>(img.height) * (band + 1) / nbands);
            if (u8_gray_fast)
                count_band_u8_gray(img, lut1, sub.data(), y0, y1, hist.data(), local_oor.data());
            else
                count_band<T>(img, mask, p.bins, bin, y0, y1, hist.data(), local_oor.data());
            std::lock_guard<std::mutex> lock(merge_mutex);
            for (std::size_t i = 0; i < hist_len; ++i) counts[i] += hist[i];
            for (int c = 0; c < C; ++c) oor[c] += local_oor[c];
        }
    };
    // The bands (nthreads of them, or more when the 2^31 cap needs it) are handed out in contiguous runs by
    // the one CPU parallel-for, which is given the caller's thread count (cv::getNumThreads through the
    // gpuhist layer) and splits into at most that many parts.
    parallel_for(nbands, threads, [&](int first, int last) { worker(first, last); });
}

template <class T>
void dispatch_type(const ImageView& img, const ImageView* mask, const BinParams& p, std::uint64_t* counts,
                   std::uint64_t* oor, int threads) {
    if constexpr (std::is_same_v<T, std::uint8_t>) {
        std::int16_t lut[256];
        make_lut8(p, lut);
        const bool fast = img.channels == 1 && mask == nullptr;
        std::int16_t slots[256];  // the table in slot form: `bins` for out of range
        for (int v = 0; v < 256; ++v) slots[v] = lut[v] < 0 ? static_cast<std::int16_t>(p.bins) : lut[v];
        run_bands<T>(img, mask, p, LutBin{slots}, counts, oor, threads, fast, lut);
    } else if (p.mode == BinMode::Shift) {
        run_bands<T>(img, mask, p, ShiftBin<T>{p.shift, p.bins}, counts, oor, threads, false, nullptr);
    } else if constexpr (std::is_same_v<T, float>) {
        if (p.mode == BinMode::ScaleF32)
            run_bands<T>(img, mask, p, ScaleBin{p.scale, p.high_f, p.bins}, counts, oor, threads, false, nullptr);
        else
            run_bands<T>(img, mask, p, ArithBin<T>{p}, counts, oor, threads, false, nullptr);
    } else {
        run_bands<T>(img, mask, p, ArithBin<T>{p}, counts, oor, threads, false, nullptr);
    }
}

}  // namespace

void cpu_histogram(const ImageView& image, const ImageView* mask, const BinParams& bins, std::uint64_t* counts,
                   std::uint64_t* oor, int threads) {
    if (image.empty()) return;
    switch (image.type) {
        case SampleType::U8: dispatch_type<std::uint8_t>(image, mask, bins, counts, oor, threads); break;
        case SampleType::U16: dispatch_type<std::uint16_t>(image, mask, bins, counts, oor, threads); break;
        case SampleType::I32: dispatch_type<std::int32_t>(image, mask, bins, counts, oor, threads); break;
        case SampleType::F32: dispatch_type<float>(image, mask, bins, counts, oor, threads); break;
    }
}

}  // namespace imghist::detail
