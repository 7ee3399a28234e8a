// The HTML report: every analysis of the analysis stage, written with the same JSON writer as the
// analysis's own `mlprof NAME --json`, so every view shows the same numbers as the CLI.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mlprof/analysis_set.h"
#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof {

// Rows of the ops table the report and the dashboard embed (by the ops sort; the JSON's `rows`
// says how many there are): a trace of 1e6 op names made a 2.6 GB report. `mlprof ops --json`
// and `--csv` list all.
inline constexpr size_t kReportOpRows = 10000;
// Critical-path edges (and synchronization edges) the report lists: the longest ones, in path
// order, with a note of how many there are (one step of a 1M-event trace had 1e5 edges, 24 MiB,
// 88% of the report). `mlprof critical-path --json` and serve list every one.
inline constexpr size_t kReportCriticalPathRows = 1000;

// `mlprof compare BASE NEW --json`.
std::string compare_json(const Trace& base, const Trace& next);

struct ReportInput {
  AnalysisSet* set = nullptr;   // the run the tabs show (a rank set: the slowest rank + Ranks)
  std::string name;             // its file name
  const Trace* base = nullptr;  // optional: compare base (report BASE NEW)
  std::string base_name;
  bool include_events = true;  // the timeline's events (the bulk of the file)
  // A rank set made from summaries holds no rank traces: the Timeline's other ranks are loaded
  // through this, one by one (at most kRankTimelineMaxRanks). Unset: the focus rank only.
  RankLoader load_rank;
};

// The page's data object (analyses + compare + ranks), without the events.
std::string report_data_json(const ReportInput& in);

// One self-contained HTML file: data, JS and CSS inline; no network request when opened.
Result<std::string> render_report_html(const ReportInput& in);

}  // namespace mlprof
