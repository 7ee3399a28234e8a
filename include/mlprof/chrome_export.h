// Chrome trace JSON writer: loads in Perfetto UI and chrome://tracing, and reads back into the
// same tables through import_chrome_json (timestamps in microseconds with ns decimals).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof {

void write_chrome_json(const Trace& trace, std::ostream& out);
// Writes to a temporary file and renames it into place: nothing half-written on failure.
Status save_chrome_json(const Trace& trace, const std::string& path);

// ---- one trace of many ranks (`mlprof export DIR`) ---------------------------------------------

// One rank in a merged trace: every track of its trace becomes a thread of one process
// ("<process> / <thread>", e.g. "GPU 0 / stream 7"), every time moves by `shift_ns` (the rank's
// clock offset), and only what lies in [begin_ns, end_ns] (on the rank's own clock) is kept:
// instants, counter samples and memory events at a time inside it, flows with both ends inside,
// slices that overlap it, clipped to it (a clipped slice loses its thread time). A counter
// series sampled before the window also gets the value in force at begin_ns as a sample there
// (unless it has one at begin_ns). GPU streams (and counters of GPU processes) have their own
// window [gpu_begin_ns, gpu_end_ns].
struct MergedRank {
  int64_t pid = 0;
  std::string name;    // the process name ("rank 3")
  std::string labels;  // process_labels ("" for none)
  int32_t sort_index = 0;
  int64_t shift_ns = 0;
  int64_t begin_ns = INT64_MIN;
  int64_t end_ns = INT64_MAX;
  int64_t gpu_begin_ns = INT64_MIN;
  int64_t gpu_end_ns = INT64_MAX;
};

// The events MergedChromeWriter::add writes for this rank (metadata not counted): the size of
// a merged trace is known before it is written.
uint64_t count_merged_events(const Trace& trace, const MergedRank& rank);

// Streams ranks into one Chrome trace, one at a time (the caller frees each trace after add).
// Flow and async ids are renumbered so that they stay unique across the ranks.
class MergedChromeWriter {
 public:
  // `head`: top-level members written before "traceEvents", each followed by a comma
  // ("\"otherData\":{...},").
  MergedChromeWriter(std::ostream& out, std::string_view head);
  uint64_t add(const Trace& trace, const MergedRank& rank);  // the events written
  void finish();
  uint64_t events() const { return events_; }

 private:
  std::ostream& out_;
  bool first_ = true;
  uint64_t next_id_ = 1;
  uint64_t events_ = 0;
};

}  // namespace mlprof
