#include "render/memory_render.h"

#include <cmath>
#include <cstdio>

#include "render/heap_render.h"
#include "render/text_table.h"
#include "trace/units.h"

namespace mlprof {

std::string render_memory_text(const MemoryResult& r, size_t width) {
  if (r.events == 0) return "No memory events in this trace (record with profile_memory=True).\n";
  std::string out;
  char buf[512];
  for (const DeviceMemory& d : r.devices) {
    std::snprintf(
        buf, sizeof buf, "%s: %llu events (%llu allocs, %llu frees), %s allocated in total%s\n",
        d.device.c_str(), static_cast<unsigned long long>(d.events),
        static_cast<unsigned long long>(d.allocs), static_cast<unsigned long long>(d.frees),
        format_bytes(static_cast<double>(d.bytes_allocated)).c_str(),
        d.allocated_reconstructed ? " (totals reconstructed from Bytes)" : "");
    out += buf;
    if (d.downsampled_from_entries) {
      std::snprintf(buf, sizeof buf,
                    "  (a CUDA memory snapshot of %llu entries, loaded as each bucket's lowest and "
                    "highest point: peak and end exact, allocs/frees/bytes count the points; "
                    "`mlprof memory SNAPSHOT` replays every entry)\n",
                    static_cast<unsigned long long>(d.downsampled_from_entries));
      out += buf;
    }
    std::snprintf(buf, sizeof buf, "  peak allocated %s at +%s in %s\n",
                  format_bytes(static_cast<double>(d.peak_allocated)).c_str(),
                  format_duration_ns(static_cast<double>(d.peak_offset_ns)).c_str(),
                  d.peak_op.empty() ? "(no op)" : d.peak_op.c_str());
    out += buf;
    if (!d.peak_context.empty()) out += "    context: " + d.peak_context + "\n";
    if (d.has_reserved) {
      std::snprintf(buf, sizeof buf,
                    "  peak reserved %s; reserved but unallocated: %s at most, %s at the reserved "
                    "peak\n",
                    format_bytes(static_cast<double>(d.peak_reserved)).c_str(),
                    format_bytes(static_cast<double>(d.max_unused_reserved)).c_str(),
                    format_percent(d.fragmentation_at_peak_reserved).c_str());
      out += buf;
    }
    std::snprintf(buf, sizeof buf,
                  "  at the end: %s allocated; never freed: %llu allocations, %s\n",
                  format_bytes(static_cast<double>(d.final_allocated)).c_str(),
                  static_cast<unsigned long long>(d.unfreed_count),
                  format_bytes(static_cast<double>(d.unfreed_bytes)).c_str());
    out += buf;
    if (!d.unfreed.empty()) {
      TextTable t;
      t.add_column("largest never-freed allocations: op", TextTable::Align::kLeft);
      t.add_column("bytes");
      t.add_column("time");
      for (const UnfreedAllocation& u : d.unfreed)
        t.add_row({u.op.empty() ? "(no op)" : u.op, format_bytes(static_cast<double>(u.bytes)),
                   "+" + format_duration_ns(static_cast<double>(u.offset_ns))});
      out += t.render(width);
    }
    out += "\n";
  }
  TextTable t;
  t.add_column("op (innermost enclosing)", TextTable::Align::kLeft);
  t.add_column("allocs");
  t.add_column("allocated");
  t.add_column("frees");
  t.add_column("freed");
  t.add_column("never freed");
  for (const OpMemory& o : r.ops)
    t.add_row({o.op, std::to_string(o.allocs), format_bytes(static_cast<double>(o.bytes_allocated)),
               std::to_string(o.frees), format_bytes(static_cast<double>(o.bytes_freed)),
               format_bytes(static_cast<double>(o.unfreed_bytes))});
  out += t.render(width);
  return out;
}

void write_memory_json(JsonWriter& w, const MemoryResult& r) {
  w.begin_object();
  w.field("events", r.events);
  w.key("devices").begin_array();
  for (const DeviceMemory& d : r.devices) {
    w.begin_object();
    w.field("device", d.device);
    w.field("device_type", static_cast<int64_t>(d.device_type));
    w.field("device_id", static_cast<int64_t>(d.device_id));
    w.field("events", d.events);
    w.field("allocs", d.allocs);
    w.field("frees", d.frees);
    w.field("bytes_allocated", d.bytes_allocated);
    w.field("bytes_freed", d.bytes_freed);
    w.field("allocated_reconstructed", d.allocated_reconstructed);
    if (d.downsampled_from_entries) w.field("downsampled_from_entries", d.downsampled_from_entries);
    w.field("peak_allocated", d.peak_allocated);
    w.field("peak_ts_ns", d.peak_ts_ns);
    w.field("peak_offset_ns", d.peak_offset_ns);
    w.field("peak_op", d.peak_op);
    w.field("peak_context", d.peak_context);
    w.field("has_reserved", d.has_reserved);
    w.field("peak_reserved", d.peak_reserved);
    w.field("final_allocated", d.final_allocated);
    w.field("final_reserved", d.final_reserved);
    w.field("max_unused_reserved", d.max_unused_reserved);
    w.field("fragmentation_at_peak_reserved", d.fragmentation_at_peak_reserved);
    w.field("unfreed_count", d.unfreed_count);
    w.field("unfreed_bytes", d.unfreed_bytes);
    w.key("unfreed").begin_array();
    for (const UnfreedAllocation& u : d.unfreed) {
      w.begin_object();
      w.field("ts_ns", u.ts_ns);
      w.field("offset_ns", u.offset_ns);
      w.field("addr", u.addr);
      w.field("bytes", u.bytes);
      w.field("op", u.op);
      w.end_object();
    }
    w.end_array();
    w.field("allocations_total", d.allocations_total);
    w.key("allocations").begin_array();
    for (const AllocationRecord& a : d.allocations) {
      w.begin_object();
      w.field("offset_ns", a.offset_ns);
      w.key("freed_offset_ns");
      if (a.freed)
        w.value(a.freed_offset_ns);
      else
        w.null();
      w.field("addr", a.addr);
      w.field("bytes", a.bytes);
      w.field("op", a.op);
      w.end_object();
    }
    w.end_array();
    // Timeline as parallel arrays: compact, and plots read columns.
    w.key("timeline").begin_object();
    w.key("ts_ns").begin_array();
    for (const MemoryPoint& p : d.timeline) w.value(p.ts_ns);
    w.end_array();
    w.key("allocated").begin_array();
    for (const MemoryPoint& p : d.timeline) w.value(p.allocated);
    w.end_array();
    w.key("reserved").begin_array();
    for (const MemoryPoint& p : d.timeline) w.value(p.reserved);
    w.end_array();
    w.end_object();
    w.end_object();
  }
  w.end_array();
  w.key("ops").begin_array();
  for (const OpMemory& o : r.ops) {
    w.begin_object();
    w.field("op", o.op);
    w.field("allocs", o.allocs);
    w.field("bytes_allocated", o.bytes_allocated);
    w.field("frees", o.frees);
    w.field("bytes_freed", o.bytes_freed);
    w.field("unfreed_count", o.unfreed_count);
    w.field("unfreed_bytes", o.unfreed_bytes);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

namespace {

// Blocks never freed, by allocating stack (traces with call stacks).
std::string unfreed_stacks_text(const LeakResult& r, size_t width) {
  if (!r.has_stacks) return {};
  if (r.unfreed_blocks == 0) return "Every host block was freed by the end of the trace.\n";
  std::string out = "Never freed at exit: " + format_bytes(static_cast<double>(r.unfreed_bytes)) +
                    " in " + std::to_string(r.unfreed_blocks) + " blocks from " +
                    std::to_string(r.unfreed_stack_count) + " stacks, by allocating stack";
  if (r.unfreed_stacks.size() < r.unfreed_stack_count)
    out += " (top " + std::to_string(r.unfreed_stacks.size()) + ")";
  return out + ":\n" + render_heap_stacks_text(r.unfreed_stacks, width);
}

}  // namespace

std::string render_leaks_text(const LeakResult& r, size_t width) {
  if (!r.has_memory) return "No memory events in this trace (record with profile_memory=True).\n";
  if (r.steps == 0 && r.has_stacks)
    return "No steps (ProfilerStep#N) in this trace: growth across steps not tested.\n" +
           unfreed_stacks_text(r, width);
  if (r.steps == 0) return "No steps found: leak detection needs ProfilerStep#N slices.\n";
  std::string out;
  char buf[512];
  for (const DeviceLeak& d : r.devices) {
    std::snprintf(
        buf, sizeof buf,
        "%s: %s. Slope %s/step (Theil-Sen), growth %s over %zu step boundaries, "
        "Mann-Kendall z = %.2f, p = %.3g%s\n",
        d.device.c_str(), d.leak ? "LEAK" : "no leak", format_bytes(d.slope_bytes_per_step).c_str(),
        format_bytes(static_cast<double>(d.growth_bytes)).c_str(), d.step_end_allocated.size(),
        d.kendall_z, d.p_value, d.test_valid ? "" : " (too few steps for the test)");
    out += buf;
    if (d.change_index >= 0) {
      std::snprintf(buf, sizeof buf,
                    "  change point (two-segment fit, F test p = %.3g): %s in step #%lld; "
                    "%s/step before, %s/step since%s\n",
                    d.change_p_value, d.plateau ? "growth stopped" : "growth began",
                    static_cast<long long>(d.growth_start_step),
                    format_bytes(d.slope_before_bytes_per_step).c_str(),
                    format_bytes(d.slope_bytes_per_step).c_str(),
                    d.plateau ? " (a plateau after warm-up: not a leak)" : "");
      out += buf;
    }
  }
  out += r.leak ? "" : "No significant memory growth across steps.\n";
  if (!r.surviving_ops.empty()) {
    out += "\nAllocations made inside steps and never freed, by op:\n";
    TextTable t;
    t.add_column("op", TextTable::Align::kLeft);
    t.add_column("allocations");
    t.add_column("bytes");
    t.add_column("steps");
    t.add_column("where (first allocation)", TextTable::Align::kLeft);
    for (const SurvivingOp& o : r.surviving_ops)
      t.add_row({o.op, std::to_string(o.count), format_bytes(static_cast<double>(o.bytes)),
                 std::to_string(o.steps), o.context});
    out += t.render(width);
  }
  if (r.has_stacks) out += "\n" + unfreed_stacks_text(r, width);
  return out;
}

void write_leaks_json(JsonWriter& w, const LeakResult& r) {
  w.begin_object();
  w.field("steps", static_cast<uint64_t>(r.steps));
  w.field("has_memory", r.has_memory);
  w.field("leak", r.leak);
  w.key("rule").value(
      "Theil-Sen slope >= min_bytes_per_step and Mann-Kendall p < alpha, over the steps since a "
      "significant change point (two-segment least squares, Bonferroni-corrected F test) when "
      "there is one; growth that stops after the change point is a plateau, not a leak");
  w.key("devices").begin_array();
  for (const DeviceLeak& d : r.devices) {
    w.begin_object();
    w.field("device", d.device);
    w.field("leak", d.leak);
    w.field("slope_bytes_per_step", d.slope_bytes_per_step);
    w.field("growth_bytes", d.growth_bytes);
    w.field("kendall_s", d.kendall_s);
    w.field("kendall_z", d.kendall_z);
    w.field("p_value", d.p_value);
    w.field("test_valid", d.test_valid);
    w.field("overall_slope_bytes_per_step", d.overall_slope_bytes_per_step);
    w.field("overall_p_value", d.overall_p_value);
    w.field("change_index", d.change_index);
    w.field("growth_start_step", d.growth_start_step);
    w.field("change_p_value", d.change_p_value);
    w.field("slope_before_bytes_per_step", d.slope_before_bytes_per_step);
    w.field("plateau", d.plateau);
    w.key("step_end_allocated").begin_array();
    for (int64_t v : d.step_end_allocated) w.value(v);
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("surviving_ops").begin_array();
  for (const SurvivingOp& o : r.surviving_ops) {
    w.begin_object();
    w.field("op", o.op);
    w.field("context", o.context);
    w.field("count", o.count);
    w.field("bytes", o.bytes);
    w.field("steps", o.steps);
    w.end_object();
  }
  w.end_array();
  if (r.has_stacks) {
    w.key("unfreed_at_exit").begin_object();
    w.field("bytes", r.unfreed_bytes);
    w.field("blocks", r.unfreed_blocks);
    w.field("stack_count", r.unfreed_stack_count);
    w.key("stacks");
    write_heap_stacks_json(w, r.unfreed_stacks);
    w.end_object();
  }
  w.end_object();
}

}  // namespace mlprof
