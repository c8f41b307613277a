// An image file read with imghist_io (its own decoders) into an OpenCV matrix, for the
// programs beside the tool that work with OpenCV: the filters' tests and benchmark read the shipped
// photographs this way instead of with OpenCV's imgcodecs, whose dependencies (GDAL, ICU, video codecs) would
// triple the bundle carried to a GPU host (scripts/bundle_gpu.sh). Header-only; link imghist_io and OpenCV's
// core and imgproc.
#pragma once

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <cstdint>
#include <string>

#include "io/codecs/codec.hpp"
#include "io/fileio.hpp"

namespace cli {

/// The file at `path` as stored (8- or 16-bit samples, 1 to 4 channels), colour in OpenCV's channel order (BGR,
/// BGRA), in a matrix of its own. Throws the file layer's error (naming the file) when it cannot be read.
inline cv::Mat read_cv_mat(const std::string& path) {
    const Image img = decode_image(read_file(path), path, DecodeOptions{});
    const int depth = img.depth() == 16 ? CV_16U : CV_8U;
    const cv::Mat stored(img.height(), img.width(), CV_MAKETYPE(depth, img.channels()),
                         const_cast<std::uint8_t*>(img.data()), img.row_bytes());
    cv::Mat m;
    if (img.channels() == 3) cv::cvtColor(stored, m, cv::COLOR_RGB2BGR);
    else if (img.channels() == 4) cv::cvtColor(stored, m, cv::COLOR_RGBA2BGRA);
    else m = stored.clone();
    return m;
}

}  // namespace cli
