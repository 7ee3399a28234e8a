#include "render/graphs_render.h"

#include <algorithm>
#include <cstdio>

#include "render/text_table.h"
#include "trace/units.h"

namespace mlprof {
namespace {

std::string ns(int64_t v) { return format_duration_ns(static_cast<double>(v)); }

void attribution_table(std::string& out, const char* title, const std::vector<GraphAttribution>& v,
                       int64_t total, size_t top, size_t width) {
  if (v.empty()) return;
  TextTable t;
  t.add_column(title, TextTable::Align::kLeft);
  for (const char* h : {"kernels", "GPU", "% replayed"}) t.add_column(h);
  for (size_t i = 0; i < v.size() && i < top; ++i)
    t.add_row({v[i].name, std::to_string(v[i].kernels), ns(v[i].gpu_ns),
               format_percent(
                   total > 0 ? static_cast<double>(v[i].gpu_ns) / static_cast<double>(total) : 0)});
  out += t.render(width);
  if (v.size() > top) out += "  (" + std::to_string(v.size() - top) + " more rows in --json)\n";
  out += "\n";
}

void attribution_json(JsonWriter& w, const char* key, const std::vector<GraphAttribution>& v) {
  w.key(key).begin_array();
  for (const GraphAttribution& a : v)
    w.begin_object()
        .field("name", a.name)
        .field("kernels", a.kernels)
        .field("gpu_ns", a.gpu_ns)
        .end_object();
  w.end_array();
}

}  // namespace

std::string render_graphs_text(const GraphsResult& r, size_t width) {
  std::string out;
  if (r.replays.empty()) {
    out +=
        "No CUDA/HIP graph replays (cudaGraphLaunch/hipGraphLaunch with GPU work) in this trace.\n";
  } else {
    char buf[400];
    std::snprintf(
        buf, sizeof buf,
        "%zu graph replays: %llu kernels, %s of GPU time (%s of all GPU work); %llu "
        "kernels (%s) attributed to captured ops\n\n",
        r.replays.size(), static_cast<unsigned long long>(r.replayed_kernels),
        ns(r.replayed_gpu_ns).c_str(),
        format_percent(r.gpu_ns > 0
                           ? static_cast<double>(r.replayed_gpu_ns) / static_cast<double>(r.gpu_ns)
                           : 0)
            .c_str(),
        static_cast<unsigned long long>(r.matched_kernels), ns(r.attributed_gpu_ns).c_str());
    out += buf;
    TextTable t;
    t.add_column("launch", TextTable::Align::kLeft);
    for (const char* h : {"correlation", "kernels", "GPU", "capture", "matched", "matched by",
                          "launch host", "launch delay", "eager launches"})
      t.add_column(h);
    for (size_t i = 0; i < r.replays.size() && i < r.top; ++i) {
      const GraphReplay& p = r.replays[i];
      t.add_row({p.launch, std::to_string(p.correlation), std::to_string(p.kernels), ns(p.gpu_ns),
                 p.capture >= 0 ? "#" + std::to_string(p.capture) : "none",
                 std::to_string(p.matched) + "/" + std::to_string(p.kernels),
                 p.matched_by.empty() ? "-" : p.matched_by, ns(p.launch_host_ns),
                 ns(p.launch_delay_ns),
                 p.eager_launch_host_ns >= 0 ? ns(p.eager_launch_host_ns) : "-"});
    }
    out += t.render_uncut() + "\n";  // launch names are short; every column is a number
    if (r.eager_launch_host_ns > 0) {
      int64_t matched_launch = 0;
      for (const GraphReplay& p : r.replays)
        if (p.eager_launch_host_ns >= 0) matched_launch += p.launch_host_ns;
      out += "Launch cost: the matched graph launches took " + ns(matched_launch) +
             " on the host; launching their kernels one by one took " + ns(r.eager_launch_host_ns) +
             " in the capture pass (host time of its launch calls; launch delay: graph launch "
             "start to its first GPU event)\n";
    }
    uint64_t by_position = 0;
    for (const GraphReplay& p : r.replays) by_position += p.matched_by_position;
    if (by_position > 0)
      out += std::to_string(by_position) + " of the " + std::to_string(r.matched_kernels) +
             " matched kernels were matched by position: their captured launches name no kernel "
             "(no args.kernel, as Kineto records launches during a CUDA graph capture)\n";
    for (const GraphReplay& p : r.replays)
      if (p.capture < 0) {
        out +=
            "Unmatched replay (correlation " + std::to_string(p.correlation) + "): " + p.why + "\n";
        break;  // the first says why; --json lists each
      }
  }
  if (!r.captures.empty()) {
    TextTable t;
    t.add_column("capture", TextTable::Align::kLeft);
    for (const char* h : {"#", "batch", "mode", "kernels", "capture time", "launch host", "replays",
                          "recapture of"})
      t.add_column(h);
    for (size_t i = 0; i < r.captures.size() && i < r.top; ++i) {
      const GraphCapture& c = r.captures[i];
      t.add_row({c.source, std::to_string(i),
                 c.batch_size >= 0 ? std::to_string(c.batch_size) : "-",
                 c.mode.empty() ? "-" : c.mode, std::to_string(c.kernels), ns(c.capture_ns),
                 ns(c.launch_host_ns), std::to_string(c.replays),
                 c.recapture_of >= 0 ? "#" + std::to_string(c.recapture_of) : "-"});
    }
    out += "\n" + t.render(width) + "\n";
    if (r.captured_here > 0)
      out += std::to_string(r.captured_here) + " graphs captured during this profile (" +
             ns(r.capture_ns) + " of capture), " + std::to_string(r.recaptures) +
             " of them re-captures of an earlier graph (same launches)\n";
  }
  for (const std::string& n : r.notes) out += "Note: " + n + "\n";
  attribution_table(out, "captured op (replayed GPU time)", r.ops, r.attributed_gpu_ns, r.top,
                    width);
  attribution_table(out, "captured module", r.modules, r.attributed_gpu_ns, r.top, width);
  attribution_table(out, "replayed kernel", r.kernels, r.attributed_gpu_ns, r.top, width);
  return out;
}

void write_graphs_json(JsonWriter& w, const GraphsResult& r) {
  w.begin_object();
  w.field("replayed_kernels", r.replayed_kernels);
  w.field("matched_kernels", r.matched_kernels);
  w.field("replayed_gpu_ns", r.replayed_gpu_ns);
  w.field("attributed_gpu_ns", r.attributed_gpu_ns);
  w.field("gpu_ns", r.gpu_ns);
  w.field("launch_host_ns", r.launch_host_ns);
  w.field("eager_launch_host_ns", r.eager_launch_host_ns);
  w.field("captured_here", r.captured_here);
  w.field("capture_ns", r.capture_ns);
  w.field("recaptures", r.recaptures);
  w.key("rule").value(
      "a replay is the GPU work sharing a graph launch's correlation id; its kernels are matched "
      "in order, by name, to the launches of a Stream{Begin,End}Capture window (args.kernel, or "
      "the Inductor kernel's record_function; a launch naming no kernel matches by position), "
      "or, when the replayed kernels and the captured launches carry CUPTI's graph id and graph "
      "node id args, by graph id and node id (matched_by says which), and "
      "charged to the op that made each captured launch (External id, else the enclosing slice) "
      "and its innermost nn.Module. ops, kernels and modules charge the same way. Cost: the "
      "launch host time is the graph launch call's own host time, the launch delay runs from "
      "its start to its first GPU event, and the eager launch host time is the host time of the "
      "matched capture's launch calls (what launching its kernels one by one took)");
  w.key("captures").begin_array();
  for (const GraphCapture& c : r.captures)
    w.begin_object()
        .field("source", c.source)
        .field("batch_size", c.batch_size)
        .field("mode", c.mode)
        .field("kernels", c.kernels)
        .field("unnamed", c.unnamed)
        .field("capture_ns", c.capture_ns)
        .field("replays", c.replays)
        .field("launch_host_ns", c.launch_host_ns)
        .field("recapture_of", static_cast<int64_t>(c.recapture_of))
        .end_object();
  w.end_array();
  w.key("replays").begin_array();
  for (const GraphReplay& p : r.replays) {
    w.begin_object()
        .field("ts_ns", p.ts_ns)
        .field("launch", p.launch)
        .field("correlation", p.correlation)
        .field("kernels", p.kernels)
        .field("other", p.other)
        .field("gpu_ns", p.gpu_ns)
        .field("capture", static_cast<int64_t>(p.capture))
        .field("matched", p.matched)
        .field("matched_by_position", p.matched_by_position)
        .field("matched_by", p.matched_by)
        .field("attributed_ns", p.attributed_ns)
        .field("launch_host_ns", p.launch_host_ns)
        .field("launch_delay_ns", p.launch_delay_ns)
        .field("eager_launch_host_ns", p.eager_launch_host_ns);
    if (p.capture < 0) w.field("why", p.why);
    w.end_object();
  }
  w.end_array();
  attribution_json(w, "ops", r.ops);
  attribution_json(w, "modules", r.modules);
  attribution_json(w, "kernels", r.kernels);
  w.key("notes").begin_array();
  for (const std::string& n : r.notes) w.value(n);
  w.end_array();
  w.end_object();
}

}  // namespace mlprof
