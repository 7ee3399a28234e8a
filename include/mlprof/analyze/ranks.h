// `mlprof ranks DIR`: one trace per rank of a distributed job: per-rank step time,
// compute/communication split, stragglers, load imbalance, collectives' sizes and bandwidth.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/analyze/gpu.h"
#include "mlprof/trace.h"

namespace mlprof {

struct RanksOptions {
  bool hta_compatible = false;
  // A rank is a straggler when its mean step time (or GPU span without steps) exceeds the
  // median of all ranks by this fraction. 5%: the noise between identical ranks in the sample
  // jobs stays under 2%.
  double straggler_threshold = 0.05;
};

struct RankStats {
  int32_t rank = -1;
  std::string source;
  uint64_t steps = 0;
  double step_mean_ns = 0;  // ProfilerStep#N mean duration (0 without steps)
  int64_t step_max_ns = 0;
  int64_t wall_ns = 0;         // steps' total, else GPU span
  TemporalBreakdown temporal;  // all devices of the rank
  double comm_comp_overlap_pct = NAN;
  int64_t exposed_comm_ns = 0;   // communication not overlapped with computation
  double comm_overhead_pct = 0;  // exposed communication / GPU span * 100
  bool straggler = false;
};

// Collectives grouped by name (e.g. "allreduce", "nccl:all_reduce"), from Kineto's
// record_param_comms args ("In msg nelems", "Out msg nelems", "dtype", "Group size") or
// kernel names.
struct CollectiveStats {
  std::string name;
  std::string dtype;
  uint64_t count = 0;
  int64_t bytes = 0;    // total message bytes (in msg nelems * dtype size)
  int64_t time_ns = 0;  // GPU time of the collective kernels
  int64_t group_size = 0;
  double algbw_gbps = 0;  // bytes / time
  double busbw_gbps = 0;  // algbw * NCCL's bus factor for the op and group size
};

struct RanksResult {
  std::vector<RankStats> ranks;  // sorted by rank
  double step_mean_ns = 0;       // mean over ranks
  double load_imbalance = 0;     // max / mean of per-rank wall (step) time
  double compute_imbalance = 0;  // max / mean of per-rank compute time
  std::vector<int32_t> stragglers;
  std::vector<CollectiveStats> collectives;  // over all ranks
  std::vector<std::string> errors;           // files that failed to load ("path: why")
};

RanksResult analyze_ranks(const std::vector<const Trace*>& traces,
                          const RanksOptions& options = {});

// The rank of a trace: meta.rank, else a number in the file name ("rank-3", "rank3", "_3.json").
int32_t rank_of(const Trace& trace, const std::string& path);

}  // namespace mlprof
