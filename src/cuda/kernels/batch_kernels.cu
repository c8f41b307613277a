// The histogram_kernel instances for batches (kernel_instances.hpp).
#include "cuda/kernels/kernel_instances.hpp"

namespace imghist::detail::cuda {

KernelFn pick_batch_kernel(SampleType t, int channels, KMode m, Storage st) {
    return instances::pick_type<true>(t, channels, m, st);
}

}  // namespace imghist::detail::cuda
