// Hover definitions of the numbers the report shows, by JSON key (full path first, then the last
// key). Each says what the number measures and how it is computed, in the words of the docs
// (docs/analysis.md, docs/gpu-analysis.md); the unit comes from the key's suffix (util.fmtByKey).
const DEFS = {
  // summary
  span_ns: 'Trace span: end of the last event minus start of the first.',
  begin_ns: 'Start time, relative to the first event of the trace.',
  end_ns: 'End time, relative to the first event of the trace.',
  'summary.steps': 'Profiler steps (ProfilerStep#N slices) in the trace.',
  distinct_ops: 'Distinct slice names on CPU threads and GPU streams.',
  processes: 'Processes (pid) in the trace, including GPU devices.',
  threads: 'CPU threads with at least one event.',
  gpu_streams: 'GPU streams with at least one kernel, copy or set.',
  dropped_events: 'Events the recorder had to drop (ring buffer full). Never silent: any non-zero count means the trace is incomplete.',
  'summary.events.total': 'Events mlprof kept: slices + instants + counter samples + flows + memory events.',
  'summary.events.slices': 'Duration events (ph X, or B/E pairs).',
  'summary.events.instants': 'Instant events (ph i).',
  'summary.events.counters': 'Counter samples (ph C).',
  'summary.events.flows': 'Flow events (launch -> kernel, fwd -> bwd arrows).',
  'summary.events.memory': 'Allocator events ([memory]: allocations and frees).',
  events_read: 'Events the importer read from the file, before skipping the unusable ones.',
  // steps
  'steps.count': 'Profiler steps (ProfilerStep#N).',
  mean_ns: 'Mean duration.',
  std_ns: 'Sample standard deviation of the duration.',
  median_ns: 'Median duration.',
  mad_ns: 'Median absolute deviation of the step durations.',
  min_ns: 'Shortest.',
  max_ns: 'Longest.',
  total_ns: 'Sum of the durations (for ops: inclusive of children).',
  self_ns: 'Time not covered by a child slice on the same thread (or stream).',
  p50_ns: '50th percentile (median) duration.',
  p90_ns: '90th percentile duration.',
  p99_ns: '99th percentile duration.',
  count: 'Number of occurrences.',
  percent_of_span: 'Total time as a share of the trace span.',
  outlier_steps: 'Steps whose duration differs from the median by more than 3 x 1.4826 x MAD (a robust 3-sigma rule).',
  dur_ns: 'Duration.',
  // GPU
  gpu_utilization: 'TensorBoard plugin: union of kernel time within the steps\' window divided by the window.',
  est_sm_efficiency: 'TensorBoard plugin: min(sum of concurrent kernels\' blocks per SM, 1) integrated over the window, divided by the window.',
  est_achieved_occupancy_pct: 'TensorBoard plugin: Kineto\'s "est. achieved occupancy %" weighted by each kernel\'s time in the window.',
  idle_pct: 'HTA temporal breakdown: share of the GPU span with no kernel, copy or set running.',
  compute_pct: 'HTA temporal breakdown: share of the GPU span running computation kernels.',
  non_compute_pct: 'HTA temporal breakdown: share of the GPU span running copies, sets and communication.',
  communication_pct: 'HTA temporal breakdown: share of the GPU span running communication kernels (NCCL...).',
  memcpy_pct: 'Share of the GPU span running memory copies.',
  memset_pct: 'Share of the GPU span running memory sets.',
  comm_comp_overlap_pct: 'HTA: share of communication time that overlaps computation kernels.',
  idle_ns: 'GPU time with no kernel, copy or set running.',
  compute_ns: 'GPU time running computation kernels.',
  communication_ns: 'GPU time running communication kernels.',
  cpu_busy_ns: 'Union of CPU slices over all threads (profiler whole-trace spans excluded).',
  gpu_busy_ns: 'Union of kernels, copies and sets over all streams.',
  overlap_ns: 'Time when both some CPU thread and some GPU stream are busy.',
  gpu_idle_ns: 'GPU span minus GPU busy time.',
  gpu_busy_overlapped_pct: 'Share of GPU busy time during which the CPU is also busy.',
  tensor_core_share: 'Share of computation-kernel time in kernels that use tensor cores.',
  share: 'Share of the total GPU kernel time.',
  achieved_occupancy_pct: 'Kineto\'s estimated achieved occupancy of the kernel\'s launches.',
  // memory
  peak_allocated: 'Largest amount of memory allocated at once (bytes).',
  peak_reserved: 'Largest amount the caching allocator reserved from the device.',
  final_allocated: 'Memory still allocated at the end of the trace.',
  fragmentation_at_peak_reserved: '(reserved - allocated) / reserved at the reserved peak.',
  unfreed_bytes: 'Bytes allocated inside the trace and never freed.',
  // flops
  mfu: 'Model FLOPs utilization: achieved FLOP/s over the device\'s peak.',
  total_flops: 'FLOPs of the ops with known input shapes.',
  // bottlenecks
  est_savings_ns: 'Estimated time the recommendation could save over the steps (or the span without steps).',
  est_savings_pct: 'Estimated saving as a share of the steps\' total time.',
};

export function definition(path, key) {
  return DEFS[path] || DEFS[key] || null;
}
