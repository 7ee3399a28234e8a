// `mlprof ranks DIR`: one trace per rank of a distributed job. Each rank is reduced on its own to
// a compact RankSummary (step times, GPU time breakdown, every collective call with its timing
// and size, top ops and kernels, memory peak), so a directory of thousands of ranks is analyzed
// with one trace per worker in memory; the cross-rank analyses (collectives matched across ranks,
// who arrived last and by how much, stragglers, load imbalance as distributions, bus bandwidth
// per message size, clock alignment, duplicate/missing ranks) read the summaries only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mlprof/analyze/gpu.h"
#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof {

struct RanksOptions {
  bool hta_compatible = false;
  // A rank is a straggler when its mean step time (or GPU span without steps) exceeds the
  // median of all ranks by this fraction. 5%: the noise between identical ranks in the sample
  // jobs stays under 2%.
  double straggler_threshold = 0.05;
  // ...or when it arrives last at collectives repeatedly: in at least `straggler_last_share` of
  // the collective calls matched across ranks (and 1.5x the share chance gives with n ranks),
  // at least `straggler_min_calls` of them, by a median of at least `straggler_min_late_ns`.
  double straggler_last_share = 0.5;
  uint64_t straggler_min_calls = 3;
  int64_t straggler_min_late_ns = 20'000;
  size_t top_calls = 20;  // late collective calls listed (the worst first)
  size_t top_names = 5;   // top ops / kernels kept per rank
  // --step-annotation: the regex naming one iteration ("" ProfilerStep#N, else the engine's).
  std::string step_annotation;
};

// ---- per rank: the summary one worker reduces a trace to ---------------------------------------

// One collective call on one rank, as its communication kernel ran (GPU), on this rank's clock.
struct CollectiveCall {
  uint32_t group = 0;  // index into RankSummary::groups ("0 [0, 1]", "stream 84")
  uint32_t name = 0;   // index into RankSummary::names ("allreduce", "ncclKernel_SendRecv_...")
  int64_t seq = 0;     // order within the group on this rank (matches the same call elsewhere)
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t bytes = 0;       // message bytes ("In msg nelems" x dtype size), 0 when unknown
  int32_t group_size = 0;  // "Group size", 0 when unknown
  uint32_t dtype = 0;      // index into RankSummary::names ("" when unknown)
};

struct StepTime {
  int64_t number = 0;  // N of ProfilerStep#N
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
};

struct NamedTime {
  std::string name;
  uint64_t count = 0;
  int64_t time_ns = 0;
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
  int64_t memory_peak_bytes = 0;
  int32_t world_size = -1;             // distributedInfo.world_size, -1 when absent
  std::vector<NamedTime> top_ops;      // CPU ops by total time (steps excluded)
  std::vector<NamedTime> top_kernels;  // GPU kernels by total time
  // Filled by the cross-rank analysis:
  int64_t clock_offset_ns = 0;    // added to this rank's times to align it with the reference
  uint64_t collective_calls = 0;  // its calls matched with at least one other rank
  uint64_t last_count = 0;        // calls it arrived at last
  int64_t late_total_ns = 0;      // summed over those: its arrival - the previous rank's
  bool straggler = false;
};

struct RankSummary {
  RankStats stats;
  int64_t base_time_ns = 0;  // Kineto baseTimeNanoseconds, 0 when absent
  int64_t begin_ns = 0;      // the trace's first event, as recorded (serve groups jobs by it)
  uint64_t file_bytes = 0;
  bool has_gpu = false;
  std::vector<StepTime> step_times;
  std::vector<std::string> groups;  // strings the calls point at
  std::vector<std::string> names;
  std::vector<CollectiveCall> calls;  // by (group, seq)
};

// Reduces one rank's trace to its summary (the trace can be freed afterwards).
RankSummary summarize_rank(const Trace& trace, const RanksOptions& options = {});

// Loads files one per worker, reduces each to its summary and frees it before taking the next:
// peak memory is `threads` traces plus the summaries. Files that fail to load are reported in
// `errors` ("path: why", in file order). `keep_going` (optional) is asked between files. The
// loader sets each trace's meta.source (the rank's name in every output). `error_files`
// (optional) receives the index in `files` of each error.
using RankLoader = std::function<Result<Trace>(const std::string& path)>;
std::vector<RankSummary> reduce_rank_files(const std::vector<std::string>& files,
                                           const RankLoader& load, unsigned threads,
                                           const RanksOptions& options,
                                           std::vector<std::string>& errors,
                                           const std::function<bool()>& keep_going = {},
                                           std::vector<size_t>* error_files = nullptr);

