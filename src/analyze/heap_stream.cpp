#include "mlprof/analyze/heap_stream.h"

#include <algorithm>
#include <deque>
#include <unordered_map>

#include "analyze/heap_stacks.h"
#include "trace/addr_map.h"

namespace mlprof {

namespace {

using analyze_detail::StackAggs;

constexpr size_t kCurveBuckets = 2000;

struct Block {
  uint64_t bytes;
  int64_t ts;
  uint64_t pos;  // its allocation's position among the events
  uint32_t stack;
  uint32_t track;
};

// A block that was live at the current peak candidate and has ended since (freed, or replaced
// by an allocation at its address whose free was not seen).
struct Ended {
  Block block;
  uint64_t addr;
  uint32_t process;
  int64_t end_ts;
  uint64_t end_pos;
};

}  // namespace

struct HeapStream::State {
  HeapOptions o;
  int64_t first, last, span;
  HeapResult r;
  std::deque<AddrMap<Block>> live;  // by process index
  std::vector<uint8_t> process_seen;
  StackAggs temp_agg{0};
  int64_t total = 0;
  uint64_t pos = 0;
  uint64_t peak_pos = UINT64_MAX;
  std::vector<Ended> ended_after_peak;
  struct CurvePoint {
    int64_t max_ts = 0, max = -1, last_ts = 0, last = 0;
  };
  std::vector<CurvePoint> curve = std::vector<CurvePoint>(kCurveBuckets);

  uint32_t last_process = UINT32_MAX;
  AddrMap<Block>* last_map = nullptr;
  double curve_scale = 0;  // curve buckets per ns

  AddrMap<Block>& map(uint32_t process) {
    if (process == last_process) return *last_map;  // consecutive events mostly share it
    while (live.size() <= process) live.emplace_back(AddrMap<Block>(1024));
    if (process_seen.size() <= process) process_seen.resize(process + 1, 0);
    process_seen[process] = 1;
    last_process = process;
    last_map = &live[process];
    return *last_map;
  }
  // As analyze_heap's (ts - first) * n / span, with the division done once.
  static size_t bucket_of(int64_t ts, int64_t first, double scale, size_t n) {
    if (scale <= 0 || ts <= first) return 0;
    size_t k = static_cast<size_t>(static_cast<double>(ts - first) * scale);
    return std::min(k, n - 1);
  }
  // Exactly analyze_heap's formula (a precomputed scale can round across a bucket boundary).
  size_t rate_bucket(int64_t ts) const {
    if (span <= 0 || ts <= first) return 0;
    size_t n = r.rate.size();
    size_t k = static_cast<size_t>(static_cast<double>(ts - first) * n / span);
    return std::min(k, n - 1);
  }
  void note_curve(int64_t ts) {
    CurvePoint& c = curve[bucket_of(ts, first, curve_scale, kCurveBuckets)];
    if (total > c.max) c.max = total, c.max_ts = ts;
    c.last = total, c.last_ts = ts;
  }
  // A block ends at `pos`: it held the peak candidate if allocated at or before it.
  void ended(const Block& b, uint64_t addr, uint32_t process, int64_t ts) {
    if (peak_pos != UINT64_MAX && b.pos <= peak_pos)
      ended_after_peak.push_back(Ended{b, addr, process, ts, pos});
  }
};

HeapStream::HeapStream(const HeapOptions& options, int64_t first_ts, int64_t last_ts, size_t stacks)
    : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.temp_agg = StackAggs(stacks);
  s.o = options;
  s.first = first_ts;
  s.last = last_ts;
  s.span = last_ts - first_ts;
  s.r.temporary_ns = options.temporary_ns;
  s.r.span_ns = s.span;
  size_t nb = std::max<size_t>(1, options.rate_buckets);
  s.r.rate.resize(nb);
  for (size_t k = 0; k < nb; ++k) {
    s.r.rate[k].begin_ns = static_cast<int64_t>(static_cast<double>(s.span) * k / nb);
    s.r.rate[k].end_ns = static_cast<int64_t>(static_cast<double>(s.span) * (k + 1) / nb);
  }
  if (s.span > 0) {
    s.curve_scale = static_cast<double>(kCurveBuckets) / static_cast<double>(s.span);
  }
}

HeapStream::~HeapStream() = default;

void HeapStream::alloc(uint32_t process, uint32_t track, int64_t ts, uint64_t addr, uint64_t bytes,
                       uint32_t stack) {
  State& s = *s_;
  HeapRateBucket& bucket = s.r.rate[s.rate_bucket(ts)];
  Block blk{bytes, ts, s.pos, stack, track};
  auto [b, fresh] = s.map(process).try_emplace(addr, blk);
  if (!fresh) {  // the free was not recorded: the old block is gone
    s.total -= static_cast<int64_t>(b->bytes);
    s.ended(*b, addr, process, ts);
    *b = blk;
  }
  s.total += static_cast<int64_t>(bytes);
  ++s.r.allocations;
  s.r.bytes_allocated += bytes;
  ++bucket.allocations;
  bucket.bytes_allocated += bytes;
  if (s.total > s.r.peak_bytes) {
    s.r.peak_bytes = s.total;
    s.r.peak_ts_ns = ts;
    s.peak_pos = s.pos;
    s.ended_after_peak.clear();  // they ended before this peak
  }
  bucket.heap_bytes_end = s.total;
  s.note_curve(ts);
  ++s.pos;
}

