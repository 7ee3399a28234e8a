#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "mlprof/trace.h"

namespace mlprof {

namespace {
// String pids and tids get synthetic numeric ids far from real ones.
constexpr int64_t kSyntheticIdBase = -1000000;
}  // namespace

TraceBuilder::TraceBuilder() = default;

uint32_t TraceBuilder::process(int64_t pid) {
  if (last_process_ != UINT32_MAX && last_pid_ == pid) return last_process_;
  auto [it, inserted] = process_by_pid_.try_emplace(pid, 0);
  if (inserted) {
    it->second = static_cast<uint32_t>(trace_.processes.size());
    Process p;
    p.pid = pid;
    p.sort_index = static_cast<int32_t>(trace_.processes.size());
    trace_.processes.push_back(std::move(p));
  }
  last_pid_ = pid;
  last_process_ = it->second;
  return it->second;
}

uint32_t TraceBuilder::process_labeled(std::string_view pid_label) {
  StringId label = intern(pid_label);
  auto [it, inserted] = process_by_label_.try_emplace(label, 0);
  if (inserted) {
    int64_t pid = kSyntheticIdBase - static_cast<int64_t>(process_by_label_.size());
    uint32_t idx = process(pid);
    trace_.processes[idx].label = label;
    trace_.processes[idx].labeled = true;
    it->second = idx;
  }
  return it->second;
}

uint32_t TraceBuilder::thread_track(uint32_t process, int64_t tid) {
  if (last_track_ != UINT32_MAX && last_track_process_ == process && last_tid_ == tid)
    return last_track_;
  auto [it, inserted] = thread_by_tid_.try_emplace({process, static_cast<uint64_t>(tid)}, 0);
  if (inserted) {
    it->second = static_cast<uint32_t>(trace_.tracks.size());
    Track t;
    t.process = process;
    t.pid = trace_.processes[process].pid;
    t.tid = tid;
    t.sort_index = static_cast<int32_t>(trace_.tracks.size());
    trace_.tracks.push_back(t);
  }
  last_track_process_ = process;
  last_tid_ = tid;
  last_track_ = it->second;
  return it->second;
}

uint32_t TraceBuilder::thread_track_labeled(uint32_t process, std::string_view tid_label) {
  StringId label = intern(tid_label);
  auto [it, inserted] = thread_by_label_.try_emplace({process, label}, 0);
  if (inserted) {
    int64_t tid = kSyntheticIdBase - static_cast<int64_t>(thread_by_label_.size());
    uint32_t idx = thread_track(process, tid);
    trace_.tracks[idx].label = label;
    trace_.tracks[idx].labeled = true;
    it->second = idx;
  }
  return it->second;
}

uint32_t TraceBuilder::async_track(uint32_t process, StringId cat, uint64_t id) {
  auto [it, inserted] =
      async_by_id_.try_emplace({(static_cast<uint64_t>(process) << 32) | cat, id}, 0);
  if (inserted) {
    it->second = static_cast<uint32_t>(trace_.tracks.size());
    Track t;
    t.kind = TrackKind::kAsync;
    t.process = process;
    t.pid = trace_.processes[process].pid;
    t.tid = static_cast<int64_t>(id);
    t.name = cat;
    t.sort_index = static_cast<int32_t>(trace_.tracks.size());
    trace_.tracks.push_back(t);
  }
  return it->second;
}

uint32_t TraceBuilder::counter_series(uint32_t process, StringId name) {
  auto [it, inserted] = series_by_name_.try_emplace({process, name}, 0);
  if (inserted) {
    it->second = static_cast<uint32_t>(trace_.counter_series.size());
    trace_.counter_series.push_back(CounterSeries{process, name, 0});
  }
  return it->second;
}

void TraceBuilder::arg_int(StringId key, int64_t v) {
  Arg a;
  a.key = key;
  a.type = ArgType::kInt;
  a.i = v;
  trace_.args.push_back(a);
}
void TraceBuilder::arg_uint(StringId key, uint64_t v) {
  Arg a;
  a.key = key;
  a.type = ArgType::kUInt;
  a.u = v;
  trace_.args.push_back(a);
}
void TraceBuilder::arg_double(StringId key, double v) {
  Arg a;
  a.key = key;
  a.type = ArgType::kDouble;
  a.d = v;
  trace_.args.push_back(a);
}
void TraceBuilder::arg_bool(StringId key, bool v) {
  Arg a;
  a.key = key;
  a.type = ArgType::kBool;
  a.b = v;
  trace_.args.push_back(a);
}
void TraceBuilder::arg_string(StringId key, StringId v) {
  Arg a;
  a.key = key;
  a.type = ArgType::kString;
  a.s = v;
  trace_.args.push_back(a);
}
void TraceBuilder::arg_json(StringId key, std::string_view raw_json) {
  Arg a;
  a.key = key;
  a.type = ArgType::kJson;
  a.s = intern(raw_json);
  trace_.args.push_back(a);
}
void TraceBuilder::arg_null(StringId key) {
  Arg a;
  a.key = key;
  a.type = ArgType::kNull;
  trace_.args.push_back(a);
}

void TraceBuilder::add_slice(uint32_t track, int64_t ts, int64_t dur, StringId name, StringId cat,
                             ArgRange args) {
  schema::push_row(trace_.slices, SliceTable::Row{.ts = ts,
                                                  .dur = dur < 0 ? 0 : dur,
                                                  .track = track,
                                                  .name = name,
                                                  .cat = cat,
                                                  .args_begin = args.begin,
                                                  .args_count = args.count});
}

void TraceBuilder::add_slice(SliceTable::Row row) {
  if (row.dur < 0) row.dur = 0;
  schema::push_row(trace_.slices, row);
}

void TraceBuilder::add_instant(uint32_t track, int64_t ts, StringId name, StringId cat,
                               ArgRange args, uint8_t scope) {
  schema::push_row(trace_.instants, InstantTable::Row{.ts = ts,
                                                      .track = track,
                                                      .name = name,
                                                      .cat = cat,
                                                      .args_begin = args.begin,
                                                      .args_count = args.count,
                                                      .scope = scope});
}

void TraceBuilder::add_counter(uint32_t series, int64_t ts, double value) {
  schema::push_row(trace_.counters, CounterTable::Row{.ts = ts, .series = series, .value = value});
}

void TraceBuilder::add_flow(uint64_t id, StringId cat, uint32_t src_track, int64_t src_ts,
                            uint32_t dst_track, int64_t dst_ts, bool dst_next) {
  schema::push_row(trace_.flows, FlowTable::Row{.id = id,
                                                .cat = cat,
                                                .src_ts = src_ts,
                                                .dst_ts = dst_ts,
                                                .src_track = src_track,
                                                .dst_track = dst_track,
                                                .dst_next = dst_next ? uint8_t{1} : uint8_t{0}});
}

void TraceBuilder::add_memory(uint32_t track, int64_t ts, uint64_t addr, int64_t bytes,
                              DeviceType type, int16_t device_id, int64_t total_allocated,
                              int64_t total_reserved, uint32_t stack) {
  schema::push_row(trace_.memory, MemoryTable::Row{.ts = ts,
                                                   .track = track,
                                                   .addr = addr,
                                                   .bytes = bytes,
                                                   .device_type = static_cast<int8_t>(type),
                                                   .device_id = device_id,
                                                   .total_allocated = total_allocated,
                                                   .total_reserved = total_reserved,
                                                   .stack = stack});
}

uint32_t TraceBuilder::add_stack(const std::vector<StringId>& frames) {
  StackTable& st = trace_.stacks;
  if (st.size() == 0) schema::push_row(st, StackTable::Row{});  // stack 0: unknown
  schema::push_row(
      st, StackTable::Row{.frames_begin = static_cast<uint32_t>(trace_.stack_frames.size()),
                          .frames_count = static_cast<uint32_t>(frames.size())});
  for (StringId f : frames) schema::push_row(trace_.stack_frames, StackFrameTable::Row{.name = f});
  return static_cast<uint32_t>(st.size() - 1);
}

void TraceBuilder::reserve(size_t slices, size_t instants, size_t args, size_t flows,
                           size_t memory) {
  schema::reserve_rows(trace_.slices, slices);
  schema::reserve_rows(trace_.instants, instants);
  trace_.args.reserve(args);
  schema::reserve_rows(trace_.flows, flows);
  schema::reserve_rows(trace_.memory, memory);
}

void TraceBuilder::mark_gpu_track(uint32_t track, int32_t device, int64_t stream) {
  Track& t = trace_.tracks[track];
  if (t.kind == TrackKind::kGpuStream) return;
  t.kind = TrackKind::kGpuStream;
  t.device = device;
  t.stream = stream;
  trace_.processes[t.process].is_gpu = true;
}

namespace {

// v[i] = old v[order[i]], gathered into `scratch` and copied back. Within a track `order` is
// ascending (input order, unless the track was out of order), so the reads are one forward
// stream per track: cache- and TLB-friendly, unlike following the permutation's cycles in place
// (a random walk over the column: 77% of a 10M-event import). One scratch buffer, sized for the
// widest column and reused by every column, keeps the extra memory to one column, paged in once.
template <typename T>
void permute(std::vector<T>& v, const std::vector<uint32_t>& order,
             std::vector<uint64_t>& scratch) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(uint64_t));
  const size_t n = order.size();
  T* tmp = reinterpret_cast<T*>(scratch.data());
  const T* src = v.data();
  const uint32_t* o = order.data();
  for (size_t i = 0; i < n; ++i) tmp[i] = src[o[i]];
  std::memcpy(v.data(), tmp, n * sizeof(T));
}

