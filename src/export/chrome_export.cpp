#include "mlprof/chrome_export.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <fstream>

#include "trace/json_writer.h"
#include "trace/output_file.h"

namespace mlprof {

namespace {

// Microseconds with exact nanosecond decimals: "1234.567".
void append_us(std::string& out, int64_t ns) {
  char buf[40];
  bool neg = ns < 0;
  uint64_t a = neg ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  uint64_t whole = a / 1000, frac = a % 1000;
  int n = frac ? std::snprintf(buf, sizeof buf, "%s%llu.%03llu", neg ? "-" : "",
                               static_cast<unsigned long long>(whole),
                               static_cast<unsigned long long>(frac))
               : std::snprintf(buf, sizeof buf, "%s%llu", neg ? "-" : "",
                               static_cast<unsigned long long>(whole));
  out.append(buf, static_cast<size_t>(n));
}

class EventWriter {
 public:
  // `rank` (merged traces): every track of the trace becomes a thread of the rank's process,
  // and every time moves by the rank's shift. `first`: no event was written before.
  EventWriter(const Trace& t, std::ostream& out, const MergedRank* rank = nullptr,
              bool first = true)
      : t_(t), out_(out), rank_(rank), first_(first) {}

  // Stable numeric ids: string pids/tids (legacy "CPU functions") get positive synthetic ones,
  // and their text becomes the process/thread name.
  int64_t pid_of(uint32_t process) const {
    if (rank_) return rank_->pid;
    const Process& p = t_.processes[process];
    return p.label ? 900000 + static_cast<int64_t>(process) : p.pid;
  }
  int64_t tid_of(uint32_t track) const {
    if (rank_) return static_cast<int64_t>(track) + 1;  // unique within the rank's process
    const Track& tr = t_.tracks[track];
    return tr.label ? 900000 + static_cast<int64_t>(track) : tr.tid;
  }

  void begin_event(char ph, uint32_t track, int64_t ts) {
    begin_at(ph, pid_of(t_.tracks[track].process), tid_of(track), ts);
  }
  // An event of a process that has no track (NVML's GPU counters in a capture): tid 0.
  void begin_process_event(char ph, uint32_t process, int64_t ts) {
    begin_at(ph, pid_of(process), 0, ts);
  }
  void begin_at(char ph, int64_t pid, int64_t tid, int64_t ts) {
    if (!first_) buf_ += ",\n";
    first_ = false;
    buf_ += "{\"ph\":\"";
    buf_ += ph;
    buf_ += "\",\"pid\":";
    buf_ += std::to_string(pid);
    buf_ += ",\"tid\":";
    buf_ += std::to_string(tid);
    buf_ += ",\"ts\":";
    append_us(buf_, rank_ ? ts + rank_->shift_ns : ts);
  }
  void process_metadata(const char* name, uint32_t process, const char* key,
                        const std::string& value_json) {
    metadata_at(name, pid_of(process), 0, key, value_json);
  }
  void str_field(const char* key, std::string_view v) {
    buf_ += ",\"";
    buf_ += key;
    buf_ += "\":";
    JsonWriter::escape(buf_, v);
  }
  void raw_field(const char* key, std::string_view raw) {
    buf_ += ",\"";
    buf_ += key;
    buf_ += "\":";
    JsonWriter::append_utf8(buf_, raw);
  }
  void arg_value(const Arg& a) {
    switch (a.type) {
      case ArgType::kString:
        JsonWriter::escape(buf_, t_.str(a.s));
        break;
      case ArgType::kDouble: {
        char b[40];
        std::snprintf(b, sizeof b, "%.17g", a.d);
        std::string_view s(b);
        buf_ += (s.find_first_of("0123456789") == std::string_view::npos) ? "null" : b;
        break;
      }
      default:
        JsonWriter::append_utf8(buf_, t_.arg_text(a));  // raw JSON from any file: valid UTF-8
    }
  }
  // Args, with "@key" ones (unknown event keys kept by the importer) back at the top level.
  void args(uint32_t begin, uint32_t count) {
    bool any = false;
    for (uint32_t i = begin; i < begin + count; ++i) {
      std::string_view k = t_.str(t_.args[i].key);
      if (!k.empty() && k[0] == '@') {
        buf_ += ",";
        JsonWriter::escape(buf_, k.substr(1));
        buf_ += ":";
        arg_value(t_.args[i]);
      } else {
        any = true;
      }
    }
    if (!any) return;
    buf_ += ",\"args\":{";
    bool first = true;
    for (uint32_t i = begin; i < begin + count; ++i) {
      std::string_view k = t_.str(t_.args[i].key);
      if (!k.empty() && k[0] == '@') continue;
      if (!first) buf_ += ",";
      first = false;
      JsonWriter::escape(buf_, k);
      buf_ += ":";
      arg_value(t_.args[i]);
    }
    buf_ += "}";
  }
  void end_event() {
    buf_ += "}";
    if (buf_.size() > (1 << 20)) flush();
  }
  void metadata(const char* name, uint32_t track, const char* key, const std::string& value_json) {
    metadata_at(name, pid_of(t_.tracks[track].process), tid_of(track), key, value_json);
  }
  // A merged rank's process metadata (its pid, tid 0: a trace without tracks has it too).
  void rank_metadata(const char* name, const char* key, const std::string& value_json) {
    metadata_at(name, rank_->pid, 0, key, value_json);
  }
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }
  std::string& buf() { return buf_; }
  bool first() const { return first_; }

