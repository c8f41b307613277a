// imghist_io — errors and exit codes.
//
// Every failure is an imghist::Error (the library's one error vocabulary). Messages about a file start with
// the file's name, so "imghist: <file>: <problem>" is what the user reads. main() turns an uncaught Error
// into exit status 1; usage errors exit with 2; a folder run in which some files failed exits with 1.
#pragma once

#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>

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

/// What the user reads for an exception: an imghist::Error's message as it is; the standard library's own
/// exceptions, whose texts mean nothing to a user ("std::bad_alloc", "cannot create std::vector larger than
/// max_size()", "stoi"), in words. Callers put the file's name in front.
inline std::string user_message(const std::exception& e) {
    if (dynamic_cast<const Error*>(&e)) return e.what();
    if (dynamic_cast<const std::bad_alloc*>(&e)) return "out of memory";
    if (dynamic_cast<const std::length_error*>(&e))
        return "out of memory (a size beyond what this machine can allocate)";
    if (const auto* s = dynamic_cast<const std::system_error*>(&e))
        return "the system refused a request (" + s->code().message() + ")";
    if (dynamic_cast<const std::invalid_argument*>(&e) || dynamic_cast<const std::out_of_range*>(&e))
        return "a value out of range or unreadable (an internal error; please report it)";
    return std::string("an internal error (") + e.what() + "; please report it)";
}

/// user_message(e) about `file`: "<file>: <message>", unless the message already starts with the file's
/// name (or `also`'s, the other file the operation touched, e.g. its output).
inline std::string file_message(const std::string& file, const std::exception& e, const std::string& also = "") {
    const std::string msg = user_message(e);
    if (msg.rfind(file, 0) == 0 || (!also.empty() && msg.rfind(also, 0) == 0)) return msg;
    return file + ": " + msg;
}

/// Display name of a path argument ("-" reads as "<stdin>" / "<stdout>").
inline std::string display_name(const std::string& path, bool output = false) {
    if (path == "-") return output ? "<stdout>" : "<stdin>";
    return path;
}

}  // namespace cli
