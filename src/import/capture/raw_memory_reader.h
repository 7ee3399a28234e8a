// Reads one file written by the malloc tracker (trace/formats/raw_memory_format.h) without
// copying its events: the file is mapped (it is still in the page cache), events are decoded in
// place.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mlprof/status.h"
#include "trace/formats/raw_memory_format.h"

namespace mlprof {

struct RawMemoryEvent {
  int64_t tid = 0;
  int64_t ts_ns = 0;
  uint64_t addr = 0;
  uint64_t size = 0;   // 0 for a free
  uint32_t stack = 0;  // raw stack id in this file (0 = none)
  bool is_free = false;
};

// One kEvents chunk: a run of one thread's events, in time order.
struct RawEventChunk {
  int64_t tid = 0;
  const char* words = nullptr;  // eh.words uint64 words, not necessarily 8-byte aligned
  uint32_t count = 0;           // words
  uint32_t events = 0;          // events, as the writer counted them (0: not counted)
};

class RawMemoryFile {
 public:
  // Validates the chunk structure; a truncated last chunk (process killed mid-write) is ignored
  // and counted in truncated_bytes(). `populate`: map every page at once (fastest when the
  // whole file will be read anyway); false: pages come in as read, and can be released.
  static Result<RawMemoryFile> open(const std::string& path, bool populate = true);

  const std::string& path() const { return path_; }
  int64_t pid() const { return pid_; }
  int64_t ppid() const { return ppid_; }
  const std::string& exe() const { return exe_; }
  const std::string& maps() const { return maps_; }  // the last /proc/self/maps written
  bool exited() const { return exited_; }            // false: killed or exec'd
  int64_t start_ns() const { return start_ns_; }
  int64_t exit_ns() const { return exit_ns_; }
  uint64_t dropped() const { return dropped_; }  // events the tracker counted but did not write
  uint64_t truncated_bytes() const { return truncated_bytes_; }
  // Raw stack id -> return addresses, innermost first (index 0 unused).
  const std::vector<std::vector<uint64_t>>& stacks() const { return stacks_; }
  size_t event_words() const { return event_words_; }
  // Drops the mapped pages from this process's memory (they stay in the page cache and come
  // back when read): a page-cache folio is mapped whole, so reading the chunk headers maps in
  // most of the file.
  // [begin, end) of the file only (bytes, rounded inwards to pages).
  void release_pages(size_t begin = 0, size_t end = SIZE_MAX) const;
  size_t size() const { return size_; }
  // Offset of a pointer into the file's bytes (an event chunk's words).
  size_t offset_of(const char* p) const { return static_cast<size_t>(p - data_); }
  // The events chunks in file order (a thread's chunks appear in its time order).
  const std::vector<RawEventChunk>& event_chunks() const { return event_chunks_; }

  // At least the events decode() returns (the writer's counts, else a walk of the kinds): rows
  // to reserve.
  size_t event_count() const;

  // Decodes the event at word `i` of chunk `c` into e (tid not set); returns the words it takes,
  // 0 at the chunk's end or at a corrupt word (the rest of the chunk is then skipped).
  size_t decode(const RawEventChunk& c, size_t i, RawMemoryEvent& e) const;

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
  std::shared_ptr<const void> mapping_;  // the file's bytes (munmap'd with the last copy)
  const char* data_ = nullptr;
  size_t size_ = 0;
  int64_t pid_ = 0, ppid_ = 0;
  std::string exe_, maps_;
  bool exited_ = false;
  int64_t start_ns_ = 0, exit_ns_ = 0;
  uint64_t dropped_ = 0;
  uint64_t truncated_bytes_ = 0;
  std::vector<std::vector<uint64_t>> stacks_;
  std::vector<RawEventChunk> event_chunks_;
  size_t event_words_ = 0;
  uint64_t base_tsc_ = 0;
  int64_t base_ns_ = 0;
  double ns_per_tick_ = 1.0;
};

inline size_t RawMemoryFile::decode(const RawEventChunk& c, size_t i, RawMemoryEvent& e) const {
  using namespace rawmem;
  auto word = [&](size_t k) {
    uint64_t v;
    std::memcpy(&v, c.words + k * 8, 8);
    return v;
  };
  if (i >= c.count) return 0;
  uint64_t w0 = word(i);
  uint64_t kind = w0 >> kKindShift;
  size_t need = kind == kAlloc ? 3 : kind == kAllocWide ? 4 : kind == kFree ? 2 : 0;
  if (need == 0 || i + need > c.count) return 0;
  e.ts_ns = to_ns(w0 & kTscMask);
  e.addr = word(i + 1);
  if (kind == kFree) {
    e.is_free = true;
    e.size = 0;
    e.stack = 0;
  } else if (kind == kAlloc) {
    uint64_t w2 = word(i + 2);
    e.is_free = false;
    e.size = w2 & kSizeMask;
    e.stack = static_cast<uint32_t>(w2 >> kStackShift);
  } else {
    e.is_free = false;
    e.size = word(i + 2);
    e.stack = static_cast<uint32_t>(word(i + 3));
  }
  return need;
}

}  // namespace mlprof