// The next slice that begins on `track` at or after ts (the outermost, if several begin then:
// slices are sorted longest first), -1 if none.
int32_t next_slice(const Trace& t, uint32_t track, int64_t ts) {
  if (track + 1 >= t.track_slice_begin.size()) return -1;
  auto first = t.slices.ts.begin() + t.track_slice_begin[track];
  auto last = t.slices.ts.begin() + t.track_slice_begin[track + 1];
  auto it = std::lower_bound(first, last, ts);
  return it == last ? -1 : static_cast<int32_t>(it - t.slices.ts.begin());
}

// 1. Order slices by track (counting sort), then by (start, longest first, input order); the
// input columns are permuted into that order. Returns each track's first slice (ntracks + 1).
std::vector<uint32_t> sort_slices(Trace& t) {
  SliceTable& s = t.slices;
  const size_t n = s.size();
  const size_t ntracks = t.tracks.size();
  std::vector<uint32_t> begin(ntracks + 1, 0);
  for (size_t i = 0; i < n; ++i) ++begin[s.track[i] + 1];
  for (size_t k = 0; k < ntracks; ++k) begin[k + 1] += begin[k];
  std::vector<uint32_t> order(n);
  {
    std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
    for (size_t i = 0; i < n; ++i) order[fill[s.track[i]]++] = static_cast<uint32_t>(i);
  }
  struct Key {
    int64_t ts;
    int64_t neg_dur;
    uint32_t idx;
    bool operator<(const Key& o) const {
      if (ts != o.ts) return ts < o.ts;
      if (neg_dur != o.neg_dur) return neg_dur < o.neg_dur;
      return idx < o.idx;
    }
  };
  std::vector<Key> keys;
  for (size_t k = 0; k < ntracks; ++k) {
    uint32_t b = begin[k], e = begin[k + 1];
    bool sorted = true;
    for (uint32_t j = b + 1; j < e && sorted; ++j) {
      uint32_t p = order[j - 1], q = order[j];
      sorted = s.ts[p] < s.ts[q] || (s.ts[p] == s.ts[q] && s.dur[p] >= s.dur[q]);
    }
    if (sorted) continue;
    keys.clear();
    for (uint32_t j = b; j < e; ++j)
      keys.push_back(Key{s.ts[order[j]], -s.dur[order[j]], order[j]});
    std::sort(keys.begin(), keys.end());
    for (uint32_t j = b; j < e; ++j) order[j] = keys[j - b].idx;
  }
  bool identity = true;
  for (size_t i = 0; i < n && identity; ++i) identity = order[i] == i;
  if (!identity) {
    // Every input column (the computed ones are derived below, after the sort).
    std::vector<uint64_t> scratch(n);
    schema::for_each_input_column<SliceTable>(
        [&](auto column) { permute(s.*column.member, order, scratch); });
  }
  std::vector<uint32_t>().swap(order);
  return begin;
}

