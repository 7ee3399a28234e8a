// What a Chrome event means, once its fields are read: ids normalized (pid/tid as text), its track
// (a thread, a GPU stream, a counter), and the rows it becomes: slices, instants, counters, memory
// events, metadata (process and thread names, sort indexes, labels). B/E and flow events are
// paired in chrome_event_pairing.cpp.
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "import/chrome_event_fields.h"
#include "import/chrome_event_parser.h"
#include "import/error_text.h"

namespace mlprof::import {

namespace {
// "123" or "-5": a pid or tid written as a string is that number (old Kineto traces write op
// events with "tid": "123" and memory events with "tid": 123 for the same thread).
bool decimal_id(std::string_view s, int64_t* out) {
  size_t i = !s.empty() && s[0] == '-' ? 1 : 0;
  if (s.size() <= i || s.size() - i > 18) return false;
  int64_t v = 0;
  for (size_t k = i; k < s.size(); ++k) {
    if (s[k] < '0' || s[k] > '9') return false;
    v = v * 10 + (s[k] - '0');
  }
  *out = i ? -v : v;
  return true;
}

// Old Kineto GPU tracks: "tid": "stream 7" (no args.stream) is stream 7; -1 otherwise.
int64_t stream_from_label(std::string_view s) {
  constexpr std::string_view kPrefix = "stream ";
  int64_t v;
  if (s.substr(0, kPrefix.size()) != kPrefix || !decimal_id(s.substr(kPrefix.size()), &v))
    return -1;
  return v;
}

// Counter values written as strings (".75", "+10.5", "246."): numbers when the whole string is
// one (as strtod reads it, decimal only), else not a value.
std::optional<double> number_from_text(std::string_view s) {
  if (s.empty() || s.size() > 64) return std::nullopt;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || c == '.' || c == '+' || c == '-' || c == 'e' || c == 'E'))
      return std::nullopt;
  std::string text(s);
  char* end = nullptr;
  double d = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(d)) return std::nullopt;
  return d;
}
}  // namespace

void ChromeEventParser::normalize_ids(Pending& e) {
  if (e.pid_is_text && decimal_id(e.pid_text, &e.pid)) e.pid_is_text = false;
  if (e.tid_is_text && decimal_id(e.tid_text, &e.tid)) e.tid_is_text = false;
  // Perfetto: an event without a tid is on its process's main thread (tid = pid), a string pid
  // ("CPU functions") included: its thread is the one labeled with the same string.
  if (!e.has_tid) {
    e.tid_is_text = e.pid_is_text;
    if (e.pid_is_text)
      e.tid_text = e.pid_text;
    else
      e.tid = e.pid;
  }
}

uint32_t ChromeEventParser::track_for(const Pending& e) {
  uint32_t proc;
  if (e.pid_is_text) {
    saw_string_pid_ = true;
    // Legacy traces repeat pid "CPU functions" on every event: remember the last one.
    if (e.pid_text != last_pid_text_ || last_text_process_ == UINT32_MAX) {
      last_pid_text_ = e.pid_text;
      last_text_process_ = b_.process_labeled(e.pid_text);
    }
    proc = last_text_process_;
  } else {
    proc = b_.process(e.pid);
  }
  if (e.tid_is_text) return b_.thread_track_labeled(proc, e.tid_text);
  return b_.thread_track(proc, e.tid);
}

void ChromeEventParser::emit(Pending& e) {
  // Only events read whole count (a path may read a field of an event it then skips).
  saw_category_ |= e.has_cat;
  normalize_ids(e);
  switch (e.ph) {
    case 'X': {
      uint32_t track = track_for(e);
      if (e.cat < gpu_category_.size() && gpu_category_[e.cat]) {
        // Kineto: pid = device, tid = stream. Prefer the args when present.
        int64_t device = e.pid_is_text ? -1 : e.pid;
        int64_t stream = e.tid_is_text ? stream_from_label(e.tid_text) : e.tid;
        Trace& t = b_.trace();
        if (const Arg* a = t.find_arg(e.args.begin, e.args.count, "device"))
          device = a->as_int().value_or(device);
        if (const Arg* a = t.find_arg(e.args.begin, e.args.count, "stream"))
          stream = a->as_int().value_or(stream);
        gpu_track(track, static_cast<int32_t>(device), stream);
      }
      if (e.dur < 0)  // counted, then read as 0 (the builder's rule for every slice)
        note(ImportProblem::kNegativeDuration, event_at_,
             "a complete ('X') event with a negative \"dur\" (" + fmt::format("{:g}", e.dur / 1e3) +
                 " us), read as 0");
      b_.add_slice(SliceTable::Row{.ts = e.ts,
                                   .dur = e.dur,
                                   .track = track,
                                   .name = e.name,
                                   .cat = e.cat,
                                   .args_begin = e.args.begin,
                                   .args_count = e.args.count,
                                   .thread_ts = e.tts,
                                   .thread_dur = e.tts >= 0 ? e.tdur : -1});
      flow_v2(e, track);
      break;
    }
    case 'B':
    case 'E':
    case 'b':
    case 'e':
      emit_begin_end(e);
      break;
    case 'i':
    case 'I':
    case 'n':
      if (e.name == memory_name_ || e.name == oom_name_) {
        emit_memory(e);
        if (e.name == memory_name_) break;
      }
      b_.add_instant(track_for(e), e.ts, e.name, e.cat, e.args,
                     static_cast<uint8_t>(e.scope ? e.scope : 't'));
      break;
    case 'C':
      emit_counter(e);
      break;
    case 's':
    case 't':
    case 'f':
      emit_flow(e);
      break;
    case 'M':
      emit_metadata(e);
      break;
    default:
      // Samples, object snapshots, marks: kept as instants so nothing is silently lost.
      b_.add_instant(track_for(e), e.ts, e.name, e.cat, e.args, static_cast<uint8_t>(e.ph));
      break;
  }
}