 private:
  void metadata_at(const char* name, int64_t pid, int64_t tid, const char* key,
                   const std::string& value_json) {
    if (!first_) buf_ += ",\n";
    first_ = false;
    buf_ += "{\"ph\":\"M\",\"name\":\"";
    buf_ += name;
    buf_ += "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
            ",\"ts\":0,\"args\":{\"" + key + "\":" + value_json + "}}";
  }

  const Trace& t_;
  std::ostream& out_;
  const MergedRank* rank_;
  std::string buf_;
  bool first_ = true;
};

// The window of a merged rank (on its own clock): points inside it [begin, end] are kept; a
// slice is kept when it overlaps the window (a zero-length one when its time is inside) and is
// clipped to it.
struct Window {
  int64_t begin = INT64_MIN, end = INT64_MAX;
  bool point(int64_t ts) const { return ts >= begin && ts <= end; }
  bool span(int64_t ts, int64_t stop) const {
    return stop > ts ? ts < end && stop > begin : point(ts);
  }
};

// A process in a merged trace: by its Kineto label ("GPU 0", "CPU"), else its name, else its pid.
std::string merged_process_name(const Trace& t, uint32_t process) {
  const Process& p = t.processes[process];
  std::string proc;
  for (const auto& [key, value] : p.labels)
    if (t.str(key) == "process_labels" && !t.str(value).empty()) proc = t.str(value);
  if (proc.empty()) proc = std::string(p.name ? t.str(p.name) : p.label ? t.str(p.label) : "");
  if (proc.empty()) proc = "pid " + std::to_string(p.pid);
  return proc;
}

// Thread names in a merged trace: "<process> / <thread>".
std::string merged_track_name(const Trace& t, uint32_t track) {
  const Track& tr = t.tracks[track];
  std::string thread(tr.name ? t.str(tr.name) : tr.label ? t.str(tr.label) : "");
  if (thread.empty()) thread = "tid " + std::to_string(tr.tid);
  return merged_process_name(t, tr.process) + " / " + thread;
}

// One trace's events written (w != null) or counted (w == null): all of them, or for a merged
// rank those in its window, with flow and async ids renumbered from *next_id (unique over the
// ranks). One method per table; each returns its events.
struct EventsPass {
  const Trace& t;
  EventWriter* w;
  const MergedRank* r;
  uint64_t* next_id;
  Window cpu, gpu;  // GPU streams have the window of the GPU work the steps launched

