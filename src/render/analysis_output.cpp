#include "render/analysis_output.h"

#include <algorithm>

#include "render/bottlenecks_render.h"
#include "render/compile_render.h"
#include "render/critical_path_render.h"
#include "render/flame_render.h"
#include "render/flops_render.h"
#include "render/gpu_render.h"
#include "render/heap_render.h"
#include "render/kernels_render.h"
#include "render/memory_render.h"
#include "render/memory_snapshot_render.h"
#include "render/modules_render.h"
#include "render/ranks_render.h"
#include "render/steps_render.h"
#include "render/summary_render.h"
#include "render/timeline_render.h"

namespace mlprof {
namespace {

void write_ops_json(JsonWriter& w, const OpsResult& r) {
  w.begin_object();
  w.field("rows", r.rows);
  w.field("device_time", r.device_time);
  if (r.device_time)
    w.key("device_time_rule")
        .value(
            "device_self_ns: GPU time of the kernels, memcpys and memsets the op's own launch "
            "calls started (by correlation); device_total_ns: with the ops it called (the "
            "TensorBoard plugin's Operator view, TraceLens's kernel time per op)");
  w.key("ops").begin_array();
  for (const OpStats& op : r.ops) write_op_stats_json(w, op);
  w.end_array();
  w.end_object();
}

size_t rows_or(const TextOptions& o, size_t fallback) { return o.rows ? o.rows : fallback; }

}  // namespace

void write_analysis_json(JsonWriter& w, AnalysisSet& s, AnalysisId id) {
  if (auto why = s.unavailable(id)) {
    w.begin_object().field("unavailable", *why).end_object();
    return;
  }
  switch (id) {
    case AnalysisId::kSummary:
      return write_summary_json(w, s.summary());
    case AnalysisId::kOps:
      return write_ops_json(w, s.ops());
    case AnalysisId::kSteps:
      return write_steps_json(w, s.steps());
    case AnalysisId::kKernels:
      return write_kernels_json(w, s.kernels());
    case AnalysisId::kGpu:
      return write_gpu_json(w, s.gpu());
    case AnalysisId::kMemory:
      return write_memory_json(w, s.memory());
    case AnalysisId::kLeaks:
      return write_leaks_json(w, s.leaks());
    case AnalysisId::kHeap:
      return write_heap_json(w, s.heap());
    case AnalysisId::kBottlenecks:
      return write_bottlenecks_json(w, s.bottlenecks());
    case AnalysisId::kFlops:
      return write_flops_json(w, s.flops());
    case AnalysisId::kFlame:
      return write_flame_json(w, s.flame());
    case AnalysisId::kTimeline:
      return write_timeline_json(w, s.timeline());
    case AnalysisId::kModules:
      return write_modules_json(w, s.modules());
    case AnalysisId::kCriticalPath:
      return write_critical_path_json(w, s.critical_path());
    case AnalysisId::kRanks:
      return write_ranks_json(w, s.ranks());
    case AnalysisId::kCompile:
      return write_compile_json(w, s.compile());
    case AnalysisId::kMemorySnapshot:
      return write_memory_snapshot_json(w, s.memory_snapshot());
  }
}

std::string analysis_json(AnalysisSet& set, AnalysisId id) {
  JsonWriter w;
  write_analysis_json(w, set, id);
  return w.take();
}

std::string analyses_json(AnalysisSet& set, const std::vector<AnalysisId>& ids) {
  set.compute(ids);
  JsonWriter w;
  w.begin_object();
  for (AnalysisId id : ids) {
    w.key(analysis_info(id).name);
    write_analysis_json(w, set, id);
  }
  w.end_object();
  return w.take();
}

std::string render_analysis_text(AnalysisSet& s, AnalysisId id, const TextOptions& o) {
  if (auto why = s.unavailable(id)) return std::string(analysis_info(id).name) + ": " + *why + "\n";
  switch (id) {
    case AnalysisId::kSummary:
      return render_summary_text(s.summary(), o.width);
    case AnalysisId::kOps:
      return render_ops_text(s.ops().ops, s.ops().rows, rows_or(o, 50));
    case AnalysisId::kSteps:
      return render_steps_text(s.steps(), o.width);
    case AnalysisId::kKernels:
      return render_kernels_text(s.kernels(), o.width, rows_or(o, 30));
    case AnalysisId::kGpu:
      return render_gpu_text(s.gpu(), o.width);
    case AnalysisId::kMemory:
      return render_memory_text(s.memory(), o.width);
    case AnalysisId::kLeaks:
      return render_leaks_text(s.leaks(), o.width);
    case AnalysisId::kHeap:
      return render_heap_text(s.heap(), o.width);
    case AnalysisId::kBottlenecks:
      return render_bottlenecks_text(s.bottlenecks(), o.width);
    case AnalysisId::kFlops:
      return render_flops_text(s.flops(), o.width);
    case AnalysisId::kFlame:
      return render_flame_text(s.flame(), o.width, rows_or(o, 40));
    case AnalysisId::kTimeline:
      return render_timeline_text(s.timeline(), o.width);
    case AnalysisId::kModules:
      return render_modules_text(s.modules(), o.depth, o.width);
    case AnalysisId::kCriticalPath:
      return render_critical_path_text(s.critical_path(), o.width);
    case AnalysisId::kRanks:
      return render_ranks_text(s.ranks(), o.width, o.rows);
    case AnalysisId::kCompile:
      return render_compile_text(s.compile(), o.width);
    case AnalysisId::kMemorySnapshot:
      return render_memory_snapshot_text(s.memory_snapshot(), o.width);
  }
  return {};
}

const std::vector<AnalysisId>& report_analyses() {
  using A = AnalysisId;
  static const std::vector<AnalysisId> ids = {
      A::kSummary,  A::kOps,     A::kSteps,        A::kKernels, A::kGpu,
      A::kMemory,   A::kLeaks,   A::kBottlenecks,  A::kFlops,   A::kFlame,
      A::kTimeline, A::kModules, A::kCriticalPath, A::kCompile, A::kMemorySnapshot};
  return ids;
}

const std::vector<AnalysisId>& analyze_analyses() {
  using A = AnalysisId;
  static const std::vector<AnalysisId> ids = {
      A::kSummary, A::kSteps,       A::kGpu,     A::kKernels,      A::kMemory,  A::kLeaks,
      A::kFlops,   A::kBottlenecks, A::kModules, A::kCriticalPath, A::kCompile, A::kMemorySnapshot};
  return ids;
}

void pretty_json(std::string_view in, const std::function<void(std::string_view)>& write) {
  // Mirrors JsonWriter(pretty=true): a newline and two spaces per level before each member or
  // element, ": " after keys, empty containers as {} and [].
  constexpr size_t kChunk = 64 * 1024;
  std::string out;
  out.reserve(std::min(in.size() + in.size() / 4, kChunk + 4096));
  size_t depth = 0;
  auto newline = [&] {
    out.push_back('\n');
    out.append(depth * 2, ' ');
  };
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    switch (c) {
      case '"': {
        size_t j = i + 1;
        while (j < in.size() && in[j] != '"') j += in[j] == '\\' ? 2 : 1;
        out.append(in.substr(i, j + 1 - i));
        i = j;
        break;
      }
      case '{':
      case '[': {
        out.push_back(c);
        char close = c == '{' ? '}' : ']';
        if (i + 1 < in.size() && in[i + 1] == close) {
          out.push_back(close);
          ++i;
        } else {
          ++depth;
          newline();
        }
        break;
      }
      case '}':
      case ']':
        --depth;
        newline();
        out.push_back(c);
        break;
      case ',':
        out.push_back(',');
        newline();
        break;
      case ':':
        out += ": ";
        break;
      default:
        out.push_back(c);
    }
    if (out.size() >= kChunk) {
      write(out);
      out.clear();
    }
  }
  if (!out.empty()) write(out);
}

std::string pretty_json(std::string_view in) {
  std::string out;
  out.reserve(in.size() + in.size() / 4);
  pretty_json(in, [&](std::string_view part) { out += part; });
  return out;
}

}  // namespace mlprof
