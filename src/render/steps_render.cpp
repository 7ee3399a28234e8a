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

namespace {

std::string source_line(const StepsResult& r) {
  switch (r.source) {
    case StepSource::kProfilerStep:
      return "Iterations: ProfilerStep#N\n";
    case StepSource::kAnnotation:
      return "Iterations: annotations matching --step-annotation '" + r.step_annotation + "'\n";
    case StepSource::kVllm:
      return "Iterations: vLLM execute_* annotations\n";
    case StepSource::kSglang:
      return "Iterations: SGLang step[...] annotations\n";
    default:
      return "";
  }
}

std::string span_text(const StepInfo& st, bool gpu) {
  std::string out =
      "No iteration markers (ProfilerStep#N, vLLM execute_*, SGLang step[...], or "
      "--step-annotation REGEX): one window by the TensorBoard plugin's rule, the CPU ops' span "
      "extended to the GPU work they launched.\nHost span " +
      format_duration_ns(static_cast<double>(st.dur_ns));
  if (gpu && st.gpu_busy_ns >= 0) {
    out += ", GPU window " + format_duration_ns(static_cast<double>(st.gpu_dur_ns)) +
           ", GPU busy " + format_duration_ns(static_cast<double>(st.gpu_busy_ns)) + " (" +
           format_percent(frac(st.gpu_busy_ns, st.gpu_dur_ns)) + "), idle " +
           format_duration_ns(static_cast<double>(st.gpu_dur_ns - st.gpu_busy_ns));
  }
  return out + ".\n";
}

std::string serving_text(const StepsResult& r, size_t width) {
  bool any = false;
  for (const StepInfo& st : r.steps) any = any || st.serving.has_value() || st.capture;
  if (!any) return "";
  std::string out = "\nSteady state: " + std::to_string(r.steady_count) + " of " +
                    std::to_string(r.steps.size()) + " iterations";
  if (r.warmup_count > 0 || r.capture_count > 0) {
    out += " (left out: " + std::to_string(r.warmup_count) +
           " warm-up, leading iterations over 1.5x their phase's median host time; " +
           std::to_string(r.capture_count) + " capturing a graph)";
  }
  out += "\n";
  TextTable t;
  t.add_column("phase", TextTable::Align::kLeft);
  t.add_column("iterations");
  t.add_column("batch");
  t.add_column("tokens");
  t.add_column("host mean");
  t.add_column("host p50");
  t.add_column("host p90");
  t.add_column("GPU busy mean");
  t.add_column("GPU idle mean");
  for (const PhaseStats& p : r.phases) {
    std::string batch = "-";
    if (p.batch_mean >= 0) {
      char b[64];
      std::snprintf(b, sizeof b, "%.1f (%lld-%lld)", p.batch_mean,
                    static_cast<long long>(p.batch_min), static_cast<long long>(p.batch_max));
      batch = b;
    }
    t.add_row({std::string(iteration_phase_name(p.phase)), std::to_string(p.count), batch,
               std::to_string(p.tokens), format_duration_ns(p.host_mean_ns),
               format_duration_ns(p.host_p50_ns), format_duration_ns(p.host_p90_ns),
               p.gpu_busy_mean_ns >= 0 ? format_duration_ns(p.gpu_busy_mean_ns) : "-",
               p.idle_mean_ns >= 0 ? format_duration_ns(p.idle_mean_ns) : "-"});
  }
  out += t.render(width);
  return out;
}

}  // namespace

std::string render_steps_text(const StepsResult& r, size_t width) {
  if (r.span) return span_text(*r.span, r.span->gpu_dur_ns > 0);
  if (r.steps.empty()) {
    return r.source == StepSource::kNone && !r.step_annotation.empty()
               ? "No steps found (no slice matches --step-annotation '" + r.step_annotation +
                     "').\n"
               : "No steps found (no ProfilerStep#N slices).\n";
  }
  std::string out = source_line(r);
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
  out += serving_text(r, width);
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
  bool serving = false;
  for (const StepInfo& s : r.steps) serving = serving || s.serving.has_value();
  if (serving) {
    t.add_column("phase", TextTable::Align::kLeft);
    t.add_column("batch");
  }
  if (r.has_gpu) t.add_column("GPU busy");
  t.add_column("");
  for (const StepInfo& s : r.steps) {
    std::vector<std::string> row{s.name, format_duration_ns(static_cast<double>(s.dur_ns))};
    if (r.has_gpu)
      row.push_back(format_duration_ns(static_cast<double>(s.gpu_dur_ns)) +
                    (s.plugin_dropped ? "*" : ""));
    for (size_t p = 0; p < kStepPhaseCount; ++p)
      row.push_back(format_percent(frac(s.phase_ns[p], s.dur_ns)));
    if (serving) {
      row.push_back(s.serving ? std::string(iteration_phase_name(s.serving->phase)) : "");
      row.push_back(s.serving && s.serving->batch_size >= 0 ? std::to_string(s.serving->batch_size)
                                                            : "");
    }
    if (r.has_gpu) row.push_back(format_duration_ns(static_cast<double>(s.gpu_busy_ns)));
    std::string note = s.outlier ? "outlier" : "";
    if (s.capture)
      note += note.empty() ? "capture" : ", capture";
    else if (s.warmup)
      note += note.empty() ? "warm-up" : ", warm-up";
    row.push_back(note);
    t.add_row(std::move(row));
  }
  out += t.render(width);
  if (r.has_gpu && r.plugin_steps < r.steps.size())
    out += "* left out of the TensorBoard plugin's Overview\n";
  return out;
}

