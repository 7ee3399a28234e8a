// Pairing in Chrome events: B/E (and async b/e) events into slices on their track, an end before
// its begin or without one counted; flow endpoints (v1 s/t/f with their binding rules, v2
// bind_id with flow_in/flow_out) matched into flows by (category, id).

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "import/chrome_event_fields.h"
#include "import/chrome_event_parser.h"
#include "import/error_text.h"

namespace mlprof::import {

void ChromeEventParser::emit_begin_end(const Pending& e) {
  uint32_t track = track_for(e);
  if (e.ph == 'b' || e.ph == 'e') {
    uint32_t proc = b_.trace().tracks[track].process;
    track = b_.async_track(proc, e.cat, e.has_id ? e.id : 0);
  }
  begin_end(e.ph, track, e.ts, e.name, e.cat, e.args, e.tts);
  if (e.ph == 'B' || e.ph == 'b') flow_v2(e, track);
}

void ChromeEventParser::begin_end(char ph, uint32_t track, int64_t ts, StringId name, StringId cat,
                                  ArgRange args, int64_t tts) {
  if (mode_ == Mode::kPart) {
    ops_.push_back(Op{.kind = OpKind::kBeginEnd,
                      .ph = ph,
                      .track = track,
                      .ts = ts,
                      .name = name,
                      .cat = cat,
                      .args = args,
                      .value = tts,
                      .rows = row_pos()});
    return;
  }
  auto& stack = open_[track];
  if (ph == 'B' || ph == 'b') {
    stack.push_back(Open{ts, name, cat, args, tts});
    return;
  }
  if (stack.empty()) {
    unmatched_end();
    return;
  }
  Open o = stack.back();
  stack.pop_back();
  ArgRange slice_args = o.args;
  if (args.count) {
    // End args join the begin's: the begin's are copied after the end's so one range holds all,
    // but only those whose key the end does not have (one value per key, the end's, as in
    // Perfetto; an exported pair had its pass-through keys twice).
    Trace& t = b_.trace();
    uint32_t kept = 0;
    for (uint32_t i = 0; i < o.args.count; ++i) {
      Arg a = t.args[o.args.begin + i];
      if (t.find_arg(args.begin, args.count, a.key)) continue;
      t.args.push_back(a);
      ++kept;
    }
    slice_args = ArgRange{args.begin, args.count + kept};
  }
  if (ts < o.ts) end_before_begin();  // counted, read as 0 (pair_slice)
  b_.add_slice(pair_slice(o, ph, track, ts, tts, name, cat, slice_args));
}

// The slice of a B/E (or b/e) pair. Thread time as Perfetto reads it: the begin's tts is the
// slice's thread start; the end's tts minus it the thread duration (B/E only).
SliceTable::Row ChromeEventParser::pair_slice(const Open& o, char end_ph, uint32_t track,
                                              int64_t end_ts, int64_t end_tts, StringId end_name,
                                              StringId end_cat, ArgRange args) {
  int64_t thread_dur = -1;
  if (end_ph == 'E' && o.tts >= 0 && end_tts >= o.tts) thread_dur = end_tts - o.tts;
  return SliceTable::Row{.ts = o.ts,
                         .dur = std::max<int64_t>(0, end_ts - o.ts),
                         .track = track,
                         .name = o.name ? o.name : end_name,
                         .cat = o.cat ? o.cat : end_cat,
                         .args_begin = args.begin,
                         .args_count = args.count,
                         .thread_ts = o.tts,
                         .thread_dur = thread_dur};
}

void ChromeEventParser::end_before_begin() {
  note(ImportProblem::kNegativeDuration, UINT64_MAX,
       "an end event ('E', 'e') earlier than its begin: a negative duration, read as 0");
}

void ChromeEventParser::unmatched_end() {
  ++b_.trace().meta.skipped_events;
  note(ImportProblem::kUnmatchedEnd, UINT64_MAX,
       "an end event ('E', 'e') without its begin (skipped)");
}
void ChromeEventParser::emit_flow(const Pending& e) {
  uint32_t track = track_for(e);
  b_.trace().args.resize(e.args_mark);
  flow(e.ph, e.cat, e.id, track, e.ts, e.ph == 'f' && e.bp != 'e');
}

namespace {
// v2 flow ids live apart from v1's (cat, id) keys.
constexpr StringId kFlowV2Key = UINT32_MAX;
}  // namespace

void ChromeEventParser::flow_v2(const Pending& e, uint32_t track) {
  if (!e.has_bind_id) return;
  char ph = e.flow_in && e.flow_out ? 'S' : e.flow_out ? 'O' : e.flow_in ? 'I' : 0;
  if (ph) flow(ph, e.cat, e.bind_id, track, e.ts, false);
}

void ChromeEventParser::flow(char ph, StringId cat, uint64_t id, uint32_t track, int64_t ts,
                             bool bind_next) {
  if (mode_ == Mode::kPart) {
    ops_.push_back(Op{.kind = OpKind::kFlow,
                      .ph = ph,
                      .track = track,
                      .ts = ts,
                      .cat = cat,
                      .id = id,
                      .value = bind_next ? 1 : 0});
    return;
  }
  bool v2 = ph == 'O' || ph == 'S' || ph == 'I';
  std::pair<StringId, uint64_t> key{v2 ? kFlowV2Key : cat, id};
  auto add = [&](const FlowEnd& from, uint32_t to_track, int64_t to_ts, bool next) {
    b_.add_flow(id, v2 ? from.cat : cat, from.track, from.ts, to_track, to_ts, next);
  };
  if (ph == 's' || ph == 't' || ph == 'O' || ph == 'S') {
    auto it = flow_starts_.find(key);
    if (ph == 't' || ph == 'S') {
      // A step ends the hop that came here and starts the next one from here.
      if (it != flow_starts_.end()) add(it->second, track, ts, false);
    } else if (!v2) {
      auto end = flow_ends_.find(key);
      if (end != flow_ends_.end()) {  // Kineto sometimes writes the finish first
        add(FlowEnd{track, ts}, end->second.track, end->second.ts, end->second.bind_next);
        flow_ends_.erase(end);
        return;
      }
    }
    flow_starts_[key] = FlowEnd{track, ts, cat};
    return;
  }
  auto it = flow_starts_.find(key);
  if (ph == 'I') {
    if (it == flow_starts_.end()) {
      unmatched_flow_ends_++;
    } else {
      add(it->second, track, ts, false);
      it->second.used = true;
    }
    return;
  }
  if (it != flow_starts_.end()) {
    add(it->second, track, ts, bind_next);
    flow_starts_.erase(it);
  } else {
    flow_ends_[key] = FlowEnd{track, ts, cat, bind_next};
  }
}

}  // namespace mlprof::import
