// imghist — error vocabulary shared by every layer of the library.
//
// Every failure the library reports is an imghist::Error carrying one ErrorCode. Higher layers translate
// it exactly once (the OpenCV-compatible gpuhist:: layer turns it into cv::Exception; the CLI into a
// message and an exit status).
#pragma once

#include "imghist/export.hpp"

#include <stdexcept>
#include <string>

namespace imghist {

enum class ErrorCode {
    InvalidArgument,  ///< a parameter is out of its domain (null data, pitch < row, low >= high, ...)
    Unsupported,      ///< a valid request this build or device cannot serve (e.g. too many bins for a type)
    OutOfMemory,      ///< host or device allocation failed
    NoDevice,         ///< the CUDA backend was requested but no usable CUDA device exists
    Cuda,             ///< a CUDA runtime call or kernel failed
    Overflow,         ///< a 32-bit counter would exceed 2^32-1 (use 64-bit counts)
    Io,               ///< reading or writing a file failed (used by the io library and the CLI)
};

/// Short stable name of a code ("invalid-argument", "unsupported", ...).
IMGHIST_API const char* to_string(ErrorCode code) noexcept;

class IMGHIST_API Error : public std::runtime_error {
public:
    Error(ErrorCode code, const std::string& message);
    ErrorCode code() const noexcept { return code_; }

private:
    ErrorCode code_;
};

}  // namespace imghist
