// Timeline outputs: JSON (`mlprof timeline --json`), a terminal table of lanes and overlap, the
// compact event encoding the browser draws, and the standalone HTML timeline.
#pragma once

#include <string>
#include <string_view>

#include "mlprof/analyze/timeline.h"
#include "mlprof/trace.h"
#include "trace/json_writer.h"

namespace mlprof {

void write_timeline_json(JsonWriter& w, const TimelineResult& r);
std::string render_timeline_text(const TimelineResult& r, size_t width = 100);

// The slices and flows of the timeline's lanes, for the browser: gzip of
//   "MLTL" version begin_ns strings lanes flows
// with every integer an LEB128 varint (signed ones zigzag-encoded); per lane, columns
// ts (delta from the previous slice, the first from begin_ns), dur, name (string index), depth;
// flows as (lane, slice index delta, offset) per end, in columns; then the slices' args (a
// string table, the distinct non-id arg sets, the id keys, per lane a set column and one delta
// column per id key). Lane order = r.lanes order. Rows (depth) are for drawing: a slice that
// overlaps its predecessor by <= 1 µs of rounding is its sibling, not its child.
// A 1M-slice trace encodes to a few bytes per slice, against ~110 bytes per event in JSON.
std::string encode_timeline_events(const Trace& trace, const TimelineResult& r);

std::string base64_encode(std::string_view bytes);

std::string render_timeline_html(const Trace& trace, const TimelineResult& r,
                                 std::string_view title);

}  // namespace mlprof
