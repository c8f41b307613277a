// The CPU backend: rows are split into bands, run by the CPU side's parallel_for; each worker counts into its own
// 32-bit histogram (a band never holds 2^32 samples: bands are capped below that), then the bands are
// summed into the caller's 64-bit counts. A call counts every channel of the image or one of them.
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

/// The channels a call counts: `count` of them (1 or all), from channel `first` of pixels of `step` samples.
struct Counted {
    int first, count, step;
};

// Counts rows [y0, y1) into hist (count * bins, 32-bit) and oor.
template <class T, class BinFn>
void count_band(const ImageView& img, const ImageView* mask, const Counted& ch, int bins, BinFn bin, int y0, int y1,
                std::uint32_t* hist, std::uint64_t* oor) {
    const std::size_t step = sizeof(T) * static_cast<std::size_t>(ch.step);
    for (int y = y0; y < y1; ++y) {
        const std::uint8_t* row = img.row(y) + sizeof(T) * ch.first;
        const std::uint8_t* mrow = mask ? mask->row(y) : nullptr;
        if (ch.count == 1 && !mrow) {
            for (int x = 0; x < img.width; ++x) {
                const unsigned int b = bin(load<T>(row + step * x));
                if (b < static_cast<unsigned int>(bins)) ++hist[b]; else ++oor[0];
            }
            continue;
        }
        for (int x = 0; x < img.width; ++x) {
            if (mrow && mrow[x] == 0) continue;
            const std::uint8_t* px = row + step * x;
            for (int c = 0; c < ch.count; ++c) {
                const unsigned int b = bin(load<T>(px + sizeof(T) * c));
                if (b < static_cast<unsigned int>(bins)) ++hist[c * bins + b]; else ++oor[c];
            }
        }
    }
}

// 8-bit without mask: the values themselves are counted (no bin lookup per sample) into interleaved
// sub-histograms, so that runs of equal values do not serialise on one counter (store-to-load forwarding on
// the same address); the bins are applied once per value at the end. One channel (gray, or one of a
// multi-channel image at the pixel step) goes into eight sub-histograms, one per pixel of a group of eight;
// every channel of a multi-channel image into two per channel, one per pixel of a pair. Each sample is one
// byte load and one increment: splitting wider loads by shifts costs more than the loads it saves.
constexpr int kU8Subs = 8;  // sub-histograms of 256 counters per counted channel, at most

// (The width is read into a local first: the counters are unsigned ints, which may alias the view's int
// fields, so the compiler would reload it after every increment. The loops over a group are unrolled
// explicitly: GCC does not unroll them at -O2.)
template <int C>
void count_rows_u8_one_channel(const ImageView& img, int first, int y0, int y1, std::uint32_t* sub) {
    const int w = img.width;
    for (int y = y0; y < y1; ++y) {
        const std::uint8_t* p = img.row(y) + first;
        int x = 0;
        for (; x + 8 <= w; x += 8, p += 8 * C) {
#pragma GCC unroll 8
            for (int k = 0; k < 8; ++k) ++sub[k * 256 + p[k * C]];
        }
        for (; x < w; ++x, p += C) ++sub[p[0]];
    }
}

// Sub-histogram s of channel c at sub[(s * C + c) * 256].
template <int C>
void count_rows_u8_all_channels(const ImageView& img, int y0, int y1, std::uint32_t* sub) {
    const int w = img.width;
    for (int y = y0; y < y1; ++y) {
        const std::uint8_t* p = img.row(y);
        int x = 0;
        for (; x + 2 <= w; x += 2, p += 2 * C) {
#pragma GCC unroll 8
            for (int i = 0; i < 2 * C; ++i) ++sub[i * 256 + p[i]];
        }
        if (x < w)
            for (int c = 0; c < C; ++c) ++sub[c * 256 + p[c]];
    }
}

// Counts rows [y0, y1) of an 8-bit image without mask. lut1: the bin of each value plus one (0 = out of
// range); sub: kU8Subs x ch.count x 256 counters, zeroed here.
void count_band_u8_values(const ImageView& img, const Counted& ch, const std::int16_t* lut1, std::uint32_t* sub,
                          int y0, int y1, std::uint32_t* hist, std::uint64_t* oor, int bins) {
    std::fill(sub, sub + kU8Subs * ch.count * 256, 0u);
    int subs = 8;
    switch (ch.count == 1 ? ch.step : -ch.step) {
        case 1: count_rows_u8_one_channel<1>(img, ch.first, y0, y1, sub); break;
        case 2: count_rows_u8_one_channel<2>(img, ch.first, y0, y1, sub); break;
        case 3: count_rows_u8_one_channel<3>(img, ch.first, y0, y1, sub); break;
        case 4: count_rows_u8_one_channel<4>(img, ch.first, y0, y1, sub); break;
        case -2: count_rows_u8_all_channels<2>(img, y0, y1, sub); subs = 2; break;
        case -3: count_rows_u8_all_channels<3>(img, y0, y1, sub); subs = 2; break;
        default: count_rows_u8_all_channels<4>(img, y0, y1, sub); subs = 2; break;
    }
    for (int c = 0; c < ch.count; ++c)
        for (int v = 0; v < 256; ++v) {
            std::uint32_t n = 0;
            for (int k = 0; k < subs; ++k) n += sub[(k * ch.count + c) * 256 + v];
            if (lut1[v] == 0) oor[c] += n;
            else hist[c * bins + lut1[v] - 1] += n;
        }
}

