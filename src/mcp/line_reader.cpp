#include "mcp/line_reader.h"

#include <unistd.h>

#include <cerrno>

namespace mlprof::mcp {
namespace {
constexpr size_t kChunk = 64 * 1024;
}

bool LineReader::fill() {
  if (eof_) return false;
  if (pos_ > 0) {  // keep only the unread part
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  size_t old = buf_.size();
  buf_.resize(old + kChunk);
  ssize_t n;
  do {
    n = ::read(fd_, buf_.data() + old, kChunk);
  } while (n < 0 && errno == EINTR);
  buf_.resize(old + (n > 0 ? static_cast<size_t>(n) : 0));
  if (n <= 0) eof_ = true;
  return n > 0;
}

LineReader::Status LineReader::next(std::string& line) {
  bool skipping = false;  // inside a line past max_: dropped as it arrives
  size_t scanned = pos_;  // bytes before this were searched for '\n' already
  for (;;) {
    size_t nl = buf_.find('\n', scanned);
    if (nl != std::string::npos) {
      if (skipping) {
        pos_ = nl + 1;
        return Status::kTooLong;
      }
      line.assign(buf_, pos_, nl - pos_);
      pos_ = nl + 1;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return Status::kLine;
    }
    if (buf_.size() - pos_ > max_) {  // too long: forget what we have of it
      skipping = true;
      buf_.clear();
      pos_ = 0;
    }
    scanned = buf_.size();
    size_t before = buf_.size() - pos_;
    if (!fill()) {
      if (skipping) return Status::kTooLong;
      if (buf_.size() > pos_) {
        line.assign(buf_, pos_, std::string::npos);
        pos_ = buf_.size();
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return Status::kLine;
      }
      return Status::kEnd;
    }
    scanned = pos_ + before;  // fill() moved the unread part to the front
  }
}

}  // namespace mlprof::mcp
