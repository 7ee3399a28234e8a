// The workload behind `mlprof demo`: a small MLP trained with SGD on synthetic data, with real
// matmuls, instrumented with mlprof scopes, steps, counters and memory tracking. Two problems
// are planted for the analyzer to find: data loading takes a large share of every step (a
// simulated slow read plus per-sample decoding on the training thread), and a metrics buffer
// leaks a little every step.
#pragma once

#include <cstdint>

namespace mlprof::record {

struct DemoOptions {
  int steps = 300;
  int batch = 32;
  uint64_t seed = 1;
  int read_latency_us = 2500;  // the simulated storage read per batch
};

struct DemoOutcome {
  int steps = 0;
  double first_loss = 0;
  double last_loss = 0;
  int64_t leaked_bytes = 0;  // what the planted leak kept
};

// Runs the training loop on the calling thread. Records into whatever session is running.
DemoOutcome run_demo_workload(const DemoOptions& options);

}  // namespace mlprof::record
