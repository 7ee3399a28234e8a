// torch.compile structured logs (TORCH_TRACE=dir: dedicated_log_torch_trace_*.log), the input
// of tlparse, reduced to what a compile report needs: per compile id (frame/attempt) its
// compilation_metrics, phases from chromium events, recompile reasons, cache hits/misses and
// generated kernels. Format per tlparse's parser (src/lib.rs parse_path): a glog line
// `[VIWEC]MMDD HH:MM:SS.uuuuuu THREAD PATH:LINE] {json envelope}`, then the payload as
// TAB-indented lines; blank lines skipped, a trailing CR dropped, has_payload = md5 of the
// payload (mismatches counted, not fatal).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mlprof/status.h"

namespace mlprof {

struct CompileId {
  int64_t autograd = -1;  // compiled_autograd_id, -1 when null
  int64_t frame = -1;     // frame_id
  int64_t compile = -1;   // frame_compile_id
  int64_t attempt = 0;    // > 0: a restart after a graph break
  // tlparse's display: "[0/1]", "[0/0_1]", "[!2/0/1]"; "[-/-]" for missing numbers.
  std::string text() const;
  // The short form compile ids take in chromium events and Kineto: "0/1" (no attempt).
  std::string short_text() const;
  bool known() const { return frame >= 0 || compile >= 0; }
  auto key() const { return std::tuple(autograd, frame, compile, attempt); }
};

struct CompileRecord {
  CompileId id;
  uint32_t dynamo_starts = 0;
  // Innermost user frame of dynamo_start's stack "file.py:12 in fn" (torch/_dynamo and other
  // torch-internal frames such as eval_frame.py's _fn skipped).
  std::string user_frame;
  bool has_metrics = false;
  uint32_t metrics_count = 0;  // compilation_metrics entries (times below are their sums)
  std::string co_name, co_filename;
  int64_t co_firstlineno = -1;
  // Seconds (NaN when not recorded): whole frame, backend (AOT + inductor), inductor, codegen.
  double compile_s, backend_s, inductor_s, code_gen_s;
  int64_t graph_op_count = -1, guard_count = -1;
  std::string fail_type, fail_reason, fail_user_frame;
  std::vector<std::string> restart_reasons;               // graph breaks that restarted the frame
  std::vector<std::string> recompile_reasons;             // guard failures that caused this compile
  std::vector<std::string> graph_break_reasons;           // dynamo_graph_break_reason artifacts
  std::vector<std::pair<std::string, double>> phases_us;  // chromium B/E sums by phase name
  std::vector<std::pair<std::string, std::string>> cache_events;  // (kind, key) in log order
  std::vector<std::string> kernels;  // triton_*/cpp_fused_* defined in inductor_output_code
  // Distributed graphs (what tlparse compares across ranks): the collective ops in schedule
  // order (inductor_collective_schedule) and one line per op "name outputs" with the outputs'
  // shape/stride/dtype as minified JSON (inductor_runtime_and_tensor_meta; runtimes left out).
  bool has_collective_schedule = false, has_tensor_meta = false;
  std::vector<std::string> collective_schedule, tensor_meta;
  uint32_t autotune_events = 0;  // autotuning artifacts/chromium events
  double autotune_us = 0;        // compile_time_/runtime_triton_autotune_time_us of its metrics
  CompileRecord();
};

struct CompileLog {
  std::string source;
  int32_t rank = -1;  // the file name's rank_N, else the envelopes' "rank"
  uint64_t lines = 0, glog_lines = 0, payload_lines = 0, blank_lines = 0;
  uint64_t unrecognized_lines = 0, json_failures = 0, payload_json_failures = 0;
  uint64_t md5_mismatches = 0;
  bool crlf = false;
  std::map<std::string, uint64_t> entries_by_kind;
  std::map<std::string, uint64_t> artifacts;
  std::vector<CompileRecord> compiles;     // first-seen order
  std::vector<std::string> dynamo_starts;  // compile ids in dynamo_start order
  // (kind, key, compile id) of fx_graph_cache_{hit,miss,bypass} chromium instants, in order.
  std::vector<std::tuple<std::string, std::string, std::string>> cache_events;
  std::vector<std::pair<std::string, double>> global_phases_us;  // phases with no compile id
  uint32_t global_autotune_events = 0;             // autotuning/benchmark phases with no compile id
  std::vector<std::string> graph_execution_order;  // graph_execution artifact, if any
};

// Reads one log (plain or gzipped). Errors: unreadable file, or no glog line at all.
Result<CompileLog> load_compile_log(const std::string& path);
Result<CompileLog> load_compile_log_buffer(std::string_view bytes, const std::string& name);

// True when the file's first non-blank line is a glog line followed by a JSON object.
bool is_compile_log_file(const std::string& path);

}  // namespace mlprof
