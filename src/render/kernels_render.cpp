#include "render/kernels_render.h"

#include <cctype>
#include <cstdio>

#include "render/text_table.h"
#include "trace/units.h"

namespace mlprof {

namespace {

// "void at::native::foo<float>(float*, int)" -> "at::native::foo<float>": the return type and
// the parameter list add width, not information.
std::string display_name(const std::string& name) {
  std::string_view n = name;
  if (n.substr(0, 5) == "void ") n.remove_prefix(5);
  size_t depth = 0;
  for (size_t i = 0; i < n.size(); ++i) {
    if (n[i] == '<') ++depth;
    if (n[i] == '>' && depth > 0) --depth;
    if (n[i] == '(' && depth == 0 && i > 0) return std::string(n.substr(0, i));
  }
  return std::string(n);
}

std::string compact(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch != ' ') out += ch;
  }
  return out;
}

}  // namespace

std::string render_kernels_text(const KernelsResult& r, size_t width, size_t top) {
  std::string out;
  out += "GPU kernels (rank " + std::to_string(r.rank) + "): " + std::to_string(r.kernel_count) +
         " calls, " + std::to_string(r.kernels.size()) + " names, " +
         format_duration_ns(static_cast<double>(r.total_gpu_ns)) + " of GPU time\n";
  // MTIA names its kernels by job, not by engine: a "0.0%" or "yes" there would be made up.
  std::string unit = r.matrix_unit;
  if (!unit.empty()) unit[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0])));
  if (!r.tensor_cores_measured)
    out += unit + ": not measured on " + (r.device == "unknown" ? "this device" : r.device) +
           " (its kernel names do not say which unit ran them)\n\n";
  else
    out += unit + ": " + format_percent(r.tensor_core_share) + " of computation-kernel time (" +
           format_duration_ns(static_cast<double>(r.tensor_core_ns)) + " of " +
           format_duration_ns(static_cast<double>(r.computation_ns)) + ", name heuristics)\n\n";

  TextTable t;
  t.add_column("kernel", TextTable::Align::kLeft);
  t.add_column("count");
  t.add_column("total");
  t.add_column("mean");
  t.add_column("max");
  t.add_column("share");
  t.add_column("TC", TextTable::Align::kLeft);
  size_t n = top == 0 ? r.kernels.size() : std::min(top, r.kernels.size());
  for (size_t i = 0; i < n; ++i) {
    const KernelStats& k = r.kernels[i];
    t.add_row({display_name(k.name), std::to_string(k.count),
               format_duration_ns(static_cast<double>(k.total_ns)), format_duration_ns(k.mean_ns),
               format_duration_ns(static_cast<double>(k.max_ns)), format_percent(k.share),
               k.tensor_cores ? "yes" : ""});
  }
  out += t.render(width);
  if (n < r.kernels.size()) {
    out += "(" + std::to_string(r.kernels.size() - n) + " more; --top 0 shows all)\n";
  }

  // Launch configuration of the same kernels, when the trace records it.
  TextTable c;
  c.add_column("launch configuration", TextTable::Align::kLeft);
  c.add_column("grid", TextTable::Align::kLeft);
  c.add_column("block", TextTable::Align::kLeft);
  c.add_column("regs");
  c.add_column("smem");
  c.add_column("occupancy");
  bool any = false;
  for (size_t i = 0; i < n; ++i) {
    const KernelStats& k = r.kernels[i];
    if (k.launch.grid.empty()) continue;
    any = true;
    c.add_row(
        {display_name(k.name), compact(k.launch.grid) + (k.launch.varies ? "*" : ""),
         compact(k.launch.block),
         k.launch.registers_per_thread >= 0 ? std::to_string(k.launch.registers_per_thread) : "",
         k.launch.shared_memory >= 0 ? format_bytes(static_cast<double>(k.launch.shared_memory))
                                     : "",
         k.launch.achieved_occupancy >= 0 ? format_fixed(k.launch.achieved_occupancy, 0) + "%"
                                          : ""});
  }
  if (any) {
    out += "\n" + c.render(width);
    out += "* launch configuration varies between calls; the first call's is shown\n";
  }
  out += "\n";

  if (!r.by_op.empty()) {
    TextTable bo;
    bo.add_column("kernels by launching op", TextTable::Align::kLeft);
    bo.add_column("kernel", TextTable::Align::kLeft);
    bo.add_column("grid", TextTable::Align::kLeft);
    bo.add_column("block", TextTable::Align::kLeft);
    bo.add_column("regs");
    bo.add_column("smem");
    bo.add_column("count");
    bo.add_column("total");
    bo.add_column("mean");
    size_t m = top == 0 ? r.by_op.size() : std::min(top, r.by_op.size());
    bool any_replayed = false;
    for (size_t i = 0; i < m; ++i) {
      const KernelOpRow& k = r.by_op[i];
      any_replayed |= k.replayed;
      bo.add_row({display_name(k.op) + (k.replayed ? " [replay]" : ""), display_name(k.kernel),
                  compact(k.grid), compact(k.block),
                  k.registers_per_thread >= 0 ? std::to_string(k.registers_per_thread) : "",
                  k.shared_memory >= 0 ? format_bytes(static_cast<double>(k.shared_memory)) : "",
                  std::to_string(k.count), format_duration_ns(static_cast<double>(k.total_ns)),
                  format_duration_ns(k.mean_ns)});
    }
    out += bo.render(width);
    if (m < r.by_op.size())
      out +=
          "(" + std::to_string(r.by_op.size() - m) + " more (op, kernel) rows; --json lists all)\n";
    if (any_replayed)
      out +=
          "[replay]: run by a CUDA/HIP graph replay; the op is the one that launched the kernel "
          "in the capture pass (mlprof graphs)\n";
    out += "\n";
  }

  TextTable kt;
  kt.add_column("kernel type (HTA)", TextTable::Align::kLeft);
  kt.add_column("time");
  kt.add_column("percent");
  for (const KernelTypeTime& k : r.type_breakdown) {
    kt.add_row({k.kernel_type, format_duration_ns(static_cast<double>(k.time_ns)),
                format_fixed(k.percent, 1) + "%"});
  }
  out += kt.render(width);
  return out;
}

