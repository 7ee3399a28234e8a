// Reads one file written by the malloc tracker (raw_format.h) without copying its events.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mlprof/status.h"

namespace mlprof {

struct RawMemoryEvent {
  int64_t tid = 0;
  int64_t ts_ns = 0;
  uint64_t addr = 0;
  uint64_t size = 0;   // 0 for a free
  uint32_t stack = 0;  // raw stack id in this file (0 = none)
  bool is_free = false;
};

class RawMemoryFile {
 public:
  // Validates the chunk structure; a truncated last chunk (process killed mid-write) is ignored
  // and counted in truncated_bytes().
  static Result<RawMemoryFile> open(const std::string& path);

  const std::string& path() const { return path_; }
  int64_t pid() const { return pid_; }
  int64_t ppid() const { return ppid_; }
  const std::string& exe() const { return exe_; }
  const std::string& maps() const { return maps_; }  // the last /proc/self/maps written
  bool exited() const { return exited_; }            // false: killed or exec'd
  int64_t start_ns() const { return start_ns_; }
  int64_t exit_ns() const { return exit_ns_; }
  uint64_t truncated_bytes() const { return truncated_bytes_; }
  // Raw stack id -> return addresses, innermost first (index 0 unused).
  const std::vector<std::vector<uint64_t>>& stacks() const { return stacks_; }
  size_t event_words() const { return event_words_; }

  // Calls fn for every event, in file order (per thread in time order).
  void for_each_event(const std::function<void(const RawMemoryEvent&)>& fn) const;

  // TSC -> CLOCK_MONOTONIC ns, fitted from the clock pairs the tracker wrote.
  int64_t to_ns(uint64_t tsc) const {
    return base_ns_ +
           static_cast<int64_t>(static_cast<double>(static_cast<int64_t>(tsc - base_tsc_)) *
                                ns_per_tick_);
  }

 private:
  std::string path_;
  std::string data_;
  int64_t pid_ = 0, ppid_ = 0;
  std::string exe_, maps_;
  bool exited_ = false;
  int64_t start_ns_ = 0, exit_ns_ = 0;
  uint64_t truncated_bytes_ = 0;
  std::vector<std::vector<uint64_t>> stacks_;
  std::vector<std::pair<size_t, size_t>> event_chunks_;  // (offset of EventsHeader, payload size)
  size_t event_words_ = 0;
  uint64_t base_tsc_ = 0;
  int64_t base_ns_ = 0;
  double ns_per_tick_ = 1.0;
};

}  // namespace mlprof
