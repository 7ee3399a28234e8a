// Perfetto's native trace format (`.pftrace`: TracePacket protobufs with TrackEvent data), which
// ui.perfetto.dev and trace_processor load without the JSON importer's limits (overlapping
// slices on one track are kept: each overlap goes to a child track of its own).
#pragma once

#include <ostream>
#include <string>

#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof {

struct PerfettoExportStats {
  uint64_t packets = 0, slices = 0, overlap_tracks = 0, flows = 0, flows_unbound = 0, counters = 0,
           instants = 0, memory = 0;  // memory: [memory] instants (+ a counter per device)
};

PerfettoExportStats write_perfetto(const Trace& trace, std::ostream& out);
// Writes to a temporary file and renames it into place: nothing half-written on failure.
Status save_perfetto(const Trace& trace, const std::string& path,
                     PerfettoExportStats* stats = nullptr);

}  // namespace mlprof
