// imghist_jobs — the GPU's JPEG encoder for decoded planes: a batch of Y/Cb/Cr images (DecodedBatch slots)
// into baseline JPEG files in a handful of kernel launches (jpeg_kernels.hpp) with libjpeg-turbo's arithmetic
// (jpeg_blocks.hpp): byte for byte the files encode_jpeg_planes writes from the same samples. Planar images
// take it instead of nvJPEG's encoder, which encodes one image per call in some twenty launches and
// quantises with its own rounding.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/gpu_jpeg.hpp"

namespace cli {

/// One encoding thread's encoder. Its device memory is that of its largest launch (coefficients and coded
/// room, grown by half again when a launch needs more, kept for the next call): kBlocksPerLaunch bounds a
/// launch of many images, --max-pixels a single image.
class GpuJpegEncoder {
public:
    /// Images of one launch hold at most this many 8x8 blocks together (each takes 140 bytes of device
    /// memory; a larger image goes alone, within --max-pixels).
    static constexpr std::uint64_t kBlocksPerLaunch = std::uint64_t{1} << 22;

    /// On the GPU whose context is current on the calling thread; copies the code tables there on `stream`.
    /// Throws Error when the device cannot be used (NoDevice in builds without CUDA).
    GpuJpegEncoder(const nv::DriverApi& cu, nv::Stream stream, std::uint64_t blocks_per_launch = kBlocksPerLaunch);
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
    /// file without JFIF or metadata (baseline_jpeg's: jpeg_with_metadata adds them). Every input is checked
    /// first: Error(InvalidArgument) for an image that is not planar, of another plane size than libjpeg's
    /// or larger than 65535, or a quality outside 1-100 (nothing launched). Error(Cuda) when the device fails
    /// (the stream is synchronised before it is thrown: nothing reads the images any more).
    void encode(const std::vector<Input>& in, nv::Stream stream, std::vector<Bytes>& out);
    /// Launches whose coded data outgrew the room its inputs' sizes suggested, and were coded again.
    int regrown() const noexcept;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace cli
