#include "mlprof/analyze/steps.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>

#include "analyze/name_rules.h"
#include "mlprof/analyze/gpu_events.h"
#include "mlprof/analyze/stats.h"

namespace mlprof {

using analyze_detail::contains;
using analyze_detail::is_communication_name;
using analyze_detail::is_data_loading_name;
using analyze_detail::lower;

std::string_view step_phase_name(StepPhase p) {
  static constexpr std::string_view kNames[] = {"data_loading", "forward",       "backward",
                                                "optimizer",    "communication", "other"};
  return kNames[static_cast<size_t>(p)];
}

std::string_view gpu_step_class_name(GpuStepClass c) {
  static constexpr std::string_view kNames[] = {"kernel",  "memcpy",      "memset", "communication",
                                                "runtime", "data_loader", "cpu_op", "other"};
  return kNames[static_cast<size_t>(c)];
}

std::optional<int64_t> step_number(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  size_t i = kPrefix.size();
  auto skip_space = [&] {
    while (i < name.size() && (name[i] == ' ' || name[i] == '\t')) ++i;
  };
  skip_space();
  if (i >= name.size() || name[i] != '#') return std::nullopt;
  ++i;
  skip_space();
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(name.data() + i, name.data() + name.size(), n);
  if (ec != std::errc() || ptr != name.data() + name.size() || name[i] == '-' || name[i] == '+')
    return std::nullopt;
  return n;
}

std::optional<StepPhase> classify_step_phase(std::string_view name) {
  if (step_number(name)) return std::nullopt;
  std::string l = lower(name);
  if (is_communication_name(l)) return StepPhase::kCommunication;
  if (is_data_loading_name(l)) return StepPhase::kDataLoading;
  if (contains(l, "optimizer") || contains(l, "zero_grad") || l == "step" || l == "optim" ||
      (l.size() > 5 && l.ends_with(".step")))
    return StepPhase::kOptimizer;
  if (contains(l, "backward") || contains(l, "bwd")) return StepPhase::kBackward;
  // torch.compile: the compiled graph's forward runs as the autograd Function "CompiledFunction"
  // (its backward, "CompiledFunctionBackward", matched above); "Torch-Compiled Region" wraps a
  // compiled frame (dynamo); DDP/FSDP's forward annotations contain "forward".
  if (contains(l, "forward") || contains(l, "fwd") || l.starts_with("nn.module:") ||
      l == "compiledfunction" || l.starts_with("torch-compiled region"))
    return StepPhase::kForward;
  return std::nullopt;
}

namespace {

constexpr int8_t kUnclassified = -1;
constexpr int8_t kNotComputed = -2;

// Per-StringId memo of classify_step_phase: names repeat, classification lower-cases.
class PhaseCache {
 public:
  explicit PhaseCache(const Trace& t) : trace_(t), memo_(t.strings.size(), kNotComputed) {}
  int8_t get(StringId id) {
    int8_t& m = memo_[id];
    if (m == kNotComputed) {
      auto p = classify_step_phase(trace_.str(id));
      m = p ? static_cast<int8_t>(*p) : kUnclassified;
    }
    return m;
  }

