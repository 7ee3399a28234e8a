// The malloc tracker's status symlinks (mem.<pid>.<k>.status, trace/formats/raw_memory_format.h):
// why a process's capture is incomplete or missing, and what it counted but could not record.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace mlprof {

struct CaptureStatus {
  int error = 0;   // errno of the first failure, 0: none
  char stage = 0;  // 'o' creating the file, 'w' writing it, 'r' reopening it
  uint64_t lost_allocations = 0;
  uint64_t lost_frees = 0;
  uint64_t reopened = 0;  // times the program closed or took the tracker's descriptor
  bool exited = false;    // reached its exit handlers: the counts are final
  int64_t ppid = 0;       // only without a file
  std::string exe;        // only without a file
};

// Parses a status symlink's text; nullopt when it is not one.
std::optional<CaptureStatus> parse_capture_status(const std::string& text);

// The status symlinks in `dir`, by stem ("mem.<pid>.<k>").
std::map<std::string, CaptureStatus> read_capture_statuses(const std::string& dir);

// One line each for the user about process `pid`'s capture; `kept_allocations`: what its file
// holds (-1: it has no file).
std::string capture_status_note(int64_t pid, const CaptureStatus& s, int64_t kept_allocations);

}  // namespace mlprof
