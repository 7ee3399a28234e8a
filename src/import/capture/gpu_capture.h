// Turns the CUPTI injection library's files (gpu.<pid>.<n>.bin, trace/formats/cupti_format.h)
// into Trace rows the way Kineto writes them: kernels, memcpys and memsets on GPU stream tracks
// (pid = device, tid = stream), runtime/driver calls on the calling thread, and "ac2g" flows from
// each launch to its GPU work by CUPTI correlation id; synchronization waits as cuda_sync slices,
// and each record's external correlation id (PyTorch's op id) as its "External id" arg.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof {

struct GpuCaptureStats {
  size_t files = 0;
  uint64_t kernels = 0, memcpys = 0, memsets = 0, api_calls = 0, flows = 0, syncs = 0;
  uint64_t external_correlations = 0;  // CUPTI records linking a correlation id to an op id
  uint64_t dropped_records = 0;        // CUPTI's own count of records it could not buffer
  uint64_t bad_timestamps = 0;         // zero or reversed start/end, skipped
  std::vector<std::string> notes;
};

Status add_gpu_captures(const std::string& dir, TraceBuilder& builder, GpuCaptureStats& stats);

}  // namespace mlprof