  const Window& window(uint32_t track) const { return t.is_gpu_track(track) ? gpu : cpu; }
  uint64_t slices();
  uint64_t instants();
  uint64_t counters();
  uint64_t flows();
  uint64_t memory();
};

uint64_t EventsPass::slices() {
  uint64_t count = 0;
  std::vector<int64_t> async_id;  // merged: per track, assigned on first use
  if (r && w) async_id.assign(t.tracks.size(), -1);
  const SliceTable& s = t.slices;
  for (size_t i = 0; i < s.size(); ++i) {
    int64_t ts = s.ts[i], end = s.end(i);
    const Window& win = window(s.track[i]);
    if (!win.span(ts, end)) continue;
    bool clipped = ts < win.begin || end > win.end;
    ts = std::max(ts, win.begin);
    end = std::min(end, win.end);
    const Track& tr = t.tracks[s.track[i]];
    if (tr.kind == TrackKind::kAsync) {
      // Async ranges: a b/e pair on the process with the range's id.
      count += 2;
      if (!w) continue;
      uint32_t thread = s.track[i];
      std::string id = std::to_string(tr.tid);
      if (r) {
        if (async_id[thread] < 0) async_id[thread] = static_cast<int64_t>((*next_id)++);
        id = std::to_string(async_id[thread]);
      }
      for (char ph : {'b', 'e'}) {
        w->begin_event(ph, thread, ph == 'b' ? ts : end);
        w->str_field("name", t.str(s.name[i]));
        w->str_field("cat", t.str(s.cat[i]));
        w->raw_field("id", id);
        if (ph == 'b' && s.thread_ts[i] >= 0 && !clipped) {
          w->buf() += ",\"tts\":";
          append_us(w->buf(), s.thread_ts[i]);
        }
        if (ph == 'b') w->args(s.args_begin[i], s.args_count[i]);
        w->end_event();
      }
      continue;
    }
    ++count;
    if (!w) continue;
    w->begin_event('X', s.track[i], ts);
    w->buf() += ",\"dur\":";
    append_us(w->buf(), end - ts);
    if (s.thread_ts[i] >= 0 && !clipped) {  // thread (CPU) time, not for a clipped slice
      w->buf() += ",\"tts\":";
      append_us(w->buf(), s.thread_ts[i]);
      if (s.thread_dur[i] >= 0) {
        w->buf() += ",\"tdur\":";
        append_us(w->buf(), s.thread_dur[i]);
      }
    }
    w->str_field("name", t.str(s.name[i]));
    if (s.cat[i]) w->str_field("cat", t.str(s.cat[i]));
    w->args(s.args_begin[i], s.args_count[i]);
    w->end_event();
  }
  return count;
}

uint64_t EventsPass::instants() {
  uint64_t count = 0;
  const InstantTable& in = t.instants;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!window(in.track[i]).point(in.ts[i])) continue;
    ++count;
    if (!w) continue;
    uint8_t sc = in.scope[i];
    bool is_instant = sc == 't' || sc == 'p' || sc == 'g';
    w->begin_event(is_instant ? 'i' : static_cast<char>(sc), in.track[i], in.ts[i]);
    w->str_field("name", t.str(in.name[i]));
    if (in.cat[i]) w->str_field("cat", t.str(in.cat[i]));
    if (is_instant) w->str_field("s", std::string(1, static_cast<char>(sc)));
    w->args(in.args_begin[i], in.args_count[i]);
    w->end_event();
  }
  return count;
}

