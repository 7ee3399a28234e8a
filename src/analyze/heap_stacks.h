// Per-stack block totals and the top-N table of them: shared by the heap analysis over a trace's
// memory rows (heap.cpp) and the one over a capture's event stream (heap_stream.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "mlprof/analyze/heap.h"
#include "mlprof/trace.h"

namespace mlprof::analyze_detail {

struct StackAgg {
  uint64_t bytes = 0, count = 0;
  std::vector<int64_t> pids;  // distinct; a block's process is nearly always the last one seen
  void add(uint64_t b, int64_t pid) {
    bytes += b;
    ++count;
    if (pids.empty() || pids.back() != pid) {
      if (std::find(pids.begin(), pids.end(), pid) == pids.end()) pids.push_back(pid);
    }
  }
};

// Per-stack totals: dense by stack id (ids are below the stack table's size), a map otherwise.
class StackAggs {
 public:
  explicit StackAggs(size_t stacks) : dense_(stacks) {}
  StackAgg& operator[](uint32_t stack) {
    if (stack < dense_.size()) return dense_[stack];
    return sparse_[stack];
  }
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (uint32_t s = 0; s < dense_.size(); ++s)
      if (dense_[s].count > 0) fn(s, dense_[s]);
    for (const auto& [s, a] : sparse_) fn(s, a);
  }
  size_t size() const {
    size_t n = sparse_.size();
    for (const StackAgg& a : dense_) n += a.count > 0;
    return n;
  }

 private:
  std::vector<StackAgg> dense_;
  std::unordered_map<uint32_t, StackAgg> sparse_;
};

inline std::vector<HeapStack> top_stacks(const Trace& t, const StackAggs& agg, const HeapOptions& o,
                                         bool by_count) {
  std::vector<HeapStack> out;
  agg.for_each([&](uint32_t stack, const StackAgg& a) {
    HeapStack s;
    s.stack = stack;
    s.bytes = a.bytes;
    s.count = a.count;
    s.pids = a.pids;
    std::sort(s.pids.begin(), s.pids.end());
    out.push_back(std::move(s));
  });
  std::sort(out.begin(), out.end(), [&](const HeapStack& a, const HeapStack& b) {
    uint64_t ka = by_count ? a.count : a.bytes, kb = by_count ? b.count : b.bytes;
    if (ka != kb) return ka > kb;
    return a.stack < b.stack;
  });
  if (out.size() > o.top) out.resize(o.top);
  const StackTable& st = t.stacks;
  for (HeapStack& s : out) {
    if (s.stack == 0 || s.stack >= st.frames_begin.size()) continue;
    uint32_t n = std::min<uint32_t>(st.frames_count[s.stack], static_cast<uint32_t>(o.max_frames));
    for (uint32_t i = 0; i < n; ++i)
      s.frames.emplace_back(t.str(t.stack_frames.name[st.frames_begin[s.stack] + i]));
  }
  return out;
}

}  // namespace mlprof::analyze_detail
