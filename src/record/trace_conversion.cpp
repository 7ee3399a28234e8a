// Recorded events -> Trace: begin/end pairs become slices per thread track, steps become
// "ProfilerStep#N" slices, counters/instants/memory events their tables. Raw TSC ticks become
// CLOCK_MONOTONIC ns through the session's calibration.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <unordered_map>

#include "mlprof/mlprof.h"
#include "record/recorder_internal.h"

namespace mlprof::record {
namespace {

std::string process_name() {
  std::ifstream in("/proc/self/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

enum Group : uint8_t { kScopeGroup, kNamedGroup, kStepGroup };

struct Open {
  uint64_t raw;
  Group group;
  uint64_t key;
  StringId name, cat;
};

class Converter {
 public:
  Converter(const SessionClock& clock) : clock_(clock), names_(names_snapshot()) {
    proc_ = b_.process(::getpid());
    b_.trace().processes[proc_].name = b_.intern(process_name());
    unfinished_ = b_.intern("unfinished");
    name_ids_.assign(names_.size(), UINT32_MAX);
  }

  void thread(const ThreadEvents& te) {
    track_ = UINT32_MAX;
    te_ = &te;
    stack_.clear();
    for (const ChunkView& c : te.chunks) chunk(c);
    // Scopes still open: closed where recording of them stopped (a pause, the stop, or the
    // first event this thread had to drop), marked unfinished.
    while (!stack_.empty()) {
      Open o = stack_.back();
      stack_.pop_back();
      close(o, end_of_open(o.raw), true);
    }
  }

  Trace finish(uint64_t dropped) && {
    Trace& t = b_.trace();
    t.meta.format = "mlprof";
    t.meta.source = "mlprof recorder (pid " + std::to_string(::getpid()) + ")";
    t.meta.dropped_events = dropped;
    char clock[256];
    std::snprintf(clock, sizeof(clock),
                  "{\"clock\":\"%s\",\"ns_per_tick\":%.9g,\"monotonic_ns\":%lld,"
                  "\"realtime_ns\":%lld}",
                  clock_.mode == kModeTsc ? "tsc" : "steady", clock_.ns_per_tick,
                  static_cast<long long>(clock_.start.mono_ns),
                  static_cast<long long>(clock_.start.real_ns));
    t.meta.extra.emplace_back("mlprofClock", clock);
    if (clock_.sample > 1) t.meta.extra.emplace_back("mlprofSample", std::to_string(clock_.sample));
    return std::move(b_).finish();
  }

 private:
  int64_t to_ns(uint64_t raw) const {
    if (clock_.mode != kModeTsc) return static_cast<int64_t>(raw);
    double ticks = static_cast<double>(raw - clock_.start_raw);
    return clock_.start.mono_ns + std::llround(ticks * clock_.ns_per_tick);
  }

  uint64_t end_of_open(uint64_t begin_raw) const {
    uint64_t end = clock_.stop_raw;
    auto it = std::upper_bound(clock_.pauses.begin(), clock_.pauses.end(), begin_raw);
    if (it != clock_.pauses.end()) end = std::min(end, *it);
    if (te_->first_drop_raw != UINT64_MAX && te_->first_drop_raw >= begin_raw)
      end = std::min(end, te_->first_drop_raw);
    return end;
  }

  uint32_t track() {
    if (track_ == UINT32_MAX) {
      track_ = b_.thread_track(proc_, te_->tid);
      if (!te_->name.empty()) b_.trace().tracks[track_].name = b_.intern(te_->name);
    }
    return track_;
  }

  StringId name_id(uint64_t id) {
    if (id >= names_.size()) {  // interned after the snapshot: refresh once
      names_ = names_snapshot();
      name_ids_.resize(names_.size(), UINT32_MAX);
      if (id >= names_.size()) return b_.intern("?");
    }
    if (name_ids_[id] == UINT32_MAX) name_ids_[id] = b_.intern(names_[id]);
    return name_ids_[id];
  }

  std::pair<StringId, StringId> loc_ids(uint64_t data) {
    uintptr_t p = data & ~uint64_t{15};
    auto [it, inserted] = locs_.try_emplace(p);
    if (inserted) {
      auto* loc = reinterpret_cast<const detail::SourceLocation*>(p);
      it->second = {b_.intern(loc->name ? loc->name : "?"),
                    b_.intern(loc->category ? loc->category : "")};
    }
    return it->second;
  }

  void close(const Open& o, uint64_t end_raw, bool unfinished) {
    int64_t ts = to_ns(o.raw);
    int64_t dur = std::max<int64_t>(0, to_ns(end_raw) - ts);
    ArgRange args;
    if (unfinished) {
      uint32_t mark = b_.args_mark();
      b_.arg_bool(unfinished_, true);
      args = b_.args_since(mark);
    }
    b_.add_slice(track(), ts, dur, o.name, o.cat, args);
  }

  void end(Group g, uint64_t key, uint64_t raw) {
    for (size_t j = stack_.size(); j-- > 0;) {
      if (stack_[j].group != g || stack_[j].key != key) continue;
      for (size_t k = stack_.size(); k-- > j + 1;) close(stack_[k], raw, true);
      close(stack_[j], raw, false);
      stack_.resize(j);
      return;
    }
    // An end whose begin predates the session (or was dropped): nothing to pair it with.
  }

  static uint32_t slots_of(uint64_t kind) {
    switch (kind) {
      case detail::kCounter:
      case detail::kStepBegin:
        return 2;
      case detail::kMemory:
        return 3;
      default:
        return 1;
    }
  }

  void chunk(const ChunkView& c) {
    for (uint32_t i = 0; i < c.count;) {
      const detail::Event& e = c.events[i];
      uint64_t kind = e.data & 15;
      uint32_t slots = slots_of(kind);
      if (kind == detail::kEmpty || kind > detail::kStepEnd || i + slots > c.count) break;
      if (e.ts >= clock_.start_raw && e.ts <= clock_.stop_raw) event(c.events + i, kind);
      i += slots;
    }
  }

  void event(const detail::Event* ev, uint64_t kind) {
    const detail::Event& e = ev[0];
    switch (kind) {
      case detail::kBegin: {
        auto [name, cat] = loc_ids(e.data);
        stack_.push_back(Open{e.ts, kScopeGroup, e.data & ~uint64_t{15}, name, cat});
        break;
      }
      case detail::kEnd:
        end(kScopeGroup, e.data & ~uint64_t{15}, e.ts);
        break;
      case detail::kBeginName: {
        uint64_t key = e.data >> 4;
        stack_.push_back(
            Open{e.ts, kNamedGroup, key, name_id(key & 0xffffffffu), name_id(e.data >> 36)});
        break;
      }
      case detail::kEndName:
        end(kNamedGroup, e.data >> 4, e.ts);
        break;
      case detail::kStepBegin: {
        uint64_t n = e.data >> 4;
        auto* label = reinterpret_cast<const char*>(ev[1].ts);
        stack_.push_back(Open{e.ts, kStepGroup, n, b_.intern("ProfilerStep#" + std::to_string(n)),
                              b_.intern(label ? label : "step")});
        break;
      }
      case detail::kStepEnd:
        end(kStepGroup, e.data >> 4, e.ts);
        break;
      case detail::kInstant: {
        auto [name, cat] = loc_ids(e.data);
        b_.add_instant(track(), to_ns(e.ts), name, cat);
        break;
      }
      case detail::kInstantName:
        b_.add_instant(track(), to_ns(e.ts), name_id(e.data >> 4), 0);
        break;
      case detail::kCounter: {
        StringId name = name_id(e.data >> 4);
        uint32_t series = b_.counter_series(proc_, name);
        if (b_.trace().str(name) == "rss")
          b_.trace().counter_series[series].unit = b_.intern("bytes");
        double value;
        std::memcpy(&value, &ev[1].ts, sizeof(value));
        b_.add_counter(series, to_ns(e.ts), value);
        break;
      }
      case detail::kMemory: {
        auto type = static_cast<DeviceType>((e.data >> 4) & 15);
        auto id = static_cast<int16_t>((e.data >> 8) & 0xffff);
        b_.add_memory(track(), to_ns(e.ts), ev[1].ts, static_cast<int64_t>(ev[1].data), type, id,
                      static_cast<int64_t>(ev[2].ts), -1);
        break;
      }
      default:
        break;
    }
  }

  const SessionClock& clock_;
  std::vector<std::string> names_;
  std::vector<StringId> name_ids_;
  std::unordered_map<uintptr_t, std::pair<StringId, StringId>> locs_;
  TraceBuilder b_;
  uint32_t proc_ = 0;
  uint32_t track_ = UINT32_MAX;
  StringId unfinished_ = 0;
  const ThreadEvents* te_ = nullptr;
  std::vector<Open> stack_;
};

}  // namespace

Trace convert_to_trace(const Collected& collected, const SessionClock& clock) {
  Converter conv(clock);
  uint64_t dropped = 0;
  for (const ThreadEvents& te : collected.threads) {
    conv.thread(te);
    dropped += te.dropped;
  }
  return std::move(conv).finish(dropped);
}

}  // namespace mlprof::record
