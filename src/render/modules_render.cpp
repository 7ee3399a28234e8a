#include "render/modules_render.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "render/steps_render.h"
#include "render/text_table.h"
#include "trace/units.h"

namespace mlprof {
namespace {

std::string ns(int64_t v) { return format_duration_ns(static_cast<double>(v)); }
std::string flops_text(double f) {
  if (f <= 0) return "-";
  char buf[32];
  const char* u[] = {"", "K", "M", "G", "T", "P"};
  int k = 0;
  while (f >= 1000 && k < 5) f /= 1000, ++k;
  std::snprintf(buf, sizeof buf, "%.1f%s", f, u[k]);
  return buf;
}

// "Root_0/Layer_3/Attn_0/Linear_1" -> "Layer_3/../Linear_1": the block and the layer.
std::string short_path(const ModuleRow& m) {
  if (m.depth < 2) return m.path;
  size_t a = m.path.find('/');
  size_t b = m.path.find('/', a + 1);
  std::string block = m.path.substr(a + 1, b - a - 1);
  return block + (m.depth > 2 ? "/../" : "/") + m.name;
}

void row_table(std::string& out, const char* title, const ModulesResult& r,
               const std::vector<uint32_t>& rows, bool indent, size_t width) {
  TextTable t;
  t.add_column(title, TextTable::Align::kLeft);
  for (const char* h : {"calls", "host", "host self", "GPU", "GPU self", "FLOPs", "% step"})
    t.add_column(h);
  for (uint32_t i : rows) {
    const ModuleRow& m = r.rows[i];
    std::string label = indent ? std::string(2 * m.depth, ' ') + m.name : short_path(m);
    if (m.recompute && indent && m.depth == 0) label = "[recompute] " + m.name;
    if (m.gpu_replayed_ns > 0) label += " [replay]";
    t.add_row({label, std::to_string(m.calls), ns(m.host_ns), ns(m.host_self_ns),
               r.has_gpu ? ns(m.gpu_ns) : "-", r.has_gpu ? ns(m.gpu_self_ns) : "-",
               flops_text(m.flops), format_percent(m.step_share)});
  }
  // A ranking's path is whole even past `width`: cut in the middle, the Qwen3 ranking read
  // "Qwen3DecoderLayer...ParallelLinear_15" (which layer? merged or row linear?).
  out += (indent ? t.render(width) : t.render_uncut()) + "\n";
}

}  // namespace

std::string render_modules_text(const ModulesResult& r, size_t depth, size_t width) {
  if (!r.message.empty()) return r.message + "\n";
  std::string out;
  char buf[320];
  // "% step" divides by this (modules.h): the iterations of the step model, by their host time
  // or GPU windows, or (no iterations) the whole trace's span; the numerator is the GPU time on
  // a GPU trace (it read as host time), else the host time.
  std::string share_of = r.has_gpu ? "GPU time" : "host time";
  std::string step_text =
      r.steps == 0
          ? "trace span " + ns(r.step_ns) + " (no iterations: % step = " + share_of + " / the span)"
      : r.step_window == "gpu"
          ? iteration_count_text(r.step_source, r.steps) + ", GPU windows " + ns(r.step_ns) +
                " (% step = " + share_of + " / their GPU windows)"
          : iteration_count_text(r.step_source, r.steps) + " " + ns(r.step_ns) +
                " (% step = " + share_of + " / their time)";
  std::snprintf(buf, sizeof buf,
                "%llu nn.Module calls, %zu module paths, depth %u; %llu recomputed on the autograd "
                "thread\n%s; GPU busy %s in the whole trace\n\n",
                static_cast<unsigned long long>(r.module_events), r.rows.size(), r.max_depth,
                static_cast<unsigned long long>(r.recompute_events), step_text.c_str(),
                ns(r.gpu_total_ns).c_str());
  out += buf;
  std::vector<uint32_t> tree;
  for (uint32_t i = 0; i < r.rows.size(); ++i)
    if (r.rows[i].depth < depth) tree.push_back(i);
  row_table(out, "module tree", r, tree, true, width);
  row_table(out, r.has_gpu ? "slowest by GPU self time" : "slowest by host self time", r, r.slowest,
            false, width);
  if (!r.classes.empty()) {
    TextTable t;
    t.add_column("by layer type", TextTable::Align::kLeft);
    for (const char* h : {"calls", "host self", "GPU self", "FLOPs self"}) t.add_column(h);
    for (size_t k = 0; k < r.classes.size() && k < 15; ++k) {
      const ModuleClass& c = r.classes[k];
      t.add_row({c.cls, std::to_string(c.calls), ns(c.host_self_ns),
                 r.has_gpu ? ns(c.gpu_self_ns) : "-", flops_text(c.flops_self)});
    }
    out += t.render(width) + "\n";
  }
  if (!r.variable.empty()) {
    TextTable t;
    t.add_column("most variable (>= 3 calls)", TextTable::Align::kLeft);
    for (const char* h : {"calls", "GPU min", "GPU max", "CV"}) t.add_column(h);
    for (uint32_t i : r.variable) {
      const ModuleRow& m = r.rows[i];
      t.add_row({short_path(m), std::to_string(m.calls), ns(m.gpu_min_ns), ns(m.gpu_max_ns),
                 format_fixed(m.gpu_cv, 2)});
    }
    out += t.render_uncut() + "\n";
  }
  if (!r.shared.empty()) {
    TextTable t;
    t.add_column("shared modules (one instance, several callers)", TextTable::Align::kLeft);
    for (const char* h : {"calls", "call sites", "GPU"}) t.add_column(h);
    for (const SharedModule& m : r.shared)
      t.add_row({m.name, std::to_string(m.calls), std::to_string(m.call_sites), ns(m.gpu_ns)});
    out += t.render(width);
  }
  if (r.replayed)
    out +=
        "[replay]: GPU self time of CUDA/HIP graph replays, charged to the module that launched "
        "each kernel in the capture pass (mlprof graphs); 0 calls: a module only the capture "
        "ran\n";
  return out;
}

void write_modules_json(JsonWriter& w, const ModulesResult& r) {
  w.begin_object().field("kind", "modules");
  if (!r.message.empty()) w.field("message", r.message);
  w.field("module_events", r.module_events).field("recompute_events", r.recompute_events);
  w.field("step_ns", r.step_ns)
      .field("steps", r.steps)
      .field("step_source", step_source_name(r.step_source))
      .field("step_window", r.step_window)
      .field("gpu_total_ns", r.gpu_total_ns)
      .field("has_gpu", r.has_gpu);
  w.field("max_depth", r.max_depth);
  w.key("rows").begin_array();
  for (const ModuleRow& m : r.rows) {
    w.begin_object()
        .field("path", m.path)
        .field("name", m.name)
        .field("class", m.cls)
        .field("depth", m.depth)
        .field("parent", m.parent)
        .field("recompute", m.recompute)
        .field("calls", m.calls)
        .field("host_ns", m.host_ns)
        .field("host_self_ns", m.host_self_ns)
        .field("gpu_ns", m.gpu_ns)
        .field("gpu_self_ns", m.gpu_self_ns)
        .field("gpu_events", m.gpu_events)
        .field("gpu_min_ns", m.gpu_min_ns)
        .field("gpu_max_ns", m.gpu_max_ns)
        .field("gpu_cv", m.gpu_cv)
        .field("flops", m.flops)
        .field("flops_self", m.flops_self)
        .field("step_share", m.step_share);
    // Only on a trace with matched graph replays, so other traces' JSON is unchanged.
    if (m.gpu_replayed_ns >= 0) w.field("gpu_replayed_ns", m.gpu_replayed_ns);
    w.end_object();
  }
  w.end_array();
  auto idx = [&](std::string_view k, const std::vector<uint32_t>& v) {
    w.key(k).begin_array();
    for (uint32_t i : v) w.value(r.rows[i].path);
    w.end_array();
  };
  idx("slowest", r.slowest);
  idx("most_variable", r.variable);
  w.key("shared").begin_array();
  for (const SharedModule& m : r.shared)
    w.begin_object()
        .field("name", m.name)
        .field("calls", m.calls)
        .field("call_sites", m.call_sites)
        .field("gpu_ns", m.gpu_ns)
        .end_object();
  w.end_array();
  w.key("classes").begin_array();
  for (const ModuleClass& c : r.classes)
    w.begin_object()
        .field("class", c.cls)
        .field("calls", c.calls)
        .field("host_self_ns", c.host_self_ns)
        .field("gpu_self_ns", c.gpu_self_ns)
        .field("flops_self", c.flops_self)
        .end_object();
  w.end_array().end_object();
}

}  // namespace mlprof
