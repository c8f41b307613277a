// Builds without CUDA: the GPU pipeline never starts there (no device), and the encoder's passes refuse.
#include "gpu/jpeg_kernels.hpp"

#include "imghist/error.hpp"

namespace cli::jpeg_kernels {

void enqueue_zero_words(const Batch&, void*) {
    throw imghist::Error(imghist::ErrorCode::Unsupported, "JPEG encoder: this build has no CUDA");
}

void enqueue_all(const Batch&, void*) {
    throw imghist::Error(imghist::ErrorCode::Unsupported, "JPEG encoder: this build has no CUDA");
}

void enqueue_code(const Batch&, void*) {
    throw imghist::Error(imghist::ErrorCode::Unsupported, "JPEG encoder: this build has no CUDA");
}

}  // namespace cli::jpeg_kernels
