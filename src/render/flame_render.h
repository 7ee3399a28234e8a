// Flame graph outputs: collapsed stacks (flamegraph.pl, inferno), speedscope JSON, the JSON of
// `mlprof flame --json` (a flat frame table), a terminal outline, and a standalone HTML icicle.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "mlprof/analyze/flame.h"
#include "trace/json_writer.h"

namespace mlprof {

// `frames`: [{name, total_ns, self_ns, count, parent}], frames[0] = root; plus cpu_ns, gpu_ns.
void write_flame_json(JsonWriter& w, const FlameGraph& g);

// Collapsed stacks and speedscope are written as they are produced, with memory bounded by the
// nesting depth (a stack of 100,000 nested slices: docs/hardening.md).

// Stacks below this depth are folded into one frame in collapsed stacks (each line holds its
// whole stack, so the output grows with depth x frames): `mlprof flame --max-depth N`.
constexpr uint32_t kCollapsedMaxDepth = 1000;

// One line per frame with self time: "CPU;thread;forward;aten::linear 12345" (ns, integers),
// depth first, heaviest child first. ';' inside names becomes ':' since ';' separates frames.
// A frame at `max_depth` (0: no limit) with frames below it gets one more line,
// "...;frame;[N frames below depth D] SELF", with the self time of everything below.
void write_flame_collapsed(std::ostream& out, const FlameGraph& g,
                           uint32_t max_depth = kCollapsedMaxDepth);
std::string render_flame_collapsed(const FlameGraph& g, uint32_t max_depth = kCollapsedMaxDepth);

// speedscope's file format: an "evented" profile (open/close events, integer ns) over a shared
// frames table: two events per frame, so the size is linear in frames whatever the depth (a
// "sampled" profile repeats each sample's whole stack).
void write_flame_speedscope(std::ostream& out, const FlameGraph& g, std::string_view name);
std::string render_flame_speedscope(const FlameGraph& g, std::string_view name);

// Per frame: its self time (negative counts as 0) plus that of every frame below it.
std::vector<int64_t> flame_subtree_self(const FlameGraph& g);

// Indented outline of the heaviest paths, for the terminal.
std::string render_flame_text(const FlameGraph& g, size_t width = 100, size_t max_lines = 40);

// Self-contained interactive page (the web bundle inlined).
std::string render_flame_html(const FlameGraph& g, std::string_view title);

}  // namespace mlprof
