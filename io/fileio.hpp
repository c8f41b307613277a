// imghist CLI — reading whole files, and writing outputs atomically.
//
// Outputs are written to a temporary file in the destination's folder and renamed over the destination
// only when complete, so no reader ever sees half a file and a failed write leaves nothing behind. The
// temporary names of writes in flight are kept in a small table that the SIGINT/SIGTERM handler removes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/memory.hpp"

namespace cli {

/// File contents and encoded images: huge-page friendly, not zero-filled on resize.
using Bytes = std::vector<std::uint8_t, BigAllocator<std::uint8_t>>;

/// Whole file ("-" = standard input). Errors name the file: missing, unreadable, a folder, not a regular file.
Bytes read_file(const std::string& path);
/// Opens a regular file for reading without ever blocking: a FIFO, socket or device is refused (its open
/// would wait for a writer, or its reads never end). Returns the descriptor (close-on-exec, blocking reads);
/// errors name the file.
int open_regular_file(const std::string& path);
/// What a path is, in words, when it is neither a regular file nor a folder ("a FIFO", "a socket", ...);
/// empty for regular files and folders (following symbolic links).
std::string special_file_kind(const std::string& path);

/// True when both paths name the same existing file (same device and inode).
bool same_file(const std::string& a, const std::string& b);
bool path_exists(const std::string& path);
bool is_directory(const std::string& path);
/// Creates the folder and its parents (like mkdir -p); errors name the folder.
void make_dirs(const std::string& path);
std::string parent_dir(const std::string& path);
/// Lower-case extension without the dot ("" when none).
std::string extension_of(const std::string& path);

/// Installs the SIGINT/SIGTERM handler that removes temporary files of writes in flight.
void install_signal_cleanup();

/// A file being written: a temporary name until commit() renames it into place; the destructor removes
/// the temporary when commit() was not reached. "-" writes to standard output directly.
class OutputFile {
public:
    explicit OutputFile(std::string path);
    ~OutputFile();
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    void write(const void* data, std::size_t bytes);
    void commit();
    const std::string& path() const noexcept { return path_; }

private:
    std::string path_, tmp_;
    int fd_ = -1;
    int slot_ = -1;
    bool committed_ = false;
    bool to_stdout_ = false;
};

/// Writes a whole buffer atomically.
void write_file_atomic(const std::string& path, const void* data, std::size_t bytes);

}  // namespace cli
