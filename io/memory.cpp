#include "io/memory.hpp"

#include <sys/mman.h>

#include <cstdlib>

namespace cli {

void* big_malloc(std::size_t bytes) noexcept {
    constexpr std::size_t kHuge = std::size_t(2) << 20;
    if (bytes < (std::size_t(4) << 20)) return std::malloc(bytes ? bytes : 1);
    std::size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, rounded);
    if (p) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure is harmless
    return p;
}

void big_free(void* p) noexcept { std::free(p); }

}  // namespace cli
