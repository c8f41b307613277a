// imghist CLI — memory for large pixel and file buffers.
//
// A 7680x4320 image passes through several buffers of 20-35 MB (file, compressed stream, filtered rows,
// pixels). Fresh memory costs one page fault per 4 KiB page: for such an image that was close to half of
// the decode time. Buffers of 4 MiB and more are therefore aligned to 2 MiB and marked for transparent huge
// pages (madvise), which cuts the faults 512-fold where the kernel allows it; and vectors of bytes are not
// zero-filled on resize (every user overwrites them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace cli {

/// malloc-compatible (free() releases it); huge-page friendly above 4 MiB. nullptr when out of memory.
void* big_malloc(std::size_t bytes) noexcept;

/// Allocator for std::vector: big_malloc storage, default-initialisation (no zero fill) on resize.
template <class T>
struct BigAllocator {
    using value_type = T;
    BigAllocator() noexcept = default;
    template <class U>
    BigAllocator(const BigAllocator<U>&) noexcept {}
    T* allocate(std::size_t n) {
        void* p = big_malloc(n * sizeof(T));
        if (!p) throw std::bad_alloc();
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t) noexcept;
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        if constexpr (sizeof...(Args) == 0)
            ::new (static_cast<void*>(p)) U;  // default-init: no zeroing
        else
            ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
    template <class U>
    bool operator==(const BigAllocator<U>&) const noexcept { return true; }
    template <class U>
    bool operator!=(const BigAllocator<U>&) const noexcept { return false; }
};

void big_free(void* p) noexcept;
template <class T>
void BigAllocator<T>::deallocate(T* p, std::size_t) noexcept { big_free(p); }

}  // namespace cli
