#include "io/fileio.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <cstring>
#include <ctime>

#include "io/errors.hpp"
#include "io/limits.hpp"

namespace cli {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

// Temporary files of writes in flight, for the signal handler (which may only call async-signal-safe
// functions: it reads these slots and calls unlink()). Folder runs keep up to PipelineTuning::pending written
// files (at most 4096) waiting for their sync round, plus one being written per thread.
constexpr int kSlots = 8192;
std::atomic<char*> g_tmp_slots[kSlots];

int register_tmp(const std::string& tmp) {
    char* copy = strdup(tmp.c_str());
    if (!copy) return -1;
    for (int i = 0; i < kSlots; ++i) {
        char* expected = nullptr;
        if (g_tmp_slots[i].compare_exchange_strong(expected, copy)) return i;
    }
    std::free(copy);
    return -1;
}

void unregister_tmp(int slot) {
    if (slot < 0) return;
    char* p = g_tmp_slots[slot].exchange(nullptr);
    std::free(p);
}

RunCounts g_counts;

// Async-signal-safe text building for the handler: no allocation, no stdio.
struct SignalText {
    char buf[256];
    std::size_t n = 0;
    void add(const char* s) {
        while (*s && n + 1 < sizeof buf) buf[n++] = *s++;
    }
    void add(std::size_t v) {
        char digits[24];
        int k = 0;
        do {
            digits[k++] = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v && k < 24);
        while (k && n + 1 < sizeof buf) buf[n++] = digits[--k];
    }
};

SignalText interruption_text(int sig) {
    const std::size_t total = g_counts.total.load();
    SignalText t;
    if (g_counts.progress_bar.load()) t.add("\r\033[K");
    t.add(sig == SIGINT ? "imghist: interrupted" : sig == SIGTERM ? "imghist: interrupted (SIGTERM)" : "imghist: interrupted (SIGHUP)");
    if (total) {
        const std::size_t done = g_counts.done.load(), failed = g_counts.failed.load(), skipped = g_counts.skipped.load();
        t.add(" after ");
        t.add(done + failed + skipped);
        t.add(" of ");
        t.add(total);
        t.add(total == 1 ? " file (done " : " files (done ");
        t.add(done);
        t.add(", failed ");
        t.add(failed);
        t.add(", skipped ");
        t.add(skipped);
        t.add(")");
    }
    t.add("; unfinished outputs removed\n");
    return t;
}

extern "C" void cleanup_handler(int sig) {
    const int saved = errno;
    // The other threads run on until the signal is raised again: they learn of the interruption before any
    // temporary disappears under them (a write that then fails is unfinished, not failed), and the counts
    // are read before they could count such a failure.
    g_counts.interrupted.store(true);
    const SignalText t = interruption_text(sig);
    for (int i = 0; i < kSlots; ++i) {
        char* p = g_tmp_slots[i].load();
        if (p) unlink(p);
    }
    ssize_t ignored = ::write(2, t.buf, t.n);
    (void)ignored;
    errno = saved;
    signal(sig, SIG_DFL);
    raise(sig);
}

/// FNV-1a (32 bits) of the host's name, as 8 lower-case hex digits: the host part of our temporary names.
const std::string& host_tag() {
    static const std::string tag = [] {
        char host[256] = {};
        if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
        std::uint32_t h = 2166136261u;
        for (const char* c = host; *c; ++c) {
            h ^= static_cast<unsigned char>(*c);
            h *= 16777619u;
        }
        char hex[9];
        std::snprintf(hex, sizeof hex, "%08x", h);
        return std::string(hex);
    }();
    return tag;
}

bool all_digits(const std::string& s) {
    return !s.empty() && s.size() <= 10 && s.find_first_not_of("0123456789") == std::string::npos;
}

/// Whether a name is one of our temporaries; `host` gets its host tag ("" for the older form, which has
/// none) and `pid` its writer.
bool parse_temporary(const std::string& name, std::string& host, long& pid) {
    const std::string suffix = ".tmp";
    if (name.size() < 16 || name[0] != '.' || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        return false;
    const std::string body = name.substr(0, name.size() - suffix.size());
    std::string pid_and_n;
    if (body.rfind(".imghist-", 0) == 0) {  // .imghist-HHHHHHHH-PID-N
        if (body.size() < 9 + 8 + 4 || body[17] != '-') return false;
        host = body.substr(9, 8);
        if (host.find_first_not_of("0123456789abcdef") != std::string::npos) return false;
        pid_and_n = body.substr(18);
    } else {  // the older .NAME.imghist-PID-N
        const std::size_t at = body.rfind(".imghist-");
        if (at == std::string::npos || at == 0) return false;
        host.clear();
        pid_and_n = body.substr(at + 9);
    }
    const std::size_t dash = pid_and_n.find('-');
    if (dash == std::string::npos || !all_digits(pid_and_n.substr(0, dash)) || !all_digits(pid_and_n.substr(dash + 1)))
        return false;
    pid = std::atol(pid_and_n.substr(0, dash).c_str());
    return pid > 0;
}

// A write in flight touches its temporary every few milliseconds and renames it within seconds; one an hour
// old is stale whoever wrote it.
constexpr std::time_t kStaleSeconds = 3600;

}  // namespace

RunCounts& run_counts() { return g_counts; }

std::string temporary_name() {
    static std::atomic<unsigned> counter{0};
    return ".imghist-" + host_tag() + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".tmp";
}

std::vector<std::string> remove_stale_temporaries(const std::string& dir) {
    std::vector<std::string> removed;
    DIR* d = opendir(dir.c_str());
    if (!d) return removed;
    const std::time_t now = std::time(nullptr);
    while (dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        std::string host;
        long pid = 0;
        if (!parse_temporary(name, host, pid) || (host == host_tag() && pid == ::getpid())) continue;
        struct stat st {};
        if (fstatat(dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
        const bool old = now - st.st_mtime > kStaleSeconds;
        const bool writer_gone = host == host_tag() && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
        if ((old || writer_gone) && unlinkat(dirfd(d), name.c_str(), 0) == 0)
            removed.push_back((dir == "." ? std::string() : dir + "/") + name);
    }
    closedir(d);
    return removed;
}

namespace {
std::atomic<int> g_stdout_errno{0};
}  // namespace

void stdout_failed(int err) noexcept {
    int none = 0;
    g_stdout_errno.compare_exchange_strong(none, err ? err : EIO);
}

void finish_stdout() {
    // fflush reports a failed write of what is still buffered; ferror one that an earlier write already met.
    errno = 0;
    if (std::fflush(stdout) != 0) stdout_failed(errno);
    if (!std::ferror(stdout) && g_stdout_errno.load() == 0) return;
    const int err = g_stdout_errno.load();
    fail_io("<stdout>", "cannot write: " + (err ? errno_text(err) : std::string("write error")));
}

void install_signal_cleanup() {
    struct sigaction sa {};
    sa.sa_handler = cleanup_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGHUP, &sa, nullptr);
}

namespace {

[[noreturn]] void fail_too_large(const std::string& name, std::uint64_t size, std::uint64_t max_bytes, bool exact) {
    fail(ErrorCode::Unsupported, name,
         (exact ? "is " + format_bytes(size) : std::string("holds more than ") + format_bytes(max_bytes)) +
             ", above the input limit of " + format_bytes(max_bytes) + " (raise it with --max-input)");
}

/// Reads up to `n` bytes (fewer only at the end of the file); returns how many.
std::size_t read_some(int fd, std::uint8_t* p, std::size_t n, const std::string& name) {
    std::size_t got = 0;
    while (got < n) {
        const ssize_t r = ::read(fd, p + got, n - got);
        if (r < 0) {
            if (errno == EINTR) continue;
            fail_io(name, "cannot read: " + errno_text(errno));
        }
        if (r == 0) break;
        got += static_cast<std::size_t>(r);
    }
    return got;
}

struct Fd {
    int fd;
    ~Fd() {
        if (fd > 2) ::close(fd);
    }
};

/// A stream of unknown length (a pipe): pieces of growing size, joined into one buffer at the end, so that
/// every byte is copied once (a buffer doubled as it fills copies the data again at every doubling and
/// holds up to twice the data while the stream is read).
Bytes read_stream(int fd, const std::string& name, std::uint64_t max_bytes, std::size_t head_bytes, const HeadCheck& check) {
    std::vector<Bytes> pieces;
    std::uint64_t total = 0;
    // The first piece (64 KiB, read whole unless the stream ends first) holds the head.
    for (std::size_t piece = std::size_t(1) << 16;; piece = std::min<std::size_t>(piece * 2, std::size_t(64) << 20)) {
        Bytes b(piece);
        const std::size_t got = read_some(fd, b.data(), b.size(), name);
        b.resize(got);
        total += got;
        if (total > max_bytes) fail_too_large(name, total, max_bytes, false);
        if (pieces.empty() && check) check(b.data(), std::min<std::size_t>(got, head_bytes));
        pieces.push_back(std::move(b));
        if (got < piece) break;
    }
    if (pieces.size() == 1) return std::move(pieces.front());
    Bytes out(static_cast<std::size_t>(total));
    std::size_t at = 0;
    for (Bytes& p : pieces) {
        if (!p.empty()) std::memcpy(out.data() + at, p.data(), p.size());
        at += p.size();
        Bytes().swap(p);
    }
    return out;
}

}  // namespace

Bytes read_file(const std::string& path, std::uint64_t max_bytes, std::size_t head_bytes, const HeadCheck& check) {
    const std::string name = display_name(path);
    Fd f{path == "-" ? 0 : open_regular_file(path)};
    struct stat st {};
    if (fstat(f.fd, &st) != 0) fail_io(name, "cannot stat: " + errno_text(errno));
    if (!S_ISREG(st.st_mode)) return read_stream(f.fd, name, max_bytes, head_bytes, check);
    // A regular file (standard input redirected from one included): one allocation of its size, read from
    // the current position (where a shell left standard input).
    const off_t at = path == "-" ? ::lseek(f.fd, 0, SEEK_CUR) : 0;
    const std::uint64_t size = static_cast<std::uint64_t>(st.st_size) - static_cast<std::uint64_t>(at > 0 ? at : 0);
    if (size > max_bytes) fail_too_large(name, size, max_bytes, true);
    Bytes out;
    std::size_t got = 0;
    if (check) {
        std::uint8_t head[64];
        const std::size_t want = std::min<std::size_t>({head_bytes, sizeof head, static_cast<std::size_t>(size)});
        got = read_some(f.fd, head, want, name);
        check(head, got);
        out.resize(static_cast<std::size_t>(size));
        if (got) std::memcpy(out.data(), head, got);
    } else {
        out.resize(static_cast<std::size_t>(size));
    }
    got += read_some(f.fd, out.data() + got, out.size() - got, name);
    out.resize(got);  // a file that shrank while it was read (one that grew is read up to its size at open)
    return out;
}

namespace {
const char* kind_of(mode_t m) {
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISSOCK(m)) return "a socket";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISREG(m) || S_ISDIR(m)) return "";
    return "not a regular file";
}
}  // namespace

