// Operators grouped by input shape and by call stack: the TensorBoard profiler plugin's Operator
// view "Group By: Operator + Input Shape" (and "+ Call Stack" when the trace has stacks).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/trace.h"

namespace mlprof {

struct DeviceTime;

struct OpGroup {
  std::string name;
  std::string input_shape;  // the op's "Input Dims" arg as recorded ("[[2, 3], [3]]")
  std::string call_stack;   // by_call_stack only: frames innermost first, "; "-separated
  uint64_t count = 0;
  int64_t total_ns = 0;          // host: summed durations of the calls
  int64_t self_ns = 0;           // host: less their child slices
  int64_t device_total_ns = -1;  // GPU time the calls (and the ops they called) launched; -1: none
  int64_t device_self_ns = -1;   // GPU time the calls themselves launched
};

struct OpGroups {
  std::vector<OpGroup> by_shape;  // every CPU slice with an "Input Dims" arg
  std::vector<OpGroup> by_stack;  // those with a call stack ("Call stack" arg, else the
                                  // enclosing python_function frames); empty when none has one
  uint64_t shape_rows = 0, stack_rows = 0;  // before `top`
};

// Rows sorted by host total time, descending; each list cut to `top` rows (0 = all). `device`:
// the per-slice device time (device_time_by_slice), or null on a trace without GPU streams.
OpGroups op_groups(const Trace& trace, const DeviceTime* device, size_t top = 0);

}  // namespace mlprof
