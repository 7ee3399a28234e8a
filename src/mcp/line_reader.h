// Newline-delimited messages from a descriptor (MCP's stdio transport), each at most `max_bytes`:
// a longer line is skipped to its end without being held in memory, and reported as such, so a
// client sending one huge line costs a bounded buffer and the session goes on.
#pragma once

#include <cstddef>
#include <string>

namespace mlprof::mcp {

class LineReader {
 public:
  LineReader(int fd, size_t max_bytes) : fd_(fd), max_(max_bytes) {}

  enum class Status { kLine, kTooLong, kEnd };
  // The next line without its "\n" (or "\r\n"); kTooLong once a line past max_bytes has been
  // skipped; kEnd at end of input or on a read error. A last line without "\n" is a line.
  Status next(std::string& line);

 private:
  bool fill();  // reads more; false at the end
  int fd_;
  size_t max_;
  std::string buf_;
  size_t pos_ = 0;
  bool eof_ = false;
};

}  // namespace mlprof::mcp
