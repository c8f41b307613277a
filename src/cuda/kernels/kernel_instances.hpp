// Internal: from a request's sample type, channel count, evaluation and storage to the histogram_kernel
// instance that serves it (plan.cu's pick_kernel). The single-image and the batch instances are compiled in
// two files of their own (single_image_kernels.cu, batch_kernels.cu), so that a parallel build compiles the
// two halves side by side: together they are most of the library's compile time.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/kernels/histogram_kernels.cuh"
#include "cuda/plan/plan.hpp"

namespace imghist::detail::cuda {

/// The instances for single images (B = false) and for batches (B = true), defined in the two files.
KernelFn pick_single_kernel(SampleType t, int channels, KMode m, Storage st);
KernelFn pick_batch_kernel(SampleType t, int channels, KMode m, Storage st);

namespace instances {

template <class T, int C, KMode M, bool B>
KernelFn pick_storage(Storage st) {
    switch (st) {
        case Storage::Smem: return histogram_kernel<T, C, M, Storage::Smem, B>;
        case Storage::Split: return histogram_kernel<T, C, M, Storage::Split, B>;
        case Storage::Global: break;
    }
    // The global fallback evaluates the rule itself (correct for every mode, and the slow path anyway).
    return histogram_kernel<T, C, KMode::Arith, Storage::Global, B>;
}

template <class T, int C, bool B>
KernelFn pick_mode(KMode m, Storage st) {
    if constexpr (std::is_same_v<T, std::uint8_t>) {
        // 8-bit requests always count raw values in shared memory and fold them into bins at the flush.
        (void)st;
        (void)m;
        return histogram_kernel<T, C, KMode::Direct, Storage::Smem, B>;
    } else if constexpr (std::is_same_v<T, float>) {
        if (m == KMode::ScaleF32) return pick_storage<T, C, KMode::ScaleF32, B>(st);
        return pick_storage<T, C, KMode::Arith, B>(st);
    } else if constexpr (std::is_same_v<T, std::uint16_t>) {
        if (m == KMode::ShiftFull || m == KMode::Direct) return pick_storage<T, C, KMode::ShiftFull, B>(st);
        if (m == KMode::Shift) return pick_storage<T, C, KMode::Shift, B>(st);
        return pick_storage<T, C, KMode::Arith, B>(st);
    } else {
        if (m == KMode::Shift || m == KMode::ShiftFull || m == KMode::Direct) return pick_storage<T, C, KMode::Shift, B>(st);
        return pick_storage<T, C, KMode::Arith, B>(st);
    }
}

template <class T, bool B>
KernelFn pick_channels(int channels, KMode m, Storage st) {
    switch (channels) {
        case 1: return pick_mode<T, 1, B>(m, st);
        case 2: return pick_mode<T, 2, B>(m, st);
        case 3: return pick_mode<T, 3, B>(m, st);
        default: return pick_mode<T, 4, B>(m, st);
    }
}

template <bool B>
KernelFn pick_type(SampleType t, int channels, KMode m, Storage st) {
    switch (t) {
        case SampleType::U8: return pick_channels<std::uint8_t, B>(channels, m, st);
        case SampleType::U16: return pick_channels<std::uint16_t, B>(channels, m, st);
        case SampleType::I32: return pick_channels<std::int32_t, B>(channels, m, st);
        case SampleType::F32: return pick_channels<float, B>(channels, m, st);
    }
    return nullptr;
}

}  // namespace instances
}  // namespace imghist::detail::cuda
