// Timeline outputs: JSON (`mlprof timeline --json`), a terminal table of lanes and overlap, the
// compact event encoding the browser draws, and the standalone HTML timeline.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mlprof/analyze/timeline.h"
#include "mlprof/status.h"
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
Result<std::string> encode_timeline_events(const Trace& trace, const TimelineResult& r);

std::string base64_encode(std::string_view bytes);

// The drawing row of each slice of `kept` (indexes of one track's slices, by start): a slice
// nests in the open slice that contains it, except that one overlapping its predecessor by at
// most 1 µs of rounding is its sibling. Returns the rows needed. The encoding and the serve
// tiles (timeline_tiles.h) share it, so a tile's rows are the report's.
uint16_t timeline_display_depths(const SliceTable& s, const std::vector<uint32_t>& kept,
                                 std::vector<uint16_t>& depth);

Result<std::string> render_timeline_html(const Trace& trace, const TimelineResult& r,
                                         std::string_view title);

}  // namespace mlprof