uint64_t EventsPass::counters() {
  uint64_t count = 0;
  // Counters are per process; write them on the process's first track. In a merged trace the
  // rank's processes share one, so a series is named "<process> / <name>" when the rank has
  // counters in more than one process.
  std::vector<uint32_t> first_track(t.processes.size(), UINT32_MAX);
  for (uint32_t k = 0; k < t.tracks.size(); ++k)
    if (first_track[t.tracks[k].process] == UINT32_MAX) first_track[t.tracks[k].process] = k;
  bool prefix_counters = false;
  if (r)
    for (const CounterSeries& cs : t.counter_series)
      prefix_counters |= cs.process != t.counter_series.front().process;
  std::vector<std::string> prefixed;  // per series, named once rather than per sample
  if (w && prefix_counters)
    for (const CounterSeries& cs : t.counter_series)
      prefixed.push_back(merged_process_name(t, cs.process) + " / " + std::string(t.str(cs.name)));
  const CounterTable& c = t.counters;
  auto counter_window = [&](uint32_t series) -> const Window& {
    return t.processes[t.counter_series[series].process].is_gpu ? gpu : cpu;
  };
  // A series sampled before its window starts gets the value in force at the start (its last
  // sample before it; the later one in the table at equal times) as a sample at the start, unless
  // it has a sample right there: a counter track shows its level from the window's start.
  std::vector<size_t> carried;  // per series: that sample, or SIZE_MAX
  if (r) {
    carried.assign(t.counter_series.size(), SIZE_MAX);
    std::vector<bool> at_begin(t.counter_series.size(), false);
    for (size_t i = 0; i < c.size(); ++i) {
      const Window& win = counter_window(c.series[i]);
      if (win.begin > win.end) continue;  // empty window: nothing kept
      size_t& k = carried[c.series[i]];
      if (c.ts[i] < win.begin && (k == SIZE_MAX || c.ts[i] >= c.ts[k])) k = i;
      if (c.ts[i] == win.begin) at_begin[c.series[i]] = true;
    }
    for (size_t k = 0; k < carried.size(); ++k)
      if (at_begin[k]) carried[k] = SIZE_MAX;
  }
  auto write_counter = [&](uint32_t series, int64_t ts, double value) {
    const CounterSeries& cs = t.counter_series[series];
    uint32_t track = first_track[cs.process];
    if (track == UINT32_MAX)
      w->begin_process_event('C', cs.process, ts);
    else
      w->begin_event('C', track, ts);
    w->str_field("name", prefix_counters ? std::string_view(prefixed[series]) : t.str(cs.name));
    char b[40];
    std::snprintf(b, sizeof b, "%.17g", value);
    w->buf() += ",\"args\":{\"value\":";
    w->buf() += b;
    w->buf() += "}";
    w->end_event();
  };
  for (uint32_t k = 0; k < carried.size(); ++k) {
    if (carried[k] == SIZE_MAX) continue;
    ++count;
    if (w) write_counter(k, counter_window(k).begin, c.value[carried[k]]);
  }
  for (size_t i = 0; i < c.size(); ++i) {
    if (!counter_window(c.series[i]).point(c.ts[i])) continue;
    ++count;
    if (w) write_counter(c.series[i], c.ts[i], c.value[i]);
  }
  return count;
}

uint64_t EventsPass::flows() {
  uint64_t count = 0;
  const FlowTable& f = t.flows;
  for (size_t i = 0; i < f.size(); ++i) {
    if (!window(f.src_track[i]).point(f.src_ts[i]) || !window(f.dst_track[i]).point(f.dst_ts[i]))
      continue;  // both ends inside
    count += 2;
    if (!w) continue;
    std::string id = std::to_string(r ? (*next_id)++ : f.id[i]);
    for (char ph : {'s', 'f'}) {
      w->begin_event(ph, ph == 's' ? f.src_track[i] : f.dst_track[i],
                     ph == 's' ? f.src_ts[i] : f.dst_ts[i]);
      w->raw_field("id", id);
      w->str_field("cat", t.str(f.cat[i]));
      w->str_field("name", t.str(f.cat[i]));
      // "bp": "e" binds the enclosing slice; without it, the next slice to begin (dst_next).
      if (ph == 'f' && !f.dst_next[i]) w->str_field("bp", "e");
      w->end_event();
    }
  }
  return count;
}

