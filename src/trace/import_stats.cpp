#include "mlprof/import_stats.h"

namespace mlprof {

std::string_view import_problem_name(ImportProblem kind) {
  switch (kind) {
    case ImportProblem::kTruncated:
      return "truncated";
    case ImportProblem::kTrailingComma:
      return "trailing_comma";
    case ImportProblem::kControlCharacter:
      return "control_character";
    case ImportProblem::kInvalidJson:
      return "invalid_json";
    case ImportProblem::kEmptyEvent:
      return "empty_event";
    case ImportProblem::kMissingField:
      return "missing_field";
    case ImportProblem::kBadField:
      return "bad_field";
    case ImportProblem::kIgnoredField:
      return "ignored_field";
    case ImportProblem::kBadTopLevel:
      return "bad_top_level";
    case ImportProblem::kTrailingData:
      return "trailing_data";
    case ImportProblem::kUnmatchedEnd:
      return "unmatched_end";
    case ImportProblem::kUnmatchedFlow:
      return "unmatched_flow";
    case ImportProblem::kNegativeDuration:
      return "negative_duration";
    case ImportProblem::kCount:
      break;
  }
  return "unknown";
}

bool import_problem_is_damage(ImportProblem kind) {
  return kind != ImportProblem::kUnmatchedEnd && kind != ImportProblem::kUnmatchedFlow;
}

bool ImportStats::damaged() const {
  for (size_t k = 0; k < kinds.size(); ++k)
    if (kinds[k].count && import_problem_is_damage(static_cast<ImportProblem>(k))) return true;
  return false;
}

void ImportStats::note(ImportProblem kind, uint64_t offset, std::string_view what, uint64_t count) {
  Entry& e = kinds[static_cast<size_t>(kind)];
  e.count += count;
  if (e.count == count || offset < e.first_offset) {  // the first one noted, or earlier
    e.first_offset = offset;
    e.first_what.assign(what);
  }
}

void ImportStats::merge(const ImportStats& other) {
  for (size_t k = 0; k < kinds.size(); ++k) {
    const Entry& o = other.kinds[k];
    if (o.count) note(static_cast<ImportProblem>(k), o.first_offset, o.first_what, o.count);
  }
}

uint64_t ImportStats::total() const {
  uint64_t n = 0;
  for (const Entry& e : kinds) n += e.count;
  return n;
}

ImportProblem ImportStats::first(bool any_kind) const {
  ImportProblem best = ImportProblem::kCount;
  uint64_t at = UINT64_MAX;
  for (size_t k = 0; k < kinds.size(); ++k) {
    const Entry& e = kinds[k];
    if (!any_kind && !import_problem_is_damage(static_cast<ImportProblem>(k))) continue;
    if (e.count && (best == ImportProblem::kCount || e.first_offset < at)) {
      best = static_cast<ImportProblem>(k);
      at = e.first_offset;
    }
  }
  return best;
}

}  // namespace mlprof
