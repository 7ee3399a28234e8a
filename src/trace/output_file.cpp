#include "trace/output_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

namespace mlprof {
namespace {

// An output that cannot be written is the system's refusal (exit 1, not bad input).
Status fail(const std::string& path, const std::string& what) {
  return Status::error(StatusCode::kIo, path + ": " + what);
}

std::string errno_text(int e) { return std::strerror(e); }

// What a path names once symbolic links are followed: the file to replace or write in place.
struct Target {
  std::string path;  // the file itself (a symlink's target, resolved)
  bool exists = false;
  bool special = false;  // a character device or FIFO: written in place
  int descriptor = -1;   // the path names this process's open descriptor: written through it
  struct stat st {};
};

std::string dir_of(const std::string& p);

// N when `p` names this process's descriptor N textually: /dev/stdout, /dev/stderr, /dev/fd/N,
// /proc/self/fd/N, /proc/thread-self/fd/N, /proc/<our pid>/fd/N.
int descriptor_name(const std::string& p) {
  if (p == "/dev/stdin") return 0;
  if (p == "/dev/stdout") return 1;
  if (p == "/dev/stderr") return 2;
  std::string rest;
  std::string own = "/proc/" + std::to_string(::getpid()) + "/fd/";
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"})
    if (p.rfind(prefix, 0) == 0) rest = p.substr(std::strlen(prefix));
  if (rest.empty() && p.rfind(own, 0) == 0) rest = p.substr(own.size());
  if (rest.empty() || rest.size() > 9 || rest.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::atoi(rest.c_str());
}

// Follows the chain of symbolic links from `path` (as the kernel would, one link at a time) and
// returns the descriptor it reaches, or -1. Opening /proc/self/fd/N by name would not do: for a
// pipe it is "pipe:[ino]" (no such file), and for a file it is a new open at offset 0 without
// O_APPEND, so `-o /dev/stdout >> log` would overwrite or replace log.
int descriptor_of(const std::string& path) {
  std::string cur = path;
  for (int hops = 0; hops < 40; ++hops) {
    if (int fd = descriptor_name(cur); fd >= 0) return fd;
    char link[PATH_MAX];
    ssize_t n = ::readlink(cur.c_str(), link, sizeof(link) - 1);
    if (n <= 0) return -1;  // not a link (or unreadable): not a descriptor
    link[n] = 0;
    cur = link[0] == '/' ? std::string(link) : dir_of(cur) + "/" + link;
  }
  return -1;
}

Status resolve_descriptor(const std::string& path, int fd, Target& t) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0)
    return fail(path, "descriptor " + std::to_string(fd) + " is not open: nothing to write to");
  if ((flags & O_ACCMODE) == O_RDONLY)
    return fail(path, "descriptor " + std::to_string(fd) + " is not open for writing");
  t.descriptor = fd;
  t.special = true;
  t.exists = true;
  ::fstat(fd, &t.st);
  return Status::ok();
}

Status resolve(const std::string& path, Target& t) {
  if (path.empty()) return Status::error(StatusCode::kInvalidArgument, "an empty output path");
  t.path = path;
  if (int fd = descriptor_of(path); fd >= 0) return resolve_descriptor(path, fd, t);
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::ok();  // a new file (its directory is checked next)
    return fail(path, "cannot write: " + errno_text(errno));
  }
  if (S_ISLNK(st.st_mode)) {
    char* real = ::realpath(path.c_str(), nullptr);
    if (!real) {
      if (errno == ENOENT)
        return fail(path,
                    "a symbolic link to a file that does not exist: refusing to write through it "
                    "(name the target instead)");
      return fail(path, "cannot follow the symbolic link: " + errno_text(errno));
    }
    t.path = real;
    std::free(real);
    if (::stat(t.path.c_str(), &st) != 0) return fail(path, "cannot write: " + errno_text(errno));
  }
  if (S_ISDIR(st.st_mode)) return fail(path, "is a directory");
  if (S_ISBLK(st.st_mode)) return fail(path, "is a block device: refusing to write to it");
  if (S_ISSOCK(st.st_mode)) return fail(path, "is a socket: refusing to write to it");
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
    t.special = true;
  else if (!S_ISREG(st.st_mode))
    return fail(path, "is not a regular file: refusing to write to it");
  t.exists = true;
  t.st = st;
  if (::access(t.path.c_str(), W_OK) != 0) return fail(path, "cannot write: " + errno_text(errno));
  return Status::ok();
}