// 2. Nesting per track: a stack of open slices; self = dur - children's (clipped) time.
void nest_slices(SliceTable& s, const std::vector<uint32_t>& begin, size_t ntracks) {
  const size_t n = s.size();
  s.depth.assign(n, 0);
  s.parent.assign(n, -1);
  s.self.assign(s.dur.begin(), s.dur.end());
  std::vector<uint32_t> stack;
  for (size_t k = 0; k < ntracks; ++k) {
    stack.clear();
    for (uint32_t i = begin[k]; i < begin[k + 1]; ++i) {
      // A slice that ends where i starts is a sibling; one that starts with i encloses it
      // (longest first), even when both are empty.
      while (!stack.empty() && s.end(stack.back()) <= s.ts[i] && s.ts[stack.back()] != s.ts[i])
        stack.pop_back();
      if (!stack.empty()) {
        uint32_t p = stack.back();
        s.parent[i] = static_cast<int32_t>(p);
        s.depth[i] = static_cast<uint16_t>(std::min<size_t>(stack.size(), 65535));
        int64_t clipped = std::min(s.end(i), s.end(p)) - s.ts[i];
        s.self[p] -= clipped;
      }
      stack.push_back(i);
    }
  }
  for (size_t i = 0; i < n; ++i)
    if (s.self[i] < 0) s.self[i] = 0;
}

