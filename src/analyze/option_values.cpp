#include "analyze/option_values.h"

#include <cmath>

#include "mlprof/analyze/device_peaks.h"

namespace mlprof {
namespace {

using K = AnalysisId;

// hta_compatible is listed for the analyses whose subcommand has --hta-compatible.
constexpr OptionSpec kSpecs[] = {
    {K::kSummary, "top", "integer", "number of operations to show (default 20)"},
    {K::kSummary, "sort", "string", "sort by total|self|mean|count"},
    {K::kSummary, "category", "string", "only this category"},
    {K::kOps, "top", "integer", "rows kept (default: all)"},
    {K::kOps, "sort", "string", "sort by total|self|mean|count"},
    {K::kOps, "category", "string", "only this category"},
    {K::kOps, "host_only", "boolean", "leave out GPU kernels, memcpys and memsets"},
    {K::kOps, "hta_compatible", "boolean", "Holistic Trace Analysis' event window"},
    {K::kKernels, "include_memory", "boolean", "memcpy/memset rows (default true)"},
    {K::kKernels, "hta_compatible", "boolean", "Holistic Trace Analysis' event window"},
    {K::kGpu, "hta_compatible", "boolean", "Holistic Trace Analysis' event window"},
    {K::kGpu, "kernel_delay_us", "number",
     "gap between kernels above which it counts as idle (default 30)"},
    {K::kMemory, "points", "integer", "timeline points per device (default 1000)"},
    {K::kMemory, "top", "integer", "per-op rows kept (default 30)"},
    {K::kLeaks, "alpha", "number", "significance level of the growth test"},
    {K::kLeaks, "min_bytes_per_step", "number", "smallest growth per step reported"},
    {K::kHeap, "top", "integer", "stacks per table (default 10)"},
    {K::kHeap, "frames", "integer", "frames kept per stack (default 6)"},
    {K::kHeap, "temporary_us", "number", "freed within this many us: a temporary (default 100)"},
    {K::kHeap, "device", "string", "cpu, cuda or all (default cpu)"},
    {K::kFlops, "peak_tflops", "number", "device peak TFLOP/s for MFU (default: table)"},
    {K::kFlops, "top", "integer", "ops shown (default 30)"},
    {K::kFlame, "include_gpu", "boolean", "the GPU subtree (default true)"},
    {K::kFlame, "split_threads", "boolean", "one frame per thread (default true)"},
    {K::kFlame, "merge_steps", "boolean", "ProfilerStep#N frames merged (default true)"},
    {K::kModules, "top", "integer", "rows in the slowest / most variable / shared lists"},
    {K::kCriticalPath, "step", "integer",
     "analyze step ProfilerStep#N (its number as the steps analysis lists it)"},
    {K::kCriticalPath, "annotation", "string",
     "annotation whose window is analyzed (substring of its name; \"\" = whole trace)"},
    {K::kCriticalPath, "instance", "integer", "which occurrence of the annotation (0 = first)"},
    {K::kCriticalPath, "zero_weight_launch_edges", "boolean",
     "HTA's zero-weight launch -> kernel edges (default true)"},
    {K::kCriticalPath, "top", "integer", "events listed (default 20)"},
    {K::kRanks, "straggler_pct", "number",
     "a rank slower than the median by this percentage is a straggler (default 5)"},
    {K::kRanks, "hta_compatible", "boolean", "Holistic Trace Analysis' event window"},
    {K::kRoofline, "device", "string", "device name to look up instead of the trace's"},
    {K::kRoofline, "peaks", "string",
     "JSON text of a peaks table ({\"NAME\": {\"tops\": {...}, \"dram_bw_gbs\": N}})"},
    {K::kRoofline, "top", "integer", "rows kept per table (default 30)"},
    {K::kGraphs, "min_match", "number", "smallest share of replays matched (default 0.9)"},
    {K::kGraphs, "top", "integer", "rows per table in the text (default 30)"},
};

std::optional<OpSort> sort_of(std::string_view s) {
  if (s == "total") return OpSort::kTotal;
  if (s == "self") return OpSort::kSelf;
  if (s == "mean") return OpSort::kMean;
  if (s == "count") return OpSort::kCount;
  return std::nullopt;
}

}  // namespace

std::span<const OptionSpec> analysis_option_specs() { return kSpecs; }

std::optional<std::string> set_analysis_option(AnalysisOptions& o, AnalysisId id,
                                               std::string_view key, const OptionValue& v) {
  const OptionSpec* spec = nullptr;
  for (const OptionSpec& s : kSpecs)
    if (s.id == id && s.key == key) spec = &s;
  std::string where = std::string(analysis_info(id).name) + ": ";
  if (spec == nullptr) return where + "unknown option '" + std::string(key) + "'";
  std::string bad = where + std::string(key) + " must be ";
  // Values are checked against the spec's type first, so each setter reads one field.
  constexpr double kMaxWhole = 1e15;
  if (spec->type == "boolean" && v.kind != OptionValue::kBool) return bad + "true or false";
  if (spec->type == "string" && v.kind != OptionValue::kString) return bad + "a string";
  if (spec->type == "number" && (v.kind != OptionValue::kNumber || !std::isfinite(v.number)))
    return bad + "a number";
  if (spec->type == "integer" && (v.kind != OptionValue::kNumber || v.number < 0 ||
                                  v.number > kMaxWhole || v.number != std::floor(v.number)))
    return bad + "a whole number >= 0";
  // Bounded so that a value scaled to ns (kernel_delay_us, temporary_us) stays an int64.
  if (spec->type == "number" && (v.number < 0 || v.number > kMaxWhole))
    return bad + "a number from 0 to 1e15";
  size_t whole = static_cast<size_t>(v.number);
  bool b = v.boolean;
  const std::string& s = v.text;
  switch (id) {
    case K::kSummary:
      if (key == "top") o.summary.top = whole;
      if (key == "category") o.summary.category = s;
      if (key == "sort") {
        auto by = sort_of(s);
        if (!by) return bad + "one of total, self, mean, count";
        o.summary.sort = *by;
      }
      break;
    case K::kOps:
      if (key == "top") o.ops.top = whole;
      if (key == "category") o.ops.stats.category = s;
      if (key == "host_only") o.ops.stats.include_gpu = !b;
      if (key == "hta_compatible") o.set_hta_compatible(b);
      if (key == "sort") {
        auto by = sort_of(s);
        if (!by) return bad + "one of total, self, mean, count";
        o.ops.sort = *by;
      }
      break;
    case K::kKernels:
      if (key == "include_memory") o.kernels.include_memory = b;
      if (key == "hta_compatible") o.set_hta_compatible(b);
      break;
    case K::kGpu:
      if (key == "hta_compatible") o.set_hta_compatible(b);
      if (key == "kernel_delay_us")
        o.gpu.consecutive_kernel_delay_ns = static_cast<int64_t>(v.number * 1000);
      break;
    case K::kMemory:
      if (key == "points") o.memory.timeline_points = whole;
      if (key == "top") o.memory.top_ops = whole;
      break;
    case K::kLeaks:
      if (key == "alpha") o.leaks.alpha = v.number;
      if (key == "min_bytes_per_step") o.leaks.min_bytes_per_step = v.number;
      break;
    case K::kHeap:
      if (key == "top") o.heap.top = whole;
      if (key == "frames") o.heap.max_frames = whole;
      if (key == "temporary_us") o.heap.temporary_ns = static_cast<int64_t>(v.number * 1000);
      if (key == "device") {
        if (s != "cpu" && s != "cuda" && s != "all") return bad + "one of cpu, cuda, all";
        o.heap.device_type = s == "cpu" ? 0 : s == "cuda" ? 1 : -1;
      }
      break;
    case K::kFlops:
      if (key == "peak_tflops") o.flops.peak_tflops = v.number;
      if (key == "top") o.flops.top = whole;
      break;
    case K::kFlame:
      if (key == "include_gpu") o.flame.include_gpu = b;
      if (key == "split_threads") o.flame.split_threads = b;
      if (key == "merge_steps") o.flame.merge_steps = b;
      break;
    case K::kModules:
      if (key == "top") o.modules.top = whole;
      break;
    case K::kCriticalPath:
      if (key == "step") o.critical_path.step = static_cast<int64_t>(whole);
      if (key == "annotation") o.critical_path.annotation = s;
      if (key == "instance") o.critical_path.instance = whole;
      if (key == "zero_weight_launch_edges") o.critical_path.zero_weight_launch_edges = b;
      if (key == "top") o.critical_path.top = whole;
      break;
    case K::kRanks:
      if (key == "straggler_pct") o.ranks.straggler_threshold = v.number / 100.0;
      if (key == "hta_compatible") o.set_hta_compatible(b);
      break;
    case K::kRoofline:
      if (key == "device") o.roofline.device = s;
      if (key == "top") o.roofline.top = whole;
      if (key == "peaks") {
        auto rows = parse_device_peaks_json(s, "peaks");
        if (!rows) return where + rows.error();
        o.roofline.peaks = std::move(rows.value());
      }
      break;
    case K::kGraphs:
      if (key == "min_match") o.graphs.min_match = v.number;
      if (key == "top") o.graphs.top = whole;
      break;
    default:
      break;
  }
  return std::nullopt;
}

}  // namespace mlprof
