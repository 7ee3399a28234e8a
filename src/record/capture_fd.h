// The descriptor a capture library (the malloc tracker, the CUPTI tracer) writes its file
// through, kept out of the traced program's way.
//
// A program may close descriptors it did not open (closefrom(3), the daemon pattern) and then
// open files of its own, which get the freed numbers: writing on to "our" number would put binary
// records into the program's data. So the descriptor is moved high and close-on-exec, the file's
// identity (device, inode) is saved at open, and ensure() checks it before each write (one fstat
// per buffer flush, never per record). When the number is closed or names another file, the file
// is reopened by its path and appended to, and the reopen is counted. Never closed unless it is
// still ours. A thread of the program that closes the number and opens a file between the check
// and the write is not caught (a window of one write).
//
// Header-only and malloc-free: the malloc tracker includes it.
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace mlprof::capture {

class CaptureFd {
 public:
  // Creates `path` exclusively. False with errno set on failure (EEXIST: try another name).
  // Where the soft RLIMIT_NOFILE leaves no free number (EMFILE: the program lowered it), it is
  // raised up to the hard limit for this one open and put back: callers do it while the process
  // has one thread (its start, a forked child).
  bool create(const char* path) {
    fd_ = -1;
    reopened_ = 0;
    error_ = 0;
    size_t n = std::strlen(path);
    if (n >= sizeof(path_)) {
      errno = ENAMETOOLONG;
      return false;
    }
    std::memcpy(path_, path, n + 1);
    int fd = ::open(path_, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EMFILE) {
      rlimit rl{};
      if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rlimit raised = rl;
        raised.rlim_cur = rl.rlim_max;
        if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) {
          fd = ::open(path_, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
          int e = errno;
          ::setrlimit(RLIMIT_NOFILE, &rl);
          errno = e;
        } else {
          errno = EMFILE;
        }
      } else {
        errno = EMFILE;
      }
    }
    if (fd < 0) {
      error_ = errno;
      return false;
    }
    return adopt(fd);
  }

  // True when fd() is still this file: one fstat.
  bool owned() const {
    struct stat st;
    return fd_ >= 0 && ::fstat(fd_, &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
  }

  // Before writing: true when fd() is this file, reopened (positioned at its end) if the program
  // closed or took the number. False, with error() set, when it cannot be reopened.
  bool ensure() {
    if (owned()) return true;
    if (path_[0] == 0) return false;
    int fd = ::open(path_, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      error_ = errno;
      fd_ = -1;
      return false;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0 || st.st_dev != dev_ || st.st_ino != ino_) {
      ::close(fd);  // another file now has our name: not ours to append to
      error_ = ESTALE;
      fd_ = -1;
      return false;
    }
    ::lseek(fd, 0, SEEK_END);
    ++reopened_;
    return adopt(fd);
  }

  // Closes the descriptor if it is still ours: never one the program now holds under our number.
  void close() {
    if (owned()) ::close(fd_);
    fd_ = -1;
  }
  // Forgets the descriptor without closing it (a forked child's copy of the parent's file).
  void forget() {
    fd_ = -1;
    path_[0] = 0;
  }

  int fd() const { return fd_; }
  const char* path() const { return path_; }
  uint32_t reopened() const { return reopened_; }  // times the program closed or took it
  int error() const { return error_; }             // errno of the failed create or reopen

 private:
  // Moves `fd` up, out of the numbers a program's open() hands out first, close-on-exec, and
  // saves the file's identity.
  bool adopt(int fd) {
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur >= 128) {
      // Below 1024 whatever the limit: a number near a limit of 2^20 would grow the kernel's
      // descriptor table to that size.
      int high = static_cast<int>((rl.rlim_cur < 1024 ? rl.rlim_cur : 1024) - 24);
      if (fd < high) {
        int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, high);
        if (moved >= 0) {
          ::close(fd);
          fd = moved;
        }
      }
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      error_ = errno;
      ::close(fd);
      fd_ = -1;
      return false;
    }
    fd_ = fd;
    dev_ = st.st_dev;
    ino_ = st.st_ino;
    return true;
  }

  int fd_ = -1;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  uint32_t reopened_ = 0;
  int error_ = 0;
  char path_[4096] = {};
};

}  // namespace mlprof::capture
