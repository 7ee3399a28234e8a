#include "mlprof/analyze/gpu_events.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "analyze/trace_memo.h"
#include "mlprof/analyze/steps.h"

namespace mlprof {

bool has_gpu(const Trace& trace) {
  for (uint32_t t = 0; t < trace.tracks.size(); ++t)
    if (trace.is_gpu_track(t)) return true;
  return false;
}

namespace {

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// The same GPU-event classification for every slice of a name/category pair, memoized by the
// (cat, name) StringIds so the string checks run once per distinct kernel name.
struct SliceClass {
  GpuWorkKind kind;
  KernelType type;
};

}  // namespace

int64_t time_base_start(const GpuEvents& ev, int64_t ts_ns) {
  return ev.hta_compatible ? ceil_div(ts_ns, 1000) * 1000 : ts_ns;
}
int64_t time_base_end(const GpuEvents& ev, int64_t end_ns) {
  return ev.hta_compatible ? floor_div(end_ns, 1000) * 1000 : end_ns;
}

namespace {

// HTA reads Kineto's microsecond floats into doubles: at epoch-scale timestamps (~1.7e15 us)
// a double only resolves 0.25 us, so its rounding sees the quantized value. Reproduce that:
// the nearest double to ns / 1000, then start = ceil(ts), end = floor(ts + dur).
double us_double(int64_t ns) {
  return static_cast<double>(ns / 1000) + static_cast<double>(ns % 1000) / 1000.0;
}

void hta_interval(int64_t ts_ns, int64_t dur_ns, int64_t& start, int64_t& end) {
  double ts = us_double(ts_ns);
  double dur = us_double(dur_ns);
  start = static_cast<int64_t>(std::ceil(ts)) * 1000;
  end = static_cast<int64_t>(std::floor(ts + dur)) * 1000;
}

}  // namespace

namespace {

int64_t slice_arg_int(const Trace& trace, size_t i, StringId key) {
  if (key == StringPool::kNotFound) return -1;
  const SliceTable& s = trace.slices;
  const Arg* a = trace.find_arg(s.args_begin[i], s.args_count[i], key);
  if (a == nullptr) return -1;
  return a->as_int().value_or(-1);
}

// Profiler steps (HTA drops the last one when there are two or more): in HTA mode with two or
// more steps, the last one's start (CPU events from it on are dropped) and the steps kept; else
// INT64_MAX.
int64_t hta_last_step_start(const Trace& trace, const GpuEventsOptions& options, GpuEvents& out) {
  const SliceTable& s = trace.slices;
  int64_t last_step_start = INT64_MAX;
  std::vector<std::pair<int64_t, int64_t>> steps;  // (start, number)
  for (size_t i = 0; i < s.size(); ++i) {
    if (trace.is_gpu_track(s.track[i])) continue;
    int64_t n = step_number(trace.str(s.name[i])).value_or(-1);
    if (n >= 0) steps.emplace_back(s.ts[i], n);
  }
  if (options.hta_compatible && steps.size() >= 2) {
    last_step_start = INT64_MIN;
    for (const auto& st : steps) last_step_start = std::max(last_step_start, st.first);
    out.hta_filtered = true;
    out.cpu_window_end = last_step_start;
    for (const auto& st : steps) {
      if (st.first < last_step_start) out.kept_steps.push_back(st.second);
    }
    std::sort(out.kept_steps.begin(), out.kept_steps.end());
  }
  return last_step_start;
}

// The launch calls (runtime/driver slices on CPU threads) by correlation, and by the GPU slice an
// ac2g flow links them to.
struct LaunchIndex {
  std::unordered_map<int64_t, uint32_t> by_corr;
  std::unordered_map<uint32_t, uint32_t> by_flow;
};

LaunchIndex index_launches(const Trace& trace, const GpuEventsOptions& options,
                           StringId key_correlation, int64_t last_step_start, GpuEvents& out) {
  const SliceTable& s = trace.slices;
  LaunchIndex li;
  // Launch calls by correlation (runtime/driver slices on CPU threads).
  std::unordered_map<int64_t, uint32_t>& launch_by_corr = li.by_corr;
  std::vector<uint8_t> is_runtime_cat(trace.strings.size() + 1, 2);  // 2 = unknown
  auto runtime_cat = [&](StringId cat) {
    if (cat >= is_runtime_cat.size()) return is_runtime_category(trace.str(cat));
    if (is_runtime_cat[cat] == 2) is_runtime_cat[cat] = is_runtime_category(trace.str(cat)) ? 1 : 0;
    return is_runtime_cat[cat] == 1;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    if (trace.is_gpu_track(s.track[i]) || !runtime_cat(s.cat[i])) continue;
    int64_t corr = slice_arg_int(trace, i, key_correlation);
    if (corr < 0) continue;
    if (s.ts[i] >= last_step_start) continue;  // HTA: dropped with the last step
    launch_by_corr.emplace(corr, static_cast<uint32_t>(i));
    out.launch_slices.push_back(static_cast<uint32_t>(i));
  }

  // Traces without correlation args still link launches to kernels with ac2g flows (HTA reads
  // only the args, so HTA mode does too).
  std::unordered_map<uint32_t, uint32_t>& launch_by_flow = li.by_flow;
  if (!options.hta_compatible) {
    const FlowTable& f = trace.flows;
    for (size_t k = 0; k < f.size(); ++k) {
      int32_t src = f.src_slice[k], dst = f.dst_slice[k];
      if (src < 0 || dst < 0 || !trace.is_gpu_track(f.dst_track[k]) ||
          trace.is_gpu_track(f.src_track[k]) || !runtime_cat(s.cat[src]) ||
          s.ts[src] >= last_step_start) {
        continue;
      }
      launch_by_flow.emplace(static_cast<uint32_t>(dst), static_cast<uint32_t>(src));
    }
  }
  return li;
}

// Slice i's work kind and kernel type, memoized by its (cat, name) StringIds.
inline SliceClass classify(const Trace& trace, std::unordered_map<uint64_t, SliceClass>& cache,
                           size_t i, bool hta_compatible) {
  const SliceTable& s = trace.slices;
  uint64_t ck = (static_cast<uint64_t>(s.cat[i]) << 32) | s.name[i];
  auto it = cache.find(ck);
  if (it == cache.end()) {
    std::string_view cat = trace.str(s.cat[i]);
    std::string_view name = trace.str(s.name[i]);
    SliceClass c;
    c.kind = cat == "cuda_sync" ? GpuWorkKind::kSync : gpu_work_kind(cat, name);
    c.type = c.kind == GpuWorkKind::kSync ? KernelType::kSync : kernel_type(name, hta_compatible);
    it = cache.emplace(ck, c).first;
  }
  return it->second;
}

GpuEvents build_gpu_events(const Trace& trace, const GpuEventsOptions& options) {
  GpuEvents out;
  out.hta_compatible = options.hta_compatible;
  const SliceTable& s = trace.slices;
  const StringId key_correlation = trace.strings.find("correlation");
  const StringId key_stream = trace.strings.find("stream");
  const StringId key_device = trace.strings.find("device");
  const StringId cat_sync = trace.strings.find("cuda_sync");
  const StringId cat_mtia = trace.strings.find("mtia_ccp_events");
  auto arg_int = [&](size_t i, StringId key) { return slice_arg_int(trace, i, key); };

  const int64_t last_step_start = hta_last_step_start(trace, options, out);
  const LaunchIndex launches =
      index_launches(trace, options, key_correlation, last_step_start, out);
  const std::unordered_map<int64_t, uint32_t>& launch_by_corr = launches.by_corr;
  const std::unordered_map<uint32_t, uint32_t>& launch_by_flow = launches.by_flow;
  std::unordered_map<uint64_t, SliceClass> class_cache;

  for (size_t i = 0; i < s.size(); ++i) {
    uint32_t track = s.track[i];
    // HTA takes any event with args.stream as GPU activity: cuda_sync events of no stream
    // (Context Sync, tid 2^32-1) sit on CPU-looking tracks but count there.
    // MTIA accelerator events (cat mtia_ccp_events, pid = device) are GPU work on tracks the
    // importer does not know as GPU streams.
    bool stray = false;
    if (!trace.is_gpu_track(track)) {
      bool sync = options.hta_compatible && s.cat[i] == cat_sync && arg_int(i, key_stream) >= 0;
      if (!sync && s.cat[i] != cat_mtia) continue;
      stray = true;
    }
    const SliceClass c = classify(trace, class_cache, i, options.hta_compatible);
    if (c.kind == GpuWorkKind::kAnnotation) continue;
    if (c.kind == GpuWorkKind::kSync && !options.hta_compatible) continue;

    GpuEvent e;
    e.slice = static_cast<uint32_t>(i);
    e.kind = c.kind;
    e.type = c.type;
    const Track& t = trace.tracks[track];
    e.device = t.device;
    e.stream = t.stream;
    if (stray) {
      int64_t device = arg_int(i, key_device);
      e.device = static_cast<int32_t>(device >= 0 ? device : std::max<int64_t>(0, t.pid));
      int64_t stream = arg_int(i, key_stream);
      e.stream = stream >= 0 ? stream : t.tid;
    }
    if (options.hta_compatible) {
      // HTA reads the stream from args, not from the tid, and a row without one is not GPU
      // work to it (its GPU rows are stream != -1): MTIA's dma_request events on a track of
      // their own carry no stream and stay out of every HTA-mode figure.
      int64_t st = arg_int(i, key_stream);
      if (st < 0) {
        ++out.hta_no_stream;
        continue;
      }
      e.stream = st;
    }
    e.correlation = arg_int(i, key_correlation);
    if (e.correlation >= 0) {
      auto l = launch_by_corr.find(e.correlation);
      if (l != launch_by_corr.end()) e.launch = static_cast<int32_t>(l->second);
    }
    if (e.launch < 0 && !launch_by_flow.empty()) {
      auto l = launch_by_flow.find(static_cast<uint32_t>(i));
      if (l != launch_by_flow.end()) e.launch = static_cast<int32_t>(l->second);
    }
    if (out.hta_filtered && e.launch < 0) continue;
    if (options.hta_compatible) {
      hta_interval(s.ts[i], s.dur[i], e.ts, e.end);
      if (e.launch >= 0) hta_interval(s.ts[e.launch], s.dur[e.launch], e.launch_ts, e.launch_end);
    } else {
      e.ts = s.ts[i];
      e.end = s.ts[i] + s.dur[i];
      if (e.launch >= 0) {
        e.launch_ts = s.ts[e.launch];
        e.launch_end = s.ts[e.launch] + s.dur[e.launch];
      }
    }
    out.events.push_back(e);
  }
  std::sort(out.events.begin(), out.events.end(), [](const GpuEvent& a, const GpuEvent& b) {
    return a.ts != b.ts ? a.ts < b.ts : (a.end != b.end ? a.end < b.end : a.slice < b.slice);
  });
  return out;
}

}  // namespace

std::shared_ptr<const GpuEvents> shared_gpu_events(const Trace& trace,
                                                   const GpuEventsOptions& options) {
  TraceMemo* memo = TraceMemo::current();
  if (memo == nullptr) return std::make_shared<const GpuEvents>(build_gpu_events(trace, options));
  return memo->get<GpuEvents>(
      trace, options.hta_compatible ? MemoTable::kGpuEventsHta : MemoTable::kGpuEvents, nullptr,
      [&] { return build_gpu_events(trace, options); });
}

std::shared_ptr<const GpuEvents> shared_gpu_events(const Trace& trace) {
  return shared_gpu_events(trace, GpuEventsOptions{});
}

// A copy of the shared table (callers that edit it).
GpuEvents collect_gpu_events(const Trace& trace, const GpuEventsOptions& options) {
  return *shared_gpu_events(trace, options);
}

}  // namespace mlprof