// Summaries as bytes and back (MPI gathers them to one process); lossless.
std::string encode_rank_summaries(const std::vector<RankSummary>& summaries);
Result<std::vector<RankSummary>> decode_rank_summaries(std::string_view bytes);

// ---- across ranks ------------------------------------------------------------------------------

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

// Matched calls of one collective in one message-size bucket [min_bytes, 2 * min_bytes): the
// transfer time of a call is its shortest kernel over the ranks (the last rank to arrive does
// not wait), so the bandwidth does not count time spent waiting for stragglers.
struct SizeBucket {
  std::string name;
  int64_t min_bytes = 0;
  uint64_t calls = 0;
  int64_t bytes = 0;    // per-call message bytes, summed
  int64_t time_ns = 0;  // per-call transfer time, summed
  int64_t group_size = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
};

// One metric over the ranks: the distribution that replaces one row per rank at scale.
struct RankDistribution {
  std::string metric;  // "step_mean_ns", "exposed_comm_ns", ...
  double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
  double max_over_mean = 0;
  int32_t min_rank = -1, max_rank = -1;
};

// One collective call matched across ranks (same group, same sequence number).
struct LateCall {
  std::string group;
  int64_t seq = 0;
  std::string name;
  int64_t bytes = 0;
  uint32_t ranks = 0;            // ranks that have the call
  int32_t last_rank = -1;        // arrived last (aligned clocks)
  int64_t late_by_ns = 0;        // its arrival - the previous rank's arrival
  int64_t spread_ns = 0;         // last arrival - first arrival
  int64_t aligned_start_ns = 0;  // the last arrival, on the reference rank's clock
};

struct StragglerEvidence {
  int32_t rank = -1;
  std::string reason;       // one line: what made it a straggler
  uint64_t last_count = 0;  // calls it arrived last at
  uint64_t calls = 0;       // its matched calls
  double last_share = 0;
  int64_t late_median_ns = 0;  // over the calls it was last at
  int64_t late_total_ns = 0;
  double step_excess_pct = 0;  // its step (or span) mean above the median, %
  // What the job loses to it (what keeping pace would save): late_total_ns when it is repeatedly
  // last (the others wait that long at its collectives); for a straggler by step time, its wall
  // time (steps' total, else GPU span) above the ranks' median, when that is more.
  int64_t time_lost_ns = 0;
};

struct ClockAlignment {
  // "kineto_base_time": every trace has baseTimeNanoseconds, offsets are their differences;
  // "collective_end": aligned where a matched collective ends (it ends together on every
  // rank), the median over the calls shared with the reference rank; "none": raw times.
  std::string method = "none";
  int32_t reference_rank = -1;
  // After alignment, the median over ranks of |its calls' end - the reference's end| (what the
  // alignment leaves; 0 by construction for collective_end).
  int64_t residual_ns = 0;
  std::string note;
};

struct RanksResult {
  std::vector<RankStats> ranks;  // sorted by rank (then file): one row per trace
  // Ranks with a trace (several traces of one rank count once; traces without a rank each once).
  // Collectives are matched on the first trace of each rank only.
  uint32_t distinct_ranks = 0;
  double step_mean_ns = 0;       // mean over ranks
  double load_imbalance = 0;     // max / mean of per-rank wall (step) time
  double compute_imbalance = 0;  // max / mean of per-rank compute time
  std::vector<int32_t> stragglers;
  std::vector<StragglerEvidence> straggler_evidence;
  int32_t world_size = -1;  // the traces' distributedInfo.world_size (most common), -1 if none
  std::vector<std::string> warnings;  // duplicate, missing, unknown ranks; mixed world sizes
  ClockAlignment clock;
  std::vector<RankDistribution> distributions;
  uint64_t matched_calls = 0;                // collective calls present on >= 2 ranks
  std::vector<LateCall> late_calls;          // the latest arrivals, worst first
  std::vector<CollectiveStats> collectives;  // over all ranks
  std::vector<SizeBucket> size_buckets;
  std::vector<std::string> errors;  // files that failed to load ("path: why")
};

// The cross-rank analyses over per-rank summaries (any order: sorted by rank, then source).
RanksResult analyze_rank_summaries(std::vector<RankSummary> summaries,
                                   const RanksOptions& options = {});
// Same over loaded traces (summarize_rank on each, then the above).
RanksResult analyze_ranks(const std::vector<const Trace*>& traces,
                          const RanksOptions& options = {});

// The straggler that costs the job most (largest time_lost_ns, then the lowest rank), or null.
const StragglerEvidence* worst_straggler(const RanksResult& r);

// The rank of a trace: meta.rank, else a number in the file name ("rank-3", "rank3", "_3.json").
int32_t rank_of(const Trace& trace, const std::string& path);

}  // namespace mlprof
