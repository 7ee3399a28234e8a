#include "render/roofline_render.h"

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

std::string flops_text(double f) {
  if (f >= 1e12) return fmt("%.2f TFLOP", f / 1e12);
  if (f >= 1e9) return fmt("%.2f GFLOP", f / 1e9);
  if (f >= 1e6) return fmt("%.2f MFLOP", f / 1e6);
  return fmt("%.0f FLOP", f);
}

std::string dur(int64_t ns) { return format_duration_ns(static_cast<double>(ns)); }

// A rate is printed as fact only when every call is a roofline point.
std::string rate(const RooflineRow& r, double v, const char* f) {
  if (r.above_compute_peak > 0) return fmt(f, v) + "!";
  return fmt(f, v);
}

std::string short_name(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

std::string rows_table(const std::vector<RooflineRow>& rows, const char* first, bool shapes,
                       bool peaks, size_t width, size_t max_rows) {
  TextTable t;
  t.add_column(first, TextTable::Align::kLeft);
  if (shapes) t.add_column("shapes", TextTable::Align::kLeft);
  t.add_column("dtype", TextTable::Align::kLeft);
  t.add_column("calls");
  t.add_column("GPU time");
  t.add_column("FLOP/B");
  t.add_column("TFLOP/s");
  t.add_column("TB/s");
  if (peaks) {
    t.add_column("% roof");
    t.add_column("bound", TextTable::Align::kLeft);
    t.add_column("wasted");
  }
  size_t k = 0;
  for (const RooflineRow& r : rows) {
    if (k++ >= max_rows) break;
    std::vector<std::string> cells = {short_name(r.name, 48)};
    if (shapes) cells.push_back(short_name(r.shapes, 40));
    cells.push_back(r.dtype.empty() ? "-" : r.dtype);
    cells.push_back(std::to_string(r.calls));
    cells.push_back(dur(r.kernel_ns));
    cells.push_back(fmt("%.1f", r.intensity));
    cells.push_back(rate(r, r.achieved_tflops, "%.2f"));
    cells.push_back(rate(r, r.achieved_tbps, "%.3f"));
    if (peaks) {
      cells.push_back(std::isnan(r.roofline_pct) ? "-" : format_percent(r.roofline_pct));
      cells.push_back(r.bound.empty() ? "-" : r.bound);
      cells.push_back(dur(r.wasted_ns));
    }
    t.add_row(std::move(cells));
  }
  return t.render(width);
}

void write_row(JsonWriter& w, const RooflineRow& r, bool peaks) {
  w.begin_object();
  w.field("name", r.name);
  if (!r.shapes.empty()) w.field("shapes", r.shapes);
  w.field("dtype", r.dtype);
  w.field("family", r.family);
  w.field("calls", r.calls);
  w.field("kernel_ns", r.kernel_ns);
  w.field("flops", r.flops);
  w.field("bytes", r.bytes);
  w.field("intensity", r.intensity);
  w.field("achieved_tflops", r.achieved_tflops);
  w.field("achieved_tbps", r.achieved_tbps);
  if (peaks) {
    w.field("peak_tflops", r.peak_tflops);
    w.field("attainable_tflops", r.attainable_tflops);
    w.field("roofline_pct", r.roofline_pct);
    w.field("roofline_ns", r.roofline_ns);
    w.field("wasted_ns", r.wasted_ns);
    w.field("bound", r.bound);
    w.field("above_compute_peak", r.above_compute_peak);
    w.field("above_bandwidth", r.above_bandwidth);
  }
  w.end_object();
}

}  // namespace

