#include "render/steps_render.h"

#include <cstdio>

#include "render/text_table.h"
#include "trace/units.h"

namespace mlprof {

namespace {
double frac(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}
}  // namespace

std::string render_steps_text(const StepsResult& r, size_t width) {
  if (r.steps.empty()) return "No steps found (no ProfilerStep#N slices).\n";
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%zu steps: mean %s, std %s, median %s, min %s, max %s\n",
                r.steps.size(), format_duration_ns(r.mean_ns).c_str(),
                format_duration_ns(r.std_ns).c_str(), format_duration_ns(r.median_ns).c_str(),
                format_duration_ns(static_cast<double>(r.min_ns)).c_str(),
                format_duration_ns(static_cast<double>(r.max_ns)).c_str());
  out += buf;
  if (!r.outlier_steps.empty()) {
    out += "Outlier steps (|dur - median| > 3 x 1.4826 x MAD):";
    for (int64_t n : r.outlier_steps) out += " #" + std::to_string(n);
    out += "\n";
  }
  out += "\nTime by phase (all steps):\n";
  TextTable phases;
  phases.add_column("phase", TextTable::Align::kLeft);
  phases.add_column("time");
  phases.add_column("share");
  for (size_t p = 0; p < kStepPhaseCount; ++p)
    phases.add_row({std::string(step_phase_name(static_cast<StepPhase>(p))),
                    format_duration_ns(static_cast<double>(r.phase_total_ns[p])),
                    format_percent(frac(r.phase_total_ns[p], r.total_ns))});
  out += phases.render(width);
  if (r.has_gpu) {
    out +=
        "\nTime by class (TensorBoard plugin priority, all steps, each step's GPU-extended "
        "window:\nfrom its host start to the end of the GPU work it launched; " +
        format_duration_ns(static_cast<double>(r.gpu_total_ns)) + " in all, host windows " +
        format_duration_ns(static_cast<double>(r.total_ns)) + "):\n";
    TextTable classes;
    classes.add_column("class", TextTable::Align::kLeft);
    classes.add_column("time");
    classes.add_column("share");
    for (size_t c = 0; c < kGpuStepClassCount; ++c)
      classes.add_row({std::string(gpu_step_class_name(static_cast<GpuStepClass>(c))),
                       format_duration_ns(static_cast<double>(r.gpu_class_total_ns[c])),
                       format_percent(frac(r.gpu_class_total_ns[c], r.gpu_total_ns))});
    out += classes.render(width);
    if (r.plugin_steps < r.steps.size())
      out += "The plugin's Overview leaves out the last " +
             std::to_string(r.steps.size() - r.plugin_steps) +
             " step(s) (they launched no or too little GPU work); over the " +
             std::to_string(r.plugin_steps) + " it keeps, data loader is " +
             format_percent(
                 frac(r.plugin_class_total_ns[static_cast<size_t>(GpuStepClass::kDataLoader)],
                      r.plugin_total_ns)) +
             ".\n";
  }
  out += "\n";
  TextTable t;
  t.add_column("step", TextTable::Align::kLeft);
  t.add_column("duration");
  if (r.has_gpu) t.add_column("GPU window");
  t.add_column("data");
  t.add_column("forward");
  t.add_column("backward");
  t.add_column("optimizer");
  t.add_column("comm");
  t.add_column("other");
  t.add_column("");
  for (const StepInfo& s : r.steps) {
    std::vector<std::string> row{s.name, format_duration_ns(static_cast<double>(s.dur_ns))};
    if (r.has_gpu)
      row.push_back(format_duration_ns(static_cast<double>(s.gpu_dur_ns)) +
                    (s.plugin_dropped ? "*" : ""));
    for (size_t p = 0; p < kStepPhaseCount; ++p)
      row.push_back(format_percent(frac(s.phase_ns[p], s.dur_ns)));
    row.push_back(s.outlier ? "outlier" : "");
    t.add_row(std::move(row));
  }
  out += t.render(width);
  if (r.has_gpu && r.plugin_steps < r.steps.size())
    out += "* left out of the TensorBoard plugin's Overview\n";
  return out;
}

void write_steps_json(JsonWriter& w, const StepsResult& r) {
  w.begin_object();
  w.field("count", static_cast<uint64_t>(r.steps.size()));
  w.field("mean_ns", r.mean_ns);
  w.field("std_ns", r.std_ns);
  w.field("median_ns", r.median_ns);
  w.field("mad_ns", r.mad_ns);
  w.field("min_ns", r.steps.empty() ? 0 : r.min_ns);
  w.field("max_ns", r.steps.empty() ? 0 : r.max_ns);
  w.field("total_ns", r.total_ns);
  w.key("outlier_rule").value("|dur - median| > 3 * 1.4826 * MAD");
  w.key("outlier_steps").begin_array();
  for (int64_t n : r.outlier_steps) w.value(n);
  w.end_array();
  w.key("phase_total_ns").begin_object();
  for (size_t p = 0; p < kStepPhaseCount; ++p)
    w.field(step_phase_name(static_cast<StepPhase>(p)), r.phase_total_ns[p]);
  w.end_object();
  w.field("has_gpu", r.has_gpu);
  if (r.has_gpu) {
    w.key("gpu_class_total_ns").begin_object();
    for (size_t c = 0; c < kGpuStepClassCount; ++c)
      w.field(gpu_step_class_name(static_cast<GpuStepClass>(c)), r.gpu_class_total_ns[c]);
    w.end_object();
    w.field("gpu_total_ns", r.gpu_total_ns);
    w.field("tb_plugin_classes", r.tb_plugin_classes);
    w.key("gpu_window")
        .value(
            "each step from max(host start, previous step's GPU end) to max(host end, end of the "
            "GPU "
            "work launched inside the host window), the TensorBoard plugin's rule");
    w.field("plugin_steps", static_cast<uint64_t>(r.plugin_steps));
    w.key("plugin_class_total_ns").begin_object();
    for (size_t c = 0; c < kGpuStepClassCount; ++c)
      w.field(gpu_step_class_name(static_cast<GpuStepClass>(c)), r.plugin_class_total_ns[c]);
    w.end_object();
    w.field("plugin_total_ns", r.plugin_total_ns);
  }
  w.key("steps").begin_array();
  for (const StepInfo& s : r.steps) {
    w.begin_object();
    w.field("number", s.number);
    w.field("name", s.name);
    w.field("begin_ns", s.begin_ns);
    w.field("dur_ns", s.dur_ns);
    w.field("outlier", s.outlier);
    w.key("phase_ns").begin_object();
    for (size_t p = 0; p < kStepPhaseCount; ++p)
      w.field(step_phase_name(static_cast<StepPhase>(p)), s.phase_ns[p]);
    w.end_object();
    if (r.has_gpu) {
      w.field("gpu_begin_ns", s.gpu_begin_ns);
      w.field("gpu_dur_ns", s.gpu_dur_ns);
      w.field("device_events", s.device_events);
      w.field("plugin_dropped", s.plugin_dropped);
      w.key("gpu_class_ns").begin_object();
      for (size_t c = 0; c < kGpuStepClassCount; ++c)
        w.field(gpu_step_class_name(static_cast<GpuStepClass>(c)), s.gpu_class_ns[c]);
      w.end_object();
    }
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace mlprof
