// Shared helpers of the memory and leak analyses (private to src/analyze).
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "mlprof/trace.h"
#include "trace/addr_map.h"

namespace mlprof::analyze_detail {

inline int32_t device_key(int8_t type, int16_t id) {
  return static_cast<int32_t>(type) * 65536 + static_cast<int32_t>(id) + 32768;
}

// The address space an event's address belongs to: one per (process, device). The one rule for
// matching a free to its allocation (memory, leaks and heap all pair through it).
inline uint64_t address_space(const Trace& trace, uint32_t event) {
  const MemoryTable& m = trace.memory;
  return uint64_t{trace.tracks[m.track[event]].process} << 32 |
         static_cast<uint32_t>(device_key(m.device_type[event], m.device_id[event]));
}

// Memory event indices in time order (input order among equal times). The table is not sorted.
inline std::vector<uint32_t> memory_time_order(const Trace& trace) {
  const MemoryTable& m = trace.memory;
  std::vector<uint32_t> order(m.size());
  std::iota(order.begin(), order.end(), 0u);
  if (!std::is_sorted(m.ts.begin(), m.ts.end()))
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return m.ts[a] < m.ts[b]; });
  return order;
}

// Allocated bytes per memory event (the recorded total, or the running sum per device), given
// the time order.
inline std::vector<int64_t> allocated_totals(const Trace& trace,
                                             const std::vector<uint32_t>& order) {
  const MemoryTable& m = trace.memory;
  std::vector<int64_t> out(m.size(), 0);
  std::vector<std::pair<int32_t, int64_t>> running;  // per device; devices are few
  size_t cur = SIZE_MAX;
  for (uint32_t i : order) {
    int32_t dev = device_key(m.device_type[i], m.device_id[i]);
    if (cur == SIZE_MAX || running[cur].first != dev) {
      cur = 0;
      while (cur < running.size() && running[cur].first != dev) ++cur;
      if (cur == running.size()) running.emplace_back(dev, 0);
    }
    int64_t& run = running[cur].second;
    run += m.bytes[i];
    out[i] = m.total_allocated[i] >= 0 ? m.total_allocated[i] : run;
  }
  return out;
}

// For each allocation event, the index of the later free at the same address of the same address
// space that releases it (kNotFreed when none).
// One walk in time order (ties: input order) with a flat map of the open allocation per
// address: O(n). A second allocation at an open address replaces it (its free was not seen).
inline constexpr uint32_t kNotFreed = UINT32_MAX;
inline std::vector<uint32_t> pair_allocation_frees(const Trace& trace,
                                                   const std::vector<uint32_t>& order) {
  const MemoryTable& m = trace.memory;
  std::vector<uint32_t> freed_by(m.size(), kNotFreed);
  std::vector<std::pair<uint64_t, AddrMap<uint32_t>>> open;  // per space: address -> allocation
  size_t cur = SIZE_MAX;
  for (uint32_t i : order) {
    uint64_t dev = address_space(trace, i);
    if (cur == SIZE_MAX || open[cur].first != dev) {
      cur = 0;
      while (cur < open.size() && open[cur].first != dev) ++cur;
      if (cur == open.size()) open.emplace_back(dev, AddrMap<uint32_t>());
    }
    AddrMap<uint32_t>& map = open[cur].second;
    if (m.bytes[i] > 0) {
      auto [v, fresh] = map.try_emplace(m.addr[i], i);
      if (!fresh) *v = i;
    } else if (m.bytes[i] < 0) {
      uint32_t alloc;
      if (map.erase(m.addr[i], &alloc)) freed_by[alloc] = i;
    }
  }
  return freed_by;
}

// For each allocation event, 1 when a later free releases it (pair_allocation_frees).
inline std::vector<uint8_t> pair_allocations(const Trace& trace,
                                             const std::vector<uint32_t>& order) {
  std::vector<uint32_t> freed_by = pair_allocation_frees(trace, order);
  std::vector<uint8_t> freed(freed_by.size());
  for (size_t i = 0; i < freed_by.size(); ++i) freed[i] = freed_by[i] != kNotFreed;
  return freed;
}

inline std::vector<uint8_t> pair_allocations(const Trace& trace) {
  return pair_allocations(trace, memory_time_order(trace));
}

}  // namespace mlprof::analyze_detail