uint64_t EventsPass::memory() {
  uint64_t count = 0;
  const MemoryTable& m = t.memory;
  for (size_t i = 0; i < m.size(); ++i) {
    if (!window(m.track[i]).point(m.ts[i])) continue;
    ++count;
    if (!w) continue;
    w->begin_event('i', m.track[i], m.ts[i]);
    w->str_field("name", "[memory]");
    w->str_field("cat", "cpu_instant_event");
    w->str_field("s", "t");
    std::string& b = w->buf();
    b += ",\"args\":{\"Device Type\":" + std::to_string(m.device_type[i]) +
         ",\"Device Id\":" + std::to_string(m.device_id[i]) +
         ",\"Addr\":" + std::to_string(m.addr[i]) + ",\"Bytes\":" + std::to_string(m.bytes[i]);
    if (m.total_allocated[i] >= 0)
      b += ",\"Total Allocated\":" + std::to_string(m.total_allocated[i]);
    if (m.total_reserved[i] >= 0) b += ",\"Total Reserved\":" + std::to_string(m.total_reserved[i]);
    b += "}";
    w->end_event();
  }
  return count;
}

// Writes (w != null) or counts (w == null) the events of `t`: all of them, or for a merged rank
// those in its window, with flow and async ids renumbered from *next_id (unique over the ranks).
// Returns the number of events.
uint64_t write_events(const Trace& t, EventWriter* w, const MergedRank* r, uint64_t* next_id) {
  EventsPass pass{t, w, r, next_id, {}, {}};
  if (r) {
    pass.cpu = Window{r->begin_ns, r->end_ns};
    pass.gpu = Window{r->gpu_begin_ns, r->gpu_end_ns};
  }
  uint64_t count = pass.slices();  // in this order: async ids, then flow ids, from *next_id
  count += pass.instants();
  count += pass.counters();
  count += pass.flows();
  count += pass.memory();
  return count;
}

std::string quoted(std::string_view s) {
  std::string out;
  JsonWriter::escape(out, s);
  return out;
}

}  // namespace

void write_chrome_json(const Trace& t, std::ostream& out) {
  std::string head = "{";
  bool have_schema = false, have_devices = false, have_dist = false, have_base = false;
  for (const auto& [key, raw] : t.meta.extra) {
    JsonWriter::escape(head, key);
    head += ":";
    JsonWriter::append_utf8(head, raw);  // a .mlprof written before commands were escaped
    head += ",\n";
    have_schema |= key == "schemaVersion";
    have_devices |= key == "deviceProperties";
    have_dist |= key == "distributedInfo";
    have_base |= key == "baseTimeNanoseconds";
  }
  if (!have_schema && t.meta.schema_version >= 0)
    head += "\"schemaVersion\":" + std::to_string(t.meta.schema_version) + ",\n";
  if (!have_dist && t.meta.rank >= 0)
    head += "\"distributedInfo\":{\"rank\":" + std::to_string(t.meta.rank) +
            (t.meta.world_size >= 0 ? ",\"world_size\":" + std::to_string(t.meta.world_size) : "") +
            "},\n";
  if (!have_base && t.meta.base_time_ns)
    head += "\"baseTimeNanoseconds\":" + std::to_string(t.meta.base_time_ns) + ",\n";
  if (!have_devices && !t.meta.devices.empty()) {
    head += "\"deviceProperties\":[";
    for (size_t i = 0; i < t.meta.devices.size(); ++i) {
      const DeviceInfo& d = t.meta.devices[i];
      head += (i ? "," : "") + std::string("{\"id\":") + std::to_string(d.id) +
              ",\"name\":" + quoted(d.name) +
              ",\"totalGlobalMem\":" + std::to_string(d.total_global_mem) +
              ",\"computeMajor\":" + std::to_string(d.compute_major) +
              ",\"computeMinor\":" + std::to_string(d.compute_minor) +
              ",\"numSms\":" + std::to_string(d.num_sms) +
              ",\"maxThreadsPerMultiprocessor\":" + std::to_string(d.max_threads_per_sm) + "}";
    }
    head += "],\n";
  }
  if (t.meta.dropped_events)
    head += "\"mlprofDroppedEvents\":" + std::to_string(t.meta.dropped_events) + ",\n";
  head += "\"traceEvents\":[\n";
  out << head;

  EventWriter w(t, out);
  // Names first, so viewers label tracks before drawing them.
  std::vector<bool> process_done(t.processes.size(), false);
  for (uint32_t k = 0; k < t.tracks.size(); ++k) {
    const Track& tr = t.tracks[k];
    const Process& p = t.processes[tr.process];
    if (!process_done[tr.process]) {
      process_done[tr.process] = true;
      if (p.name)
        w.metadata("process_name", k, "name", quoted(t.str(p.name)));
      else if (p.label)
        w.metadata("process_name", k, "name", quoted(t.str(p.label)));
      w.metadata("process_sort_index", k, "sort_index", std::to_string(p.sort_index));
      for (const auto& [key, value] : p.labels)
        if (t.str(key) == "process_labels")
          w.metadata("process_labels", k, "labels", quoted(t.str(value)));
    }
    if (tr.kind == TrackKind::kAsync) continue;
    if (tr.name)
      w.metadata("thread_name", k, "name", quoted(t.str(tr.name)));
    else if (tr.label)
      w.metadata("thread_name", k, "name", quoted(t.str(tr.label)));
    w.metadata("thread_sort_index", k, "sort_index", std::to_string(tr.sort_index));
  }
  // A process with counters and no track (NVML's GPUs in a capture) is named too.
  for (const CounterSeries& cs : t.counter_series) {
    if (process_done[cs.process]) continue;
    process_done[cs.process] = true;
    const Process& p = t.processes[cs.process];
    if (p.name || p.label)
      w.process_metadata("process_name", cs.process, "name",
                         quoted(t.str(p.name ? p.name : p.label)));
  }
  write_events(t, &w, nullptr, nullptr);
  w.buf() += "\n]}\n";
  w.flush();
}

