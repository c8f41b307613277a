// imghist-bench — host-side data generators.
#include "datagen.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <type_traits>

#ifdef IMGHIST_BENCH_HAVE_STB
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#include <stb_image.h>
#pragma GCC diagnostic pop
#endif

namespace bench {

// ---- photograph ---------------------------------------------------------------------------------------------

bool load_photo(const std::string& path, Photo& photo, std::string& why) {
#ifdef IMGHIST_BENCH_HAVE_STB
    int w = 0, h = 0, n = 0;
    unsigned char* rgba = stbi_load(path.c_str(), &w, &h, &n, 4);
    if (!rgba) {
        why = std::string("cannot decode ") + path + ": " + stbi_failure_reason();
        return false;
    }
    photo.width = w;
    photo.height = h;
    photo.path = path;
    const std::size_t px = static_cast<std::size_t>(w) * h;
    photo.rgba.assign(rgba, rgba + px * 4);
    stbi_image_free(rgba);
    photo.rgb.resize(px * 3);
    photo.gray.resize(px);
    for (std::size_t i = 0; i < px; ++i) {
        const std::uint8_t r = photo.rgba[4 * i], g = photo.rgba[4 * i + 1], b = photo.rgba[4 * i + 2];
        photo.rgb[3 * i] = r;
        photo.rgb[3 * i + 1] = g;
        photo.rgb[3 * i + 2] = b;
        // Rec. 601 luma in 8.8 fixed point, rounded.
        photo.gray[i] = static_cast<std::uint8_t>((77 * r + 150 * g + 29 * b + 128) >> 8);
    }
    return true;
#else
    (void)photo;
    why = "this build has no PNG decoder (stb_image.h was not found at configure time): " + path;
    return false;
#endif
}

static std::string exe_dir() {
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return {};
    buf[n] = 0;
    std::string s(buf);
    auto slash = s.rfind('/');
    return slash == std::string::npos ? std::string(".") : s.substr(0, slash);
}

std::vector<std::string> photo_candidates(const std::string& explicit_path, const std::string& argv0) {
    (void)argv0;
    if (!explicit_path.empty()) return {explicit_path};
    const char* name = "astronaut.png";
    std::vector<std::string> c;
    if (const char* env = std::getenv("IMGHIST_SAMPLES_DIR"); env && *env) c.push_back(std::string(env) + "/" + name);
    const std::string dir = exe_dir();
    if (!dir.empty()) {
        c.push_back(dir + "/../samples/images/" + name);       // relocatable bundle: bin/ next to samples/
        c.push_back(dir + "/../share/imghist/images/" + name); // installed tree
    }
#ifdef IMGHIST_BENCH_SOURCE_SAMPLES
    c.push_back(std::string(IMGHIST_BENCH_SOURCE_SAMPLES) + "/" + name);  // build tree
#endif
    c.push_back(std::string("samples/images/") + name);
    return c;
}

// ---- random numbers -----------------------------------------------------------------------------------------

namespace {

struct SplitMix64 {
    std::uint64_t s;
    std::uint64_t next() {
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
};

// Standard normal quantiles at i / 2^16 (ends clamped to +-6 sigma); a draw interpolates between two.
constexpr int kQuantiles = 1 << 16;
const std::vector<double>& normal_quantiles() {
    static std::vector<double> q;
    static std::once_flag once;
    std::call_once(once, [] {
        q.resize(kQuantiles + 1);
        auto cdf = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
        for (int i = 0; i <= kQuantiles; ++i) {
            double p = std::clamp(static_cast<double>(i) / kQuantiles, 1e-9, 1.0 - 1e-9);
            double lo = -8.0, hi = 8.0;
            for (int it = 0; it < 60; ++it) {
                double mid = 0.5 * (lo + hi);
                (cdf(mid) < p ? lo : hi) = mid;
            }
            q[i] = 0.5 * (lo + hi);
        }
    });
    return q;
}

inline double normal(SplitMix64& rng, const std::vector<double>& q) {
    const std::uint64_t r = rng.next();
    const std::size_t k = r >> 48;
    const double f = static_cast<double>((r >> 24) & 0xFFFFFF) * (1.0 / 16777216.0);
    return q[k] + (q[k + 1] - q[k]) * f;
}

inline double unit(SplitMix64& rng) { return static_cast<double>(rng.next() >> 11) * (1.0 / 9007199254740992.0); }

template <class T>
inline T to_sample(double v, double low, double high) {
    if constexpr (std::is_floating_point_v<T>) {
        const T hi = std::nextafter(static_cast<T>(high), static_cast<T>(low));
        return std::clamp(static_cast<T>(v), static_cast<T>(low), hi);
    } else {
        const double x = std::floor(v);
        return static_cast<T>(std::clamp(x, low, high - 1.0));
    }
}

template <class T>
void gen_rows(const Workload& w, Data d, const Photo& ph, int width, std::size_t row0, std::size_t row1,
              std::size_t tile_rows, T* out, std::uint64_t seed) {
    const int ch = w.channels;
    const std::size_t n = static_cast<std::size_t>(width) * ch;
    const double low = w.low, high = w.high, range = high - low;
    const double mid = low + 0.5 * range;
    const double bin_width = range / w.bins;
    const double sigma = (d == Data::Gauss4 ? 4.0 : 32.0) * bin_width;
    const bool integral = !std::is_floating_point_v<T>;
    const std::vector<double>* q = (d == Data::Gauss4 || d == Data::Gauss32) ? &normal_quantiles() : nullptr;
    for (std::size_t r = row0; r < row1; ++r) {
        T* o = out + r * n;
        SplitMix64 rng{seed ^ (0x632be59bd9b4e019ull * (r + 1)) ^ (static_cast<std::uint64_t>(d) << 56)};
        switch (d) {
            case Data::Uniform:
                for (std::size_t i = 0; i < n; ++i) o[i] = to_sample<T>(low + unit(rng) * range, low, high);
                break;
            case Data::Constant:
                for (std::size_t i = 0; i < n; ++i) o[i] = to_sample<T>(mid, low, high);
                break;
            case Data::Gauss4:
            case Data::Gauss32:
                for (std::size_t i = 0; i < n; ++i) {
                    double v = mid + normal(rng, *q) * sigma;
                    o[i] = to_sample<T>(integral ? v + 0.5 : v, low, high);  // integers: round to nearest
                }
                break;
            case Data::Photo: {
                const std::size_t in_tile = tile_rows ? r % tile_rows : r;
                const std::size_t py = in_tile % static_cast<std::size_t>(ph.height);
                const std::uint8_t* src = ch == 1 ? ph.gray.data() : ch == 3 ? ph.rgb.data() : ph.rgba.data();
                const std::uint8_t* prow = src + py * static_cast<std::size_t>(ph.width) * ch;
                for (int x = 0; x < width; ++x) {
                    const std::uint8_t* p = prow + static_cast<std::size_t>(x % ph.width) * ch;
                    for (int c = 0; c < ch; ++c) {
                        if constexpr (sizeof(T) == 1) {
                            o[static_cast<std::size_t>(x) * ch + c] = static_cast<T>(p[c]);
                        } else {
                            // gray level plus a dither in [0,1), scaled from [0,256) to the range
                            const double t = (p[c] + unit(rng)) / 256.0;
                            o[static_cast<std::size_t>(x) * ch + c] = to_sample<T>(low + t * range, low, high);
                        }
                    }
                }
                break;
            }
        }
    }
}

}  // namespace

void generate(const Workload& w, Data d, const Photo& photo, int width, std::size_t rows, std::size_t tile_rows,
              void* out, std::uint64_t seed) {
    if (d == Data::Photo && !photo.ok()) throw std::runtime_error("photo data set requested without a photograph");
    if (d == Data::Gauss4 || d == Data::Gauss32) (void)normal_quantiles();  // build before the threads start
    unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    threads = static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(1, rows / 16)));
    auto run = [&](std::size_t r0, std::size_t r1) {
        switch (w.type) {
            case imghist::SampleType::U8:
                gen_rows(w, d, photo, width, r0, r1, tile_rows, static_cast<std::uint8_t*>(out), seed);
                break;
            case imghist::SampleType::U16:
                gen_rows(w, d, photo, width, r0, r1, tile_rows, static_cast<std::uint16_t*>(out), seed);
                break;
            case imghist::SampleType::I32:
                gen_rows(w, d, photo, width, r0, r1, tile_rows, static_cast<std::int32_t*>(out), seed);
                break;
            case imghist::SampleType::F32:
                gen_rows(w, d, photo, width, r0, r1, tile_rows, static_cast<float*>(out), seed);
                break;
        }
    };
    if (threads <= 1) {
        run(0, rows);
        return;
    }
    std::vector<std::thread> pool;
    const std::size_t per = (rows + threads - 1) / threads;
    for (unsigned t = 0; t < threads; ++t) {
        const std::size_t r0 = t * per, r1 = std::min(rows, r0 + per);
        if (r0 >= r1) break;
        pool.emplace_back(run, r0, r1);
    }
    for (auto& th : pool) th.join();
}

}  // namespace bench
