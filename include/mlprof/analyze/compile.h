// `mlprof compile`: what torch.compile did (from TORCH_TRACE logs, one per rank) and where the
// compiled code's time went (from a Kineto trace of the compiled model), joined when both are
// given: a runtime region "Torch-Compiled Region: 0/1" is compile id [0/1]; a
// "## Call CompiledFxGraph <key> ##" is the compile whose FX graph cache event has that key.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mlprof/compile_log.h"
#include "mlprof/trace.h"

namespace mlprof {

struct CompileOptions {
  size_t top = 20;
  int32_t rank = -1;  // >= 0: compile-id rows and failures of this rank only (`--rank N`)
};

struct CompileRow {
  int32_t rank = -1;       // the rank of the log it is from (RankCompileSummary::rank)
  std::string id;          // "[0/1]"
  std::string frame;       // "fn (test.py:12)"
  std::string user_frame;  // innermost dynamo_start frame
  std::string status;      // "ok", "restarted", "failed", "no metrics"
  double compile_s = 0;    // NaN when not recorded
  double backend_s = 0, inductor_s = 0, code_gen_s = 0;
  int64_t graph_ops = -1;
  uint32_t starts = 0;
  std::vector<std::pair<std::string, double>> phases_us;
  // compile_s split into disjoint parts from the nested compilation_metrics times (each includes
  // the next): Dynamo = compile - backend, AOTAutograd = backend - inductor, Inductor = inductor
  // - code gen, code gen. Empty when a time is missing or the nesting does not hold (a lazily
  // compiled backward counted in inductor but not in backend).
  std::vector<std::pair<std::string, double>> time_split_s;
  std::string recompile_reason;  // the first (most recent guard) reason
  uint32_t cache_hits = 0, cache_misses = 0;
  std::vector<std::string> cache_keys;
  uint32_t kernels = 0, autotune = 0;
};

struct GraphBreak {  // deduplicated by (reason, frame)
  std::string reason, frame;
  uint32_t count = 0;
  std::vector<std::string> ids;
  // Distinct user frames that called the broken frame (dynamo_start's innermost user frame of
  // the compile that broke; a restart's is its first attempt's).
  std::vector<std::string> user_frames;
};

struct RecompileGroup {  // recompiles of one frame with the same reason (numbers as N)
  std::string frame, reason;
  uint32_t count = 0;         // over all ranks
  uint32_t max_per_rank = 0;  // the most on one rank (what cache_size_limit counts)
  uint32_t ranks = 0;         // ranks with at least one
};

struct CompileFailure {
  std::string id, type, reason, user_frame;
  int32_t rank = -1;
};

struct RankCompileSummary {
  std::string source;
  int32_t rank = -1;
  uint32_t compile_ids = 0, frames = 0, recompiles = 0, restarts = 0, failures = 0;
  double compile_s = 0;  // sum of compilation_metrics compile time
  uint32_t cache_hits = 0, cache_misses = 0, cache_bypasses = 0;  // bypassed or disabled
  uint64_t md5_mismatches = 0, json_failures = 0, unrecognized_lines = 0, blank_lines = 0;
  // Autotuning: benchmarking phases (names with "autotun" or "benchmark", with or without a
  // compile id) and the autotune times compilation_metrics report.
  uint32_t autotune_events = 0;
  double autotune_us = 0;
  bool crlf = false;
  std::string id_sequence;     // compile ids in first-seen order, space separated
  std::string cache_sequence;  // "miss hit bypass disabled ..." in log order
};

struct RankDivergence {
  // "compile ids", "FX graph cache hit/miss", "graph execution order", and per graph
  // "collective schedule" / "inductor tensor meta" (tlparse's "Diverging collective operation
  // sequences" and "Ranks exhibit divergent inductor tensor meta").
  std::string what;
  std::string graph;  // the compile id ("[0/0]") for per-graph comparisons, else ""
  std::vector<std::pair<std::string, std::vector<int32_t>>> groups;  // value -> ranks
};

struct CompiledRegion {    // runtime calls of one compiled region / graph, from Kineto
  std::string kind;        // "Torch-Compiled Region", "CompiledFxGraph", "CompiledFunction", ...
  std::string name;        // full event name
  std::string compile_id;  // "0/1" for regions; joined for FX graphs ("" when unknown)
  std::string fx_key;      // CompiledFxGraph key
  uint64_t calls = 0;
  int64_t cpu_ns = 0;
  uint64_t gpu_events = 0, triton_kernels = 0;
  int64_t gpu_busy_ns = 0;  // union of its GPU events
  uint32_t distinct_kernels = 0;
};

struct CompileRuntime {
  bool present = false;
  std::vector<CompiledRegion> regions;
  uint64_t kernels_in_compiled = 0, kernels_outside = 0;
  uint64_t triton_in_compiled = 0, triton_total = 0;
  int64_t gpu_ns_in_compiled = 0, gpu_ns_outside = 0;
  uint64_t cpu_ops_in_compiled = 0, cpu_ops_outside = 0;  // cpu_op events
  // CUDA/HIP graph capture calls (cudaStreamBeginCapture, cudaGraphInstantiate, ...): kernels
  // launched in a capture pass are recorded, not run, so regions there have no GPU events.
  uint64_t graph_captures = 0;
  uint64_t cache_lookups = 0;  // TorchDynamo Cache Lookup calls
  int64_t cache_lookup_ns = 0;
};

struct CompileResult {
  std::vector<RankCompileSummary> ranks;
  std::vector<CompileRow> compiles;  // every rank's (rank order), or options.rank's
  std::vector<GraphBreak> graph_breaks;
  std::vector<RecompileGroup> recompiles;
  std::vector<CompileFailure> failures;
  std::vector<std::pair<std::string, double>> global_phases_us;
  std::vector<RankDivergence> divergences;
  CompileRuntime runtime;
  std::vector<std::string> recommendations;
};

// Whether a host thread of `trace` has a compiled region's event ("Torch-Compiled Region: F/C",
// "## Call CompiledFxGraph <key> ##", CompiledFunction[Backward]): what the runtime view needs.
bool has_compiled_regions(const Trace& trace);
// GPU events named triton_* (Inductor's kernels): compiled code even where no region marks it.
uint64_t triton_kernel_count(const Trace& trace);

// `logs` may be empty (trace only); `trace` may be null (logs only).
CompileResult analyze_compile(const std::vector<CompileLog>& logs, const Trace* trace,
                              const CompileOptions& options = {});

}  // namespace mlprof
