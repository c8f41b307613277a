// The batch filters' CUDA backend in a build without CUDA (IMGHIST_WITH_CUDA=OFF): each entry of batch.hpp fails
// with Error(NoDevice), but refuse_capture, which refuses nothing (no stream can be capturing). batch.cpp reaches
// them only for device batches or Backend::Cuda, which the backend choice already refuses without a device, so
// these answer a direct call only.
#include <string>

#include "filters/batch.hpp"

namespace imghist::detail {
namespace {
[[noreturn]] void no_cuda(const char* what) {
    throw Error(ErrorCode::NoDevice,
                std::string(what) + ": this build of imghist has no CUDA backend (configured with IMGHIST_WITH_CUDA=OFF)");
}
}  // namespace

void refuse_capture(Stream, const char*, const char*) {}
void cuda_equalize_batch(const DeviceBatch&, int, Stream) { no_cuda("equalize_hist_batch"); }
void cuda_equalize_color_batch(const DeviceBatch&, ColorEqualize, int, Stream) { no_cuda("equalize_hist_color_batch"); }
void cuda_threshold_batch(const DeviceBatch&, const ThresholdParams&, AutoThreshold, int*, int*, int, Stream) {
    no_cuda("threshold_batch");
}
void cuda_clahe_batch(const DeviceBatch&, const fmath::ClaheGeometry*, int, Stream) { no_cuda("clahe_batch"); }
void cuda_stretch_batch(const DeviceBatch&, double, double, bool, int, Stream) { no_cuda("stretch_contrast_batch"); }
void cuda_match_batch(const DeviceBatch&, const ImageView*, const Histogram*, int, Stream) {
    no_cuda("histogram matching batch");
}
std::vector<std::vector<int>> cuda_multiotsu_batch(const DeviceBatch&, int, int*, int, Stream) {
    no_cuda("threshold_multiotsu_batch");
}
void cuda_staged_batch(const ImageView*, const ImageView*, std::size_t, int, Stream, const DeviceBatchOp&) {
    no_cuda("batch through the device");
}

}  // namespace imghist::detail