std::string special_file_kind(const std::string& path) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) return "";
    return kind_of(st.st_mode);
}

std::string special_file_kind(unsigned mode) { return kind_of(static_cast<mode_t>(mode)); }

int open_regular_file(const std::string& path) {
    // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever; it is cleared once fstat has
    // shown a regular file (where it changes nothing anyway).
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) fail_io(path, "cannot open: " + errno_text(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0) {
        int e = errno;
        ::close(fd);
        fail_io(path, "cannot stat: " + errno_text(e));
    }
    if (S_ISDIR(st.st_mode)) {
        ::close(fd);
        fail_io(path, "is a folder, not a file");
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        fail_io(path, std::string("is ") + kind_of(st.st_mode) + ", not a regular file; refusing to read it");
    }
    const int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
}

bool same_file(const std::string& a, const std::string& b) {
    if (a == "-" || b == "-") return false;
    struct stat sa {}, sb {};
    if (stat(a.c_str(), &sa) != 0 || stat(b.c_str(), &sb) != 0) return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool path_exists(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0;
}

bool is_directory(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void make_dirs(const std::string& path) {
    if (path.empty() || is_directory(path)) return;
    std::string parent = parent_dir(path);
    if (parent != path && !parent.empty() && parent != ".") make_dirs(parent);
    if (::mkdir(path.c_str(), 0777) != 0 && errno != EEXIST) fail_io(path, "cannot create folder: " + errno_text(errno));
    if (!is_directory(path)) fail_io(path, "exists and is not a folder");
}

std::string parent_dir(const std::string& path) {
    auto pos = path.find_last_of('/');
    if (pos == std::string::npos) return ".";
    if (pos == 0) return "/";
    return path.substr(0, pos);
}

std::string extension_of(const std::string& path) {
    auto slash = path.find_last_of('/');
    auto dot = path.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
    std::string ext = path.substr(dot + 1);
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return ext;
}

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
    if (path_ == "-") {
        to_stdout_ = true;
        fd_ = 1;
        return;
    }
    std::string dir = parent_dir(path_);
    if (!is_directory(dir)) {
        if (path_exists(dir)) fail_io(path_, "cannot write: " + dir + " is not a folder");
        fail_io(path_, "cannot write: folder " + dir + " does not exist");
    }
    struct stat existing {};
    const bool exists = stat(path_.c_str(), &existing) == 0;
    if (exists && S_ISDIR(existing.st_mode)) fail_io(path_, "cannot write: a folder has that name");
    tmp_ = (dir == "." && path_.find('/') == std::string::npos ? std::string() : dir + "/") + temporary_name();
    slot_ = register_tmp(tmp_);
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0) {
        int e = errno;
        unregister_tmp(slot_);
        fail_io(path_, "cannot write: " + errno_text(e));
    }
    if (exists && S_ISREG(existing.st_mode)) fchmod(fd_, existing.st_mode & 07777);  // a replaced file keeps its mode
}

