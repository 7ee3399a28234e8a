#include "render/analysis_csv.h"

#include "render/analysis_output.h"
#include "render/json_table_csv.h"

namespace mlprof {

std::string_view analysis_main_table(AnalysisId id) { return analysis_info(id).csv_table; }

Result<std::string> analysis_csv(AnalysisSet& set, AnalysisId id) {
  if (std::optional<std::string> why = set.unavailable(id))
    return Status::error(std::string(analysis_info(id).name) + ": unavailable: " + *why);
  Result<std::string> csv = json_table_csv(analysis_json(set, id), analysis_main_table(id));
  if (!csv) return Status::error(std::string(analysis_info(id).name) + ": " + csv.error());
  return csv;
}

}  // namespace mlprof
