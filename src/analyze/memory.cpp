#include "mlprof/analyze/memory.h"

#include <algorithm>
#include <numeric>
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
  const MemoryTable& m = trace.memory;
  std::vector<int64_t> out(m.size(), 0);
  std::vector<uint32_t> order = analyze_detail::memory_time_order(trace);
  // Running sum per device for events without a recorded total.
  std::unordered_map<int32_t, int64_t> running;
  for (uint32_t i : order) {
    int32_t dev = analyze_detail::device_key(m.device_type[i], m.device_id[i]);
    int64_t& run = running[dev];
    run += m.bytes[i];
    out[i] = m.total_allocated[i] >= 0 ? m.total_allocated[i] : run;
  }
  return out;
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

}  // namespace

MemoryResult analyze_memory(const Trace& trace, const MemoryOptions& options) {
  MemoryResult r;
  const MemoryTable& m = trace.memory;
  r.events = m.size();
  if (m.size() == 0) return r;
  std::vector<uint32_t> order = analyze_detail::memory_time_order(trace);
  std::vector<uint8_t> freed = analyze_detail::pair_allocations(trace);  // 1 = alloc later freed

  std::unordered_map<int32_t, size_t> dev_index;
  struct DevState {
    int64_t running = 0;
    std::vector<uint32_t> events;  // time order
  };
  std::vector<DevState> state;
  for (uint32_t i : order) {
    int32_t key = analyze_detail::device_key(m.device_type[i], m.device_id[i]);
    auto [it, inserted] = dev_index.emplace(key, r.devices.size());
    if (inserted) {
      DeviceMemory d;
      d.device = memory_device_label(m.device_type[i], m.device_id[i]);
      d.device_type = m.device_type[i];
      d.device_id = m.device_id[i];
      r.devices.push_back(std::move(d));
      state.emplace_back();
    }
    state[it->second].events.push_back(i);
  }

  // Per-op rows, keyed by the innermost slice's name id (-1 = no op).
  std::unordered_map<int64_t, size_t> op_index;
  std::vector<OpMemory> ops;
  auto op_row = [&](int32_t slice) -> OpMemory& {
    int64_t key =
        slice < 0 ? -1 : static_cast<int64_t>(trace.slices.name[static_cast<size_t>(slice)]);
    auto [it, inserted] = op_index.emplace(key, ops.size());
    if (inserted) {
      OpMemory row;
      row.op = slice < 0 ? "(no op)" : slice_name(trace, slice);
      ops.push_back(std::move(row));
    }
    return ops[it->second];
  };

  for (size_t d = 0; d < r.devices.size(); ++d) {
    DeviceMemory& dm = r.devices[d];
    const std::vector<uint32_t>& ev = state[d].events;
    dm.events = ev.size();
    int64_t running = 0;
    int32_t peak_event = -1;
    int64_t peak_reserved_alloc = 0;
    std::vector<MemoryPoint> points;
    points.reserve(ev.size());
    std::vector<UnfreedAllocation> unfreed;
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
        peak_event = static_cast<int32_t>(i);
      }
      dm.final_allocated = p.allocated;
      points.push_back(p);
      OpMemory& row = op_row(m.slice[i]);
      if (b > 0) {
        ++dm.allocs;
        dm.bytes_allocated += b;
        ++row.allocs;
        row.bytes_allocated += b;
        // Address 0: the source recorded no address (export_memory_timeline): cannot be paired.
        if (!freed[i] && m.addr[i] != 0) {
          ++dm.unfreed_count;
          dm.unfreed_bytes += b;
          ++row.unfreed_count;
          row.unfreed_bytes += b;
          unfreed.push_back({m.ts[i], m.addr[i], b, slice_name(trace, m.slice[i])});
        }
      } else if (b < 0) {
        ++dm.frees;
        dm.bytes_freed += -b;
        ++row.frees;
        row.bytes_freed += -b;
      }
    }
    if (!dm.has_reserved) dm.peak_reserved = dm.final_reserved = -1;
    if (dm.has_reserved && dm.peak_reserved > 0)
      dm.fragmentation_at_peak_reserved =
          static_cast<double>(dm.peak_reserved - peak_reserved_alloc) / dm.peak_reserved;
    if (peak_event >= 0) {
      dm.peak_op = slice_name(trace, m.slice[static_cast<size_t>(peak_event)]);
      dm.peak_context = slice_context(trace, m.slice[static_cast<size_t>(peak_event)]);
    }
    std::sort(unfreed.begin(), unfreed.end(), [](const auto& a, const auto& b) {
      return a.bytes != b.bytes ? a.bytes > b.bytes : a.ts_ns < b.ts_ns;
    });
    if (unfreed.size() > options.top_unfreed) unfreed.resize(options.top_unfreed);
    dm.unfreed = std::move(unfreed);
    // Downsample: split the time range into equal buckets and keep each bucket's highest point,
    // so the peak always survives; the last point is kept so the curve ends where memory ends.
    size_t n_out = options.timeline_points;
    if (n_out == 0 || points.empty()) continue;
    if (points.size() <= n_out) {
      dm.timeline = std::move(points);
      continue;
    }
    int64_t t0 = points.front().ts_ns, t1 = points.back().ts_ns;
    double width = static_cast<double>(t1 - t0 + 1) / static_cast<double>(n_out - 1);
    size_t bucket = SIZE_MAX;
    for (const MemoryPoint& p : points) {
      size_t b = static_cast<size_t>(static_cast<double>(p.ts_ns - t0) / width);
      if (b != bucket || dm.timeline.empty()) {
        dm.timeline.push_back(p);
        bucket = b;
      } else if (p.allocated > dm.timeline.back().allocated) {
        dm.timeline.back() = p;
      }
    }
    if (dm.timeline.back().ts_ns != points.back().ts_ns) dm.timeline.push_back(points.back());
  }
  std::sort(ops.begin(), ops.end(), [](const OpMemory& a, const OpMemory& b) {
    return a.bytes_allocated != b.bytes_allocated ? a.bytes_allocated > b.bytes_allocated
                                                  : a.op < b.op;
  });
  if (ops.size() > options.top_ops) ops.resize(options.top_ops);
  r.ops = std::move(ops);
  return r;
}

}  // namespace mlprof
