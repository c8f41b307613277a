// imghist-bench — command-line options: what to measure, how, and where to write it (bench/README.md).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common.hpp"
#include "datagen.hpp"
#include "workloads.hpp"

namespace bench {

constexpr int kExitNoDevice = 2;
constexpr int kExitUsage = 64;

struct Options {
    std::vector<const Workload*> workloads;
    std::vector<Data> data;
    std::vector<std::size_t> sizes;
    bool workloads_given = false, data_given = false, sizes_given = false;
    TimingConfig timing;
    int batch = 1000;
    bool classic = true, npp = true, cub = true, check = true;
    std::string json, image, npp_lib;
    int device = 0;
    double time_limit_s = 0;
    bool sweep = false;
    std::vector<int> sw_threads{128, 256, 512, 768, 1024}, sw_vectors{1, 2, 4, 8}, sw_bpsm{1, 2, 3, 4, 6, 8, 12, 16},
        sw_copies{1, 8, 16, 32};
    std::vector<int> sw_tiles{0};  ///< KiB per tile; 0 = the tuning table's
    std::vector<int> sw_block{0};  ///< KiB per block for images smaller than a full grid; 0 = the table's
    int tile_kib = 0;              ///< table mode: tile-size override for our kernel (0 = the tuning table's)
};

/// Parses the command line; prints the usage and exits on --help / --list, exits kExitUsage on errors.
Options parse(int argc, char** argv);

/// "640x480", "1080p", "4K", "8K" for frame sizes, "256M" / "1G" / "64K" for byte sizes.
std::string size_label(std::size_t bytes);

}  // namespace bench