void ChromeEventParser::gpu_track(uint32_t track, int32_t device, int64_t stream) {
  if (b_.trace().tracks[track].kind == TrackKind::kGpuStream) return;  // the first mark wins
  b_.mark_gpu_track(track, device, stream);
  if (mode_ == Mode::kPart) {
    ops_.push_back(Op{.kind = OpKind::kGpuTrack,
                      .track = track,
                      .id = static_cast<uint64_t>(stream),
                      .value = device});
  }
}
void ChromeEventParser::emit_counter(const Pending& e) {
  Trace& t = b_.trace();
  uint32_t proc = t.tracks[track_for(e)].process;
  std::string base(t.str(e.name));
  for (uint32_t i = 0; i < e.args.count; ++i) {
    const Arg a = t.args[e.args.begin + i];
    std::optional<double> v =
        a.type == ArgType::kString ? number_from_text(t.str(a.s)) : a.as_double();
    if (!v) continue;
    std::string_view key = t.str(a.key);
    // One series per arg key; a lone "value" key (or one named like the counter) is the counter.
    StringId series_name = (e.args.count == 1 && (key == "value" || key == base))
                               ? e.name
                               : b_.intern(base + " " + std::string(key));
    b_.add_counter(b_.counter_series(proc, series_name), e.ts, *v);
  }
  t.args.resize(e.args_mark);
}

void ChromeEventParser::emit_memory(const Pending& e) {
  Trace& t = b_.trace();
  auto get = [&](const char* key, int64_t dflt) {
    const Arg* a = t.find_arg(e.args.begin, e.args.count, key);
    if (!a) return dflt;
    if (a->type == ArgType::kUInt) return static_cast<int64_t>(a->u);
    return a->as_int().value_or(dflt);
  };
  int64_t dev_type = get("Device Type", 0);
  // c10::DeviceType: 0 CPU, 1 CUDA, 6 HIP (ROCm GPUs, whose memory is GPU memory too).
  DeviceType type = dev_type == 0                    ? DeviceType::kCpu
                    : dev_type == 1 || dev_type == 6 ? DeviceType::kCuda
                                                     : DeviceType::kOther;
  uint32_t track = track_for(e);
  b_.add_memory(track, e.ts, static_cast<uint64_t>(get("Addr", 0)), get("Bytes", 0), type,
                static_cast<int16_t>(get("Device Id", dev_type == 0 ? -1 : 0)),
                get("Total Allocated", -1), get("Total Reserved", -1));
  if (e.name == memory_name_) t.args.resize(e.args_mark);
}
void ChromeEventParser::emit_metadata(const Pending& e) {
  Trace& t = b_.trace();
  uint32_t track = track_for(e);
  const Arg* name = t.find_arg(e.args.begin, e.args.count, name_key_);
  const Arg* sort = t.find_arg(e.args.begin, e.args.count, sort_index_key_);
  if (e.name == process_name_) {
    if (name && name->type == ArgType::kString) meta(MetaKind::kProcessName, track, name->s, 0, 0);
  } else if (e.name == thread_name_) {
    if (name && name->type == ArgType::kString) meta(MetaKind::kThreadName, track, name->s, 0, 0);
  } else if (e.name == process_sort_index_) {
    if (sort && sort->as_int()) meta(MetaKind::kProcessSort, track, 0, 0, *sort->as_int());
  } else if (e.name == thread_sort_index_) {
    if (sort && sort->as_int()) meta(MetaKind::kThreadSort, track, 0, 0, *sort->as_int());
  } else {
    // process_labels and anything else: kept as process labels, "name" -> value text.
    for (uint32_t i = 0; i < e.args.count; ++i) {
      const Arg a = t.args[e.args.begin + i];
      StringId key = e.name == process_labels_ && a.key == labels_key_
                         ? e.name
                         : b_.intern(std::string(t.str(e.name)) + "." + std::string(t.str(a.key)));
      meta(MetaKind::kLabel, track, key, b_.intern(t.arg_text(a)), 0);
    }
  }
  t.args.resize(e.args_mark);
}

void ChromeEventParser::meta(MetaKind kind, uint32_t track, StringId a, StringId b, int64_t value) {
  if (mode_ == Mode::kPart) {
    ops_.push_back(Op{
        .kind = OpKind::kMeta, .meta = kind, .track = track, .name = a, .cat = b, .value = value});
    return;
  }
  apply_meta(kind, track, a, b, value);
}

void ChromeEventParser::apply_meta(MetaKind kind, uint32_t track, StringId a, StringId b,
                                   int64_t value) {
  Trace& t = b_.trace();
  Track& tr = t.tracks[track];
  Process& p = t.processes[tr.process];
  switch (kind) {
    case MetaKind::kProcessName:
      p.name = a;
      break;
    case MetaKind::kThreadName:
      tr.name = a;
      break;
    case MetaKind::kProcessSort:
      p.sort_index = static_cast<int32_t>(value);
      break;
    case MetaKind::kThreadSort:
      tr.sort_index = static_cast<int32_t>(value);
      break;
    case MetaKind::kLabel:
      p.labels.emplace_back(a, b);
      break;
  }
}

}  // namespace mlprof::import
