// The baseline store of `mlprof baseline` and `compare --against` (docs/baselines.md): one
// file per baseline, STORE/NAME.json, written atomically.
#pragma once

#include <optional>
#include <string>

#include "mlprof/analysis_set.h"
#include "mlprof/analyze/baseline.h"

namespace mlprof::cli {

inline constexpr const char* kDefaultBaselineStore = ".mlprof/baselines";

// STORE/NAME.json, or nullopt with the one-line error printed when NAME is not a plain name
// (letters, digits, '.', '_', '-'; not starting with '.'; at most 100 characters).
std::optional<std::string> baseline_path(const std::string& store, const std::string& name);

// Reads STORE/NAME.json; nullopt with one line naming the file printed when it is missing or
// not a baseline this mlprof reads.
std::optional<Baseline> load_baseline_or_report(const std::string& store, const std::string& name);

// What a run's set holds as a baseline: the trace in depth (a rank directory's focus rank) and
// the job's world size.
Baseline baseline_of(AnalysisSet& set, const std::string& name, bool sample);

}  // namespace mlprof::cli
