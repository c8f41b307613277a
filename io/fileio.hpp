// imghist_io — reading whole files, and writing outputs atomically.
//
// Outputs are written to a temporary file in the destination's folder and renamed over the destination
// only when complete, so no reader ever sees half a file and a failed write leaves nothing behind. The
// temporary names of writes in flight are kept in a small table that the SIGINT/SIGTERM handler removes.
//
// Temporary names are short whatever the destination's length (a 255-byte output name still fits
// NAME_MAX) and say whose they are: ".imghist-HHHHHHHH-PID-N.tmp", HHHHHHHH the FNV-1a (32-bit, lower-case
// hex) of the host's name, PID the writing process. A process killed outright (SIGKILL, power loss) leaves
// one behind; remove_stale_temporaries clears those of a folder.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "io/memory.hpp"

namespace cli {

/// File contents and encoded images: huge-page friendly, not zero-filled on resize.
using Bytes = std::vector<std::uint8_t, BigAllocator<std::uint8_t>>;

/// Looks at the first bytes of a file before the rest is read; throws to refuse the file.
using HeadCheck = std::function<void(const std::uint8_t* head, std::size_t size)>;

/// Whole file ("-" = standard input), at most `max_bytes` of it: a regular file is read into one allocation
/// of its size (a larger one is refused before anything is read), standard input in pieces joined once at
/// its end (refused once it passes the limit). `check`, when given, sees the first `head_bytes` (fewer for
/// a shorter file) before the rest is read. Errors name the file: missing, unreadable, a folder, not a
/// regular file, too large.
Bytes read_file(const std::string& path, std::uint64_t max_bytes = std::uint64_t(4) << 30, std::size_t head_bytes = 0,
                const HeadCheck& check = {});
/// Opens a regular file for reading without ever blocking: a FIFO, socket or device is refused (its open
/// would wait for a writer, or its reads never end). Returns the descriptor (close-on-exec, blocking reads);
/// errors name the file.
int open_regular_file(const std::string& path);
/// What a path is, in words, when it is neither a regular file nor a folder ("a FIFO", "a socket", ...);
/// empty for regular files and folders (following symbolic links).
std::string special_file_kind(const std::string& path);
/// The same for a mode stat() gave (st_mode).
std::string special_file_kind(unsigned mode);

/// True when both paths name the same existing file (same device and inode).
bool same_file(const std::string& a, const std::string& b);
bool path_exists(const std::string& path);
bool is_directory(const std::string& path);
/// Creates the folder and its parents (like mkdir -p); errors name the folder.
void make_dirs(const std::string& path);
std::string parent_dir(const std::string& path);
/// Lower-case extension without the dot ("" when none).
std::string extension_of(const std::string& path);

/// Installs the SIGINT/SIGTERM/SIGHUP handler: it removes the temporary files of writes in flight, prints
/// "interrupted after N of M files (done D, failed F, skipped S)" when a run is counting (run_counts), and
/// ends the process by the same signal (so a shell sees status 130 for Ctrl-C and stops its loop).
void install_signal_cleanup();

/// The counts of the run in progress, for the interruption message (lock-free atomics: the signal handler
/// reads them). `total` = 0 means no run is counting.
struct RunCounts {
    std::atomic<std::size_t> total{0}, done{0}, failed{0}, skipped{0};
    std::atomic<bool> progress_bar{false};  ///< a bar is drawn on stderr: the message clears its line first
    /// Set by the handler before it removes the temporaries: a write failing after it is an unfinished file
    /// of the interrupted run, not a failure to report.
    std::atomic<bool> interrupted{false};
};
RunCounts& run_counts();

/// The temporary name of a write in flight: recognisable as ours, at most 48 bytes.
std::string temporary_name();
/// Removes the stale temporaries of ours directly in `dir` (not its sub-folders): names of the form above
/// (and the older ".NAME.imghist-PID-N.tmp") whose writer is gone — written on this host by a process that
/// no longer exists — or that were last modified more than an hour ago (the writer's host cannot be asked).
/// Other files are never touched. Returns the removed paths.
std::vector<std::string> remove_stale_temporaries(const std::string& dir);

/// Remembers why a write to standard output failed (errno), for finish_stdout's message.
void stdout_failed(int err) noexcept;
/// Flushes standard output and reports a failed write to it (a full disk, /dev/full, a closed pipe): throws
/// Error(Io) naming <stdout>. Called after a command's last output, so every write error fails the command.
void finish_stdout();

/// A complete temporary file waiting to be made durable and renamed into place: folder runs make many such
/// files durable per sync call (pipeline/durable_writer.hpp). It stays registered with the signal handler
/// (an interruption removes it) until rename_into_place or discard.
struct PendingFile {
    std::string tmp, path;
    int slot = -1;
};

/// A file being written: a temporary name until commit() renames it into place; the destructor removes
/// the temporary when commit() was not reached. "-" writes to standard output directly.
class OutputFile {
public:
    explicit OutputFile(std::string path);
    ~OutputFile();
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    void write(const void* data, std::size_t bytes);
    /// Makes the data durable (fsync), renames the temporary over the destination and makes the folder's
    /// entry durable.
    void commit();
    /// Instead of commit(): starts the data's write-back to the disk (it goes on in the background), closes
    /// the temporary and hands it over, not yet durable; this object then owns nothing. Not for "-".
    PendingFile release();
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

/// Renames a released temporary over its destination. Its data must have been made durable first (fdatasync
/// of the file, or syncfs of its file system); the folder's entry is left to the caller (one fsync of each
/// folder per round of renames). Unregisters it. Throws Error(Io) naming the destination.
void rename_into_place(PendingFile& f);
/// Removes a released temporary that will not be renamed, and unregisters it.
void discard(PendingFile& f);

}  // namespace cli
