#include "render/flops_render.h"

#include <cmath>
#include <cstdio>

#include "render/text_table.h"
#include "trace/units.h"

namespace mlprof {

namespace {
std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
// 1.23 GFLOP, 4.5 TFLOP...
std::string format_flops(double f) {
  if (f >= 1e12) return fmt("%.3f TFLOP", f / 1e12);
  if (f >= 1e9) return fmt("%.3f GFLOP", f / 1e9);
  if (f >= 1e6) return fmt("%.3f MFLOP", f / 1e6);
  return fmt("%.0f FLOP", f);
}
}  // namespace

std::string render_flops_text(const FlopsResult& r, size_t width) {
  std::string out;
  if (r.ops.empty()) return "No matmul/linear/conv/attention ops in this trace.\n";
  out += "total " + format_flops(r.total_flops) + " in counted ops; " +
         fmt("%.4f", r.achieved_tflops_per_s) + " TFLOP/s over " +
         format_duration_ns(static_cast<double>(r.wall_ns)) + " (" +
         (r.steps.empty() ? "span" : "steps") + "), " + fmt("%.4f", r.op_tflops_per_s) +
         " TFLOP/s while the ops run\n";
  if (r.calls_without_shapes)
    out += std::to_string(r.calls_without_shapes) +
           " calls had no usable Input Dims (record with record_shapes=True)\n";
  out += "device: " + (r.device.empty() ? std::string("(none recorded)") : r.device) +
         (r.dtype.empty() ? "" : ", dtype " + r.dtype) + "; ";
  if (r.peak_tflops > 0)
    out += "peak " + fmt("%.1f", r.peak_tflops) + " TFLOP/s (" + r.peak_source + "), MFU " +
           fmt("%.2f%%", r.mfu * 100) + "\n";
  else
    out += "peak unknown (pass --peak-tflops for MFU)\n";
  TextTable t;
  t.add_column("op", TextTable::Align::kLeft);
  t.add_column("calls");
  t.add_column("counted");
  t.add_column("FLOPs");
  bool gpu = false;
  for (const OpFlops& o : r.ops) gpu = gpu || o.gpu_ns > 0;
  t.add_column(gpu ? "GPU time" : "time");
  t.add_column("TFLOP/s");
  for (const OpFlops& o : r.ops)
    t.add_row({o.name, std::to_string(o.calls), std::to_string(o.calls_counted),
               format_flops(o.flops),
               format_duration_ns(static_cast<double>(gpu ? o.gpu_ns : o.total_ns)),
               fmt("%.4f", o.tflops_per_s)});
  out += "\n" + t.render(width);
  if (!r.steps.empty()) {
    TextTable s;
    s.add_column("step", TextTable::Align::kLeft);
    s.add_column("FLOPs");
    s.add_column("duration");
    s.add_column("TFLOP/s");
    s.add_column("MFU");
    for (const StepFlops& st : r.steps)
      s.add_row({"#" + std::to_string(st.number), format_flops(st.flops),
                 format_duration_ns(static_cast<double>(st.dur_ns)), fmt("%.4f", st.tflops_per_s),
                 std::isnan(st.mfu) ? "-" : fmt("%.2f%%", st.mfu * 100)});
    out += "\n" + s.render(width);
  }
  return out;
}

void write_flops_json(JsonWriter& w, const FlopsResult& r) {
  w.begin_object();
  w.field("total_flops", r.total_flops);
  w.field("counted_op_ns", r.counted_op_ns);
  w.field("op_tflops_per_s", r.op_tflops_per_s);
  w.field("wall_ns", r.wall_ns);
  w.field("achieved_tflops_per_s", r.achieved_tflops_per_s);
  w.field("device", r.device);
  w.field("dtype", r.dtype);
  w.field("peak_tflops", r.peak_tflops);
  w.field("peak_source", r.peak_source);
  w.field("mfu", r.mfu);
  w.field("calls_without_shapes", r.calls_without_shapes);
  w.key("ops").begin_array();
  for (const OpFlops& o : r.ops) {
    w.begin_object();
    w.field("name", o.name);
    w.field("calls", o.calls);
    w.field("calls_counted", o.calls_counted);
    w.field("flops", o.flops);
    w.field("total_ns", o.total_ns);
    w.field("gpu_ns", o.gpu_ns);
    w.field("tflops_per_s", o.tflops_per_s);
    w.end_object();
  }
  w.end_array();
  w.key("steps").begin_array();
  for (const StepFlops& s : r.steps) {
    w.begin_object();
    w.field("number", s.number);
    w.field("flops", s.flops);
    w.field("dur_ns", s.dur_ns);
    w.field("tflops_per_s", s.tflops_per_s);
    w.field("mfu", s.mfu);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace mlprof
