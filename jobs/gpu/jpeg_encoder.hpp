// imghist_jobs — the GPU's JPEG encoder for decoded planes: a batch of Y/Cb/Cr images (DecodedBatch slots)
// into baseline JPEG files in a handful of kernel launches (jpeg_kernels.hpp) with libjpeg-turbo's arithmetic
// (jpeg_blocks.hpp): byte for byte the files encode_jpeg_planes writes from the same samples. Planar images
// take it instead of nvJPEG's encoder, which encodes one image per call in some twenty launches and
// quantises with its own rounding.
#pragma once

#include <memory>
#include <vector>

#include "gpu/gpu_jpeg.hpp"

namespace cli {

class GpuJpegEncoder {
public:
    /// On the GPU whose context is current on the calling thread; copies the code tables there on `stream`.
    /// Throws Error(Unsupported) in builds without CUDA.
    GpuJpegEncoder(const nv::DriverApi& cu, nv::Stream stream);
    ~GpuJpegEncoder();
    GpuJpegEncoder(const GpuJpegEncoder&) = delete;
    GpuJpegEncoder& operator=(const GpuJpegEncoder&) = delete;

    struct Input {
        const GpuDecoded* image = nullptr;  ///< planar (kOutputYUV)
        int quality = 90;                   ///< 1-100
        std::size_t size_hint = 0;          ///< the coded size expected (its input file's, say): room made at once
    };
    /// Encodes a blank 16x16 image on `stream`: the first call loads the kernels (a run's start-up does it).
    void warm_up(nv::Stream stream);
    /// Encodes the images on `stream` (after what is enqueued there) and waits for them: out[i] is input i's
    /// file without JFIF or metadata (baseline_jpeg's: jpeg_with_metadata adds them). Throws Error(Cuda) when
    /// the device fails, Error(InvalidArgument) for an image that is not planar or a quality outside 1-100.
    void encode(const std::vector<Input>& in, nv::Stream stream, std::vector<Bytes>& out);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace cli