namespace {
void write_serving(JsonWriter& w, const ServingIteration& it) {
  w.key("serving").begin_object();
  w.field("phase", iteration_phase_name(it.phase));
  if (!it.mode.empty()) w.field("mode", it.mode);
  auto opt = [&](std::string_view k, int64_t v) {
    w.key(k);
    if (v >= 0) {
      w.value(v);
    } else {
      w.null();
    }
  };
  opt("batch_size", it.batch_size);
  opt("num_tokens", it.num_tokens);
  opt("context_requests", it.context_requests);
  opt("generation_requests", it.generation_requests);
  opt("context_tokens", it.context_tokens);
  opt("generation_tokens", it.generation_tokens);
  opt("context_kv_tokens", it.context_kv);
  opt("generation_kv_tokens", it.generation_kv);
  w.end_object();
}

void write_span(JsonWriter& w, const StepInfo& st) {
  w.key("span").begin_object();
  w.field("begin_ns", st.begin_ns);
  w.field("dur_ns", st.dur_ns);
  if (st.gpu_busy_ns >= 0) {
    w.field("gpu_begin_ns", st.gpu_begin_ns);
    w.field("gpu_dur_ns", st.gpu_dur_ns);
    w.field("gpu_busy_ns", st.gpu_busy_ns);
    w.field("gpu_idle_ns", st.gpu_dur_ns - st.gpu_busy_ns);
    w.field("device_events", st.device_events);
  }
  w.key("rule").value(
      "no iteration markers: one window from the first CPU op's start to the last one's end, "
      "extended to the end of the GPU work launched inside it (the TensorBoard plugin's rule)");
  w.end_object();
}
}  // namespace

void write_steps_json(JsonWriter& w, const StepsResult& r) {
  w.begin_object();
  w.field("source", step_source_name(r.source));
  if (!r.step_annotation.empty()) w.field("step_annotation", r.step_annotation);
  if (r.span) write_span(w, *r.span);
  w.field("count", static_cast<uint64_t>(r.steps.size()));
  w.key("steady_state").begin_object();
  w.field("first_index", static_cast<uint64_t>(r.steady_first));
  w.field("count", static_cast<uint64_t>(r.steady_count));
  w.field("warmup", static_cast<uint64_t>(r.warmup_count));
  w.field("capture", static_cast<uint64_t>(r.capture_count));
  w.key("rule").value(
      "left out: warm-up (the leading iterations, graph captures skipped, that take over 1.5x "
      "the median host time of their phase) and every iteration that captures a graph "
      "(Stream*BeginCapture inside it)");
  w.end_object();
  w.key("phases").begin_array();
  for (const PhaseStats& p : r.phases) {
    w.begin_object();
    w.field("phase", iteration_phase_name(p.phase));
    w.field("count", static_cast<uint64_t>(p.count));
    w.field("host_mean_ns", p.host_mean_ns);
    w.field("host_p50_ns", p.host_p50_ns);
    w.field("host_p90_ns", p.host_p90_ns);
    w.field("host_min_ns", p.host_min_ns);
    w.field("host_max_ns", p.host_max_ns);
    if (p.gpu_busy_mean_ns >= 0) {
      w.field("gpu_busy_mean_ns", p.gpu_busy_mean_ns);
      w.field("gpu_busy_p50_ns", p.gpu_busy_p50_ns);
      w.field("gpu_idle_mean_ns", p.idle_mean_ns);
    }
    if (p.batch_mean >= 0) {
      w.field("batch_mean", p.batch_mean);
      w.field("batch_min", p.batch_min);
      w.field("batch_max", p.batch_max);
    }
    w.field("tokens", p.tokens);
    w.end_object();
  }
  w.end_array();
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
    w.field("warmup", s.warmup);
    w.field("capture", s.capture);
    if (s.serving) write_serving(w, *s.serving);
    w.key("phase_ns").begin_object();
    for (size_t p = 0; p < kStepPhaseCount; ++p)
      w.field(step_phase_name(static_cast<StepPhase>(p)), s.phase_ns[p]);
    w.end_object();
    if (r.has_gpu) {
      w.field("gpu_begin_ns", s.gpu_begin_ns);
      w.field("gpu_dur_ns", s.gpu_dur_ns);
      w.field("device_events", s.device_events);
      w.field("gpu_busy_ns", s.gpu_busy_ns);
      w.field("gpu_idle_ns", s.gpu_dur_ns - s.gpu_busy_ns);
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

std::string iteration_count_text(StepSource source, size_t n) {
  bool one = n == 1;
  std::string count = std::to_string(n);
  switch (source) {
    case StepSource::kProfilerStep:
      return count + (one ? " ProfilerStep" : " ProfilerSteps");
    case StepSource::kVllm:
      return count + (one ? " vLLM iteration" : " vLLM iterations");
    case StepSource::kSglang:
      return count + (one ? " SGLang iteration" : " SGLang iterations");
    case StepSource::kAnnotation:
      return count + (one ? " --step-annotation iteration" : " --step-annotation iterations");
    default:
      return count + (one ? " iteration" : " iterations");
  }
}

}  // namespace mlprof
