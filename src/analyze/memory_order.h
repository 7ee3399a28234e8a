// Shared helpers of the memory and leak analyses (private to src/analyze).
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "mlprof/trace.h"

namespace mlprof::analyze_detail {

inline int32_t device_key(int8_t type, int16_t id) {
  return static_cast<int32_t>(type) * 65536 + static_cast<int32_t>(id) + 32768;
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

// For each allocation event, 1 when a later free of the same (device, address) releases it.
// One sort by (device, addr, time), then a walk per address: O(n log n), no per-event allocation.
inline std::vector<uint8_t> pair_allocations(const Trace& trace) {
  const MemoryTable& m = trace.memory;
  std::vector<uint32_t> idx(m.size());
  std::iota(idx.begin(), idx.end(), 0u);
  std::sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
    int32_t da = device_key(m.device_type[a], m.device_id[a]);
    int32_t db = device_key(m.device_type[b], m.device_id[b]);
    if (da != db) return da < db;
    if (m.addr[a] != m.addr[b]) return m.addr[a] < m.addr[b];
    if (m.ts[a] != m.ts[b]) return m.ts[a] < m.ts[b];
    return a < b;
  });
  std::vector<uint8_t> freed(m.size(), 0);
  int64_t open = -1;  // the allocation currently live at this address
  for (size_t k = 0; k < idx.size(); ++k) {
    uint32_t i = idx[k];
    bool same_addr = k > 0 && m.addr[idx[k - 1]] == m.addr[i] &&
                     device_key(m.device_type[idx[k - 1]], m.device_id[idx[k - 1]]) ==
                         device_key(m.device_type[i], m.device_id[i]);
    if (!same_addr) open = -1;
    if (m.bytes[i] > 0) {
      open = i;  // a second alloc without a free in between: the first one's free was not seen
    } else if (m.bytes[i] < 0 && open >= 0) {
      freed[static_cast<size_t>(open)] = 1;
      open = -1;
    }
  }
  return freed;
}

}  // namespace mlprof::analyze_detail