void HeapStream::free(uint32_t process, uint32_t /*track*/, int64_t ts, uint64_t addr) {
  State& s = *s_;
  Block blk;
  if (!s.map(process).erase(addr, &blk)) return;  // not a row of the trace either
  HeapRateBucket& bucket = s.r.rate[s.rate_bucket(ts)];
  s.ended(blk, addr, process, ts);
  ++s.r.frees;
  ++bucket.frees;
  if (ts - blk.ts <= s.o.temporary_ns) {
    ++s.r.temporary_blocks;
    s.r.temporary_bytes += blk.bytes;
    s.temp_agg[blk.stack].add(blk.bytes, process);  // process index: pid filled in result()
  }
  s.total -= static_cast<int64_t>(blk.bytes);
  bucket.heap_bytes_end = s.total;
  s.note_curve(ts);
  ++s.pos;
}

uint64_t HeapStream::events() const { return s_->pos; }

size_t HeapStream::live_blocks() const {
  size_t n = 0;
  for (const auto& m : s_->live) n += m.size();
  return n;
}

void HeapStream::add_rows(TraceBuilder& b) const {
  const State& s = *s_;
  struct Row {
    int64_t ts;
    uint64_t key;  // event position * 2 (+1 for an allocation): ends before a same-position alloc
    uint32_t track;
    uint64_t addr;
    int64_t bytes;
    uint32_t stack;
  };
  std::vector<Row> rows;
  for (const Ended& e : s.ended_after_peak) {
    rows.push_back(Row{e.block.ts, e.block.pos * 2 + 1, e.block.track, e.addr,
                       static_cast<int64_t>(e.block.bytes), e.block.stack});
    rows.push_back(Row{e.end_ts, e.end_pos * 2, e.block.track, e.addr,
                       -static_cast<int64_t>(e.block.bytes), e.block.stack});
  }
  for (const auto& m : s.live)
    m.for_each([&](uint64_t addr, const Block& blk) {
      rows.push_back(Row{blk.ts, blk.pos * 2 + 1, blk.track, addr, static_cast<int64_t>(blk.bytes),
                         blk.stack});
    });
  std::sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) { return x.key < y.key; });
  for (const Row& r : rows)
    b.add_memory(r.track, r.ts, r.addr, r.bytes, DeviceType::kCpu, -1, -1, -1, r.stack);

  // The heap curve: per bucket its highest point and its last, on the first traced process.
  if (s.process_seen.empty()) return;
  uint32_t process = 0;
  while (process + 1 < s.process_seen.size() && !s.process_seen[process]) ++process;
  uint32_t series = b.counter_series(process, b.intern("heap (all processes)"));
  b.trace().counter_series[series].unit = b.intern("bytes");
  for (const State::CurvePoint& c : s.curve) {
    if (c.max < 0) continue;
    b.add_counter(series, c.max_ts, static_cast<double>(c.max));
    if (c.last_ts != c.max_ts) b.add_counter(series, c.last_ts, static_cast<double>(c.last));
  }
}

HeapResult HeapStream::result(const Trace& t) const {
  const State& s = *s_;
  HeapResult r = s.r;
  r.memory_events = s.pos;
  if (s.pos == 0) {  // as analyze_heap on a trace without memory rows
    HeapResult empty;
    empty.temporary_ns = s.o.temporary_ns;
    return empty;
  }
  const size_t nb = r.rate.size();
  for (size_t k = 1; k < nb; ++k)
    if (r.rate[k].allocations == 0 && r.rate[k].frees == 0)
      r.rate[k].heap_bytes_end = r.rate[k - 1].heap_bytes_end;
  for (uint8_t seen : s.process_seen) r.processes += seen;
  if (r.span_ns > 0) r.allocations_per_second = r.allocations * 1e9 / r.span_ns;
  auto pid = [&](uint32_t process) {
    return process < t.processes.size() ? t.processes[process].pid : int64_t{-1};
  };
  const size_t nstacks = t.stacks.frames_begin.size();

  StackAggs leak_agg(nstacks), peak_agg(nstacks);
  for (uint32_t p = 0; p < s.live.size(); ++p)
    s.live[p].for_each([&](uint64_t, const Block& b) {
      leak_agg[b.stack].add(b.bytes, pid(p));
      r.leaked_bytes += b.bytes;
      ++r.leaked_blocks;
      if (s.peak_pos != UINT64_MAX && b.pos <= s.peak_pos) {
        peak_agg[b.stack].add(b.bytes, pid(p));
        ++r.peak_blocks;
      }
    });
  for (const Ended& e : s.ended_after_peak) {
    peak_agg[e.block.stack].add(e.block.bytes, pid(e.process));
    ++r.peak_blocks;
  }
  r.leak_stacks = leak_agg.size();
  r.leaks = analyze_detail::top_stacks(t, leak_agg, s.o, false);
  // Temporaries were keyed by process index: give them their pids.
  StackAggs temp_agg(nstacks);
  s.temp_agg.for_each([&](uint32_t stack, const analyze_detail::StackAgg& a) {
    analyze_detail::StackAgg& out = temp_agg[stack];
    out.bytes = a.bytes;
    out.count = a.count;
    for (int64_t p : a.pids) out.pids.push_back(pid(static_cast<uint32_t>(p)));
  });
  r.temporaries = analyze_detail::top_stacks(t, temp_agg, s.o, true);
  if (s.peak_pos != UINT64_MAX) {
    r.peak_offset_ns = r.peak_ts_ns - s.first;
    r.peak_stacks = analyze_detail::top_stacks(t, peak_agg, s.o, false);
  }
  return r;
}

}  // namespace mlprof
