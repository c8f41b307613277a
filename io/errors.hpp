// imghist CLI — errors and exit codes.
//
// Every failure is an imghist::Error (the library's one error vocabulary). Messages about a file start with
// the file's name, so "imghist: <file>: <problem>" is what the user reads. main() turns an uncaught Error
// into exit status 1; usage errors exit with 2; a folder run in which some files failed exits with 1.
#pragma once

#include <string>

#include "imghist/error.hpp"

namespace cli {

enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitUsage = 2 };

using imghist::Error;
using imghist::ErrorCode;

/// Throws Error(code, "<file>: <what>").
[[noreturn]] inline void fail(ErrorCode code, const std::string& file, const std::string& what) {
    throw Error(code, file.empty() ? what : file + ": " + what);
}
[[noreturn]] inline void fail_io(const std::string& file, const std::string& what) {
    fail(ErrorCode::Io, file, what);
}
/// A usage error (bad or missing arguments): main() exits with kExitUsage.
struct UsageError : Error {
    explicit UsageError(const std::string& what) : Error(ErrorCode::InvalidArgument, what) {}
};
[[noreturn]] inline void fail_usage(const std::string& what) { throw UsageError(what); }

/// Display name of a path argument ("-" reads as "<stdin>" / "<stdout>").
inline std::string display_name(const std::string& path, bool output = false) {
    if (path == "-") return output ? "<stdout>" : "<stdin>";
    return path;
}

}  // namespace cli
