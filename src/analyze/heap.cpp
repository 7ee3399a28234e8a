#include "mlprof/analyze/heap.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

namespace mlprof {

namespace {

struct BlockKey {
  uint64_t addr;
  uint32_t process;
  int16_t device;
  bool operator==(const BlockKey& o) const {
    return addr == o.addr && process == o.process && device == o.device;
  }
};

struct BlockKeyHash {
  size_t operator()(const BlockKey& k) const {
    uint64_t h = k.addr * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t{k.process} << 16 | static_cast<uint16_t>(k.device)) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 29);
  }
};

struct Block {
  int64_t bytes;
  int64_t ts;
  uint32_t stack;
};

using LiveMap = std::unordered_map<BlockKey, Block, BlockKeyHash>;

struct StackAgg {
  uint64_t bytes = 0, count = 0;
  std::unordered_set<int64_t> pids;
};

std::vector<HeapStack> top_stacks(const Trace& t, std::unordered_map<uint32_t, StackAgg>& agg,
                                  const HeapOptions& o, bool by_count) {
  std::vector<HeapStack> out;
  out.reserve(agg.size());
  for (auto& [stack, a] : agg) {
    HeapStack s;
    s.stack = stack;
    s.bytes = a.bytes;
    s.count = a.count;
    s.pids.assign(a.pids.begin(), a.pids.end());
    std::sort(s.pids.begin(), s.pids.end());
    out.push_back(std::move(s));
  }
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
      s.frames.emplace_back(t.str(st.frames[st.frames_begin[s.stack] + i]));
  }
  return out;
}

void add_live(std::unordered_map<uint32_t, StackAgg>& agg, const LiveMap& live, const Trace& t) {
  for (const auto& [key, b] : live) {
    StackAgg& a = agg[b.stack];
    a.bytes += static_cast<uint64_t>(b.bytes);
    ++a.count;
    a.pids.insert(t.processes[key.process].pid);
  }
}

}  // namespace

HeapResult analyze_heap(const Trace& t, const HeapOptions& o) {
  HeapResult r;
  r.temporary_ns = o.temporary_ns;
  const MemoryTable& m = t.memory;
  std::vector<uint32_t> order;
  order.reserve(m.size());
  for (size_t i = 0; i < m.size(); ++i)
    if (o.device_type < 0 || m.device_type[i] == o.device_type)
      order.push_back(static_cast<uint32_t>(i));
  bool sorted = true;
  for (size_t i = 1; i < order.size() && sorted; ++i) sorted = m.ts[order[i - 1]] <= m.ts[order[i]];
  if (!sorted)
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return m.ts[a] < m.ts[b]; });
  r.memory_events = order.size();
  if (order.empty()) return r;

  const int64_t first = m.ts[order.front()], last = m.ts[order.back()];
  r.span_ns = last - first;
  size_t nb = std::max<size_t>(1, o.rate_buckets);
  r.rate.resize(nb);
  for (size_t k = 0; k < nb; ++k) {
    r.rate[k].begin_ns = static_cast<int64_t>(static_cast<double>(r.span_ns) * k / nb);
    r.rate[k].end_ns = static_cast<int64_t>(static_cast<double>(r.span_ns) * (k + 1) / nb);
  }
  auto bucket_of = [&](int64_t ts) {
    if (r.span_ns <= 0) return size_t{0};
    size_t k = static_cast<size_t>(static_cast<double>(ts - first) * nb / r.span_ns);
    return std::min(k, nb - 1);
  };

  auto key_of = [&](uint32_t i) {
    return BlockKey{m.addr[i], t.tracks[m.track[i]].process, m.device_id[i]};
  };
  // Pass 1: totals, peak position, temporaries, rate; what stays live is the leak set.
  LiveMap live;
  std::unordered_set<uint32_t> processes;
  std::unordered_map<uint32_t, StackAgg> temp_agg;
  int64_t total = 0;
  size_t peak_pos = SIZE_MAX;
  for (size_t pos = 0; pos < order.size(); ++pos) {
    uint32_t i = order[pos];
    BlockKey key = key_of(i);
    processes.insert(key.process);
    HeapRateBucket& bucket = r.rate[bucket_of(m.ts[i])];
    if (m.bytes[i] > 0) {
      auto [it, fresh] = live.try_emplace(key, Block{m.bytes[i], m.ts[i], m.stack[i]});
      if (!fresh) {  // the free was not recorded: the old block is gone
        total -= it->second.bytes;
        it->second = Block{m.bytes[i], m.ts[i], m.stack[i]};
      }
      total += m.bytes[i];
      ++r.allocations;
      r.bytes_allocated += static_cast<uint64_t>(m.bytes[i]);
      ++bucket.allocations;
      bucket.bytes_allocated += static_cast<uint64_t>(m.bytes[i]);
      if (total > r.peak_bytes) {
        r.peak_bytes = total;
        peak_pos = pos;
      }
    } else if (m.bytes[i] < 0) {
      auto it = live.find(key);
      if (it == live.end()) {
        ++r.unmatched_frees;
        continue;
      }
      ++r.frees;
      ++bucket.frees;
      if (m.ts[i] - it->second.ts <= o.temporary_ns) {
        ++r.temporary_blocks;
        r.temporary_bytes += static_cast<uint64_t>(it->second.bytes);
        StackAgg& a = temp_agg[it->second.stack];
        a.bytes += static_cast<uint64_t>(it->second.bytes);
        ++a.count;
        a.pids.insert(t.processes[key.process].pid);
      }
      total -= it->second.bytes;
      live.erase(it);
    }
    bucket.heap_bytes_end = total;
  }
  // Buckets with no events carry the heap size forward.
  for (size_t k = 1; k < nb; ++k)
    if (r.rate[k].allocations == 0 && r.rate[k].frees == 0)
      r.rate[k].heap_bytes_end = r.rate[k - 1].heap_bytes_end;
  r.processes = processes.size();
  if (r.span_ns > 0) r.allocations_per_second = r.allocations * 1e9 / r.span_ns;

  std::unordered_map<uint32_t, StackAgg> leak_agg;
  add_live(leak_agg, live, t);
  r.leak_stacks = leak_agg.size();
  for (const auto& [key, b] : live) {
    r.leaked_bytes += static_cast<uint64_t>(b.bytes);
    ++r.leaked_blocks;
  }
  r.leaks = top_stacks(t, leak_agg, o, false);
  r.temporaries = top_stacks(t, temp_agg, o, true);

  // Pass 2: replay up to the peak to see who held it.
  if (peak_pos != SIZE_MAX) {
    live.clear();
    for (size_t pos = 0; pos <= peak_pos; ++pos) {
      uint32_t i = order[pos];
      BlockKey key = key_of(i);
      if (m.bytes[i] > 0) {
        live[key] = Block{m.bytes[i], m.ts[i], m.stack[i]};
      } else if (m.bytes[i] < 0) {
        live.erase(key);
      }
    }
    r.peak_ts_ns = m.ts[order[peak_pos]];
    r.peak_offset_ns = r.peak_ts_ns - first;
    r.peak_blocks = live.size();
    std::unordered_map<uint32_t, StackAgg> peak_agg;
    add_live(peak_agg, live, t);
    r.peak_stacks = top_stacks(t, peak_agg, o, false);
  }
  return r;
}

}  // namespace mlprof
