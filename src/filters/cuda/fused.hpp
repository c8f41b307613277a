// imghist filters — the one-launch filters of 8-bit device images (fused_kernels.cuh), as the CUDA
// translation units of the filters call them. Only CUDA sources include this header.
#pragma once

#include "imghist/image.hpp"
#include "cuda/runtime/workspace.hpp"

namespace imghist::detail {

enum class FusedFilter { Equalize, Stretch, MatchImage, MatchHistogram, Otsu, Triangle };

struct FusedRequest {
    FusedFilter filter = FusedFilter::Equalize;
    double q_lo = 0.0, q_hi = 1.0;    ///< Stretch: the percentiles as fractions
    /// MatchImage: the reference's counts (u32, device memory); MatchHistogram: the target's (u64, host
    /// memory): its points are passed in the launch's parameters, or, when the previous such launch on this
    /// workspace had the same target, read from the workspace's cache. Channel c at target + c * target_stride.
    const void* target = nullptr;
    int target_stride = 256;
    int maxval = 255, op = 0;         ///< Otsu, Triangle: the threshold operation (fmath::kBinary ...)
    int* level = nullptr;             ///< Otsu, Triangle: device int receiving the threshold, or null
    int* level_host = nullptr;        ///< Otsu, Triangle: page-locked host int receiving it too, or null
};

/// Enqueues the filter as one cooperative launch on `stream` when the image suits it: 8-bit samples, 1, 3 or
/// 4 channels (Otsu and Triangle: 1), at most policy::one_launch_max_bytes(), a device that supports
/// cooperative launches. Returns false, having enqueued nothing, otherwise; the caller then takes its
/// two-kernel path. The caller holds the workspace's lease and a DeviceGuard for its device.
bool try_fused_filter_u8(Workspace& ws, const ImageView& src, const ImageView& dst, const FusedRequest& r,
                         Stream stream);

}  // namespace imghist::detail
