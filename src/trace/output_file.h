// How every file mlprof writes reaches its path (docs/hardening.md): one implementation for
// the CLI's -o, `export` (.mlprof, .json, .sqlite, .csv), `mlprof run`, the recorder and the
// Python module.
//
// - A regular file (or none yet) is written to an unpredictable temporary file created
//   exclusively in the target's directory (O_TMPFILE, else O_CREAT|O_EXCL|O_NOFOLLOW under a
//   random name), flushed to disk (fsync), then renamed over the target in one step: the path
//   holds the old file or the complete new one, never half of one. An existing file keeps its
//   permission bits (a 0600 file stays 0600) and, where allowed, its owner and group; a new one
//   gets 0666 minus the umask. A file the caller may not write is refused, as a shell would.
// - A symbolic link is written through: the file it points to is replaced (by the rules above)
//   and the link stays. A link to nothing is refused.
// - A character device (/dev/null, a terminal) or a FIFO is written to in place, as a shell
//   redirection would. Block devices, sockets and directories are refused with one line.
// - A path naming one of this process's descriptors (/dev/stdout, /dev/stderr, /dev/fd/N,
//   /proc/self/fd/N, or a symlink chain reaching one) is written through a dup of it: its offset
//   and O_APPEND are shared, so `-o /dev/stdout >> log` appends and `| cmd` reaches the pipe.
#pragma once

#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "mlprof/status.h"

namespace mlprof {

class OutputFile {
 public:
  struct Options {
    // The writer opens the temporary file by name (SQLite): no O_TMPFILE.
    bool need_name = false;
  };
  // Opens the file that becomes `path` on commit(). Errors are one line naming `path`.
  static Result<OutputFile> open(const std::string& path, Options options);
  static Result<OutputFile> open(const std::string& path) { return open(path, Options{}); }

  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&& other) noexcept;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();  // without commit(): the temporary file is removed, `path` is untouched

  const std::string& path() const { return path_; }
  // Where the bytes go now: the temporary file's path (a /proc/self/fd link for an unnamed
  // one), or the path itself for a device or FIFO.
  const std::string& write_path() const { return write_path_; }
  int fd() const { return fd_; }
  bool special() const { return special_; }  // a device, FIFO or descriptor, written in place

  Status write(std::string_view bytes);
  // A stdio stream on the file (owned here, closed by commit()).
  FILE* stdio();
  // A C++ stream on the file (owned here, flushed by commit()).
  std::ostream& stream();

  // Flushes, syncs and renames into place. After an error `path` is as it was.
  Status commit();

 private:
  OutputFile() = default;
  void discard();

  std::string path_;        // as given (messages)
  std::string target_;      // the file that is replaced: `path`, or what its symlink names
  std::string write_path_;  // see write_path()
  std::string temp_name_;   // the temporary file's name in the directory (empty: unnamed)
  int fd_ = -1;
  int dir_fd_ = -1;
  bool special_ = false;
  bool failed_ = false;
  std::string error_;
  FILE* stdio_ = nullptr;
  std::unique_ptr<std::streambuf> buf_;
  std::unique_ptr<std::ostream> stream_;
};

// Writes `bytes` to `path` through an OutputFile.
Status write_output_file(const std::string& path, std::string_view bytes);

// The checks OutputFile::open makes, without writing anything (`mlprof run` checks its -o
// before starting the command).
Status check_output_path(const std::string& path);

}  // namespace mlprof
