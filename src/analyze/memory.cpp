#include "mlprof/analyze/memory.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <string>
#include <unordered_map>

#include "analyze/memory_order.h"

namespace mlprof {

std::string memory_device_label(int8_t device_type, int16_t device_id) {
  switch (static_cast<DeviceType>(device_type)) {
    case DeviceType::kCpu:
      return "CPU";
    case DeviceType::kCuda:
      return "CUDA:" + std::to_string(device_id);
    default:
      return "other:" + std::to_string(device_id);
  }
}

std::vector<int64_t> memory_allocated_totals(const Trace& trace) {
  return analyze_detail::allocated_totals(trace, analyze_detail::memory_time_order(trace));
}

namespace {

std::string slice_name(const Trace& t, int32_t slice) {
  return slice < 0 ? std::string() : std::string(t.str(t.slices.name[static_cast<size_t>(slice)]));
}

std::string slice_context(const Trace& t, int32_t slice) {
  std::vector<std::string_view> chain;
  // Python frames (with_stack) would bury the ops and annotations: leave them out.
  for (int32_t i = slice; i >= 0; i = t.slices.parent[static_cast<size_t>(i)])
    if (t.str(t.slices.cat[static_cast<size_t>(i)]) != "python_function")
      chain.push_back(t.str(t.slices.name[static_cast<size_t>(i)]));
  std::string out;
  for (size_t k = chain.size(); k-- > 0;) {
    if (!out.empty()) out += " > ";
    out += chain[k];
  }
  return out;
}

// The snapshot entries a downsampled device's events stand for (meta.extra
// "mlprof_snapshot_downsampled_gpuN": {"entries": N, ...}); 0 when it was not downsampled.
uint64_t downsampled_entries(const Trace& trace, int16_t device) {
  std::string key = "mlprof_snapshot_downsampled_gpu" + std::to_string(device);
  for (const auto& [k, v] : trace.meta.extra) {
    if (k != key) continue;
    size_t at = v.find("\"entries\": ");
    if (at == std::string::npos) return 0;
    return std::strtoull(v.c_str() + at + 11, nullptr, 10);
  }
  return 0;
}

// The devices in order of first appearance (r.devices), and with several, each one's events in
// time order (with one device, `order` itself: returned empty).
std::vector<std::vector<uint32_t>> device_events(const Trace& trace,
                                                 const std::vector<uint32_t>& order,
                                                 MemoryResult& r) {
  const MemoryTable& m = trace.memory;
  std::unordered_map<int32_t, size_t> dev_index;
  std::vector<std::vector<uint32_t>> dev_events;
  int32_t last_key = INT32_MIN;
  size_t last_dev = 0;
  for (uint32_t i : order) {
    int32_t key = analyze_detail::device_key(m.device_type[i], m.device_id[i]);
    if (key == last_key) continue;
    last_key = key;
    auto [it, inserted] = dev_index.emplace(key, r.devices.size());
    if (inserted) {
      DeviceMemory d;
      d.device = memory_device_label(m.device_type[i], m.device_id[i]);
      d.device_type = m.device_type[i];
      d.device_id = m.device_id[i];
      if (d.device_type == static_cast<int8_t>(DeviceType::kCuda))
        d.downsampled_from_entries = downsampled_entries(trace, d.device_id);
      r.devices.push_back(std::move(d));
    }
  }
  if (r.devices.size() > 1) {
    dev_events.resize(r.devices.size());
    last_key = INT32_MIN;
    for (uint32_t i : order) {
      int32_t key = analyze_detail::device_key(m.device_type[i], m.device_id[i]);
      if (key != last_key) last_dev = dev_index[key], last_key = key;
      dev_events[last_dev].push_back(i);
    }
  }

  return dev_events;
}

// Per-op rows, keyed by the innermost slice's name id (-1 = no op).
class OpRows {
 public:
  explicit OpRows(const Trace& trace) : trace_(trace) {}
  OpMemory& operator()(int32_t slice) {
    if (slice == cached_slice_) return ops[cached_row_];
    int64_t key =
        slice < 0 ? -1 : static_cast<int64_t>(trace_.slices.name[static_cast<size_t>(slice)]);
    auto [it, inserted] = op_index_.emplace(key, ops.size());
    if (inserted) {
      OpMemory row;
      row.op = slice < 0 ? "(no op)" : slice_name(trace_, slice);
      ops.push_back(std::move(row));
    }
    cached_slice_ = slice;
    cached_row_ = it->second;
    return ops[it->second];
  }
  std::vector<OpMemory> ops;

