// The warning lines of a recovered import, and the error --strict makes of them.
#include <string>
#include <vector>

#include "mlprof/import.h"

namespace mlprof {

namespace {
std::string problem_line(const Trace& t, const ImportStats::Entry& e) {
  std::string line = t.meta.source + ": ";
  if (e.first_offset != UINT64_MAX) line += "byte " + std::to_string(e.first_offset) + ": ";
  line += e.first_what;
  if (e.count > 1) line += " (" + std::to_string(e.count) + " times, the first shown)";
  return line;
}
}  // namespace

std::vector<std::string> import_warnings(const Trace& t) {
  std::vector<std::string> lines;
  const ImportStats& s = t.meta.import_stats;
  for (size_t k = 0; k < s.kinds.size(); ++k) {
    const ImportStats::Entry& e = s.kinds[k];
    if (!e.count || !import_problem_is_damage(static_cast<ImportProblem>(k))) continue;
    lines.push_back("warning: " + problem_line(t, e) + "; " + std::to_string(s.events_read) +
                    (s.events_read == 1 ? " event read" : " events read"));
  }
  return lines;
}

namespace import {
// --strict: the first problem in the file is the error.
Status strict_error(const Trace& t) {
  const ImportStats& s = t.meta.import_stats;
  if (!s.damaged()) return Status::ok();
  uint64_t n = 0;  // what --strict fails on: not the unmatched ends and flows
  for (size_t k = 0; k < s.kinds.size(); ++k)
    if (import_problem_is_damage(static_cast<ImportProblem>(k))) n += s.kinds[k].count;
  return Status::error(problem_line(t, s[s.first()]) + " (--strict: " + std::to_string(n) +
                       (n == 1 ? " import problem)" : " import problems)"));
}
}  // namespace import

}  // namespace mlprof