// 3. Bind flow endpoints and memory events to their enclosing slices.
void bind_to_slices(Trace& t) {
  const SliceTable& s = t.slices;
  FlowTable& f = t.flows;
  f.src_slice.resize(f.size());
  f.dst_slice.resize(f.size());
  for (size_t i = 0; i < f.size(); ++i) {
    f.src_slice[i] = t.enclosing_slice(f.src_track[i], f.src_ts[i]);
    if (!f.dst_next[i]) {
      f.dst_slice[i] = t.enclosing_slice(f.dst_track[i], f.dst_ts[i]);
      continue;
    }
    // A v1 'f' without "bp": "e": the next slice to begin, where the flow then ends (so the
    // same slice binds again once saved, exported or finished twice).
    f.dst_slice[i] = next_slice(t, f.dst_track[i], f.dst_ts[i]);
    if (f.dst_slice[i] >= 0) f.dst_ts[i] = s.ts[f.dst_slice[i]];
  }
  MemoryTable& m = t.memory;
  m.slice.resize(m.size());
  for (size_t i = 0; i < m.size(); ++i) m.slice[i] = t.enclosing_slice(m.track[i], m.ts[i]);
  if (t.stacks.size() == 0) schema::push_row(t.stacks, StackTable::Row{});  // 0: unknown
}

// 4. Span: the first and last instant of the trace's own events, {lo, hi}; lo > hi if none.
std::pair<int64_t, int64_t> trace_span(const Trace& t) {
  const SliceTable& s = t.slices;
  const size_t n = s.size();
  const MemoryTable& m = t.memory;
  // Kineto's own "PyTorch Profiler (0)" span (category Trace) starts before the first event and
  // ends after the last: the trace begins and ends with its events, as in HTA (whose frames
  // hold duration events).
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  const StringId cat_trace = t.strings.find(kProfilerSpanCategory);
  for (size_t i = 0; i < n; ++i) {
    if (s.cat[i] == cat_trace) continue;
    lo = std::min(lo, s.ts[i]);
    hi = std::max(hi, s.ts[i] + s.dur[i]);
  }
  // Its instants "Iteration Start: PyTorch Profiler" and "Record Window End" are bookkeeping too
  // (the latter can lie hours after the last event; the TensorBoard plugin deletes it).
  const StringId iteration_start = t.strings.find("Iteration Start: PyTorch Profiler");
  const StringId window_end = t.strings.find("Record Window End");
  for (size_t i = 0; i < t.instants.size(); ++i) {
    StringId name = t.instants.name[i];
    if (name == iteration_start || name == window_end) continue;
    int64_t x = t.instants.ts[i];
    lo = std::min(lo, x), hi = std::max(hi, x);
  }
  for (int64_t x : t.counters.ts) lo = std::min(lo, x), hi = std::max(hi, x);
  for (int64_t x : m.ts) lo = std::min(lo, x), hi = std::max(hi, x);
  if (lo > hi) {  // nothing but the profiler's own events: they are the trace
    for (size_t i = 0; i < n; ++i) {
      lo = std::min(lo, s.ts[i]);
      hi = std::max(hi, s.ts[i] + s.dur[i]);
    }
    for (int64_t x : t.instants.ts) lo = std::min(lo, x), hi = std::max(hi, x);
  }
  return {lo, hi};
}

}  // namespace

Trace TraceBuilder::finish() && {
  Trace& t = trace_;
  t.track_slice_begin = sort_slices(t);
  nest_slices(t.slices, t.track_slice_begin, t.tracks.size());
  bind_to_slices(t);
  auto [lo, hi] = trace_span(t);
  if (lo > hi) lo = hi = 0;
  t.begin_ns_ = lo;
  t.end_ns_ = hi;
  return std::move(trace_);
}

}  // namespace mlprof