 private:
  const Trace& trace_;
  std::vector<int8_t> memo_;
};

// Which phase wins an instant where several classified slices are active. With proper nesting
// this equals "the innermost classified slice" (a collective inside backward is communication,
// zero_grad inside the optimizer annotation is optimizer), and unlike self-time sums it stays
// exact when slices overlap without nesting (converted traces, rounded legacy timestamps).
constexpr StepPhase kPhasePriority[] = {StepPhase::kCommunication, StepPhase::kDataLoading,
                                        StepPhase::kOptimizer, StepPhase::kBackward,
                                        StepPhase::kForward};

struct PhaseBoundary {
  int64_t t;
  int8_t phase;
  int8_t delta;
};

// CPU threads that run a step's backward pass off the step's thread: autograd's engine threads
// (one per device) hold "autograd::engine::evaluate_function: XBackward" slices at the top level
// while the step's thread waits in loss.backward(). Every other CPU thread of the step's process.
std::vector<uint32_t> sibling_threads(const Trace& trace, uint32_t step_track) {
  std::vector<uint32_t> out;
  for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
    if (t == step_track || trace.is_gpu_track(t)) continue;
    if (trace.tracks[t].process != trace.tracks[step_track].process) continue;
    if (trace.track_slice_begin[t] == trace.track_slice_begin[t + 1]) continue;
    out.push_back(t);
  }
  return out;
}

void split_cpu_phases(const Trace& trace, size_t step_slice, PhaseCache& cache,
                      const std::vector<uint32_t>& siblings, StepInfo& step,
                      std::vector<PhaseBoundary>& bounds) {
  const SliceTable& s = trace.slices;
  uint32_t track = s.track[step_slice];
  size_t track_end = trace.track_slice_begin[track + 1];
  int64_t begin = s.ts[step_slice], end = s.end(step_slice);
  bounds.clear();
  auto add = [&](size_t j) {
    int8_t ph = cache.get(s.name[j]);
    if (ph == kUnclassified) return;
    int64_t a = std::max(s.ts[j], begin), b = std::min(s.end(j), end);
    if (b <= a) return;
    bounds.push_back({a, ph, +1});
    bounds.push_back({b, ph, -1});
  };
  // Enclosing slices (a whole-loop annotation) and every slice starting inside the step.
  for (int32_t p = s.parent[step_slice]; p >= 0; p = s.parent[static_cast<size_t>(p)])
    add(static_cast<size_t>(p));
  for (size_t j = step_slice + 1; j < track_end && s.ts[j] < end; ++j) add(j);
  // Backward work on the other threads of the process: top-level slices classified backward and
  // every classified slice inside them (a collective inside backward is communication), clipped
  // to the step.
  const auto backward = static_cast<int8_t>(StepPhase::kBackward);
  for (uint32_t t : siblings) {
    size_t lo = trace.track_slice_begin[t], hi = trace.track_slice_begin[t + 1];
    size_t j =
        static_cast<size_t>(std::lower_bound(s.ts.begin() + static_cast<ptrdiff_t>(lo),
                                             s.ts.begin() + static_cast<ptrdiff_t>(hi), begin) -
                            s.ts.begin());
    if (j > lo) {  // the top-level slice that started before the step may reach into it
      size_t root = j - 1;
      while (s.parent[root] >= 0) root = static_cast<size_t>(s.parent[root]);
      if (s.end(root) > begin) j = root;
    }
    bool in_backward = false;
    for (; j < hi && s.ts[j] < end; ++j) {
      if (s.depth[j] == 0) in_backward = cache.get(s.name[j]) == backward;
      if (in_backward) add(j);
    }
  }
  std::sort(bounds.begin(), bounds.end(),
            [](const PhaseBoundary& x, const PhaseBoundary& y) { return x.t < y.t; });
  std::array<int32_t, kStepPhaseCount> active{};
  int64_t prev = begin, classified = 0;
  for (const PhaseBoundary& b : bounds) {
    if (b.t > prev) {
      for (StepPhase p : kPhasePriority) {
        if (active[static_cast<size_t>(p)] > 0) {
          step.phase_ns[static_cast<size_t>(p)] += b.t - prev;
          classified += b.t - prev;
          break;
        }
      }
      prev = b.t;
    }
    active[static_cast<size_t>(b.phase)] += b.delta;
  }
  step.phase_ns[static_cast<size_t>(StepPhase::kOther)] = step.dur_ns - classified;
}

// The TensorBoard plugin's communication and data-loading op names (trace.py NcclOpNameSet /
// GlooOpNameSet; EventParser._parse_step).
bool is_plugin_comm_op(std::string_view name) {
  static constexpr std::string_view kOps[] = {
      "nccl:broadcast", "nccl:reduce", "nccl:all_reduce", "nccl:all_gather", "nccl:reduce_scatter",
      "gloo:broadcast", "gloo:reduce", "gloo:all_reduce", "gloo:all_gather", "gloo:reduce_scatter"};
  for (auto o : kOps)
    if (name == o) return true;
  return false;
}
bool is_plugin_data_loader(std::string_view name) {
  return (name.starts_with("enumerate(DataLoader)#") && name.ends_with(".__next__")) ||
         name.starts_with("enumerate(DataPipe)#");
}
// The plugin's runtime categories (trace.py EventTypeMap: cuda_driver is not one).
bool is_plugin_runtime_cat(std::string_view l) {
  return l == "runtime" || l == "cuda_runtime" || l == "mtia_runtime" || l == "glow_runtime" ||
         l == "xpu_runtime" || l == "privateuse1_runtime";
}

// TensorBoard-plugin step class of one slice; -1 when the slice takes no part. Host slices as the
// plugin classifies them (by category: runtime; cpu_op/operator/user_annotation/python ops are
// DataLoader, communication or CPU op by name; python_function, Trace, cuda_driver and
// cuda_sync take no part). GPU-track work by kind; two deliberate differences, documented in
// docs/analysis.md: a kernel whose name says communication (NCCL kernels launched by
// record_param_comms or c10d ops, which the plugin does not know) is communication, and
// gpu_user_annotation ranges (markers, not work; the plugin counts them as CPU op) take no part.
int8_t gpu_class_of(const Trace& trace, size_t i, std::string_view cat, std::string_view name,
                    bool exact) {
  using C = GpuStepClass;
  auto as = [](C c) { return static_cast<int8_t>(c); };
  if (exact && trace.is_gpu_track(trace.slices.track[i])) {
    std::string lc = lower(cat);
    if (lc == "kernel") return as(C::kKernel);
    if (lc == "memcpy" || lc == "gpu_memcpy") return as(C::kMemcpy);
    if (lc == "memset" || lc == "gpu_memset") return as(C::kMemset);
    if (lc != "gpu_user_annotation") return -1;
    // The plugin reads gpu_user_annotation as a user annotation: a CPU op below.
  } else if (trace.is_gpu_track(trace.slices.track[i])) {
    GpuWorkKind k = gpu_work_kind(cat, name);
    if (k == GpuWorkKind::kAnnotation || k == GpuWorkKind::kSync) return -1;
    if (k == GpuWorkKind::kMemcpy) return as(C::kMemcpy);
    if (k == GpuWorkKind::kMemset) return as(C::kMemset);
    if (is_communication_name(lower(name))) return as(C::kCommunication);
    return as(C::kKernel);
  }
  std::string lc = lower(cat);
  if (is_plugin_runtime_cat(lc)) return as(C::kRuntime);
  if (lc != "cpu_op" && lc != "operator" && lc != "user_annotation" && lc != "python" &&
      lc != "gpu_user_annotation")
    return -1;
  if (step_number(name)) return -1;
  if (is_plugin_data_loader(name)) return as(C::kDataLoader);
  if (is_plugin_comm_op(name)) return as(C::kCommunication);
  return as(C::kCpuOp);
}

int64_t arg_int_of(const Trace& trace, size_t i, StringId key) {
  if (key == StringPool::kNotFound) return -1;
  const Arg* a = trace.find_arg(trace.slices.args_begin[i], trace.slices.args_count[i], key);
  return a ? a->as_int().value_or(-1) : -1;
}

void split_gpu_classes(const Trace& trace, StepsResult& r, bool exact) {
  const SliceTable& s = trace.slices;
  if (r.steps.empty()) return;
  int64_t lo = r.steps.front().gpu_begin_ns;
  int64_t hi = lo;
  for (const StepInfo& st : r.steps) hi = std::max(hi, st.gpu_begin_ns + st.gpu_dur_ns);
  struct Boundary {
    int64_t t;
    int8_t cls;
    int8_t delta;
  };
  // Kernels launched by the plugin's NCCL ops (same external id) are communication.
  std::vector<int64_t> nccl_ext;
  StringId key_ext = trace.strings.find("External id");
  StringId key_ext_lower = trace.strings.find("external id");
  for (size_t i = 0; i < s.size(); ++i) {
    if (trace.is_gpu_track(s.track[i])) continue;
    std::string_view n = trace.str(s.name[i]);
    if (!n.starts_with("nccl:") || !is_plugin_comm_op(n)) continue;
    int64_t e = arg_int_of(trace, i, key_ext);
    if (e < 0) e = arg_int_of(trace, i, key_ext_lower);
    if (e >= 0) nccl_ext.push_back(e);
  }
  std::sort(nccl_ext.begin(), nccl_ext.end());
  std::vector<Boundary> bounds;
  std::vector<std::vector<int8_t>> memo_by_cat;  // [cat id] -> per-name memo (lazy)
  std::vector<int32_t> cat_slot(trace.strings.size(), -1);
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.dur[i] <= 0 || s.end(i) <= lo || s.ts[i] >= hi) continue;
    int32_t& slot = cat_slot[s.cat[i]];
    if (slot < 0) {
      slot = static_cast<int32_t>(memo_by_cat.size());
      memo_by_cat.emplace_back(trace.strings.size(), kNotComputed);
    }
    int8_t& memo = memo_by_cat[static_cast<size_t>(slot)][s.name[i]];
    if (memo == kNotComputed)
      memo = gpu_class_of(trace, i, trace.str(s.cat[i]), trace.str(s.name[i]), exact);
    int8_t cls = memo;
    if (cls < 0) continue;
    if (cls == static_cast<int8_t>(GpuStepClass::kKernel) && !nccl_ext.empty()) {
      int64_t e = arg_int_of(trace, i, key_ext_lower);
      if (e < 0) e = arg_int_of(trace, i, key_ext);
      if (e >= 0 && std::binary_search(nccl_ext.begin(), nccl_ext.end(), e))
        cls = static_cast<int8_t>(GpuStepClass::kCommunication);
    }
    bounds.push_back({std::max(s.ts[i], lo), cls, +1});
    bounds.push_back({std::min(s.end(i), hi), cls, -1});
  }
  std::sort(bounds.begin(), bounds.end(),
            [](const Boundary& a, const Boundary& b) { return a.t < b.t; });
  std::array<int32_t, kGpuStepClassCount> active{};
  size_t step = 0;
  int64_t prev = lo;
  auto step_end = [&](size_t k) { return r.steps[k].gpu_begin_ns + r.steps[k].gpu_dur_ns; };
  auto attribute = [&](int64_t a, int64_t b) {
    if (b <= a) return;
    int top = -1;
    for (size_t c = 0; c < kGpuStepClassCount; ++c)
      if (active[c] > 0) {
        top = static_cast<int>(c);
        break;
      }
    if (top < 0) return;  // "other" is the remainder, computed below
    while (step < r.steps.size() && step_end(step) <= a) ++step;
    for (size_t k = step; k < r.steps.size() && r.steps[k].gpu_begin_ns < b; ++k) {
      int64_t overlap = std::min(b, step_end(k)) - std::max(a, r.steps[k].gpu_begin_ns);
      if (overlap > 0) r.steps[k].gpu_class_ns[static_cast<size_t>(top)] += overlap;
    }
  };
  for (const Boundary& b : bounds) {
    attribute(prev, b.t);
    prev = b.t;
    active[static_cast<size_t>(b.cls)] += b.delta;
  }
  for (StepInfo& st : r.steps) {
    int64_t used = 0;
    for (size_t c = 0; c + 1 < kGpuStepClassCount; ++c) used += st.gpu_class_ns[c];
    st.gpu_class_ns[static_cast<size_t>(GpuStepClass::kOther)] =
        std::max<int64_t>(0, st.gpu_dur_ns - used);
  }
}

