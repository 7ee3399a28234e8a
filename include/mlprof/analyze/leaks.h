// `mlprof leaks`: does memory grow across steps? Memory allocated at each step boundary, a robust
// slope (Theil-Sen), and a Mann-Kendall trend test so that noise is not reported as a leak; plus
// the ops whose allocations inside steps are never freed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/analyze/heap.h"
#include "mlprof/analyze/steps.h"
#include "mlprof/trace.h"

namespace mlprof {

// A leak is reported when the Mann-Kendall two-sided p-value is below kLeakAlpha (the usual 5%
// level), the Theil-Sen slope is positive and at least kLeakMinBytesPerStep (a few small tensors'
// worth: allocator rounding and caches move totals by a few hundred bytes per step without
// leaking).
inline constexpr double kLeakAlpha = 0.05;
inline constexpr double kLeakMinBytesPerStep = 1024;
// Fewer boundary samples than this cannot reach p < 0.05 under Mann-Kendall (n = 4 gives p >=
// 0.09).
inline constexpr size_t kLeakMinSteps = 5;

struct LeakOptions {
  double alpha = kLeakAlpha;
  double min_bytes_per_step = kLeakMinBytesPerStep;
  size_t top_ops = 20;
  size_t top_stacks = 10;        // unfreed-at-exit stacks kept (traces with call stacks)
  bool unfreed_by_stack = true;  // false: skip that table (the bottleneck rules do not use it)
};

// Change point (a leak that starts late, growth that stops): the two-segment least-squares fit
// (one line before sample k, another from k on; each segment >= kLeakMinSegment samples) with the
// smallest residual, against one line over all samples by an F test (3 extra parameters: the
// second line and k), Bonferroni-corrected for the number of k tried. When the change is
// significant the rate is the Theil-Sen slope since k, and a leak needs growth since k
// (Mann-Kendall over those samples, or over all of them when fewer than kLeakMinSteps
// follow k); growth before k that stops after it is a plateau, not a leak.
inline constexpr size_t kLeakMinSegment = 3;

struct DeviceLeak {
  std::string device;
  std::vector<int64_t> step_end_allocated;  // allocated at the end of each step
  double slope_bytes_per_step = 0;          // Theil-Sen: since the change point when there is one
  double kendall_s = 0, kendall_z = 0, p_value = 1;  // the trend test the verdict rests on
  bool test_valid = false;
  int64_t growth_bytes = 0;                 // last - first boundary value
  double overall_slope_bytes_per_step = 0;  // Theil-Sen over all steps
  double overall_p_value = 1;               // Mann-Kendall over all steps
  // Change point: index of the first sample of the second segment (-1: none significant), the
  // step it ends, the F test's corrected p-value, the slope before it.
  int64_t change_index = -1;
  int64_t growth_start_step = -1;  // step number in which the late growth began
  double change_p_value = 1;
  double slope_before_bytes_per_step = 0;
  bool plateau = false;  // grew, then stopped: not a leak
  bool leak = false;
};

struct SurvivingOp {
  std::string op;       // innermost enclosing slice of the allocation
  std::string context;  // its enclosing slices (first such allocation), outermost first,
                        // step markers left out: "leak_append > aten::empty"
  uint64_t count = 0;   // allocations made inside steps and never freed in the trace
  int64_t bytes = 0;
  uint64_t steps = 0;  // distinct steps with such an allocation
};

struct LeakResult {
  size_t steps = 0;
  bool has_memory = false;
  std::vector<DeviceLeak> devices;
  std::vector<SurvivingOp> surviving_ops;  // by bytes, descending
  bool leak = false;                       // any device leaks
  // Traces whose memory events carry call stacks (`mlprof run --memory` captures): host blocks
  // never freed by the end of the trace, by allocating stack (what `mlprof heap` calls leaks),
  // whether or not the trace has steps.
  bool has_stacks = false;
  uint64_t unfreed_bytes = 0, unfreed_blocks = 0;
  uint64_t unfreed_stack_count = 0;       // distinct stacks (unfreed_stacks holds the top ones)
  std::vector<HeapStack> unfreed_stacks;  // most bytes first
};

LeakResult analyze_leaks(const Trace& trace, const LeakOptions& options = {});
// Same, reusing steps already found (mlprof analyze computes them once).
LeakResult analyze_leaks(const Trace& trace, const StepsResult& steps,
                         const LeakOptions& options = {});

}  // namespace mlprof
