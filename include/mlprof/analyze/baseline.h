// `mlprof baseline save NAME TRACE` / `mlprof compare --against NAME TRACE`: a run reduced to a
// compact, versioned summary (what compare reads: per-op and per-kernel call statistics, step
// times, the critical path's rows; plus its findings, device and world size), so that a CI job
// compares a new run with it without the original trace. Stored as JSON, "schema":
// "mlprof.baseline/1" (schemas/baseline.schema.json, docs/baselines.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mlprof/analyze/bottlenecks.h"
#include "mlprof/analyze/compare.h"
#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof {

inline constexpr int kBaselineSchemaMajor = 1;
// Per-call durations kept per row: evenly spaced order statistics (min and max included) for the
// significance test; counts and totals stay exact. With fewer samples than calls the test is
// conservative (a shift must be larger to be called significant), never more eager.
inline constexpr size_t kBaselineSamples = 256;

struct BaselineFinding {
  std::string kind, severity, title;
  int64_t est_savings_ns = 0;
  double est_savings_pct = 0;
};

struct Baseline {
  int schema_major = kBaselineSchemaMajor;
  std::string name;
  int64_t created_unix_s = 0;
  std::string source, format;
  std::string device;  // the first GPU's name, "cpu" without GPU streams, "" when not recorded
  int32_t world_size = 1;
  std::string step_model;  // "steps" (step markers) or "span" (none: rows are per trace)
  CompareSummary summary;  // durations cut to kBaselineSamples per row
  std::vector<BaselineFinding> findings;
};

// The baseline of a trace (for a rank directory: the rank analyzed in depth, world_size ranks).
// `sample`: cut each row's durations to kBaselineSamples (a stored baseline); false keeps every
// call (the run compared with one).
Baseline make_baseline(std::string name, const Trace& trace, const BottleneckResult& findings,
                       int32_t world_size, int64_t created_unix_s, bool sample = true);

std::string baseline_json(const Baseline& b);
// Reads a baseline file's text; a one-line error (no file name) when it is not one. A newer
// major version is an error too: its fields may mean something else.
Result<Baseline> parse_baseline_json(std::string_view json);

// Whether a run can be compared with a baseline. Refused: a different device, world size or
// step model, or op sets that overlap too little; warned: a partial overlap. score: the share of
// time (0..1) in rows both runs have, the smaller of the two runs' shares.
inline constexpr double kComparableMinScore = 0.5;   // below: refused
inline constexpr double kComparableWarnScore = 0.9;  // below: a warning
struct Comparability {
  bool comparable = true;
  double score = 1;
  std::vector<std::string> refusals, warnings;
};
Comparability check_comparable(const Baseline& base, const Baseline& run);

}  // namespace mlprof
