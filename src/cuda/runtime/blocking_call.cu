// One blocking call of the CUDA backend (blocking_call.hpp).
#include "cuda/runtime/blocking_call.hpp"

#include <cuda_runtime.h>

#include <string>

#include "cuda/runtime/staging.hpp"
#include "imghist/histogram.hpp"

namespace imghist::detail {
namespace {

int resolve_device(int device) {
    if (cuda_device_count() == 0) throw Error(ErrorCode::NoDevice, "no CUDA device is available");
    if (device < 0) IMGHIST_CUDA(cudaGetDevice(&device));
    if (device >= cuda_device_count())
        throw Error(ErrorCode::NoDevice, "CUDA device " + std::to_string(device) + " does not exist");
    return device;
}

WorkspaceLease lease_for(int device, Stream caller, bool device_inputs) {
    if (caller || device_inputs) return acquire_workspace(device, caller);
    return acquire_private_workspace(device);
}

}  // namespace

BlockingCall::BlockingCall(int device, Stream caller, bool device_inputs)
    : device_(resolve_device(device)), guard_(device_), lease_(lease_for(device_, caller, device_inputs)) {}

BlockingCall::~BlockingCall() {
    if (finished_) return;
    (void)cudaStreamSynchronize(cu(lease_->stream()));  // the error, if any, is the one already on its way
    (void)cudaGetLastError();
    finish();
}

std::size_t BlockingCall::staged_bytes(const ImageView& host) noexcept {
    return (host.row_bytes() * static_cast<std::size_t>(host.height) + 255) / 256 * 256;
}

unsigned char* BlockingCall::staging(std::size_t bytes) {
    return lease_->device_as<unsigned char>(DeviceSlot::StageSrc, bytes < 256 ? 256 : bytes);
}

ImageView BlockingCall::stage(const ImageView& host, unsigned char* dst) { return stage_upload(*lease_, host, dst); }

void BlockingCall::finish() noexcept {
    for (auto& s : lease_->stage_slots()) s.in_flight = false;
    lease_->trim_staging();
    finished_ = true;
}

}  // namespace imghist::detail
