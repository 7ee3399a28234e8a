// `mlprof graphs`: CUDA/HIP graph replays attributed to what was captured. A graph launch
// (cudaGraphLaunch, hipGraphLaunch) runs kernels that share its correlation id and have no CPU
// op of their own; who launched each kernel is only in the capture pass (the launch calls
// between Stream{Begin,End}Capture, naming its kernel in args.kernel on ROCm/vLLM captures;
// Kineto on NVIDIA names none, Inductor's record_function names Triton kernels). Each replay is
// matched to a captured graph by kernel-name sequence, in order (a launch naming no kernel by
// its position) -- or, where the replayed kernels and the captured launches carry CUPTI's "graph
// id" / "graph node id" args, by graph id and node id -- and its GPU time charged to
// the captured ops, modules and kernels as if the graph had run eagerly.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mlprof/trace.h"

namespace mlprof {

// A capture pass: a trace holding Stream{Begin,End}Capture and the launches between them
// (vLLM/SGLang/TraceLens write it to capture_traces/, with execution_details.json).
struct GraphCaptureInput {
  std::string source;                  // file the capture came from (for the output)
  std::shared_ptr<const Trace> trace;  // null: the analyzed trace itself
  int64_t batch_size = -1;             // from execution_details.json, -1 unknown
  std::string mode;                    // "FULL", "DECODE", "PIECEWISE", ... ("" unknown)
};

struct GraphsOptions {
  std::vector<GraphCaptureInput> captures;
  // Replays whose kernels match a capture below this share are reported as unmatched.
  double min_match = 0.9;
  size_t top = 30;  // rows per table in the text (JSON lists all)
};

struct GraphCapture {  // one Begin/EndCapture window
  std::string source;
  int64_t batch_size = -1;
  std::string mode;
  uint64_t kernels = 0;    // captured kernel launches
  uint64_t unnamed = 0;    // of which name no kernel (no args.kernel, not an Inductor kernel)
  int64_t capture_ns = 0;  // BeginCapture start -> EndCapture end (host)
  uint64_t replays = 0;    // replays matched to it
  // Host time of its kernel launch calls in the capture pass: what launching the same kernels
  // one by one cost (a capture records the launches; none of the kernels runs then).
  int64_t launch_host_ns = 0;
  // Captured during the profiled trace itself, again: the index of an earlier capture of this
  // trace with the same kernel sequence (a graph re-captured while profiling), else -1.
  int32_t recapture_of = -1;
  // The trace the capture was read from (null: the analyzed trace itself), so an analysis can
  // read what the capture recorded about a captured op (its shapes, for the roofline).
  std::shared_ptr<const Trace> trace;
};

struct GraphReplay {
  int64_t ts_ns = 0;  // the launch call
  int64_t correlation = -1;
  std::string launch;                // cudaGraphLaunch / hipGraphLaunch
  uint64_t kernels = 0;              // GPU kernels with the launch's correlation
  uint64_t other = 0;                // memcpys/memsets it ran (not matched by name)
  int64_t gpu_ns = 0;                // summed duration of all its GPU events
  int32_t capture = -1;              // index into GraphsResult::captures, -1 unmatched
  uint64_t matched = 0;              // kernels matched in capture order
  uint64_t matched_by_position = 0;  // of which to launches naming no kernel
  // How the replay was matched: "graph ids" (its kernels' CUPTI graph id and graph node id, the
  // same on the captured launches), "kernel names" (the kernel-name sequence), "" unmatched.
  std::string matched_by;
  int64_t attributed_ns = 0;
  std::string why;  // unmatched: why
  // The cost side: host time of the graph launch call, and from its start to its first GPU
  // event's start (launch delay); eager_launch_host_ns: the matched capture's launch_host_ns,
  // what the launches the graph replaced took on the host (-1 unmatched).
  int64_t launch_host_ns = 0;
  int64_t launch_delay_ns = 0;
  int64_t eager_launch_host_ns = -1;
};

// GPU time of matched replayed kernels, grouped by the captured op / module / kernel name.
struct GraphAttribution {
  std::string name;
  uint64_t kernels = 0;  // replayed kernel executions
  int64_t gpu_ns = 0;
};

// One matched replayed kernel: what the capture pass says launched it. The analysis stage
// (ops, kernels, modules) charges its GPU time there, as if the graph had run eagerly, instead
// of to the graph launch's caller.
struct ReplayedKernel {
  uint32_t slice = 0;      // the kernel's slice in the analyzed trace
  int32_t launch_op = -1;  // the op the graph launch is charged to (OpAttribution), -1 none
  // Indexes into GraphsResult::names (0: "" none).
  uint32_t op = 0, op_category = 0;
  uint32_t module = 0;       // the captured launch's nn.Module path, outer first ("A_0/B_0")
  int32_t launch = -1;       // the graph launch call's slice in the analyzed trace
  int32_t capture = -1;      // index into GraphsResult::captures
  int32_t captured_op = -1;  // the captured op's slice in that capture's trace, -1 none
};

struct GraphsResult {
  std::vector<GraphCapture> captures;
  std::vector<GraphReplay> replays;
  std::vector<GraphAttribution> ops;      // by captured op (innermost non-runtime slice)
  std::vector<GraphAttribution> modules;  // by innermost nn.Module of the launch, if recorded
  std::vector<GraphAttribution> kernels;  // by kernel name
  uint64_t replayed_kernels = 0;
  uint64_t matched_kernels = 0;
  int64_t replayed_gpu_ns = 0;       // GPU time of all replays
  int64_t attributed_gpu_ns = 0;     // of which charged to captured ops
  int64_t gpu_ns = 0;                // all GPU kernel/memcpy/memset time of the trace
  int64_t launch_host_ns = 0;        // summed over replays
  int64_t eager_launch_host_ns = 0;  // summed over matched replays
  int64_t capture_ns = 0;            // summed over the captures made in this trace
  uint64_t captured_here = 0;        // captures in the analyzed trace itself (not --capture)
  uint64_t recaptures = 0;           // of which repeat an earlier capture's kernel sequence
  std::vector<std::string> notes;    // capture sources skipped, and why
  size_t top = 30;
  std::vector<ReplayedKernel> replayed;  // every matched replayed kernel, by slice
  std::vector<std::string> names;        // names[0] = ""
  const ReplayedKernel* replayed_kernel(uint32_t slice) const;
};

GraphsResult analyze_graphs(const Trace& trace, const GraphsOptions& options = {});

}  // namespace mlprof
