// imghist-bench — the workloads, data sets and sizes the benchmark knows, and the goals it checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "imghist/histogram.hpp"
#include "imghist/image.hpp"

namespace bench {

struct Workload {
    const char* name;           ///< command-line name
    imghist::SampleType type;
    int channels;
    int bins;                   ///< bins per channel
    double low, high;           ///< bin range [low, high)
    bool batch;                 ///< a batch of many small gray images (one compute_batch launch)
    const char* description;
    double goal_pct;            ///< goal: median >= goal_pct % of the read limit at 256 MiB (0 = none)
    bool goal_not_slower_than_cub;
    bool npp;                   ///< NPP has an even-bin histogram for this sample type and channel count
    bool classic;               ///< the two teaching kernels apply (8-bit gray)
};

/// The full list, in table order.
inline const std::vector<Workload>& all_workloads() {
    using imghist::SampleType;
    static const std::vector<Workload> w = {
        {"u8", SampleType::U8, 1, 256, 0, 256, false, "8-bit gray, 256 bins", 90, false, true, true},
        {"u8-64", SampleType::U8, 1, 64, 0, 256, false, "8-bit gray, 64 bins (top 6 bits)", 90, false, true, true},
        {"u8c3", SampleType::U8, 3, 256, 0, 256, false, "8-bit 3 channels interleaved, 256 bins each", 85, false, true, false},
        {"u8c4", SampleType::U8, 4, 256, 0, 256, false, "8-bit 4 channels interleaved, 256 bins each", 85, false, true, false},
        {"u16-1024", SampleType::U16, 1, 1024, 0, 65536, false, "16-bit gray, 1024 bins over [0,65536)", 60, false, true, false},
        {"u16-4096", SampleType::U16, 1, 4096, 0, 65536, false, "16-bit gray, 4096 bins over [0,65536)", 50, false, true, false},
        {"u16-65536", SampleType::U16, 1, 65536, 0, 65536, false, "16-bit gray, one bin per value", 40, false, true, false},
        {"i32-1024", SampleType::I32, 1, 1024, 0, 1024, false, "10-bit samples stored as int32, 1024 bins", 80, false, false, false},
        {"f32-256", SampleType::F32, 1, 256, 0.0, 1.0, false, "float32, 256 bins over [0,1)", 90, true, false, false},
        {"batch", SampleType::U8, 1, 256, 0, 256, true, "batch of 640x480 8-bit gray images, 256 bins, one launch", 70, false, false, false},
    };
    return w;
}

enum class Data { Uniform, Constant, Gauss4, Gauss32, Photo };

inline const std::vector<Data>& all_data() {
    static const std::vector<Data> d = {Data::Uniform, Data::Constant, Data::Gauss4, Data::Gauss32, Data::Photo};
    return d;
}

inline const char* to_string(Data d) {
    switch (d) {
        case Data::Uniform: return "uniform";
        case Data::Constant: return "constant";
        case Data::Gauss4: return "gauss4";
        case Data::Gauss32: return "gauss32";
        case Data::Photo: return "photo";
    }
    return "?";
}

/// Image geometry of one single-image case: tightly packed rows, width a power of two near the square root.
struct Geometry {
    int width = 0;
    int height = 0;
    std::size_t bytes = 0;  ///< width * height * pixel bytes (the input bytes every GB/s figure refers to)
};

/// A size in the --sizes list is either a byte count or a frame (width x height pixels of the workload's
/// pixel type), marked by kFrameTag with the width in bits 24..47 and the height in bits 0..23.
constexpr std::size_t kFrameTag = std::size_t(1) << 62;
constexpr std::size_t frame_size(unsigned width, unsigned height) {
    return kFrameTag | (static_cast<std::size_t>(width) << 24) | height;
}
inline bool is_frame(std::size_t size) { return (size & kFrameTag) != 0; }

inline Geometry geometry_for(const Workload& w, std::size_t target) {
    const std::size_t pixel_bytes = imghist::sample_size(w.type) * static_cast<std::size_t>(w.channels);
    Geometry g;
    if (is_frame(target)) {
        g.width = static_cast<int>((target >> 24) & 0xFFFFFF);
        g.height = static_cast<int>(target & 0xFFFFFF);
    } else {
        const std::size_t pixels = target / pixel_bytes;
        std::size_t width = 1;
        while ((width * 2) * (width * 2) <= pixels) width *= 2;
        g.width = static_cast<int>(width);
        g.height = static_cast<int>(pixels / width);
    }
    g.bytes = static_cast<std::size_t>(g.width) * g.height * pixel_bytes;
    return g;
}

}  // namespace bench
