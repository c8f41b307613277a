// The filters' CUDA backend in a build without CUDA (IMGHIST_WITH_CUDA=OFF): the "CUDA backend" functions
// of internal.hpp, each failing with Error(NoDevice). The dispatch layer reaches them only after the core
// has resolved a request to CUDA, which it never does here (there are no devices), so these are the
// answer to a direct call only.
#include "core/no_cuda.hpp"
#include "filters/internal.hpp"
#include "filters/level_table.hpp"

namespace imghist::detail {

void cuda_equalize(const ImageView&, const ImageView&, int, Stream) { no_cuda("equalize_hist"); }
void cuda_equalize_color(const ImageView&, const ImageView&, ColorEqualize, int, Stream) {
    no_cuda("equalize_hist_color");
}
void cuda_apply_lut(const ImageView&, const ImageView&, const Lut8*, int, Stream) { no_cuda("apply_lut"); }
void cuda_threshold(const ImageView&, const ImageView&, const ThresholdParams&, AutoThreshold, int*, int, Stream) {
    no_cuda("threshold");
}
void cuda_clahe(const ImageView&, const ImageView&, const fmath::ClaheGeometry&, int, Stream) { no_cuda("CLAHE"); }
void cuda_apply_table16(const ImageView&, const ImageView&, const LevelTable*, int, Stream) { no_cuda("apply_table"); }
void cuda_luma_histogram(const ImageView&, std::uint64_t*, int, Stream) { no_cuda("luma histogram"); }
bool cuda_level_path_u8(const ImageView&) { return false; }
void cuda_stretch_u8(const ImageView&, const ImageView&, double, double, bool, int, Stream) {
    no_cuda("stretch_contrast");
}
void cuda_match_u8(const ImageView&, const ImageView*, const Histogram*, const ImageView&, int, Stream) {
    no_cuda("histogram matching");
}
bool cuda_multiotsu_u8(const ImageView&, const ImageView&, int, std::vector<int>&, std::uint64_t*, int, Stream) {
    no_cuda("threshold_multiotsu");
}

}  // namespace imghist::detail
