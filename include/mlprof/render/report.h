// The HTML report and the dashboard's REST payloads: every analysis of a trace, written with the
// same JSON writer as the analysis's own `mlprof NAME --json`, so every view shows the same
// numbers as the CLI.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mlprof/trace.h"

namespace mlprof {

// Names accepted by analysis_json(), in the order a report computes them.
const std::vector<std::string>& report_analysis_names();

// Whether `name` is an analysis this binary can compute (analysis_json, compare, ranks).
bool analysis_available(std::string_view name);

// The analysis's JSON (the schema of `mlprof NAME --json`); {"unavailable": "why"} when the
// trace has no data for it (GPU analyses of a CPU-only trace) or the name is unknown.
std::string analysis_json(const Trace& trace, std::string_view name);

// Every report_analysis_names() entry as one JSON object {name: result}, sharing intermediate
// results (steps, memory, GPU) across the analyses as `mlprof analyze` does.
std::string all_analyses_json(const Trace& trace);

// `mlprof compare BASE NEW --json`, or {"unavailable": ...}.
std::string compare_json(const Trace& base, const Trace& next);

// `mlprof ranks DIR --json` over several traces, or {"unavailable": ...}.
std::string ranks_json(const std::vector<const Trace*>& traces);

struct ReportInput {
  const Trace* trace = nullptr;  // the run the tabs show
  std::string name;              // its file name
  const Trace* base = nullptr;   // optional: compare base (report BASE NEW)
  std::string base_name;
  std::vector<const Trace*> ranks;  // optional: all ranks (report DIR)
  bool include_events = true;       // the timeline's events (the bulk of the file)
};

// The page's data object (analyses + compare + ranks), without the events.
std::string report_data_json(const ReportInput& in);

// One self-contained HTML file: data, JS and CSS inline; no network request when opened.
std::string render_report_html(const ReportInput& in);

}  // namespace mlprof