void write_kernels_json(JsonWriter& w, const KernelsResult& r) {
  w.begin_object();
  w.field("rank", r.rank);
  w.field("total_gpu_ns", r.total_gpu_ns);
  w.field("kernel_count", r.kernel_count);
  w.field("computation_ns", r.computation_ns);
  w.field("tensor_core_ns", r.tensor_core_ns);
  w.field("tensor_core_share", r.tensor_core_share);
  w.field("tensor_cores_measured", r.tensor_cores_measured);
  w.field("matrix_unit", r.matrix_unit);
  w.key("kernels").begin_array();
  for (const KernelStats& k : r.kernels) {
    w.begin_object();
    w.field("name", k.name);
    w.field("kernel_type", kernel_type_name(k.type));
    w.field("kind", std::string(gpu_work_kind_name(k.kind)));
    w.field("count", k.count);
    w.field("total_ns", k.total_ns);
    w.field("mean_ns", k.mean_ns);
    w.field("min_ns", k.min_ns);
    w.field("max_ns", k.max_ns);
    w.field("std_ns", k.std_ns);
    w.field("share", k.share);
    w.field("tensor_cores", k.tensor_cores);
    if (k.kind == GpuWorkKind::kKernel) {
      w.key("launch").begin_object();
      // Kineto writes grid and block as JSON arrays; anything else stays a string.
      auto dims = [&](const char* key, const std::string& v) {
        if (v.empty()) return;
        w.key(key);
        if (v.front() == '[' && v.back() == ']') {
          w.raw(v);
        } else {
          w.value(v);
        }
      };
      dims("grid", k.launch.grid);
      dims("block", k.launch.block);
      if (k.launch.registers_per_thread >= 0) {
        w.field("registers_per_thread", k.launch.registers_per_thread);
      }
      if (k.launch.shared_memory >= 0) w.field("shared_memory", k.launch.shared_memory);
      if (k.launch.blocks_per_sm >= 0) w.field("blocks_per_sm", k.launch.blocks_per_sm);
      if (k.launch.warps_per_sm >= 0) w.field("warps_per_sm", k.launch.warps_per_sm);
      if (k.launch.achieved_occupancy >= 0) {
        w.field("achieved_occupancy_pct", k.launch.achieved_occupancy);
      }
      w.field("varies", k.launch.varies);
      w.end_object();
    }
    w.end_object();
  }
  w.end_array();
  w.key("by_op").begin_array();
  for (const KernelOpRow& k : r.by_op) {
    w.begin_object();
    w.field("op", k.op);
    w.field("kernel", k.kernel);
    if (!k.grid.empty()) w.field("grid", k.grid);
    if (!k.block.empty()) w.field("block", k.block);
    if (k.registers_per_thread >= 0) w.field("registers_per_thread", k.registers_per_thread);
    if (k.shared_memory >= 0) w.field("shared_memory", k.shared_memory);
    w.field("count", k.count);
    w.field("total_ns", k.total_ns);
    w.field("mean_ns", k.mean_ns);
    w.field("min_ns", k.min_ns);
    w.field("max_ns", k.max_ns);
    if (k.blocks_per_sm >= 0) w.field("blocks_per_sm", k.blocks_per_sm);
    if (k.achieved_occupancy >= 0) w.field("achieved_occupancy_pct", k.achieved_occupancy);
    if (k.replayed) w.field("replayed", true);  // op from the graph's capture pass
    w.end_object();
  }
  w.end_array();
  w.key("kernel_type_breakdown").begin_array();
  for (const KernelTypeTime& k : r.type_breakdown) {
    w.begin_object();
    w.field("kernel_type", k.kernel_type);
    w.field("time_ns", k.time_ns);
    w.field("percentage", k.percent);
    w.end_object();
  }
  w.end_array();
  w.key("kernel_breakdown").begin_array();
  for (const HtaKernelRow& k : r.hta_breakdown) {
    w.begin_object();
    w.field("name", k.name);
    w.field("kernel_type", k.kernel_type);
    w.field("sum_us", k.sum_us);
    w.field("max_us", k.max_us);
    w.field("min_us", k.min_us);
    w.field("mean_us", k.mean_us);
    w.field("stddev_us", k.std_us);
    w.field("rank", k.rank);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace mlprof
