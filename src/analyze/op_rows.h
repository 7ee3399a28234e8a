// The per-op table before its statistics (op_stats, summary, the ops analysis): per (name,
// category) sums from one pass over the slices, and every call's duration in one flat array
// grouped by row (a counting sort). A trace in which every slice has its own name then costs a
// few words per slice and per row, not a vector and a hash node per row (1e6 names took 1.24 GB
// for `mlprof summary`), and std and percentiles are computed only for the rows a caller keeps.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mlprof/analyze/op_stats.h"

namespace mlprof {

struct OpRows {
  std::vector<StringId> name, category;  // first appearance order
  std::vector<uint64_t> count;
  std::vector<int64_t> total_ns;  // sum of the calls' durations (as fill_duration_stats sums)
  std::vector<int64_t> self_ns;
  std::vector<uint64_t> cpu_calls;
  std::vector<int64_t> cpu_ns, cpu_wall_ns;
  std::vector<int64_t> device_self_ns, device_total_ns;  // empty unless `device`
  bool device = false;
  std::vector<int64_t> device_replayed_ns;  // empty unless graph replays were charged
  // Rows of captured ops this trace has no slice of (graph replays): name[r] == kNotFound and
  // their name and category are foreign_name/foreign_category[r - first_foreign].
  size_t first_foreign = SIZE_MAX;
  std::vector<std::string> foreign_name, foreign_category;
  std::string_view name_of(const Trace& t, size_t r) const {
    return r >= first_foreign ? std::string_view(foreign_name[r - first_foreign]) : t.str(name[r]);
  }
  std::string_view category_of(const Trace& t, size_t r) const {
    return r >= first_foreign ? std::string_view(foreign_category[r - first_foreign])
                              : t.str(category[r]);
  }
  std::vector<size_t> offset;      // row r's calls: durations[offset[r], offset[r + 1])
  std::vector<int64_t> durations;  // in trace order within each row
  int64_t span_ns = 0;

  size_t size() const { return name.size(); }
  std::span<int64_t> calls(size_t r) {
    return {durations.data() + offset[r], durations.data() + offset[r + 1]};
  }
  // Rows in op_stats' order: total time descending, then name.
  std::vector<uint32_t> by_total(const Trace& trace) const;
  // Row r with every statistic (selects percentiles in place in that row's durations).
  OpStats stats(const Trace& trace, size_t r);
  // The value sort_op_stats would order row r by, from the sums alone.
  double sort_key(size_t r, OpSort by) const;
};
OpRows op_rows(const Trace& trace, const OpStatsOptions& options = {});

// op_stats re-sorted by `by` (as sort_op_stats) and cut to `top` rows (0 = all), statistics
// computed only for the rows kept; `rows`: how many there were before the cut.
std::vector<OpStats> op_stats_top(const Trace& trace, const OpStatsOptions& options, OpSort by,
                                  size_t top, uint64_t* rows = nullptr);

// fill_duration_stats over a span (a row of OpRows).
void fill_duration_stats(OpStats& op, std::span<int64_t> durations, int64_t span_ns);

}  // namespace mlprof
