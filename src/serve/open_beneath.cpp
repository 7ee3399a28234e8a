#include "serve/open_beneath.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace mlprof::serve {
namespace {

constexpr int kFileFlags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;

int open_beneath_openat2(int dir_fd, const std::string& rel) {
  open_how how{};
  how.flags = kFileFlags;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  for (;;) {
    long fd = ::syscall(SYS_openat2, dir_fd, rel.c_str(), &how, sizeof how);
    if (fd >= 0) return static_cast<int>(fd);
    if (errno != EINTR && errno != EAGAIN) return -errno;  // EAGAIN: a rename raced the lookup
  }
}

int open_beneath_components(int dir_fd, const std::string& rel) {
  int cur = dir_fd;
  size_t start = 0;
  for (;;) {
    size_t slash = rel.find('/', start);
    bool last = slash == std::string::npos;
    std::string part = rel.substr(start, last ? std::string::npos : slash - start);
    int flags = last ? kFileFlags | O_NOFOLLOW : O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW;
    int fd = ::openat(cur, part.c_str(), flags);
    int err = errno;
    if (cur != dir_fd) ::close(cur);
    if (fd < 0) return err == ENOTDIR && !last ? -ELOOP : -err;  // a symlinked folder: ENOTDIR
    if (last) return fd;
    cur = fd;
    start = slash + 1;
  }
}

}  // namespace

int open_beneath(int dir_fd, const std::string& rel, bool use_openat2) {
  if (use_openat2) {
    int fd = open_beneath_openat2(dir_fd, rel);
    if (fd != -ENOSYS && fd != -EPERM) return fd;  // EPERM: a seccomp filter without openat2
  }
  return open_beneath_components(dir_fd, rel);
}

}  // namespace mlprof::serve