// The engine's iteration annotation of a step: the marker itself, else the first one inside it
// on its thread (a ProfilerStep or user annotation around vLLM's execute_* or SGLang's step[...]).
std::optional<ServingIteration> serving_fields(const Trace& trace, size_t step) {
  const SliceTable& s = trace.slices;
  auto parse = [&](size_t i) -> std::optional<ServingIteration> {
    std::string_view n = trace.str(s.name[i]);
    if (n.starts_with("execute_")) return parse_vllm_iteration(n);
    if (n.starts_with("step[")) return parse_sglang_iteration(n);
    return std::nullopt;
  };
  if (auto it = parse(step)) return it;
  size_t track_end = trace.track_slice_begin[s.track[step] + 1];
  for (size_t j = step + 1; j < track_end && s.ts[j] < s.end(step); ++j)
    if (auto it = parse(j)) return it;
  return std::nullopt;
}

// Steps during which a graph was captured (cuda/hipStreamBeginCapture on a host thread).
void mark_captures(const Trace& trace, StepsResult& r) {
  const SliceTable& s = trace.slices;
  std::vector<int8_t> memo(trace.strings.size(), -1);
  std::vector<int64_t> at;
  for (size_t i = 0; i < s.size(); ++i) {
    if (trace.is_gpu_track(s.track[i])) continue;
    int8_t& m = memo[s.name[i]];
    if (m < 0) m = contains(trace.str(s.name[i]), "StreamBeginCapture") ? 1 : 0;
    if (m == 1) at.push_back(s.ts[i]);
  }
  std::sort(at.begin(), at.end());
  for (StepInfo& st : r.steps) {
    auto it = std::lower_bound(at.begin(), at.end(), st.begin_ns);
    st.capture = it != at.end() && *it < st.begin_ns + st.dur_ns;
  }
}

