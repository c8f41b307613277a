// imghist_io — memory for large pixel and file buffers.
//
// A 7680x4320 image passes through several buffers of 20-35 MB (file, compressed stream, filtered rows,
// pixels). Fresh memory costs one page fault per 4 KiB page: for such an image that was close to half of
// the decode time. Buffers of 4 MiB and more are therefore aligned to 2 MiB and marked for transparent huge
// pages (madvise), which cuts the faults 512-fold where the kernel allows it; and vectors of bytes are not
// zero-filled on resize (every user overwrites them).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <string>
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

/// The memory a run may hold in decoded images at once (--max-memory, Limits::max_memory). Inputs take their
/// share through a MemoryReservation once their header is known, before the pixels are allocated, and give
/// it back when they are done; an input that would overdraw the budget waits until others give theirs back.
class MemoryBudget {
public:
    explicit MemoryBudget(std::uint64_t bytes) : total_(bytes) {}
    MemoryBudget(const MemoryBudget&) = delete;
    MemoryBudget& operator=(const MemoryBudget&) = delete;
    std::uint64_t total() const noexcept { return total_; }
    /// Throws Error naming `name` when one input needing `bytes` cannot fit a budget of `total` at all.
    static void check_fits(std::uint64_t bytes, std::uint64_t total, const std::string& name);

private:
    friend class MemoryReservation;
    const std::uint64_t total_;
    std::uint64_t used_ = 0;
    std::mutex m_;
    std::condition_variable cv_;
};

/// One input's share of a MemoryBudget; released when destroyed. Without a budget it holds nothing.
class MemoryReservation {
public:
    MemoryReservation() = default;
    /// `may_wait` false: take the share at once even when the budget is overdrawn (for a thread that the
    /// inputs holding the budget wait on, which must never wait for them).
    explicit MemoryReservation(MemoryBudget* budget, bool may_wait = true) : budget_(budget), may_wait_(may_wait) {}
    MemoryReservation(MemoryReservation&& o) noexcept { *this = std::move(o); }
    MemoryReservation& operator=(MemoryReservation&& o) noexcept;
    ~MemoryReservation() { release(); }

    /// Holds at least `bytes`, waiting while other inputs hold too much of the budget. The share held so far
    /// is given back while waiting, so two inputs that both grow never wait on each other. Throws Error
    /// naming `name` when `bytes` is more than the whole budget.
    void ensure(std::uint64_t bytes, const std::string& name);
    void release() noexcept;
    void set_may_wait(bool may_wait) noexcept { may_wait_ = may_wait; }
    std::uint64_t held() const noexcept { return held_; }

private:
    MemoryBudget* budget_ = nullptr;
    std::uint64_t held_ = 0;
    bool may_wait_ = true;
};

}  // namespace cli
