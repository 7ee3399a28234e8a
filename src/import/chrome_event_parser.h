// Turns Chrome trace events (as PyTorch's Kineto profiler, the legacy autograd profiler and
// other tools write them) into Trace rows through TraceBuilder.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "import/chrome_event_fields.h"
#include "mlprof/status.h"
#include "mlprof/trace.h"
#include "trace/time_range.h"

namespace mlprof::import {

// Parses "123", "123.456", "-1.5e3" (microseconds, as Chrome traces write them) into integer
// nanoseconds without going through double: float-ns Kineto timestamps (1.7e15 us with three
// decimals) need 19 significant digits, more than a double holds.
bool parse_us_to_ns(std::string_view text, int64_t* ns);

// Two modes. kDirect builds the Trace as events arrive. kPart lets several parsers share one
// file (each parses some of its chunks, on its own core): everything whose meaning depends on
// events in other chunks (B/E pairs, flow pairs, metadata, GPU track marks) is logged as an op,
// and merge_parts() then replays the parts in chunk order into a kDirect parser, giving exactly
// the Trace a single parser would have built (same string ids, tracks, row order).
class ChromeEventParser {
 public:
  enum class Mode { kDirect, kPart };
  explicit ChromeEventParser(std::string name, Mode mode = Mode::kDirect);
  ~ChromeEventParser();

  // `json` is an array of events; it must be followed by simdjson::SIMDJSON_PADDING readable
  // bytes (`allocated` counts them). `offset` is json's byte offset in the file (for errors);
  // `seq` orders chunks across parts (kPart mode).
  Status parse_events(const char* json, size_t len, size_t allocated, uint64_t offset,
                      uint64_t seq = 0);
  // A top-level key other than traceEvents, with its value as JSON text.
  // Never fails: a value of the wrong type is counted (kBadTopLevel) and ignored.
  void parse_top_level(const std::string& key, const std::string& raw, uint64_t offset);
  // Events read so far (after merge_parts: by every part).
  uint64_t events() const { return events_; }

  Trace finish(bool bare_array) &&;
  // After the first chunk: sizes the tables for `total_bytes` of JSON at the density seen so far.
  void reserve_for(uint64_t parsed_bytes, uint64_t total_bytes);
  // kDirect only, before finish(): takes over the tables of kPart parsers that together parsed
  // every event chunk (chrome_event_merge.cpp). The parts are consumed.
  void merge_parts(std::vector<std::unique_ptr<ChromeEventParser>>& parts);
  // Off: every event goes through simdjson (tests compare the two paths; diagnosis).
  void set_fast_path(bool on) { fast_path_ = on; }

 private:
  friend struct ChromeMerge;  // merge_parts' phases (chrome_event_merge.cpp)
  // One event's fields as read (by either path), before it becomes rows.
  struct Pending {
    char ph = 0;
    bool has_ts = false, has_dur = false, has_pid = false, has_tid = false, has_id = false,
         has_cat = false;
    bool pid_is_text = false, tid_is_text = false;
    int64_t ts = 0, dur = 0, pid = 0, tid = 0;
    std::string pid_text, tid_text;
    StringId name = 0, cat = 0;
    uint64_t id = 0;
    char bp = 0, scope = 0;
    bool has_bind_id = false, flow_in = false, flow_out = false;  // flow v2
    uint64_t bind_id = 0;
    const char* bad_time = nullptr;  // "ts" or "dur" when it was not a time (ok for 'M')
    uint64_t bad_time_at = 0;
    int64_t tts = -1, tdur = -1;            // thread time (ns), -1 when absent
    const char* bad_thread_time = nullptr;  // "tts" or "tdur" when it was not a time (ignored)
    uint64_t bad_thread_time_at = 0;
    bool bad_time_range = false;  // a number, too large for 64-bit nanoseconds
    uint32_t args_mark = 0;
    ArgRange args;