template <class T, class BinFn>
void run_bands(const ImageView& img, const ImageView* mask, const Counted& ch, const BinParams& p, BinFn bin,
               std::uint64_t* counts, std::uint64_t* oor, int threads, const std::int16_t* u8_values_lut) {
    const int C = img.channels;
    const std::size_t hist_len = static_cast<std::size_t>(ch.count) * p.bins;
    const std::size_t row_samples = static_cast<std::size_t>(img.width) * C;
    // Work per band: at least 64 KiB of samples read to be worth a worker of the pool (tens of microseconds
    // of counting against a few microseconds to hand it out); at most 2^31 samples (32-bit counters cannot
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

    // The 8-bit value path's table, shifted by one so that out-of-range (-1) lands in slot 0: built once.
    const bool u8_values = u8_values_lut != nullptr;
    std::int16_t lut1[256] = {};
    if (u8_values)
        for (int v = 0; v < 256; ++v) lut1[v] = static_cast<std::int16_t>(u8_values_lut[v] + 1);
    std::mutex merge_mutex;
    auto worker = [&](int first_band, int end_band) {
        std::vector<std::uint32_t> hist(hist_len);
        std::vector<std::uint64_t> local_oor(ch.count);
        std::vector<std::uint32_t> sub(u8_values ? static_cast<std::size_t>(kU8Subs) * ch.count * 256 : 0);
        for (int band = first_band; band < end_band; ++band) {
            std::fill(hist.begin(), hist.end(), 0u);
            std::fill(local_oor.begin(), local_oor.end(), 0u);
            int y0 = static_cast<int>(static_cast<long long>(img.height) * band / nbands);
            int y1 = static_cast<int>(static_cast<long long>(img.height) * (band + 1) / nbands);
            if (u8_values)
                count_band_u8_values(img, ch, lut1, sub.data(), y0, y1, hist.data(), local_oor.data(), p.bins);
            else
                count_band<T>(img, mask, ch, p.bins, bin, y0, y1, hist.data(), local_oor.data());
            std::lock_guard<std::mutex> lock(merge_mutex);
            for (std::size_t i = 0; i < hist_len; ++i) counts[i] += hist[i];
            for (int c = 0; c < ch.count; ++c) oor[c] += local_oor[c];
        }
    };
    // The bands (nthreads of them, or more when the 2^31 cap needs it) are handed out in contiguous runs by
    // the one CPU parallel-for, which is given the caller's thread count (cv::getNumThreads through the
    // gpuhist layer) and splits into at most that many parts.
    parallel_for(nbands, threads, [&](int first, int last) { worker(first, last); });
}

template <class T>
void dispatch_type(const ImageView& img, const ImageView* mask, const Counted& ch, const BinParams& p,
                   std::uint64_t* counts, std::uint64_t* oor, int threads) {
    if constexpr (std::is_same_v<T, std::uint8_t>) {
        std::int16_t lut[256];
        make_lut8(p, lut);
        std::int16_t slots[256];  // the table in slot form: `bins` for out of range
        for (int v = 0; v < 256; ++v) slots[v] = lut[v] < 0 ? static_cast<std::int16_t>(p.bins) : lut[v];
        run_bands<T>(img, mask, ch, p, LutBin{slots}, counts, oor, threads, mask == nullptr ? lut : nullptr);
    } else if (p.mode == BinMode::Shift) {
        run_bands<T>(img, mask, ch, p, ShiftBin<T>{p.shift, p.bins}, counts, oor, threads, nullptr);
    } else if constexpr (std::is_same_v<T, float>) {
        if (p.mode == BinMode::ScaleF32)
            run_bands<T>(img, mask, ch, p, ScaleBin{p.scale, p.high_f, p.bins}, counts, oor, threads, nullptr);
        else
            run_bands<T>(img, mask, ch, p, ArithBin<T>{p}, counts, oor, threads, nullptr);
    } else {
        run_bands<T>(img, mask, ch, p, ArithBin<T>{p}, counts, oor, threads, nullptr);
    }
}

}  // namespace

void cpu_histogram(const ImageView& image, const ImageView* mask, const BinParams& bins, std::uint64_t* counts,
                   std::uint64_t* oor, int threads, int channel) {
    if (image.empty()) return;
    const Counted ch = channel >= 0 ? Counted{channel, 1, image.channels} : Counted{0, image.channels, image.channels};
    switch (image.type) {
        case SampleType::U8: dispatch_type<std::uint8_t>(image, mask, ch, bins, counts, oor, threads); break;
        case SampleType::U16: dispatch_type<std::uint16_t>(image, mask, ch, bins, counts, oor, threads); break;
        case SampleType::I32: dispatch_type<std::int32_t>(image, mask, ch, bins, counts, oor, threads); break;
        case SampleType::F32: dispatch_type<float>(image, mask, ch, bins, counts, oor, threads); break;
    }
}

}  // namespace imghist::detail
