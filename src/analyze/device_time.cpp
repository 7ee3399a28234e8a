#include "mlprof/analyze/device_time.h"

#include <unordered_map>

#include "analyze/trace_memo.h"

namespace mlprof {

namespace {

int64_t ext_id(const Trace& trace, size_t i, StringId a, StringId b) {
  const SliceTable& s = trace.slices;
  for (StringId k : {a, b}) {
    if (k == StringPool::kNotFound) continue;
    if (const Arg* x = trace.find_arg(s.args_begin[i], s.args_count[i], k))
      if (auto v = x->as_int()) return *v;
  }
  return -1;
}

}  // namespace

OpAttribution::OpAttribution(const Trace& trace) : trace_(trace) {
  const SliceTable& s = trace.slices;
  key_a_ = trace.strings.find("External id");
  key_b_ = trace.strings.find("external id");
  if (key_a_ == StringPool::kNotFound && key_b_ == StringPool::kNotFound) return;
  std::vector<int8_t> runtime_cat(trace.strings.size(), -1);
  for (size_t i = 0; i < s.size(); ++i) {
    if (trace.is_gpu_track(s.track[i])) continue;
    int8_t& r = runtime_cat[s.cat[i]];
    if (r < 0) r = is_runtime_category(trace.str(s.cat[i])) ? 1 : 0;
    if (r == 1) continue;
    int64_t e = ext_id(trace, i, key_a_, key_b_);
    if (e > 0) by_ext_.emplace(e, static_cast<int32_t>(i));  // the first slice with the id
  }
}

int32_t OpAttribution::op_of(const GpuEvent& e) const {
  if (e.launch < 0) return -1;
  const SliceTable& s = trace_.slices;
  size_t launch = static_cast<size_t>(e.launch);
  if (!by_ext_.empty()) {
    int64_t x = ext_id(trace_, launch, key_a_, key_b_);
    auto it = x > 0 ? by_ext_.find(x) : by_ext_.end();
    if (it != by_ext_.end()) return it->second;
  }
  int32_t p = s.parent[launch];
  // A driver call nests in the runtime call that made it: the op encloses both.
  while (p >= 0 && is_runtime_category(trace_.str(s.cat[static_cast<size_t>(p)])))
    p = s.parent[static_cast<size_t>(p)];
  return p;
}

DeviceTime device_time_by_slice(const Trace& trace, const GpuEvents& events) {
  DeviceTime d;
  const SliceTable& s = trace.slices;
  d.self_ns.assign(s.size(), 0);
  d.total_ns.assign(s.size(), 0);
  d.has_gpu = has_gpu(trace);
  OpAttribution ops(trace);
  for (const GpuEvent& e : events.events) {
    if (e.kind == GpuWorkKind::kSync || e.kind == GpuWorkKind::kAnnotation) continue;
    int32_t op = ops.op_of(e);
    if (op >= 0) d.self_ns[static_cast<size_t>(op)] += e.dur();
  }
  // Children follow their parent in slice order: one backward pass sums subtrees.
  for (size_t i = 0; i < s.size(); ++i) d.total_ns[i] = d.self_ns[i];
  for (size_t i = s.size(); i-- > 0;) {
    int32_t p = s.parent[i];
    if (p >= 0) d.total_ns[static_cast<size_t>(p)] += d.total_ns[i];
  }
  return d;
}

DeviceTime device_time_by_slice(const Trace& trace) {
  if (!has_gpu(trace)) {
    DeviceTime d;
    d.self_ns.assign(trace.slices.size(), 0);
    d.total_ns.assign(trace.slices.size(), 0);
    return d;
  }
  return device_time_by_slice(trace, *shared_gpu_events(trace));
}

}  // namespace mlprof
