#include "render/analysis_output.h"

#include <algorithm>

#include "render/bottlenecks_render.h"
#include "render/compile_render.h"
#include "render/critical_path_render.h"
#include "render/flame_render.h"
#include "render/flops_render.h"
#include "render/gpu_render.h"
#include "render/graphs_render.h"
#include "render/heap_render.h"
#include "render/kernels_render.h"
#include "render/memory_render.h"
#include "render/memory_snapshot_render.h"
#include "render/modules_render.h"
#include "render/ranks_render.h"
#include "render/roofline_render.h"
#include "render/steps_render.h"
#include "render/summary_render.h"
#include "render/timeline_render.h"

namespace mlprof {

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
  // The plugin's Operator view grouped by "Input Dims" (and by call stack when there are stacks).
  auto groups = [&](std::string_view key, const std::vector<OpGroup>& v, uint64_t rows,
                    bool stack) {
    w.field(std::string(key) + "_rows", rows);
    w.key(key).begin_array();
    for (const OpGroup& g : v) {
      w.begin_object();
      w.field("name", g.name);
      w.field("input_shape", g.input_shape);
      if (stack) w.field("call_stack", g.call_stack);
      w.field("count", g.count);
      w.field("total_ns", g.total_ns);
      w.field("self_ns", g.self_ns);
      if (g.device_total_ns >= 0) {
        w.field("device_total_ns", g.device_total_ns);
        w.field("device_self_ns", g.device_self_ns);
      }
      w.end_object();
    }
    w.end_array();
  };
  groups("by_input_shape", r.groups.by_shape, r.groups.shape_rows, false);
  groups("by_call_stack", r.groups.by_stack, r.groups.stack_rows, true);
  w.end_object();
}

// ---- each analysis's text with the TextOptions every consumer passes ---------------------------

namespace {
size_t rows_or(const TextOptions& o, size_t fallback) { return o.rows ? o.rows : fallback; }
}  // namespace

std::string render_summary_text(const SummaryResult& r, const TextOptions& o) {
  return render_summary_text(r, o.width);
}
std::string render_ops_text(const OpsResult& r, const TextOptions& o) {
  return render_ops_text(r.ops, r.rows, rows_or(o, 50));
}
std::string render_steps_text(const StepsResult& r, const TextOptions& o) {
  return render_steps_text(r, o.width);
}
std::string render_kernels_text(const KernelsResult& r, const TextOptions& o) {
  return render_kernels_text(r, o.width, rows_or(o, 30));
}
std::string render_gpu_text(const GpuResult& r, const TextOptions& o) {
  return render_gpu_text(r, o.width);
}
std::string render_memory_text(const MemoryResult& r, const TextOptions& o) {
  return render_memory_text(r, o.width);
}
std::string render_leaks_text(const LeakResult& r, const TextOptions& o) {
  return render_leaks_text(r, o.width);
}
std::string render_heap_text(const HeapResult& r, const TextOptions& o) {
  return render_heap_text(r, o.width);
}
std::string render_bottlenecks_text(const BottleneckResult& r, const TextOptions& o) {
  return render_bottlenecks_text(r, o.width);
}
std::string render_flops_text(const FlopsResult& r, const TextOptions& o) {
  return render_flops_text(r, o.width);
}
std::string render_roofline_text(const RooflineResult& r, const TextOptions& o) {
  return render_roofline_text(r, o.width, rows_or(o, 15));
}
std::string render_flame_text(const FlameGraph& r, const TextOptions& o) {
  return render_flame_text(r, o.width, rows_or(o, 40));
}
std::string render_timeline_text(const TimelineResult& r, const TextOptions& o) {
  return render_timeline_text(r, o.width);
}
std::string render_modules_text(const ModulesResult& r, const TextOptions& o) {
  return render_modules_text(r, o.depth, o.width);
}
std::string render_critical_path_text(const CriticalPathResult& r, const TextOptions& o) {
  return render_critical_path_text(r, o.width);
}
std::string render_ranks_text(const RanksResult& r, const TextOptions& o) {
  return render_ranks_text(r, o.width, o.rows);
}
std::string render_compile_text(const CompileResult& r, const TextOptions& o) {
  return render_compile_text(r, o.width);
}
std::string render_graphs_text(const GraphsResult& r, const TextOptions& o) {
  return render_graphs_text(r, o.width);
}
std::string render_memory_snapshot_text(const SnapshotResult& r, const TextOptions& o) {
  return render_memory_snapshot_text(r, o.width);
}

// ---- dispatch by id, from the catalogue
// -----------------------------------------------------------

std::string json_schema_id(std::string_view name, int major) {
  return "mlprof." + std::string(name) + "/" + std::to_string(major);
}

std::string analysis_schema_id(AnalysisId id) {
  const AnalysisInfo& info = analysis_info(id);
  return json_schema_id(info.name, info.schema_major);
}

void write_analysis_json(JsonWriter& w, AnalysisSet& s, AnalysisId id) {
  w.lead_next_object("schema", analysis_schema_id(id));
  if (auto why = s.unavailable(id)) {
    w.begin_object().field("unavailable", *why).end_object();
    return;
  }
  switch (id) {
#define MLPROF_X(Id, name, ...) \
  case AnalysisId::k##Id:       \
    return write_##name##_json(w, s.name());
    MLPROF_ANALYSES(MLPROF_X)
#undef MLPROF_X
  }
}

std::string analysis_json(AnalysisSet& set, AnalysisId id) {
  JsonWriter w;
  write_analysis_json(w, set, id);
  return w.take();
}

std::string hta_analysis_json(AnalysisSet& set, AnalysisId id) {
  if (set.unavailable(id) || (id != AnalysisId::kGpu && id != AnalysisId::kKernels))
    return analysis_json(set, id);
  JsonWriter w;
  w.lead_next_object("schema", analysis_schema_id(id));
  if (id == AnalysisId::kGpu)
    write_gpu_json(w, set.gpu_hta());
  else
    write_kernels_json(w, set.kernels_hta());
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
#define MLPROF_X(Id, name, ...) \
  case AnalysisId::k##Id:       \
    return render_##name##_text(s.name(), o);
    MLPROF_ANALYSES(MLPROF_X)
#undef MLPROF_X
  }
  return {};
}

const std::vector<AnalysisId>& report_analyses() {
  static const std::vector<AnalysisId> ids = [] {
    std::vector<AnalysisId> out;
    for (const AnalysisInfo& a : analysis_table())
      if (a.report) out.push_back(a.id);
    return out;
  }();
  return ids;
}

namespace {
// The analyses with a nonzero `position` (an AnalysisInfo member), in its order.
std::vector<AnalysisId> in_order(int AnalysisInfo::*position) {
  std::vector<const AnalysisInfo*> rows;
  for (const AnalysisInfo& a : analysis_table())
    if (a.*position > 0) rows.push_back(&a);
  std::stable_sort(rows.begin(), rows.end(), [&](const AnalysisInfo* x, const AnalysisInfo* y) {
    return x->*position < y->*position;
  });
  std::vector<AnalysisId> out;
  for (const AnalysisInfo* a : rows) out.push_back(a->id);
  return out;
}
}  // namespace

const std::vector<AnalysisId>& analyze_analyses() {
  static const std::vector<AnalysisId> ids = in_order(&AnalysisInfo::analyze_json);
  return ids;
}

const std::vector<AnalysisId>& analyze_sections() {
  static const std::vector<AnalysisId> ids = in_order(&AnalysisInfo::analyze_text);
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