// The union of GPU work (kernels, copies, sets; not annotations or syncs) and its length inside
// any window.
class GpuBusy {
 public:
  explicit GpuBusy(const Trace& trace) {
    const SliceTable& s = trace.slices;
    std::vector<std::pair<int64_t, int64_t>> iv;
    for (size_t i = 0; i < s.size(); ++i) {
      if (!trace.is_gpu_track(s.track[i]) || s.dur[i] <= 0) continue;
      GpuWorkKind k = gpu_work_kind(trace.str(s.cat[i]), trace.str(s.name[i]));
      if (k == GpuWorkKind::kAnnotation || k == GpuWorkKind::kSync) continue;
      iv.emplace_back(s.ts[i], s.end(i));
    }
    std::sort(iv.begin(), iv.end());
    for (const auto& [a, b] : iv) {
      if (!merged_.empty() && a <= merged_.back().second) {
        merged_.back().second = std::max(merged_.back().second, b);
      } else {
        merged_.emplace_back(a, b);
      }
    }
  }
  int64_t in(int64_t lo, int64_t hi) const {
    int64_t sum = 0;
    auto it = std::lower_bound(merged_.begin(), merged_.end(), std::make_pair(lo, INT64_MIN));
    if (it != merged_.begin()) --it;
    for (; it != merged_.end() && it->first < hi; ++it)
      sum += std::max<int64_t>(0, std::min(hi, it->second) - std::max(lo, it->first));
    return sum;
  }

