// Problems an importer recovered from, counted by kind (as Perfetto's trace processor keeps
// import stats): a trace cut short or with a bad event is still read, and what was skipped or
// repaired is never silent. Kept in the Trace (TraceMeta::import_stats), printed as one warning
// line per kind, shown by `summary` (text and --json); `--strict` turns any of them into an error.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace mlprof {

enum class ImportProblem : uint8_t {
  kTruncated,         // the input ends inside the JSON (a profiler killed mid-write)
  kTrailingComma,     // a ',' before a closing ']' or '}' (event kept)
  kControlCharacter,  // a raw control character (newline, tab) inside a string (event kept)
  kInvalidJson,       // an event that is not JSON even after those repairs (skipped)
  kEmptyEvent,        // `{}` in the events array (skipped)
  kMissingField,      // no ph, no ts, or an 'X' without dur (skipped)
  kBadField,          // a field of the wrong type or an unreadable value (event skipped)
  kIgnoredField,      // a bad field the event does not need, such as an 'M' event's ts (kept)
  kBadTopLevel,       // a top-level key mlprof interprets holds the wrong type (key ignored)
  kTrailingData,      // bytes after the end of the JSON document (ignored)
  kUnmatchedEnd,      // an 'E' (or async 'e') without its begin (skipped)
  kUnmatchedFlow,     // a flow endpoint without its partner (skipped)
  kNegativeDuration,  // a slice whose duration is negative
  kCount
};

// Stable short name of a kind ("truncated", "trailing_comma"): JSON keys, tests.
std::string_view import_problem_name(ImportProblem kind);
// Damage to the input (warned about; an error with --strict), as opposed to events that do not
// pair up (an end without its begin, a flow end without its start): common in real profiler
// output (HTA's sampled traces cut flows), those are only counted.
bool import_problem_is_damage(ImportProblem kind);

struct ImportStats {
  struct Entry {
    uint64_t count = 0;
    uint64_t first_offset = UINT64_MAX;  // byte of the first occurrence (UINT64_MAX: none)
    std::string first_what;              // what was wrong there ("event field \"dur\": ...")
  };
  std::array<Entry, static_cast<size_t>(ImportProblem::kCount)> kinds;
  uint64_t events_read = 0;  // events the importer read (0 for sources that do not count)

  // Counts one problem; the earliest offset's description is kept.
  void note(ImportProblem kind, uint64_t offset, std::string_view what, uint64_t count = 1);
  // Adds another part's counts (parallel import).
  void merge(const ImportStats& other);
  const Entry& operator[](ImportProblem kind) const { return kinds[static_cast<size_t>(kind)]; }
  uint64_t count(ImportProblem kind) const { return (*this)[kind].count; }
  uint64_t total() const;
  bool any() const { return total() != 0; }
  bool damaged() const;  // any count of a damage kind
  // The damage kind (or, with `any_kind`, any kind) whose first occurrence comes first in the
  // file (kCount if none).
  ImportProblem first(bool any_kind = false) const;
};

}  // namespace mlprof
