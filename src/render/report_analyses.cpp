// Dispatch from an analysis name to its analysis and JSON writer (the one its `mlprof NAME --json`
// uses). Results that several analyses read (steps, memory, GPU) are computed once per trace and
// passed on the way `mlprof analyze` does, so the report shows the numbers analyze prints.
#include <functional>
#include <map>
#include <optional>

#include "mlprof/analyze/bottlenecks.h"
#include "mlprof/analyze/compare.h"
#include "mlprof/analyze/flame.h"
#include "mlprof/analyze/flops.h"
#include "mlprof/analyze/gpu.h"
#include "mlprof/analyze/kernels.h"
#include "mlprof/analyze/leaks.h"
#include "mlprof/analyze/memory.h"
#include "mlprof/analyze/op_stats.h"
#include "mlprof/analyze/ranks.h"
#include "mlprof/analyze/steps.h"
#include "mlprof/analyze/summary.h"
#include "mlprof/analyze/timeline.h"
#include "mlprof/json_writer.h"
#include "mlprof/render/bottlenecks_render.h"
#include "mlprof/render/compare_render.h"
#include "mlprof/render/flame_render.h"
#include "mlprof/render/flops_render.h"
#include "mlprof/render/gpu_render.h"
#include "mlprof/render/kernels_render.h"
#include "mlprof/render/memory_render.h"
#include "mlprof/render/ranks_render.h"
#include "mlprof/render/report.h"
#include "mlprof/render/steps_render.h"
#include "mlprof/render/summary_render.h"
#include "mlprof/render/timeline_render.h"

namespace mlprof {
namespace {

// Lazily computed results shared by the analyses of one trace.
struct ReportAnalysisCache {
  explicit ReportAnalysisCache(const Trace& t) : trace(t) {
    for (uint32_t i = 0; i < t.tracks.size() && !has_gpu; ++i) has_gpu = t.is_gpu_track(i);
  }
  const Trace& trace;
  bool has_gpu = false;
  std::optional<StepsResult> steps_;
  std::optional<MemoryResult> memory_;
  std::optional<LeakResult> leaks_;
  std::optional<GpuResult> gpu_;
  std::optional<KernelsResult> kernels_;
  const StepsResult& steps() {
    if (!steps_) steps_ = analyze_steps(trace);
    return *steps_;
  }
  const MemoryResult& memory() {
    if (!memory_) memory_ = analyze_memory(trace);
    return *memory_;
  }
  const LeakResult& leaks() {
    if (!leaks_) leaks_ = analyze_leaks(trace, steps());
    return *leaks_;
  }
  const GpuResult& gpu() {
    if (!gpu_) gpu_ = analyze_gpu(trace);
    return *gpu_;
  }
  const KernelsResult& kernels() {
    if (!kernels_) kernels_ = analyze_kernels(trace);
    return *kernels_;
  }
};

using Writer = std::function<void(JsonWriter&, ReportAnalysisCache&)>;

void write_no_gpu(JsonWriter& j) {
  j.begin_object()
      .field("unavailable", "no GPU streams in this trace (a CPU-only profile)")
      .end_object();
}

const std::map<std::string, Writer, std::less<>>& writers() {
  static const std::map<std::string, Writer, std::less<>> m = [] {
    std::map<std::string, Writer, std::less<>> w;
    w["summary"] = [](JsonWriter& j, ReportAnalysisCache& c) {
      write_summary_json(j, summarize(c.trace));
    };
    // Every operator (the summary keeps the top 20): `mlprof ops --json --top 0`.
    w["ops"] = [](JsonWriter& j, ReportAnalysisCache& c) {
      std::vector<OpStats> ops = op_stats(c.trace);
      sort_op_stats(ops, OpSort::kTotal);
      j.begin_object();
      j.field("rows", static_cast<uint64_t>(ops.size()));
      j.key("ops").begin_array();
      for (const OpStats& op : ops) write_op_stats_json(j, op);
      j.end_array();
      j.end_object();
    };
    w["flame"] = [](JsonWriter& j, ReportAnalysisCache& c) {
      write_flame_json(j, build_flame_graph(c.trace));
    };
    w["timeline"] = [](JsonWriter& j, ReportAnalysisCache& c) {
      write_timeline_json(j, analyze_timeline(c.trace));
    };
    w["steps"] = [](JsonWriter& j, ReportAnalysisCache& c) { write_steps_json(j, c.steps()); };
    w["memory"] = [](JsonWriter& j, ReportAnalysisCache& c) { write_memory_json(j, c.memory()); };
    w["leaks"] = [](JsonWriter& j, ReportAnalysisCache& c) { write_leaks_json(j, c.leaks()); };
    w["flops"] = [](JsonWriter& j, ReportAnalysisCache& c) {
      write_flops_json(j, analyze_flops(c.trace, c.steps()));
    };
    w["kernels"] = [](JsonWriter& j, ReportAnalysisCache& c) {
      if (c.has_gpu)
        write_kernels_json(j, c.kernels());
      else
        write_no_gpu(j);
    };
    w["gpu"] = [](JsonWriter& j, ReportAnalysisCache& c) {
      if (c.has_gpu)
        write_gpu_json(j, c.gpu());
      else
        write_no_gpu(j);
    };
    w["bottlenecks"] = [](JsonWriter& j, ReportAnalysisCache& c) {
      BottleneckInputs in;
      in.steps = &c.steps();
      in.memory = &c.memory();
      in.leaks = &c.leaks();
      if (c.has_gpu) {
        in.gpu = &c.gpu();
        in.kernels = &c.kernels();
      }
      write_bottlenecks_json(j, find_bottlenecks(c.trace, in));
    };
    return w;
  }();
  return m;
}

std::string unavailable_json(std::string_view why) {
  JsonWriter w;
  w.begin_object().field("unavailable", why).end_object();
  return w.take();
}

}  // namespace

const std::vector<std::string>& report_analysis_names() {
  static const std::vector<std::string> names = {"summary", "ops",    "steps",   "kernels",
                                                 "gpu",     "memory", "leaks",   "bottlenecks",
                                                 "flops",   "flame",  "timeline"};
  return names;
}

bool analysis_available(std::string_view name) {
  return name == "compare" || name == "ranks" || writers().find(name) != writers().end();
}

std::string analysis_json(const Trace& trace, std::string_view name) {
  auto it = writers().find(name);
  if (it == writers().end())
    return unavailable_json("unknown analysis '" + std::string(name) + "'");
  ReportAnalysisCache cache(trace);
  JsonWriter w;
  it->second(w, cache);
  return w.take();
}

std::string all_analyses_json(const Trace& trace) {
  ReportAnalysisCache cache(trace);
  JsonWriter w;
  w.begin_object();
  for (const std::string& name : report_analysis_names()) {
    w.key(name);
    writers().at(name)(w, cache);
  }
  w.end_object();
  return w.take();
}

std::string compare_json(const Trace& base, const Trace& next) {
  JsonWriter w;
  write_compare_json(w, compare_traces(base, next));
  return w.take();
}

std::string ranks_json(const std::vector<const Trace*>& traces) {
  if (traces.size() < 2)
    return unavailable_json(
        "one trace: rank analysis needs several (a directory with one trace per rank)");
  JsonWriter w;
  write_ranks_json(w, analyze_ranks(traces));
  return w.take();
}

}  // namespace mlprof