 private:
  std::vector<std::pair<int64_t, int64_t>> merged_;
};

// No iteration markers: the TensorBoard plugin's one step, spanning the CPU ops (host slices but
// Kineto's profiler span) and extended to the GPU work they launched.
void trace_span_window(const Trace& trace, StepsResult& r) {
  const SliceTable& s = trace.slices;
  const StringId cat_trace = trace.strings.find(kProfilerSpanCategory);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (size_t i = 0; i < s.size(); ++i) {
    if (trace.is_gpu_track(s.track[i]) || s.cat[i] == cat_trace) continue;
    lo = std::min(lo, s.ts[i]);
    hi = std::max(hi, s.end(i));
  }
  if (lo > hi) {
    r.source = StepSource::kNone;
    return;
  }
  StepInfo st;
  st.name = "trace span (no iteration markers)";
  st.begin_ns = lo;
  st.dur_ns = hi - lo;
  st.phase_ns[static_cast<size_t>(StepPhase::kOther)] = st.dur_ns;
  if (has_gpu(trace)) {
    DeviceStepWindows w = device_step_windows(trace, {{lo, hi}});
    st.gpu_begin_ns = w.windows[0].first;
    st.gpu_dur_ns = w.windows[0].second - w.windows[0].first;
    st.device_events = w.device_events[0];
    st.gpu_busy_ns = GpuBusy(trace).in(st.gpu_begin_ns, st.gpu_begin_ns + st.gpu_dur_ns);
  }
  r.span = std::move(st);
}

