#include "io/fileio.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cctype>
#include <cstring>

#include "io/errors.hpp"

namespace cli {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

// Temporary files of writes in flight, for the signal handler (which may only call async-signal-safe
// functions: it reads these slots and calls unlink()).
constexpr int kSlots = 512;
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

extern "C" void cleanup_handler(int sig) {
    for (int i = 0; i < kSlots; ++i) {
        char* p = g_tmp_slots[i].load();
        if (p) unlink(p);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

}  // namespace

void install_signal_cleanup() {
    struct sigaction sa {};
    sa.sa_handler = cleanup_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGHUP, &sa, nullptr);
}

Bytes read_file(const std::string& path) {
    Bytes out;
    if (path == "-") {
        std::uint8_t buf[1 << 16];
        for (;;) {
            ssize_t n = ::read(0, buf, sizeof buf);
            if (n < 0) {
                if (errno == EINTR) continue;
                fail_io("<stdin>", "cannot read: " + errno_text(errno));
            }
            if (n == 0) break;
            out.insert(out.end(), buf, buf + n);
        }
        return out;
    }
    int fd = open_regular_file(path);
    struct stat st {};
    if (fstat(fd, &st) != 0) {
        int e = errno;
        ::close(fd);
        fail_io(path, "cannot stat: " + errno_text(e));
    }
    if (S_ISREG(st.st_mode)) out.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    for (;;) {
        if (got == out.size()) out.resize(out.size() < 65536 ? 65536 : out.size() * 2);
        ssize_t n = ::read(fd, out.data() + got, out.size() - got);
        if (n < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            ::close(fd);
            fail_io(path, "cannot read: " + errno_text(e));
        }
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    ::close(fd);
    out.resize(got);
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
    if (is_directory(path_)) fail_io(path_, "cannot write: a folder has that name");
    static std::atomic<unsigned> counter{0};
    std::string base = path_.substr(path_.find_last_of('/') == std::string::npos ? 0 : path_.find_last_of('/') + 1);
    tmp_ = (dir == "." && path_.find('/') == std::string::npos ? std::string() : dir + "/") + "." + base +
           ".imghist-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".tmp";
    slot_ = register_tmp(tmp_);
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0) {
        int e = errno;
        unregister_tmp(slot_);
        fail_io(path_, "cannot write: " + errno_text(e));
    }
    struct stat st {};
    if (stat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode)) fchmod(fd_, st.st_mode & 07777);
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

void write_file_atomic(const std::string& path, const void* data, std::size_t bytes) {
    OutputFile f(path);
    f.write(data, bytes);
    f.commit();
}

}  // namespace cli
