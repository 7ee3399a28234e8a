#include "render/analysis_csv.h"

#include <utility>

#include "render/analysis_output.h"
#include "render/json_table_csv.h"

namespace mlprof {

std::string_view analysis_main_table(AnalysisId id) {
  static const std::pair<std::string_view, std::string_view> kTables[] = {
      {"summary", "top_ops"},
      {"ops", "ops"},
      {"steps", "steps"},
      {"kernels", "kernels"},
      {"gpu", "idle_time_breakdown"},
      {"memory", "ops"},
      {"leaks", "surviving_ops"},
      {"heap", "peak_stacks"},
      {"bottlenecks", "findings"},
      {"flops", "ops"},
      {"flame", "frames"},
      {"timeline", "lanes"},
      {"ranks", "ranks"},
      {"memory_snapshot", "fragmented_segments"},
  };
  std::string_view name = analysis_info(id).name;
  for (const auto& [analysis, table] : kTables)
    if (analysis == name) return table;
  return "";
}

Result<std::string> analysis_csv(AnalysisSet& set, AnalysisId id) {
  if (std::optional<std::string> why = set.unavailable(id))
    return Status::error(std::string(analysis_info(id).name) + ": unavailable: " + *why);
  Result<std::string> csv = json_table_csv(analysis_json(set, id), analysis_main_table(id));
  if (!csv) return Status::error(std::string(analysis_info(id).name) + ": " + csv.error());
  return csv;
}

}  // namespace mlprof
