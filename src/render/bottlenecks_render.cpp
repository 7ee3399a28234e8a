#include "render/bottlenecks_render.h"

#include <cmath>
#include <cstdio>

#include "render/steps_render.h"
#include "trace/units.h"

namespace mlprof {

std::string format_evidence(const Evidence& e) {
  char buf[64];
  if (e.unit == "ns") return format_duration_ns(e.value);
  if (e.unit == "bytes") return format_bytes(e.value);
  if (e.unit == "bytes/step") return format_bytes(e.value) + "/step";
  if (e.unit == "%") return format_percent(e.value / 100);
  if (e.unit == "ratio") {
    std::snprintf(buf, sizeof buf, "%.3f", e.value);
    return buf;
  }
  if (e.unit == "count" || std::floor(e.value) == e.value) {
    std::snprintf(buf, sizeof buf, "%.0f", e.value);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.4g", e.value);
  return buf;
}

// "3 ProfilerSteps", "1 vLLM iteration", "the trace's span (no iterations)".
std::string replay_windows_text(const BottleneckResult& r) {
  switch (r.replay_window) {
    case StepSource::kTraceSpan:
      return "one window: the step thread's span and the GPU work it launched, no iterations "
             "in the trace";
    case StepSource::kNone:
      return std::to_string(r.replay_steps) + " steps";
    default:
      return iteration_count_text(r.replay_window, r.replay_steps);
  }
}

std::string render_bottlenecks_text(const BottleneckResult& r, size_t width) {
  std::string out;
  if (r.findings.empty()) {
    out = "No bottleneck rule fired (basis: " + r.basis + ", " +
          format_duration_ns(static_cast<double>(r.basis_ns)) + ").\n";
    return out;
  }
  out = std::to_string(r.findings.size()) +
        " findings, ranked by estimated time saved (basis: " + r.basis + ", " +
        format_duration_ns(static_cast<double>(r.basis_ns)) + ")\n";
  size_t k = 0;
  for (const Finding& f : r.findings) {
    out += "\n" + std::to_string(++k) + ". [" + std::string(severity_name(f.severity)) + "] " +
           f.kind + ": " + f.title + "\n";
    if (f.priced_by == "replay") {
      out += "   could save ~" + format_duration_ns(static_cast<double>(f.est_savings_ns)) + " (" +
             format_percent(f.est_savings_pct / 100) + ") by replay";
      if (f.saving_alone_ns != f.est_savings_ns)
        out += "; alone " + format_duration_ns(static_cast<double>(f.saving_alone_ns));
      if (r.replay_steps > 1)
        out += "; per step median " +
               format_duration_ns(static_cast<double>(f.step_saving_median_ns)) + " (" +
               format_duration_ns(static_cast<double>(f.step_saving_min_ns)) + " to " +
               format_duration_ns(static_cast<double>(f.step_saving_max_ns)) + ")";
      out += "\n";
      if (!f.replay_note.empty()) out += "   replay: " + f.replay_note + "\n";
    } else if (f.est_savings_ns > 0) {
      out += "   could save ~" + format_duration_ns(static_cast<double>(f.est_savings_ns)) + " (" +
             format_percent(f.est_savings_pct / 100) + ", estimate)\n";
    }
    out += "   evidence:";
    std::string line;
    for (const Evidence& e : f.evidence) {
      std::string item = " " + e.name + " = " + format_evidence(e) + ";";
      if (line.size() + item.size() > (width > 20 ? width - 16 : 60)) {
        out += line + "\n            ";
        line.clear();
      }
      line += item;
    }
    out += line + "\n";
    out += "   rule: " + f.rule + "\n";
    if (!f.ops.empty()) {
      out += "   affects:";
      // Templated kernel names run to hundreds of characters: keep both ends.
      for (size_t i = 0; i < f.ops.size(); ++i) {
        const std::string& o = f.ops[i];
        out += (i ? ", " : " ") +
               (o.size() <= 80 ? o : o.substr(0, 50) + "..." + o.substr(o.size() - 27));
      }
      out += "\n";
    }
    out += "   do: " + f.recommendation + "\n";
    if (!f.why.empty()) out += "   why: " + f.why + "\n";
  }
  if (r.replayed && r.combined_findings > 0)
    out += "\nAll " + std::to_string(r.combined_findings) +
           " priced findings applied together (one replay over " + replay_windows_text(r) + "): ~" +
           format_duration_ns(static_cast<double>(r.combined_savings_ns)) + " (" +
           format_percent(r.combined_savings_pct / 100) + " of " + r.basis + ")\n";
  return out;
}

void write_bottlenecks_json(JsonWriter& w, const BottleneckResult& r) {
  w.begin_object();
  w.field("basis", r.basis);
  w.field("basis_ns", r.basis_ns);
  w.key("findings").begin_array();
  for (const Finding& f : r.findings) {
    w.begin_object();
    w.field("kind", f.kind);
    w.field("severity", severity_name(f.severity));
    w.field("title", f.title);
    w.key("evidence").begin_object();
    for (const Evidence& e : f.evidence) w.field(e.name, e.value);
    w.end_object();
    w.key("evidence_units").begin_object();
    for (const Evidence& e : f.evidence) w.field(e.name, e.unit);
    w.end_object();
    w.field("rule", f.rule);
    w.key("ops").begin_array();
    for (const std::string& o : f.ops) w.value(o);
    w.end_array();
    w.field("recommendation", f.recommendation);
    w.field("why", f.why);
    w.field("est_savings_ns", f.est_savings_ns);
    w.field("est_savings_pct", f.est_savings_pct);
    w.field("priced_by", f.priced_by);
    w.field("saving_alone_ns", f.saving_alone_ns);
    w.key("step_saving_ns").begin_object();
    w.field("min", f.step_saving_min_ns);
    w.field("median", f.step_saving_median_ns);
    w.field("max", f.step_saving_max_ns);
    w.end_object();
    w.field("replay_note", f.replay_note);
    w.end_object();
  }
  w.end_array();
  w.key("combined").begin_object();
  w.field("replayed", r.replayed);
  w.field("replay_step_ns", r.replay_step_ns);
  w.field("steps", r.replay_steps);
  w.field("window", step_source_name(r.replay_window));
  w.field("findings", r.combined_findings);
  w.field("saving_ns", r.combined_savings_ns);
  w.field("saving_pct", r.combined_savings_pct);
  w.end_object();
  w.end_object();
}

}  // namespace mlprof
