#include "io/memory.hpp"

#include <sys/mman.h>

#include <cstdlib>

#include "io/errors.hpp"
#include "io/limits.hpp"

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

MemoryReservation& MemoryReservation::operator=(MemoryReservation&& o) noexcept {
    if (this != &o) {
        release();
        budget_ = o.budget_;
        held_ = o.held_;
        may_wait_ = o.may_wait_;
        o.held_ = 0;
    }
    return *this;
}

void MemoryBudget::check_fits(std::uint64_t bytes, std::uint64_t total, const std::string& name) {
    if (bytes > total)
        fail(ErrorCode::OutOfMemory, name,
             "needs " + format_bytes(bytes) + " of memory while it is processed (its file and three times its " +
                 "decoded size), above the " +
                 "limit of " + format_bytes(total) + " (raise it with --max-memory)");
}

void MemoryReservation::ensure(std::uint64_t bytes, const std::string& name) {
    if (!budget_ || bytes <= held_) return;
    MemoryBudget& b = *budget_;
    MemoryBudget::check_fits(bytes, b.total_, name);
    std::unique_lock<std::mutex> l(b.m_);
    b.used_ -= held_;
    held_ = 0;
    b.cv_.notify_all();
    if (may_wait_) b.cv_.wait(l, [&] { return b.used_ + bytes <= b.total_; });
    b.used_ += bytes;
    held_ = bytes;
}

void MemoryReservation::release() noexcept {
    if (!budget_ || !held_) return;
    std::lock_guard<std::mutex> l(budget_->m_);
    budget_->used_ -= held_;
    held_ = 0;
    budget_->cv_.notify_all();
}

}  // namespace cli