OutputFile::~OutputFile() {
    if (to_stdout_) return;
    if (fd_ >= 0) ::close(fd_);
    if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());
    unregister_tmp(slot_);
}

void OutputFile::write(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    while (bytes > 0) {
        ssize_t n = ::write(fd_, p, bytes);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail_io(display_name(path_, true), "cannot write: " + errno_text(errno));
        }
        p += n;
        bytes -= static_cast<std::size_t>(n);
    }
}

void OutputFile::commit() {
    if (to_stdout_) {
        committed_ = true;
        return;
    }
    // The data must be on disk before the rename makes it the destination: otherwise a crash can leave a
    // complete-looking name with no data behind it.
    if (::fsync(fd_) != 0 && errno != EINVAL) fail_io(path_, "cannot write: " + errno_text(errno));
    if (::close(fd_) != 0) {
        fd_ = -1;
        fail_io(path_, "cannot write: " + errno_text(errno));
    }
    fd_ = -1;
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) fail_io(path_, "cannot rename into place: " + errno_text(errno));
    committed_ = true;
    // And the rename itself is on disk once the folder is (best effort: some file systems refuse fsync on a
    // folder, and the file is complete either way).
    int dir = ::open(parent_dir(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
}

PendingFile OutputFile::release() {
    if (to_stdout_) throw Error(ErrorCode::InvalidArgument, "OutputFile::release: standard output has no temporary");
    // Write-back starts now, so that the round's sync finds most of the data on its way to the disk.
    ::sync_file_range(fd_, 0, 0, SYNC_FILE_RANGE_WRITE);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail_io(path_, "cannot write: " + errno_text(errno));
    PendingFile f{tmp_, path_, slot_};
    tmp_.clear();
    slot_ = -1;
    committed_ = true;  // the temporary is the caller's now
    return f;
}

void rename_into_place(PendingFile& f) {
    if (::rename(f.tmp.c_str(), f.path.c_str()) != 0) {
        const int e = errno;
        discard(f);
        fail_io(f.path, "cannot rename into place: " + errno_text(e));
    }
    unregister_tmp(f.slot);
    f.slot = -1;
}

void discard(PendingFile& f) {
    if (!f.tmp.empty()) ::unlink(f.tmp.c_str());
    unregister_tmp(f.slot);
    f.slot = -1;
}

void write_file_atomic(const std::string& path, const void* data, std::size_t bytes) {
    OutputFile f(path);
    f.write(data, bytes);
    f.commit();
}

}  // namespace cli
