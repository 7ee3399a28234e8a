// Rank summaries as bytes: `ranks --mpi` sends each process's summaries to rank 0, serve caches
// them. A magic number and a version; a short or damaged buffer is an error, never a crash.
#include <cstring>
#include <type_traits>

#include "mlprof/analyze/ranks.h"

namespace mlprof {

namespace {

struct Writer {
  std::string out;
  template <typename T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void str(const std::string& s) {
    pod<uint64_t>(s.size());
    out += s;
  }
  template <typename T, typename F>
  void vec(const std::vector<T>& v, F&& each) {
    pod<uint64_t>(v.size());
    for (const T& x : v) each(const_cast<T&>(x));
  }
};

struct Reader {
  std::string_view in;
  size_t pos = 0;
  bool ok = true;
  template <typename T>
  void pod(T& v) {
    if (!ok || in.size() - pos < sizeof(T)) {
      ok = false;
      return;
    }
    std::memcpy(&v, in.data() + pos, sizeof(T));
    pos += sizeof(T);
  }
  void str(std::string& s) {
    uint64_t n = 0;
    pod(n);
    if (!ok || in.size() - pos < n) {
      ok = false;
      return;
    }
    s.assign(in.data() + pos, n);
    pos += n;
  }
  template <typename T, typename F>
  void vec(std::vector<T>& v, F&& each) {
    uint64_t n = 0;
    pod(n);
    if (!ok || n > in.size() - pos) {  // every element takes at least one byte
      ok = false;
      return;
    }
    v.resize(n);
    for (T& x : v) {
      each(x);
      if (!ok) return;
    }
  }
};

template <typename A>
void io(A& a, TemporalBreakdown& t) {
  a.pod(t.device);
  a.pod(t.span_ns);
  a.pod(t.idle_ns);
  a.pod(t.compute_ns);
  a.pod(t.non_compute_ns);
  a.pod(t.communication_ns);
  a.pod(t.memcpy_ns);
  a.pod(t.memset_ns);
  a.pod(t.idle_pct);
  a.pod(t.compute_pct);
  a.pod(t.non_compute_pct);
  a.pod(t.communication_pct);
  a.pod(t.memcpy_pct);
  a.pod(t.memset_pct);
}

template <typename A>
void io(A& a, NamedTime& n) {
  a.str(n.name);
  a.pod(n.count);
  a.pod(n.time_ns);
}

template <typename A>
void io(A& a, RankSummary& s) {
  RankStats& r = s.stats;
  a.pod(r.rank);
  a.str(r.source);
  a.pod(r.steps);
  a.pod(r.step_mean_ns);
  a.pod(r.step_max_ns);
  a.pod(r.wall_ns);
  io(a, r.temporal);
  a.pod(r.comm_comp_overlap_pct);
  a.pod(r.exposed_comm_ns);
  a.pod(r.comm_overhead_pct);
  a.pod(r.memory_peak_bytes);
  a.pod(r.world_size);
  a.vec(r.top_ops, [&](NamedTime& x) { io(a, x); });
  a.vec(r.top_kernels, [&](NamedTime& x) { io(a, x); });
  a.pod(s.base_time_ns);
  a.pod(s.begin_ns);
  a.pod(s.file_bytes);
  a.pod(s.has_gpu);
  a.vec(s.step_times, [&](StepTime& x) { a.pod(x); });
  a.vec(s.groups, [&](std::string& x) { a.str(x); });
  a.vec(s.names, [&](std::string& x) { a.str(x); });
  a.vec(s.calls, [&](CollectiveCall& x) { a.pod(x); });
}

constexpr uint32_t kSummaryMagic = 0x4d4c5253;  // "MLRS"
constexpr uint32_t kSummaryVersion = 1;

}  // namespace

std::string encode_rank_summaries(const std::vector<RankSummary>& summaries) {
  Writer w;
  w.pod(kSummaryMagic);
  w.pod(kSummaryVersion);
  w.vec(summaries, [&](RankSummary& s) { io(w, s); });
  return std::move(w.out);
}

Result<std::vector<RankSummary>> decode_rank_summaries(std::string_view bytes) {
  Reader r{bytes};
  uint32_t magic = 0, version = 0;
  r.pod(magic);
  r.pod(version);
  if (!r.ok || magic != kSummaryMagic || version != kSummaryVersion)
    return Status::error("not a rank summary block");
  std::vector<RankSummary> out;
  r.vec(out, [&](RankSummary& s) { io(r, s); });
  if (!r.ok || r.pos != bytes.size()) return Status::error("truncated rank summary block");
  for (const RankSummary& s : out)
    for (const CollectiveCall& c : s.calls)
      if (c.group >= s.groups.size() || c.name >= s.names.size() || c.dtype >= s.names.size())
        return Status::error("rank summary block: a call points outside its string table");
  return out;
}
}  // namespace mlprof