std::string render_roofline_text(const RooflineResult& r, size_t width, size_t max_rows) {
  std::string out;
  out += "device: " + (r.device.empty() ? std::string("(none recorded)") : r.device);
  if (r.peaks_known) {
    const DevicePeaks& p = r.peaks;
    out += " -> " + p.name + ": ";
    if (p.bf16 > 0) out += fmt("bf16 %.1f", p.bf16) + ", ";
    if (p.fp16 > 0 && p.fp16 != p.bf16) out += fmt("fp16 %.1f", p.fp16) + ", ";
    if (p.tf32 > 0) out += fmt("tf32 %.1f", p.tf32) + ", ";
    out +=
        fmt("fp32 %.1f TFLOP/s", p.fp32) + fmt(", %.0f GB/s", p.mem_gbs) + " (" + p.source + ")\n";
  } else {
    out += "\n";
  }
  for (const std::string& w : r.warnings) out += "warning: " + w + "\n";
  if (r.calls == 0) {
    out += "No GPU time in modeled ops (record with record_shapes=True for Input Dims).\n";
    return out;
  }
  double cov = r.gpu_kernel_ns > 0 ? static_cast<double>(r.kernel_ns) / r.gpu_kernel_ns : 0;
  out += std::to_string(r.calls) + " modeled calls: " + flops_text(r.flops) + ", " +
         format_bytes(r.bytes) + " moved in " + dur(r.kernel_ns) + " of kernel time (" +
         format_percent(cov) + " of all " + dur(r.gpu_kernel_ns) + ")\n";
  if (r.peaks_known) {
    out += "at the roofline they would take " + dur(r.roofline_ns) + ": " + dur(r.wasted_ns) +
           " wasted";
    if (r.above_bandwidth)
      out += "; " + std::to_string(r.above_bandwidth) +
             " call(s) moved bytes faster than DRAM (served from cache: counted at their time)";
    out += "\n";
  }
  out +=
      "\nby op and shapes (wasted time = kernel time - roofline time; '!' = faster than the "
      "compute peak: a model or attribution problem, not a rate):\n";
  out += rows_table(r.shapes, "op", true, r.peaks_known, width, max_rows);
  out += "\nby family:\n" + rows_table(r.families, "family", false, r.peaks_known, width, 20);
  if (!r.kernels.empty())
    out += "\nby kernel (kernels that are their op's only one):\n" +
           rows_table(r.kernels, "kernel", false, r.peaks_known, width, max_rows);
  if (!r.modules.empty())
    out += "\nby module (innermost nn.Module):\n" +
           rows_table(r.modules, "module", false, r.peaks_known, width, max_rows);
  if (!r.steps.empty()) {
    TextTable s;
    s.add_column("step", TextTable::Align::kLeft);
    s.add_column("duration");
    s.add_column("FLOPs");
    s.add_column("TFLOP/s");
    s.add_column("MFU");
    s.add_column("kernel time");
    s.add_column("wasted");
    for (const RooflineStep& st : r.steps)
      s.add_row({"#" + std::to_string(st.number), dur(st.dur_ns), flops_text(st.flops),
                 fmt("%.2f", st.achieved_tflops), std::isnan(st.mfu) ? "-" : format_percent(st.mfu),
                 dur(st.kernel_ns), dur(st.wasted_ns)});
    out += "\nper step (MFU against the " + (r.dtype.empty() ? std::string("?") : r.dtype) +
           fmt(" peak %.1f TFLOP/s):\n", r.mfu_peak_tflops) + s.render(width);
  }
  if (!r.unmodeled.empty()) {
    TextTable u;
    u.add_column("op without a model", TextTable::Align::kLeft);
    u.add_column("why", TextTable::Align::kLeft);
    u.add_column("kernels");
    u.add_column("GPU time");
    for (const RooflineUnmodeled& x : r.unmodeled)
      u.add_row({short_name(x.name, 60), x.reason, std::to_string(x.calls), dur(x.kernel_ns)});
    out += "\n" + u.render(width);
  }
  return out;
}

void write_roofline_json(JsonWriter& w, const RooflineResult& r) {
  w.begin_object();
  w.field("device", r.device);
  w.field("peaks_known", r.peaks_known);
  if (r.peaks_known) {
    const DevicePeaks& p = r.peaks;
    w.key("peaks").begin_object();
    w.field("name", p.name);
    w.field("fp64_tflops", p.fp64);
    w.field("fp32_tflops", p.fp32);
    w.field("fp32_matrix_tflops", p.fp32_matrix);
    w.field("tf32_tflops", p.tf32);
    w.field("fp16_tflops", p.fp16);
    w.field("bf16_tflops", p.bf16);
    w.field("fp8_tflops", p.fp8);
    w.field("int8_tops", p.int8);
    w.field("mem_gbs", p.mem_gbs);
    w.field("source", p.source);
    w.end_object();
  }
  w.key("warnings").begin_array();
  for (const std::string& s : r.warnings) w.value(s);
  w.end_array();
  w.field("dtype", r.dtype);
  w.field("mfu_peak_tflops", r.mfu_peak_tflops);
  w.field("calls", r.calls);
  w.field("flops", r.flops);
  w.field("bytes", r.bytes);
  w.field("kernel_ns", r.kernel_ns);
  w.field("gpu_kernel_ns", r.gpu_kernel_ns);
  w.field("roofline_ns", r.roofline_ns);
  w.field("wasted_ns", r.wasted_ns);
  w.field("above_compute_peak", r.above_compute_peak);
  w.field("above_bandwidth", r.above_bandwidth);
  auto rows = [&](const char* key, const std::vector<RooflineRow>& v) {
    w.key(key).begin_array();
    for (const RooflineRow& x : v) write_row(w, x, r.peaks_known);
    w.end_array();
  };
  rows("shapes", r.shapes);
  rows("ops", r.ops);
  rows("families", r.families);
  rows("kernels", r.kernels);
  rows("modules", r.modules);
  w.key("steps").begin_array();
  for (const RooflineStep& s : r.steps) {
    w.begin_object();
    w.field("number", s.number);
    w.field("dur_ns", s.dur_ns);
    w.field("flops", s.flops);
    w.field("bytes", s.bytes);
    w.field("kernel_ns", s.kernel_ns);
    w.field("roofline_ns", s.roofline_ns);
    w.field("wasted_ns", s.wasted_ns);
    w.field("achieved_tflops", s.achieved_tflops);
    w.field("mfu", s.mfu);
    w.end_object();
  }
  w.end_array();
  w.key("unmodeled").begin_array();
  for (const RooflineUnmodeled& u : r.unmodeled) {
    w.begin_object();
    w.field("name", u.name);
    w.field("reason", u.reason);
    w.field("calls", u.calls);
    w.field("kernel_ns", u.kernel_ns);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace mlprof
