// Flame graph outputs: collapsed stacks (flamegraph.pl, inferno), speedscope JSON, the JSON of
// `mlprof flame --json` (a flat frame table), a terminal outline, and a standalone HTML icicle.
#pragma once

#include <string>
#include <string_view>

#include "mlprof/analyze/flame.h"
#include "mlprof/json_writer.h"

namespace mlprof {

// `frames`: [{name, total_ns, self_ns, count, parent}], frames[0] = root; plus cpu_ns, gpu_ns.
void write_flame_json(JsonWriter& w, const FlameGraph& g);

// One line per frame with self time: "CPU;thread;forward;aten::linear 12345" (ns, integers).
// ';' inside names becomes ':' since ';' separates frames.
std::string render_flame_collapsed(const FlameGraph& g);

// speedscope's file format: a "sampled" profile over a shared frames table, integer ns weights.
std::string render_flame_speedscope(const FlameGraph& g, std::string_view name);

// Indented outline of the heaviest paths, for the terminal.
std::string render_flame_text(const FlameGraph& g, size_t width = 100, size_t max_lines = 40);

// Self-contained interactive page (the web bundle inlined).
std::string render_flame_html(const FlameGraph& g, std::string_view title);

}  // namespace mlprof