// Warm-up: the leading iterations (graph captures among them skipped) that take over 1.5x the
// median host time of their phase (medians over the iterations that capture nothing); captures
// anywhere are out of the steady state too. Then per phase: distributions over the steady-state
// iterations.
void steady_state(StepsResult& r) {
  constexpr double kWarmupFactor = 1.5;
  std::array<std::vector<double>, kIterationPhaseCount> by_phase;
  auto phase = [](const StepInfo& st) {
    return static_cast<size_t>(st.serving ? st.serving->phase : IterationPhase::kUnknown);
  };
  for (const StepInfo& st : r.steps)
    if (!st.capture) by_phase[phase(st)].push_back(static_cast<double>(st.dur_ns));
  std::array<double, kIterationPhaseCount> med{};
  for (size_t p = 0; p < kIterationPhaseCount; ++p) med[p] = stats::median(by_phase[p]);
  size_t k = 0;
  for (; k < r.steps.size(); ++k) {
    StepInfo& st = r.steps[k];
    if (st.capture) continue;  // counted as a capture, not as warm-up
    size_t p = phase(st);
    bool slow = by_phase[p].size() >= 3 && static_cast<double>(st.dur_ns) > kWarmupFactor * med[p];
    if (!slow) break;
    st.warmup = true;
    ++r.warmup_count;
  }
  r.steady_first = k;
  for (const StepInfo& st : r.steps) {
    if (st.capture) ++r.capture_count;
    if (!st.warmup && !st.capture) ++r.steady_count;
  }
  for (size_t p = 0; p < kIterationPhaseCount; ++p) {
    std::vector<double> host, busy, idle, batch;
    PhaseStats ps;
    ps.phase = static_cast<IterationPhase>(p);
    for (const StepInfo& st : r.steps) {
      if (st.warmup || st.capture || phase(st) != p) continue;
      host.push_back(static_cast<double>(st.dur_ns));
      if (st.gpu_busy_ns >= 0) {
        busy.push_back(static_cast<double>(st.gpu_busy_ns));
        idle.push_back(static_cast<double>(st.gpu_dur_ns - st.gpu_busy_ns));
      }
      if (st.serving && st.serving->batch_size >= 0)
        batch.push_back(static_cast<double>(st.serving->batch_size));
      if (st.serving) {
        ps.tokens += std::max<int64_t>(0, st.serving->context_tokens) +
                     std::max<int64_t>(0, st.serving->generation_tokens);
      }
    }
    if (host.empty()) continue;
    ps.count = host.size();
    std::sort(host.begin(), host.end());
    ps.host_mean_ns = stats::mean(host);
    ps.host_p50_ns = stats::quantile_sorted(host, 0.5);
    ps.host_p90_ns = stats::quantile_sorted(host, 0.9);
    ps.host_min_ns = static_cast<int64_t>(host.front());
    ps.host_max_ns = static_cast<int64_t>(host.back());
    if (!busy.empty()) {
      std::sort(busy.begin(), busy.end());
      ps.gpu_busy_mean_ns = stats::mean(busy);
      ps.gpu_busy_p50_ns = stats::quantile_sorted(busy, 0.5);
      ps.idle_mean_ns = stats::mean(idle);
    }
    if (!batch.empty()) {
      ps.batch_mean = stats::mean(batch);
      ps.batch_min = static_cast<int64_t>(*std::min_element(batch.begin(), batch.end()));
      ps.batch_max = static_cast<int64_t>(*std::max_element(batch.begin(), batch.end()));
    }
    r.phases.push_back(ps);
  }
}

}  // namespace