    void set_time(bool is_ts, int64_t ns) {
      (is_ts ? ts : dur) = ns;
      (is_ts ? has_ts : has_dur) = true;
    }
    // ts and dur are each within +-kMaxTimeNs (parse_us_to_ns), so their sum cannot overflow;
    // an end beyond the bound would make spans overflow (metadata's times are not used).
    bool ends_out_of_range() const {
      return ph != 'M' && has_ts && has_dur && !time_in_range(ts + dur);
    }
    // The required field this event lacks and what the error says; field nullptr if none.
    // One rule for both paths: the fast path hands such events to simdjson's for the message.
    struct Missing {
      const char* field = nullptr;
      const char* what = nullptr;
    };
    Missing missing() const {
      if (ph == 0) return {"ph", "missing (every event needs a phase)"};
      if (!has_ts && ph != 'M') return {"ts", "missing"};
      if (ph == 'X' && !has_dur) return {"dur", "missing on a complete ('X') event"};
      return {};
    }
  };
  // Table sizes at one moment (kPart: where a chunk or a B/E op starts).
  struct RowPos {
    uint32_t slices = 0, instants = 0, counters = 0, memory = 0, args = 0;
  };
  struct ChunkMark {
    uint64_t seq;
    uint32_t strings, processes, tracks, series, ops;
    RowPos rows;
  };
  enum class OpKind : uint8_t { kBeginEnd, kFlow, kMeta, kGpuTrack };
  enum class MetaKind : uint8_t { kProcessName, kThreadName, kProcessSort, kThreadSort, kLabel };
  // An event whose effect needs other chunks, logged by a kPart parser (local ids).
  struct Op {
    OpKind kind = OpKind::kBeginEnd;
    char ph = 0;                       // kBeginEnd, kFlow
    MetaKind meta = MetaKind::kLabel;  // kMeta
    uint32_t track = 0;
    int64_t ts = 0;
    StringId name = 0, cat = 0;  // kMeta: the name (or label key, value) in name, cat
    ArgRange args = {};
    uint64_t id = 0;    // kFlow: flow id; kGpuTrack: stream
    int64_t value = 0;  // kMeta sorts; kGpuTrack: device; kFlow: 1 = bind to the next slice;
                        // kBeginEnd: the event's thread time (tts, ns; -1 none)
    RowPos rows = {};   // kBeginEnd: table sizes just after its args were pushed
  };
  RowPos row_pos() const;
  void drop_json_parser();
  void begin_end(char ph, uint32_t track, int64_t ts, StringId name, StringId cat, ArgRange args,
                 int64_t tts);
  // Flow endpoints. v1: 's' begin, 't' step, 'f' end (`bind_next`: to the next slice that
  // begins on the track, unless "bp": "e"). v2 (bind_id on a slice): 'O' out, 'S' in and out,
  // 'I' in; an 'I' leaves the flow open, as Perfetto's FlowTracker does.
  void flow(char ph, StringId cat, uint64_t id, uint32_t track, int64_t ts, bool bind_next);
  void flow_v2(const Pending& e, uint32_t track);
  void meta(MetaKind kind, uint32_t track, StringId a, StringId b, int64_t value);
  void apply_meta(MetaKind kind, uint32_t track, StringId a, StringId b, int64_t value);
  void gpu_track(uint32_t track, int32_t device, int64_t stream);