std::string dir_of(const std::string& p) {
  size_t slash = p.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

std::string base_of(const std::string& p) {
  size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// The process's umask without changing it (umask() would, for a moment, for every thread).
mode_t current_umask() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Umask:", 0) == 0)
      return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
  mode_t m = ::umask(022);
  ::umask(m);
  return m;
}

// ".NAME.XXXXXXXXXXXX": hidden (serve lists no hidden files), unpredictable.
std::string temp_name(const std::string& base) {
  static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  unsigned char rnd[12];
  if (::getrandom(rnd, sizeof rnd, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof rnd)) {
    uint64_t x =
        static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
        (static_cast<uint64_t>(::getpid()) << 40) ^ reinterpret_cast<uintptr_t>(&x);
    for (unsigned char& c : rnd) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      c = static_cast<unsigned char>(x);
    }
  }
  std::string name = "." + base.substr(0, 200) + ".";
  for (unsigned char c : rnd) name.push_back(alphabet[c % (sizeof alphabet - 1)]);
  return name;
}

class FdStreamBuf : public std::streambuf {
 public:
  explicit FdStreamBuf(OutputFile* f) : file_(f), buf_(1 << 16) {
    setp(buf_.data(), buf_.data() + buf_.size());
  }
  void retarget(OutputFile* f) { file_ = f; }

 protected:
  int_type overflow(int_type c) override {
    if (sync() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n >= static_cast<std::streamsize>(buf_.size())) {
      if (sync() != 0) return 0;
      return file_->write(std::string_view(s, static_cast<size_t>(n))) ? n : 0;
    }
    return std::streambuf::xsputn(s, n);
  }
  int sync() override {
    size_t n = static_cast<size_t>(pptr() - pbase());
    setp(buf_.data(), buf_.data() + buf_.size());
    if (n == 0) return 0;
    return file_->write(std::string_view(buf_.data(), n)) ? 0 : -1;
  }

 private:
  OutputFile* file_;
  std::vector<char> buf_;
};

}  // namespace