DeviceStepWindows device_step_windows(const Trace& trace,
                                      const std::vector<std::pair<int64_t, int64_t>>& host) {
  DeviceStepWindows out;
  out.windows = host;
  out.device_events.assign(host.size(), 0);
  out.kept = host.size();
  if (host.empty()) return out;
  const SliceTable& s = trace.slices;
  StringId key_corr = trace.strings.find("correlation");
  if (key_corr == StringPool::kNotFound) return out;
  // GPU work (kernels, memcpys, memsets) by correlation.
  std::vector<uint32_t> device;  // slices
  std::unordered_map<int64_t, std::vector<uint32_t>> by_corr;
  std::vector<int8_t> cat_is_runtime(trace.strings.size(), -1);
  std::vector<uint32_t> runtimes;
  for (size_t i = 0; i < s.size(); ++i) {
    if (trace.is_gpu_track(s.track[i])) {
      GpuWorkKind k = gpu_work_kind(trace.str(s.cat[i]), trace.str(s.name[i]));
      if (k == GpuWorkKind::kAnnotation || k == GpuWorkKind::kSync) continue;
      device.push_back(static_cast<uint32_t>(i));
      int64_t c = arg_int_of(trace, i, key_corr);
      if (c >= 0) by_corr[c].push_back(static_cast<uint32_t>(device.size() - 1));
      continue;
    }
    int8_t& rt = cat_is_runtime[s.cat[i]];
    if (rt < 0) rt = is_plugin_runtime_cat(lower(trace.str(s.cat[i]))) ? 1 : 0;
    if (rt == 1) runtimes.push_back(static_cast<uint32_t>(i));
  }
  std::stable_sort(runtimes.begin(), runtimes.end(),
                   [&](uint32_t a, uint32_t b) { return s.ts[a] < s.ts[b]; });
  // The plugin's two-way merge of runtime calls (by start) against host steps.
  constexpr int64_t kNone = INT64_MAX;
  std::vector<std::pair<int64_t, int64_t>> dev(host.size(), {kNone, INT64_MIN});
  std::vector<uint8_t> matched(device.size(), 0);
  bool any_matched = false;
  size_t i_step = 0, i_rt = 0;
  int64_t dmin = kNone, dmax = INT64_MIN;
  while (i_step < host.size() && i_rt < runtimes.size()) {
    uint32_t rt = runtimes[i_rt];
    int64_t rs = s.ts[rt], re = s.end(rt);
    if (rs < host[i_step].first) {
      ++i_rt;
    } else if (re <= host[i_step].second) {
      int64_t c = arg_int_of(trace, rt, key_corr);
      auto it = c >= 0 ? by_corr.find(c) : by_corr.end();
      if (it != by_corr.end()) {
        for (uint32_t d : it->second) {
          dmin = std::min(dmin, s.ts[device[d]]);
          dmax = std::max(dmax, s.end(device[d]));
          matched[d] = 1;
          any_matched = true;
          ++out.device_events[i_step];
        }
      }
      ++i_rt;
    } else if (rs < host[i_step].second) {
      ++i_rt;
    } else {
      dev[i_step++] = {dmin, dmax};
      dmin = kNone;
      dmax = INT64_MIN;
    }
  }
  while (i_step < host.size()) {
    dev[i_step++] = {dmin, dmax};
    dmin = kNone;
    dmax = INT64_MIN;
  }
  if (!any_matched) return out;
  out.uses_gpu = true;
  int64_t prev_end = host[0].first;
  if (dev[0].first != kNone) {
    for (size_t d = 0; d < device.size(); ++d)
      if (!matched[d] && s.end(device[d]) < dev[0].first)
        prev_end = std::max(prev_end, s.end(device[d]));
  }
  for (size_t k = 0; k < host.size(); ++k) {
    int64_t b = std::max(prev_end, host[k].first);
    int64_t e = host[k].second;
    if (dev[k].first == kNone) {
      e = std::max(e, b);
    } else {
      e = std::max(e, dev[k].second);
      if (e < b) e = b;
    }
    out.windows[k] = {b, e};
    prev_end = e;
  }
  // Tail steps that launched no GPU work, or under 80% of the previous step's, are left out.
  if (host.size() > 1) {
    size_t last = host.size();
    while (last > 0 && out.device_events[last - 1] == 0) --last;
    if (last > 0) {
      size_t keep = last;
      size_t i = last - 1;
      if (i > 0 && static_cast<double>(out.device_events[i - 1]) * 0.8 >
                       static_cast<double>(out.device_events[i]))
        keep = i;
      out.kept = keep;
    }
  }
  return out;
}

