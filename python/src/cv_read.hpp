// imghist._imghist — cv2.imread's answer from imghist_io's decoders (files.cpp's imread).
#pragma once

#include <cstdint>
#include <string>

#include "io/image.hpp"

namespace imghist_py {

/// The image cv2.imread(path, flags) returns (OpenCV 4.6), in cv2's channel order (gray, BGR, BGRA): see
/// cv_read.cpp for the rules of OpenCV's decoders it follows. Throws imghist::Error naming the file.
cli::Image cv_read(const std::string& path, int flags, std::uint64_t max_pixels);

}  // namespace imghist_py
