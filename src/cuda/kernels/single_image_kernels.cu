// The histogram_kernel instances for single images (kernel_instances.hpp).
#include "cuda/kernels/kernel_instances.hpp"

namespace imghist::detail::cuda {

KernelFn pick_single_kernel(SampleType t, int channels, KMode m, Storage st) {
    return instances::pick_type<false>(t, channels, m, st);
}

}  // namespace imghist::detail::cuda
