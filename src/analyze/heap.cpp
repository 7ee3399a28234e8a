#include "mlprof/analyze/heap.h"

#include <algorithm>
#include <deque>
#include <numeric>
#include <unordered_map>

#include "analyze/heap_stacks.h"
#include "analyze/memory_order.h"
#include "trace/addr_map.h"

namespace mlprof {

namespace {

using analyze_detail::StackAggs;
using analyze_detail::top_stacks;

// Live blocks are keyed by (process, device, address): one flat address map per (process,
// device), found through a one-entry cache (consecutive events mostly share both).
struct Block {
  int64_t bytes;
  int64_t ts;
  uint32_t stack;
  uint32_t pos;  // position of its allocation in time order
};

class LiveBlocks {
 public:
  // `key`: the event's analyze_detail::address_space.
  AddrMap<Block>& map(uint64_t key, uint32_t process) {
    if (key == last_key_ && last_ != nullptr) return *last_;
    auto [it, fresh] = index_.try_emplace(key, maps_.size());
    if (fresh) maps_.emplace_back(process, AddrMap<Block>());
    last_key_ = key;
    last_ = &maps_[it->second].second;
    return *last_;
  }
  // fn(process, block) for every live block.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (const auto& entry : maps_) {     // not a structured binding: clang 14 (make fuzz)
      const auto& process = entry.first;  // cannot capture one in a lambda
      entry.second.for_each([&](uint64_t, const Block& b) { fn(process, b); });
    }
  }

 private:
  std::deque<std::pair<uint32_t, AddrMap<Block>>> maps_;  // stable addresses
  std::unordered_map<uint64_t, size_t> index_;
  uint64_t last_key_ = 0;
  AddrMap<Block>* last_ = nullptr;
};

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

  // One pass: totals, peak position, temporaries, rate; what stays live is the leak set. Each
  // allocation's end (its free, or the allocation that replaced it) is noted, so the blocks live
  // at the peak are found afterwards by a scan instead of a second replay.
  LiveBlocks live;
  std::vector<uint32_t> end_pos(order.size(), UINT32_MAX);
  std::vector<uint8_t> process_seen(t.processes.size(), 0);
  const size_t nstacks = t.stacks.frames_begin.size();
  StackAggs temp_agg(nstacks);
  int64_t total = 0;
  size_t peak_pos = SIZE_MAX;
  for (size_t pos = 0; pos < order.size(); ++pos) {
    uint32_t i = order[pos];
    uint32_t process = t.tracks[m.track[i]].process;
    process_seen[process] = 1;
    HeapRateBucket& bucket = r.rate[bucket_of(m.ts[i])];
    if (m.bytes[i] > 0) {
      Block blk{m.bytes[i], m.ts[i], m.stack[i], static_cast<uint32_t>(pos)};
      auto [b, fresh] =
          live.map(analyze_detail::address_space(t, i), process).try_emplace(m.addr[i], blk);
      if (!fresh) {  // the free was not recorded: the old block is gone
        total -= b->bytes;
        end_pos[b->pos] = static_cast<uint32_t>(pos);
        *b = blk;
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
      Block blk;
      if (!live.map(analyze_detail::address_space(t, i), process).erase(m.addr[i], &blk)) {
        ++r.unmatched_frees;
        continue;
      }
      end_pos[blk.pos] = static_cast<uint32_t>(pos);
      ++r.frees;
      ++bucket.frees;
      if (m.ts[i] - blk.ts <= o.temporary_ns) {
        ++r.temporary_blocks;
        r.temporary_bytes += static_cast<uint64_t>(blk.bytes);
        temp_agg[blk.stack].add(static_cast<uint64_t>(blk.bytes), t.processes[process].pid);
      }
      total -= blk.bytes;
    }
    bucket.heap_bytes_end = total;
  }
  // Buckets with no events carry the heap size forward.
  for (size_t k = 1; k < nb; ++k)
    if (r.rate[k].allocations == 0 && r.rate[k].frees == 0)
      r.rate[k].heap_bytes_end = r.rate[k - 1].heap_bytes_end;
  for (uint8_t seen : process_seen) r.processes += seen;
  if (r.span_ns > 0) r.allocations_per_second = r.allocations * 1e9 / r.span_ns;

  StackAggs leak_agg(nstacks);
  live.for_each([&](uint32_t process, const Block& b) {
    leak_agg[b.stack].add(static_cast<uint64_t>(b.bytes), t.processes[process].pid);
    r.leaked_bytes += static_cast<uint64_t>(b.bytes);
    ++r.leaked_blocks;
  });
  r.leak_stacks = leak_agg.size();
  r.leaks = top_stacks(t, leak_agg, o, false);
  r.temporaries = top_stacks(t, temp_agg, o, true);

  // Who held the peak: allocations up to it that had not ended by then.
  if (peak_pos != SIZE_MAX) {
    StackAggs peak_agg(nstacks);
    for (size_t pos = 0; pos <= peak_pos; ++pos) {
      uint32_t i = order[pos];
      if (m.bytes[i] <= 0 || end_pos[pos] <= peak_pos) continue;
      peak_agg[m.stack[i]].add(static_cast<uint64_t>(m.bytes[i]),
                               t.processes[t.tracks[m.track[i]].process].pid);
      ++r.peak_blocks;
    }
    r.peak_ts_ns = m.ts[order[peak_pos]];
    r.peak_offset_ns = r.peak_ts_ns - first;
    r.peak_stacks = top_stacks(t, peak_agg, o, false);
  }
  return r;
}

}  // namespace mlprof