Status save_chrome_json(const Trace& trace, const std::string& path) {
  Result<OutputFile> out = OutputFile::open(path);
  MLPROF_RETURN_IF_ERROR(out);
  write_chrome_json(trace, out->stream());
  return out->commit();  // an error leaves `path` as it was
}

uint64_t count_merged_events(const Trace& trace, const MergedRank& rank) {
  return write_events(trace, nullptr, &rank, nullptr);
}

MergedChromeWriter::MergedChromeWriter(std::ostream& out, std::string_view head) : out_(out) {
  out_ << "{" << head << "\"traceEvents\":[\n";
}

uint64_t MergedChromeWriter::add(const Trace& t, const MergedRank& rank) {
  EventWriter w(t, out_, &rank, first_);
  // The rank's process, then its tracks as threads in the trace's own order (processes by
  // sort index, then their threads).
  w.rank_metadata("process_name", "name", quoted(rank.name));
  w.rank_metadata("process_sort_index", "sort_index", std::to_string(rank.sort_index));
  if (!rank.labels.empty()) w.rank_metadata("process_labels", "labels", quoted(rank.labels));
  std::vector<uint32_t> order(t.tracks.size());
  for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Track& x = t.tracks[a];
    const Track& y = t.tracks[b];
    int32_t px = t.processes[x.process].sort_index, py = t.processes[y.process].sort_index;
    if (px != py) return px < py;
    if (x.process != y.process) return x.process < y.process;
    return x.sort_index < y.sort_index;
  });
  int32_t index = 0;
  for (uint32_t k : order) {
    if (t.tracks[k].kind == TrackKind::kAsync) continue;
    w.metadata("thread_name", k, "name", quoted(merged_track_name(t, k)));
    w.metadata("thread_sort_index", k, "sort_index", std::to_string(index++));
  }
  uint64_t n = write_events(t, &w, &rank, &next_id_);
  w.flush();
  first_ = w.first();
  events_ += n;
  return n;
}

void MergedChromeWriter::finish() { out_ << "\n]}\n"; }

}  // namespace mlprof