 private:
  const Trace& trace_;
  std::unordered_map<int64_t, size_t> op_index_;
  int32_t cached_slice_ = INT32_MIN;  // consecutive events mostly share their slice
  size_t cached_row_ = 0;
};

struct Unfreed {
  int64_t ts_ns;
  uint64_t addr;
  int64_t bytes;
  int32_t slice;
};

// What walking a device's events leaves for its report's rows.
struct DeviceWalk {
  int32_t peak_event = -1;
  std::vector<Unfreed> unfreed;
  std::vector<uint32_t> allocations;  // allocation events of this device
};

// One device's events in time order: the running total and its peaks, reserved memory, the
// downsampled timeline, counts per op and what was never freed.
DeviceWalk walk_device(const Trace& trace, const std::vector<uint32_t>& ev,
                       const std::vector<uint32_t>& freed_by, const MemoryOptions& options,
                       DeviceMemory& dm, OpRows& op_rows) {
  const MemoryTable& m = trace.memory;
  DeviceWalk out;
  dm.events = ev.size();
  int64_t running = 0;
  int32_t& peak_event = out.peak_event;
  int64_t peak_reserved_alloc = 0;
  // The timeline, downsampled as the points come: the time range split into equal buckets,
  // each keeping its highest point, so the peak always survives; the last point is kept so
  // the curve ends where memory ends. Few enough points are all kept.
  size_t n_out = options.timeline_points;
  bool keep_all = ev.size() <= n_out;
  int64_t t0 = ev.empty() ? 0 : m.ts[ev.front()], t1 = ev.empty() ? 0 : m.ts[ev.back()];
  double width = n_out > 0 ? static_cast<double>(t1 - t0 + 1) / static_cast<double>(n_out - 1)
                           : 1.0;  // n_out 1: infinite, one bucket
  size_t bucket = SIZE_MAX;
  MemoryPoint last_point;
  std::vector<Unfreed>& unfreed = out.unfreed;
  std::vector<uint32_t>& allocations = out.allocations;
  for (uint32_t i : ev) {
    int64_t b = m.bytes[i];
    running += b;
    MemoryPoint p;
    p.ts_ns = m.ts[i];
    if (m.total_allocated[i] >= 0) {
      p.allocated = m.total_allocated[i];
    } else {
      p.allocated = running;
      dm.allocated_reconstructed = true;
    }
    p.reserved = m.total_reserved[i];
    if (p.reserved >= 0 && !(p.reserved == 0 && p.allocated > 0)) {
      // Reserved 0 with bytes allocated means the allocator does not cache (CPU): no reserve.
      dm.has_reserved = true;
      if (p.reserved > dm.peak_reserved) {
        dm.peak_reserved = p.reserved;
        peak_reserved_alloc = p.allocated;
      }
      dm.max_unused_reserved = std::max(dm.max_unused_reserved, p.reserved - p.allocated);
      dm.final_reserved = p.reserved;
    }
    if (peak_event < 0 || p.allocated > dm.peak_allocated) {
      dm.peak_allocated = p.allocated;
      dm.peak_ts_ns = p.ts_ns;
      dm.peak_offset_ns = p.ts_ns - trace.begin_ns();
      peak_event = static_cast<int32_t>(i);
    }
    dm.final_allocated = p.allocated;
    if (n_out > 0) {
      if (keep_all) {
        dm.timeline.push_back(p);
      } else {
        size_t bk = static_cast<size_t>(static_cast<double>(p.ts_ns - t0) / width);
        if (bk != bucket || dm.timeline.empty()) {
          dm.timeline.push_back(p);
          bucket = bk;
        } else if (p.allocated > dm.timeline.back().allocated) {
          dm.timeline.back() = p;
        }
      }
      last_point = p;
    }
    OpMemory& row = op_rows(m.slice[i]);
    if (b > 0) {
      ++dm.allocs;
      dm.bytes_allocated += b;
      ++row.allocs;
      row.bytes_allocated += b;
      // Address 0: the source recorded no address (export_memory_timeline): cannot be paired.
      allocations.push_back(i);
      if (freed_by[i] == analyze_detail::kNotFreed && m.addr[i] != 0) {
        ++dm.unfreed_count;
        dm.unfreed_bytes += b;
        ++row.unfreed_count;
        row.unfreed_bytes += b;
        unfreed.push_back({m.ts[i], m.addr[i], b, m.slice[i]});
      }
    } else if (b < 0) {
      ++dm.frees;
      dm.bytes_freed += -b;
      ++row.frees;
      row.bytes_freed += -b;
    }
  }
  if (n_out > 0 && !keep_all && dm.timeline.back().ts_ns != last_point.ts_ns)
    dm.timeline.push_back(last_point);
  if (!dm.has_reserved) dm.peak_reserved = dm.final_reserved = -1;
  if (dm.has_reserved && dm.peak_reserved > 0)
    dm.fragmentation_at_peak_reserved =
        static_cast<double>(dm.peak_reserved - peak_reserved_alloc) / dm.peak_reserved;
  return out;
}

// The device's rows: the op at the peak, the largest unfreed blocks, the largest allocations.
void device_rows(const Trace& trace, const std::vector<uint32_t>& freed_by,
                 const MemoryOptions& options, DeviceWalk& walk, DeviceMemory& dm) {
  const MemoryTable& m = trace.memory;
  const int32_t peak_event = walk.peak_event;
  std::vector<Unfreed>& unfreed = walk.unfreed;
  std::vector<uint32_t>& allocations = walk.allocations;
  if (peak_event >= 0) {
    dm.peak_op = slice_name(trace, m.slice[static_cast<size_t>(peak_event)]);
    dm.peak_context = slice_context(trace, m.slice[static_cast<size_t>(peak_event)]);
  }
  // Largest first (earliest among equals); op names only for the rows kept.
  auto larger = [](const Unfreed& a, const Unfreed& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.ts_ns < b.ts_ns;
  };
  size_t keep = std::min(unfreed.size(), options.top_unfreed);
  std::partial_sort(unfreed.begin(), unfreed.begin() + keep, unfreed.end(), larger);
  for (size_t k = 0; k < keep; ++k)
    dm.unfreed.push_back({unfreed[k].ts_ns, unfreed[k].ts_ns - trace.begin_ns(), unfreed[k].addr,
                          unfreed[k].bytes, slice_name(trace, unfreed[k].slice)});
  // Every allocation, largest first (earliest among equals), cut to top_allocations.
  auto larger_event = [&](uint32_t a, uint32_t b) {
    return m.bytes[a] != m.bytes[b] ? m.bytes[a] > m.bytes[b] : m.ts[a] < m.ts[b];
  };
  dm.allocations_total = allocations.size();
  size_t keep_all_rows = std::min(allocations.size(), options.top_allocations);
  std::partial_sort(allocations.begin(), allocations.begin() + keep_all_rows, allocations.end(),
                    larger_event);
  dm.allocations.reserve(keep_all_rows);
  for (size_t k = 0; k < keep_all_rows; ++k) {
    uint32_t i = allocations[k];
    AllocationRecord a;
    a.offset_ns = m.ts[i] - trace.begin_ns();
    // Address 0: the source recorded no address, so no free can be paired with it.
    a.freed = freed_by[i] != analyze_detail::kNotFreed && m.addr[i] != 0;
    if (a.freed) a.freed_offset_ns = m.ts[freed_by[i]] - trace.begin_ns();
    a.addr = m.addr[i];
    a.bytes = m.bytes[i];
    a.op = slice_name(trace, m.slice[i]);
    dm.allocations.push_back(std::move(a));
  }
}

}  // namespace

MemoryResult analyze_memory(const Trace& trace, const MemoryOptions& options) {
  MemoryResult r;
  const MemoryTable& m = trace.memory;
  r.events = m.size();
  if (m.size() == 0) return r;
  std::vector<uint32_t> order = analyze_detail::memory_time_order(trace);
  std::vector<uint32_t> freed_by = analyze_detail::pair_allocation_frees(trace, order);
  std::vector<std::vector<uint32_t>> dev_events = device_events(trace, order, r);
  OpRows op_rows(trace);
  for (size_t d = 0; d < r.devices.size(); ++d) {
    DeviceMemory& dm = r.devices[d];
    const std::vector<uint32_t>& ev = r.devices.size() > 1 ? dev_events[d] : order;
    DeviceWalk walk = walk_device(trace, ev, freed_by, options, dm, op_rows);
    device_rows(trace, freed_by, options, walk, dm);
  }
  std::vector<OpMemory>& ops = op_rows.ops;
  std::sort(ops.begin(), ops.end(), [](const OpMemory& a, const OpMemory& b) {
    return a.bytes_allocated != b.bytes_allocated ? a.bytes_allocated > b.bytes_allocated
                                                  : a.op < b.op;
  });
  if (ops.size() > options.top_ops) ops.resize(options.top_ops);
  r.ops = std::move(ops);
  return r;
}

}  // namespace mlprof
