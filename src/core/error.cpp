#include "imghist/error.hpp"

#include "imghist/version.hpp"

namespace imghist {

const char* to_string(ErrorCode code) noexcept {
    switch (code) {
        case ErrorCode::InvalidArgument: return "invalid-argument";
        case ErrorCode::Unsupported: return "unsupported";
        case ErrorCode::OutOfMemory: return "out-of-memory";
        case ErrorCode::NoDevice: return "no-device";
        case ErrorCode::Cuda: return "cuda";
        case ErrorCode::Overflow: return "overflow";
        case ErrorCode::Io: return "io";
    }
    return "unknown";
}

Error::Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}

const char* version() noexcept { return IMGHIST_VERSION_STRING; }

}  // namespace imghist