StepsResult analyze_steps(const Trace& trace, const StepsOptions& options) {
  StepsResult r;
  const SliceTable& s = trace.slices;
  StepMarkers markers = step_markers(trace, options.step_annotation);
  r.source = markers.source;
  r.step_annotation = options.step_annotation;
  const std::vector<size_t>& step_slices = markers.slices;
  if (step_slices.empty()) {
    if (r.source == StepSource::kTraceSpan) trace_span_window(trace, r);
    return r;
  }

  PhaseCache cache(trace);
  std::vector<PhaseBoundary> bounds;
  std::vector<uint32_t> siblings;
  uint32_t siblings_of = UINT32_MAX;
  for (size_t i : step_slices) {
    if (s.track[i] != siblings_of) {
      siblings_of = s.track[i];
      siblings = sibling_threads(trace, siblings_of);
    }
    StepInfo st;
    st.name = std::string(trace.str(s.name[i]));
    st.number = markers.numbers[r.steps.size()];
    st.begin_ns = s.ts[i];
    st.dur_ns = s.dur[i];
    split_cpu_phases(trace, i, cache, siblings, st, bounds);
    st.serving = serving_fields(trace, i);
    r.steps.push_back(std::move(st));
  }
  mark_captures(trace, r);
  r.has_gpu = has_gpu(trace);
  if (r.has_gpu) {
    std::vector<std::pair<int64_t, int64_t>> host;
    for (const StepInfo& st : r.steps) host.emplace_back(st.begin_ns, st.begin_ns + st.dur_ns);
    DeviceStepWindows w = device_step_windows(trace, host);
    for (size_t k = 0; k < r.steps.size(); ++k) {
      StepInfo& st = r.steps[k];
      st.gpu_begin_ns = w.windows[k].first;
      st.gpu_dur_ns = w.windows[k].second - w.windows[k].first;
      st.device_events = w.device_events[k];
      st.plugin_dropped = k >= w.kept;
    }
    r.plugin_steps = w.kept;
    split_gpu_classes(trace, r, options.tb_plugin_classes);
    r.tb_plugin_classes = options.tb_plugin_classes;
    GpuBusy busy(trace);
    for (StepInfo& st : r.steps)
      st.gpu_busy_ns = busy.in(st.gpu_begin_ns, st.gpu_begin_ns + st.gpu_dur_ns);
  }
  steady_state(r);

  std::vector<double> durs;
  durs.reserve(r.steps.size());
  r.min_ns = INT64_MAX;
  r.max_ns = INT64_MIN;
  for (const StepInfo& st : r.steps) {
    durs.push_back(static_cast<double>(st.dur_ns));
    r.total_ns += st.dur_ns;
    r.min_ns = std::min(r.min_ns, st.dur_ns);
    r.max_ns = std::max(r.max_ns, st.dur_ns);
    for (size_t p = 0; p < kStepPhaseCount; ++p) r.phase_total_ns[p] += st.phase_ns[p];
    for (size_t c = 0; c < kGpuStepClassCount; ++c) r.gpu_class_total_ns[c] += st.gpu_class_ns[c];
    r.gpu_total_ns += st.gpu_dur_ns;
    if (r.has_gpu && !st.plugin_dropped) {
      for (size_t c = 0; c < kGpuStepClassCount; ++c)
        r.plugin_class_total_ns[c] += st.gpu_class_ns[c];
      r.plugin_total_ns += st.gpu_dur_ns;
    }
  }
  r.mean_ns = stats::mean(durs);
  r.std_ns = std::sqrt(stats::variance(durs));
  r.median_ns = stats::median(durs);
  r.mad_ns = stats::mad(durs);
  double limit = kStepOutlierMads * 1.4826 * r.mad_ns;
  if (r.steps.size() >= 3 && r.mad_ns > 0) {
    for (StepInfo& st : r.steps) {
      if (std::fabs(static_cast<double>(st.dur_ns) - r.median_ns) > limit) {
        st.outlier = true;
        r.outlier_steps.push_back(st.number);
      }
    }
  }
  return r;
}

}  // namespace mlprof
