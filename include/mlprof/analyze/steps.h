// `mlprof steps`: training iterations (PyTorch `ProfilerStep#N`, mlprof step markers), their
// times, outliers, and where each step's time goes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlprof/trace.h"

namespace mlprof {

// What a step's host time is spent on. Each instant of the step (on the step's thread) goes to the
// highest-priority phase among the classified slices active then (communication > data loading >
// optimizer > backward > forward), else other; see classify_step_phase and docs/analysis.md.
enum class StepPhase : uint8_t {
  kDataLoading,
  kForward,
  kBackward,
  kOptimizer,
  kCommunication,
  kOther,
};
inline constexpr size_t kStepPhaseCount = 6;
std::string_view step_phase_name(StepPhase p);  // "data_loading", "forward", ...

// Classifies one slice name; nullopt when the name says nothing (the slice inherits its parent's
// phase). Priority when several rules match: communication > data loading > optimizer >
// backward > forward.
std::optional<StepPhase> classify_step_phase(std::string_view name);

// The TensorBoard profiler plugin's step-time classes for GPU traces: every instant of a step goes
// to the first class active at that instant in this order (FIELD_NOTES.md).
enum class GpuStepClass : uint8_t {
  kKernel,
  kMemcpy,
  kMemset,
  kCommunication,
  kRuntime,
  kDataLoader,
  kCpuOp,
  kOther,
};
inline constexpr size_t kGpuStepClassCount = 8;
std::string_view gpu_step_class_name(GpuStepClass c);  // "kernel", "memcpy", ...

// Step number from "ProfilerStep#12" (12; HTA's "ProfilerStep # 12" too); nullopt when the name is
// not a step marker. The one rule for "this slice is a step" (steps, summary, flame, leaks,
// compare, GPU analyses, ranks).
std::optional<int64_t> step_number(std::string_view name);

// Outlier rule: |duration - median| > kStepOutlierMads * 1.4826 * MAD (a robust 3-sigma; the
// MAD is not inflated by the outliers themselves the way the standard deviation is).
inline constexpr double kStepOutlierMads = 3.0;

struct StepInfo {
  int64_t number = 0;  // N of ProfilerStep#N
  std::string name;
  int64_t begin_ns = 0, dur_ns = 0;
  std::array<int64_t, kStepPhaseCount> phase_ns{};         // sums to dur_ns
  std::array<int64_t, kGpuStepClassCount> gpu_class_ns{};  // sums to dur_ns (GPU traces)
  bool outlier = false;
};

struct StepsResult {
  std::vector<StepInfo> steps;                                // in time order
  double mean_ns = 0, std_ns = 0, median_ns = 0, mad_ns = 0;  // std: sample (n - 1)
  int64_t min_ns = 0, max_ns = 0, total_ns = 0;
  std::array<int64_t, kStepPhaseCount> phase_total_ns{};
  bool has_gpu = false;  // gpu_class_ns filled
  std::array<int64_t, kGpuStepClassCount> gpu_class_total_ns{};
  std::vector<int64_t> outlier_steps;  // step numbers
};

StepsResult analyze_steps(const Trace& trace);

}  // namespace mlprof