Result<OutputFile> OutputFile::open(const std::string& path, Options options) {
  Target t;
  MLPROF_RETURN_IF_ERROR(resolve(path, t));
  OutputFile f;
  f.path_ = path;
  f.target_ = t.path;
  if (t.descriptor >= 0) {
    // Through the descriptor itself (a dup shares its offset and O_APPEND): `>> log` appends,
    // `| cmd` reaches the pipe. What this process wrote to stdio first goes first.
    if (t.descriptor == 1) std::fflush(stdout);
    if (t.descriptor == 2) std::fflush(stderr);
    f.fd_ = ::fcntl(t.descriptor, F_DUPFD_CLOEXEC, 3);
    if (f.fd_ < 0) return fail(path, "cannot write to the descriptor: " + errno_text(errno));
    f.special_ = true;
    f.write_path_ = path;
    return f;
  }
  if (t.special) {
    // As a shell redirection would: no temporary file, no rename (a FIFO waits for a reader).
    f.fd_ = ::open(t.path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (f.fd_ < 0) return fail(path, "cannot open for writing: " + errno_text(errno));
    f.special_ = true;
    f.write_path_ = t.path;
    return f;
  }
  std::string dir = dir_of(t.path);
  f.dir_fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (f.dir_fd_ < 0) {
    if (errno == ENOENT) return fail(path, "cannot write: directory " + dir + " does not exist");
    return fail(path, "cannot write in " + dir + ": " + errno_text(errno));
  }
  // Unnamed first: nothing is left behind even if mlprof is killed while writing.
  if (!options.need_name && ::access("/proc/self/fd", X_OK) == 0) {
    f.fd_ = ::openat(f.dir_fd_, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (f.fd_ >= 0) f.write_path_ = "/proc/self/fd/" + std::to_string(f.fd_);
  }
  if (f.fd_ < 0) {
    std::string base = base_of(t.path);
    for (int attempt = 0; attempt < 64; ++attempt) {
      std::string name = temp_name(base);
      f.fd_ = ::openat(f.dir_fd_, name.c_str(),
                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (f.fd_ >= 0) {
        f.temp_name_ = name;
        f.write_path_ = dir + "/" + name;
        break;
      }
      if (errno != EEXIST) break;
    }
    if (f.fd_ < 0) return fail(path, "cannot write in " + dir + ": " + errno_text(errno));
  }
  if (t.exists) {
    // The replaced file's permission bits (not setuid/setgid/sticky) and, where the caller may
    // set them, its owner and group.
    ::fchmod(f.fd_, t.st.st_mode & 0777);
    if (t.st.st_uid != ::geteuid() || t.st.st_gid != ::getegid()) {
      if (::fchown(f.fd_, t.st.st_uid, t.st.st_gid) != 0)
        (void)!::fchown(f.fd_, static_cast<uid_t>(-1), t.st.st_gid);
    }
  } else {
    ::fchmod(f.fd_, 0666 & ~current_umask());
  }
  return f;
}

OutputFile::OutputFile(OutputFile&& o) noexcept { *this = std::move(o); }

OutputFile& OutputFile::operator=(OutputFile&& o) noexcept {
  if (this == &o) return *this;
  discard();
  path_ = std::move(o.path_);
  target_ = std::move(o.target_);
  write_path_ = std::move(o.write_path_);
  temp_name_ = std::move(o.temp_name_);
  fd_ = std::exchange(o.fd_, -1);
  dir_fd_ = std::exchange(o.dir_fd_, -1);
  special_ = o.special_;
  failed_ = o.failed_;
  error_ = std::move(o.error_);
  stdio_ = std::exchange(o.stdio_, nullptr);
  buf_ = std::move(o.buf_);
  stream_ = std::move(o.stream_);
  if (buf_) static_cast<FdStreamBuf*>(buf_.get())->retarget(this);
  return *this;
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() {
  stream_.reset();
  buf_.reset();
  if (stdio_) std::fclose(stdio_);
  stdio_ = nullptr;
  if (fd_ >= 0) ::close(fd_);
  if (!temp_name_.empty() && dir_fd_ >= 0) ::unlinkat(dir_fd_, temp_name_.c_str(), 0);
  if (dir_fd_ >= 0) ::close(dir_fd_);
  fd_ = dir_fd_ = -1;
  temp_name_.clear();
}

Status OutputFile::write(std::string_view bytes) {
  if (failed_) return Status::error(StatusCode::kIo, error_);
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failed_ = true;
      error_ = path_ + ": write failed: " + errno_text(n < 0 ? errno : EIO);
      return Status::error(StatusCode::kIo, error_);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return Status::ok();
}

FILE* OutputFile::stdio() {
  if (!stdio_) {
    int dup = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
    stdio_ = dup >= 0 ? ::fdopen(dup, "wb") : nullptr;
    if (!stdio_ && dup >= 0) ::close(dup);
    if (!stdio_) {  // a stream that fails every write: commit() reports it
      failed_ = true;
      error_ = path_ + ": cannot open for writing: " + errno_text(errno);
      stdio_ = std::fopen("/dev/full", "wb");
    }
  }
  return stdio_;
}

std::ostream& OutputFile::stream() {
  if (!stream_) {
    buf_ = std::make_unique<FdStreamBuf>(this);
    stream_ = std::make_unique<std::ostream>(buf_.get());
  }
  return *stream_;
}

Status OutputFile::commit() {
  auto fail_now = [&](std::string message) {
    discard();
    return Status::error(StatusCode::kIo, std::move(message));
  };
  if (stream_) {
    stream_->flush();
    if (!*stream_ && !failed_) return fail_now(path_ + ": write failed");
  }
  if (stdio_) {
    bool bad = std::fflush(stdio_) != 0 || std::ferror(stdio_);
    int e = errno;
    bad |= std::fclose(stdio_) != 0;
    stdio_ = nullptr;
    if (bad && !failed_) return fail_now(path_ + ": write failed: " + errno_text(e));
  }
  if (failed_) return fail_now(error_);
  if (fd_ < 0) return fail_now(path_ + ": already written");
  if (special_) {
    int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) return fail_now(path_ + ": write failed: " + errno_text(errno));
    return Status::ok();
  }
  // On disk before it gets the name: a crash never leaves an empty or partial file there.
  if (::fsync(fd_) != 0) return fail_now(path_ + ": write failed: " + errno_text(errno));
  if (temp_name_.empty()) {  // unnamed (O_TMPFILE): give it a name next to the target first
    std::string proc = "/proc/self/fd/" + std::to_string(fd_);
    for (int attempt = 0; attempt < 64 && temp_name_.empty(); ++attempt) {
      std::string name = temp_name(base_of(target_));
      if (::linkat(AT_FDCWD, proc.c_str(), dir_fd_, name.c_str(), AT_SYMLINK_FOLLOW) == 0)
        temp_name_ = name;
      else if (errno != EEXIST)
        return fail_now(path_ + ": cannot name the written file: " + errno_text(errno));
    }
    if (temp_name_.empty()) return fail_now(path_ + ": cannot name the written file");
  }
  if (::renameat(dir_fd_, temp_name_.c_str(), dir_fd_, base_of(target_).c_str()) != 0)
    return fail_now(path_ + ": cannot rename into place: " + errno_text(errno));
  temp_name_.clear();
  ::fsync(dir_fd_);  // the rename itself durable
  discard();
  return Status::ok();
}

Status write_output_file(const std::string& path, std::string_view bytes) {
  Result<OutputFile> f = OutputFile::open(path);
  MLPROF_RETURN_IF_ERROR(f);
  MLPROF_RETURN_IF_ERROR(f->write(bytes));
  return f->commit();
}

Status check_output_path(const std::string& path) {
  Target t;
  MLPROF_RETURN_IF_ERROR(resolve(path, t));
  if (t.special) return Status::ok();
  std::string dir = dir_of(t.path);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return fail(path, "cannot write: directory " + dir + " does not exist");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return fail(path, "cannot write in " + dir + ": " + errno_text(errno));
  return Status::ok();
}

}  // namespace mlprof