  // Why an event was skipped: the kind, the byte, what was wrong.
  struct Problem {
    ImportProblem kind = ImportProblem::kInvalidJson;
    uint64_t at = 0;
    std::string what;
  };
  void note(ImportProblem kind, uint64_t at, std::string_view what);
  // One event through simdjson: what the fast path does not take, and every malformed event
  // (repaired when it only has trailing commas or raw control characters, else skipped and
  // counted). Never fails the import.
  void parse_one_event(const char* json, size_t len, size_t allocated, uint64_t offset);
  bool try_event(const char* json, size_t len, size_t allocated, uint64_t at, Problem* problem);
  bool parse_event(void* object, uint64_t offset, Problem* problem);
  // chrome_event_tokenizer.cpp: parse_event's phases. One field (`value` a simdjson value) into
  // `e`, and the event as a whole checked before it is emitted.
  struct FieldError {
    std::string_view field;
    const char* what = nullptr;  // nullptr: the field was read
  };
  FieldError read_field(FieldKind kind, std::string_view key, void* value, Pending& e, uint64_t at);
  FieldError read_time_field(FieldKind kind, std::string_view key, void* value, Pending& e,
                             uint64_t at);
  FieldError read_id_field(FieldKind kind, std::string_view key, void* value, Pending& e);
  bool check_event(const Pending& e, uint64_t at, Problem* problem);
  // chrome_event_fast_path.cpp: an event of plain JSON (no escapes, ASCII strings, no number
  // simdjson and std::from_chars might read differently) parsed and emitted directly; false
  // (nothing emitted) for anything else, which then goes through simdjson.
  bool fast_event(const char*& p);
  // fast_event's phases (inline, that file only): one field's value (false: not plain), and the
  // "args" object's members.
  bool fast_field(FieldKind kind, std::string_view key, const char*& p, Pending& e);
  bool fast_args(const char*& p);
  bool fast_arg(StringId key, const char*& p);
  void emit(Pending& e);
  void normalize_ids(Pending& e);
  void emit_metadata(const Pending& e);
  void emit_counter(const Pending& e);
  void unmatched_end();
  void end_before_begin();  // a B/E pair of negative duration: counted, read as 0 ns
  void emit_memory(const Pending& e);
  void emit_flow(const Pending& e);
  void emit_begin_end(const Pending& e);
  uint32_t track_for(const Pending& e);
  StringId key_id(std::string_view key) { return cached_intern(key); }
  // b_.intern(s) through a small direct-mapped cache of strings seen before (names, arg keys,
  // arg values), indexed by their length and first and last 8 bytes: a hit costs one compare
  // instead of hashing the whole string (kernel names are ~80 bytes). Ids are the pool's.
  StringId cached_intern(std::string_view s);
  StringId category_id(std::string_view text);

  std::string name_;
  Mode mode_;
  bool fast_path_ = true;
  TraceBuilder b_;
  std::vector<ChunkMark> marks_;  // kPart
  std::vector<Op> ops_;           // kPart
  struct JsonParser;              // simdjson's parser, kept out of this header
  std::unique_ptr<JsonParser> parser_;

  // Interned ids of strings the parser compares against.
  StringId memory_name_, oom_name_, process_name_, thread_name_, process_sort_index_,
      thread_sort_index_, process_labels_, name_key_, sort_index_key_, labels_key_;
  struct CachedString {
    const char* text = nullptr;  // the pool's copy
    uint32_t len = 0;
    StringId id = 0;
  };
  std::array<CachedString, 1024> intern_cache_{};
  std::vector<bool> gpu_category_;  // indexed by StringId (grown on demand)
  StringId last_cat_text_id_ = 0;
  std::string last_cat_text_;

  // Open B (and async b) events per track: (ts, name, cat, args, thread time). After a merge,
  // `part` and `local_args` say where the begin's args were read (their keys, for the end's).
  struct Open {
    int64_t ts;
    StringId name, cat;
    ArgRange args;
    int64_t tts = -1;
    uint32_t part = 0, local_args = 0;
  };
  static SliceTable::Row pair_slice(const Open& o, char end_ph, uint32_t track, int64_t end_ts,
                                    int64_t end_tts, StringId end_name, StringId end_cat,
                                    ArgRange args);

  std::unordered_map<uint32_t, std::vector<Open>> open_;
  // Flow endpoints waiting for their partner, by (cat, id).
  struct FlowEnd {
    uint32_t track;
    int64_t ts;
    StringId cat = 0;
    bool bind_next = false;  // a v1 'f' without "bp": "e" waiting for its start
    bool used = false;       // a start some flow came from (v2 starts stay open)
  };
  uint64_t unmatched_flow_ends_ = 0;  // v2 flow_in without a flow_out before it
  struct FlowKeyHash {
    size_t operator()(const std::pair<StringId, uint64_t>& k) const {
      return std::hash<uint64_t>()(k.second * 0x9e3779b97f4a7c15ull ^ k.first);
    }
  };
  std::unordered_map<std::pair<StringId, uint64_t>, FlowEnd, FlowKeyHash> flow_starts_, flow_ends_;

  std::string last_pid_text_;
  uint32_t last_text_process_ = UINT32_MAX;
  bool saw_string_pid_ = false;
  bool saw_category_ = false;
  bool kineto_keys_ = false;
  uint64_t events_ = 0;
  uint64_t event_at_ = 0;  // byte offset of the event being read (import problems name it)
  const char* event_text_ = nullptr;  // the event simdjson is reading (error offsets)
  size_t event_len_ = 0;
};

}  // namespace mlprof::import
