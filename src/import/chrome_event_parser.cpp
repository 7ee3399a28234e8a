#include "import/chrome_event_parser.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "import/chrome_event_fields.h"
#include "import/error_text.h"
#include "import/json_chunker.h"
#include "import/json_repair.h"

namespace mlprof::import {

namespace od = simdjson::ondemand;

bool parse_us_to_ns(std::string_view t, int64_t* ns) {
  while (!t.empty() &&
         (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t'))
    t.remove_suffix(1);
  if (t.size() >= 2 && t.front() == '"' && t.back() == '"') t = t.substr(1, t.size() - 2);
  if (t.empty()) return false;
  size_t i = 0;
  bool neg = false;
  if (t[0] == '-') {
    neg = true;
    i = 1;
  }
  uint64_t whole = 0;
  size_t digits = 0;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
    if (whole > 9'000'000'000'000'000ull / 10) return false;
    whole = whole * 10 + static_cast<uint64_t>(t[i] - '0');
    ++i;
    ++digits;
  }
  uint64_t frac_ns = 0;
  bool round_up = false;
  if (i < t.size() && t[i] == '.') {
    ++i;
    size_t k = 0;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
      if (k < 3)
        frac_ns = frac_ns * 10 + static_cast<uint64_t>(t[i] - '0');
      else if (k == 3)
        round_up = t[i] >= '5';
      ++k;
      ++i;
      ++digits;
    }
    for (; k < 3; ++k) frac_ns *= 10;
  }
  if (digits == 0) return false;
  if (i < t.size()) {
    if (t[i] != 'e' && t[i] != 'E') return false;
    // Exponent form is rare in traces: go through long double.
    std::string s(t);
    char* endp = nullptr;
    long double v = std::strtold(s.c_str(), &endp);
    if (endp != s.c_str() + s.size() || !std::isfinite(static_cast<double>(v))) return false;
    long double r = std::round(v * 1000.0L);
    if (!(std::fabs(r) <= static_cast<long double>(kMaxTimeNs))) return false;
    *ns = static_cast<int64_t>(r);
    return true;
  }
  if (whole > static_cast<uint64_t>(INT64_MAX) / 1000 - 1) return false;
  int64_t v = static_cast<int64_t>(whole * 1000 + frac_ns + (round_up ? 1 : 0));
  if (v > kMaxTimeNs) return false;  // differences of two times must fit (trace/time_range.h)
  *ns = neg ? -v : v;
  return true;
}

namespace {

// Categories of events that run on a GPU (or other accelerator) timeline rather than a thread.
constexpr const char* kGpuCategories[] = {
    "kernel", "gpu_memcpy", "gpu_memset",      "gpu_user_annotation", "Kernel",
    "Memcpy", "Memset",     "mtia_ccp_events", "cuda_profiler_range"};

}  // namespace

static uint64_t hash_text(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// A flow id written as a string: "0x1f" is hex, digits are decimal, anything else is hashed.
uint64_t id_from_text(std::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    uint64_t v = 0;
    for (size_t i = 2; i < s.size(); ++i) {
      char c = s[i];
      int d = (c >= '0' && c <= '9')   ? c - '0'
              : (c >= 'a' && c <= 'f') ? c - 'a' + 10
              : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                       : -1;
      if (d < 0) return hash_text(s);
      v = v * 16 + static_cast<uint64_t>(d);
    }
    return v;
  }
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return hash_text(s);
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return s.empty() ? 0 : v;
}

struct ChromeEventParser::JsonParser {
  od::parser parser;
};

ChromeEventParser::ChromeEventParser(std::string name, Mode mode)
    : name_(std::move(name)), mode_(mode), parser_(std::make_unique<JsonParser>()) {
  memory_name_ = b_.intern("[memory]");
  oom_name_ = b_.intern("[OutOfMemory]");
  process_name_ = b_.intern("process_name");
  thread_name_ = b_.intern("thread_name");
  process_sort_index_ = b_.intern("process_sort_index");
  thread_sort_index_ = b_.intern("thread_sort_index");
  process_labels_ = b_.intern("process_labels");
  name_key_ = b_.intern("name");
  sort_index_key_ = b_.intern("sort_index");
  labels_key_ = b_.intern("labels");
  for (const char* c : kGpuCategories) {
    StringId id = b_.intern(c);
    if (gpu_category_.size() <= id) gpu_category_.resize(id + 1, false);
    gpu_category_[id] = true;
  }
}

ChromeEventParser::~ChromeEventParser() = default;

void ChromeEventParser::drop_json_parser() { parser_.reset(); }

StringId ChromeEventParser::key_id(std::string_view key) { return b_.intern(key); }

StringId ChromeEventParser::category_id(std::string_view s) {
  // Consecutive events mostly share a category: skip hashing it again.
  if (s != last_cat_text_) {
    last_cat_text_id_ = b_.intern(s);
    last_cat_text_.assign(s);
  }
  return last_cat_text_id_;
}

namespace {
// A field's key without copying it; only keys with escapes (or over 64 bytes) are unescaped.
// Reading 64 bytes ahead is safe: simdjson's padding follows every document.
bool field_key(od::field& field, std::string_view* key) {
  const char* k = field.key().raw();
  const char* q = static_cast<const char*>(std::memchr(k, '"', 64));
  if (q && !std::memchr(k, '\\', static_cast<size_t>(q - k))) {
    *key = std::string_view(k, static_cast<size_t>(q - k));
    return true;
  }
  return !field.unescaped_key().get(*key);
}
}  // namespace

namespace {

// Reads one arg value of any JSON type into the builder. Returns false on malformed JSON.
bool read_arg(TraceBuilder& b, StringId key, od::value v) {
  od::json_type type;
  if (v.type().get(type)) return false;
  switch (type) {
    case od::json_type::number: {
      od::number_type nt = od::number_type::floating_point_number;
      if (v.get_number_type().get(nt)) nt = od::number_type::floating_point_number;
      int64_t i;
      uint64_t u;
      double d;
      if (nt == od::number_type::signed_integer && !v.get_int64().get(i)) {
        b.arg_int(key, i);
      } else if (nt == od::number_type::unsigned_integer && !v.get_uint64().get(u)) {
        b.arg_uint(key, u);
      } else if (nt == od::number_type::floating_point_number && !v.get_double().get(d)) {
        b.arg_double(key, d);
      } else {
        // Integers beyond 64 bits: keep their text.
        std::string_view raw = v.raw_json_token();
        while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' ||
                                raw.back() == '\t'))
          raw.remove_suffix(1);
        b.arg_json(key, raw);
      }
      return true;
    }
    case od::json_type::string: {
      std::string_view s;
      if (v.get_string().get(s)) return false;
      b.arg_string(key, b.intern(s));
      return true;
    }
    case od::json_type::boolean: {
      bool x;
      if (v.get_bool().get(x)) return false;
      b.arg_bool(key, x);
      return true;
    }
    case od::json_type::null: {
      // is_null() returns a result: converting it to bool would throw on "nul" and the like.
      bool is_null = false;
      if (v.is_null().get(is_null) || !is_null) return false;
      b.arg_null(key);
      return true;
    }
    case od::json_type::array: {
      od::array a;
      std::string_view raw;
      if (v.get_array().get(a) || a.raw_json().get(raw)) return false;
      b.arg_json(key, raw);
      return true;
    }
    case od::json_type::object: {
      od::object o;
      std::string_view raw;
      if (v.get_object().get(o) || o.raw_json().get(raw)) return false;
      b.arg_json(key, raw);
      return true;
    }
  }
  return false;
}

}  // namespace

ChromeEventParser::RowPos ChromeEventParser::row_pos() const {
  const Trace& t = const_cast<TraceBuilder&>(b_).trace();
  return RowPos{static_cast<uint32_t>(t.slices.size()), static_cast<uint32_t>(t.instants.size()),
                static_cast<uint32_t>(t.counters.size()), static_cast<uint32_t>(t.memory.size()),
                static_cast<uint32_t>(t.args.size())};
}

Status ChromeEventParser::parse_events(const char* json, size_t len, size_t allocated,
                                       uint64_t offset, uint64_t seq) {
  if (mode_ == Mode::kPart) {
    Trace& t = b_.trace();
    marks_.push_back(ChunkMark{
        seq, static_cast<uint32_t>(t.strings.size()), static_cast<uint32_t>(t.processes.size()),
        static_cast<uint32_t>(t.tracks.size()), static_cast<uint32_t>(t.counter_series.size()),
        static_cast<uint32_t>(ops_.size()), row_pos()});
  }
  // The chunker hands over whole events separated by single commas: walk them, taking each
  // through the fast path when it is plain JSON and through simdjson otherwise.
  const char* p = json + 1;
  const char* end = json + len - 1;  // the closing ']'
  auto ws = [](const char* q) {
    while (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t') ++q;
    return q;
  };
  for (bool first = true;; first = false) {
    p = ws(p);
    if (p >= end) break;
    if (!first) {
      if (*p != ',') break;  // not from the chunker
      p = ws(p + 1);
    }
    if (*p != '{') break;
    const char* start = p;
    event_at_ = offset + static_cast<uint64_t>(start - json) - 1;
    if (fast_path_ && fast_event(p)) continue;
    p = scan_value_end(start, end);
    if (!p) {  // not from the chunker (its scan and this one agree on whole events)
      p = start;
      break;
    }
    size_t at = static_cast<size_t>(start - json);
    parse_one_event(start, static_cast<size_t>(p - start), allocated - at, offset + at - 1);
  }
  if (p < end) {
    size_t at = static_cast<size_t>(p - json);
    return Status::error(name_ + ": byte " + std::to_string(offset + at - 1) +
                         ": invalid JSON between events");
  }
  return Status::ok();
}

void ChromeEventParser::note(ImportProblem kind, uint64_t at, std::string_view what) {
  b_.trace().meta.import_stats.note(kind, at, what);
}

bool ChromeEventParser::try_event(const char* json, size_t len, size_t allocated, uint64_t at,
                                  Problem* problem) {
  od::document doc;
  od::object obj;
  auto err = parser_->parser.iterate(simdjson::padded_string_view(json, len, allocated)).get(doc);
  if (!err) err = doc.get_object().get(obj);
  if (err) {
    *problem = {ImportProblem::kInvalidJson, at,
                std::string("invalid JSON: ") + simdjson::error_message(err)};
    return false;
  }
  event_text_ = json;
  event_len_ = len;
  // [json, json + len) is one balanced value (the chunker's scan): nothing follows it.
  try {
    return parse_event(&obj, at, problem);
  } catch (const simdjson::simdjson_error& e) {
    // Every access checks its error code; this is the net for a conversion that throws.
    *problem = {ImportProblem::kInvalidJson, at, std::string("invalid JSON: ") + e.what()};
    return false;
  }
}

void ChromeEventParser::parse_one_event(const char* json, size_t len, size_t allocated,
                                        uint64_t at) {
  uint32_t mark = b_.args_mark();
  Problem problem;
  if (try_event(json, len, allocated, at, &problem)) return;
  b_.trace().args.resize(mark);
  if (problem.kind == ImportProblem::kMissingField || problem.kind == ImportProblem::kEmptyEvent)
    return note(problem.kind, problem.at, problem.what);  // valid JSON, read to its end
  // Is it JSON at all? Trailing commas and raw control characters are repaired, as Perfetto
  // and Chrome's viewer read them; anything else is skipped, its first bad byte reported.
  JsonRepair r = repair_json_value(std::string_view(json, len));
  if (!r.valid)
    return note(ImportProblem::kInvalidJson, at + r.bad_at,
                std::string("invalid JSON: ") + r.what + ", event skipped");
  if (!r.repaired()) return note(problem.kind, problem.at, problem.what);
  simdjson::padded_string fixed(r.fixed);
  Problem again;
  if (!try_event(fixed.data(), fixed.size(), fixed.size() + simdjson::SIMDJSON_PADDING, at,
                 &again)) {
    b_.trace().args.resize(mark);
    return note(again.kind, at, again.what);
  }
  if (r.trailing_commas)
    note(ImportProblem::kTrailingComma, at + r.first_trailing_comma_at,
         "trailing ',' before a closing bracket (ignored)");
  if (r.control_characters)
    note(ImportProblem::kControlCharacter, at + r.first_control_character_at,
         "raw control character in a string (read as if escaped)");
}

bool ChromeEventParser::parse_event(void* object, uint64_t at, Problem* problem) {
  event_at_ = at;
  od::object& obj = *static_cast<od::object*>(object);
  Pending e;
  e.args_mark = b_.args_mark();
  // A field's problem, at its value's first byte when simdjson still points there.
  od::value* current = nullptr;
  auto bad = [&](std::string_view field, std::string_view what) {
    uint64_t where = at;
    if (current) {
      const char* tok = current->raw_json_token().data();
      if (tok >= event_text_ && tok < event_text_ + event_len_)
        where = at + static_cast<uint64_t>(tok - event_text_);
    }
    *problem = {
        ImportProblem::kBadField, where,
        "event field \"" + printable(field) + "\": " + std::string(what) + ", event skipped"};
    return false;
  };
  // `current` points at this iteration's value only: cleared when the iteration ends, so a
  // problem found later never reads a value that is gone (found by the fuzzer under ASan).
  struct ClearAtEnd {
    od::value*& p;
    ~ClearAtEnd() { p = nullptr; }
  };
  for (auto field_result : obj) {
    ClearAtEnd clear_current{current};
    od::field field;
    if (std::move(field_result).get(field)) return bad("?", "invalid JSON");
    // Keys are compared raw (no copy); only a key with an escape goes through unescaping.
    std::string_view key;
    if (!field_key(field, &key)) return bad("?", "invalid JSON key");
    od::value v = field.value();
    current = &v;
    FieldKind kind = classify(key);
    switch (kind) {
      case FieldKind::kPh: {
        std::string_view s;
        if (v.get_string().get(s) || s.empty()) return bad(key, "expected a one-letter string");
        e.ph = s[0];
        break;
      }
      case FieldKind::kName: {
        std::string_view s;
        if (v.get_string().get(s)) return bad(key, "expected a string");
        e.name = b_.intern(s);
        break;
      }
      case FieldKind::kCat: {
        std::string_view s;
        if (v.get_string().get(s)) return bad(key, "expected a string");
        e.cat = category_id(s);
        e.has_cat = true;
        break;
      }
      case FieldKind::kPid:
      case FieldKind::kTid: {
        od::json_type t;
        if (v.type().get(t)) return bad(key, "invalid JSON");
        bool is_pid = kind == FieldKind::kPid;
        if (t == od::json_type::number) {
          int64_t x;
          if (v.get_int64().get(x)) {
            double d;
            if (v.get_double().get(d)) return bad(key, "expected an integer or a string");
            // 1e20 would not fit (and converting it is undefined): the real problem, named.
            if (!(d > -9.2e18 && d < 9.2e18)) return bad(key, "value out of range");
            x = static_cast<int64_t>(d);
          }
          (is_pid ? e.pid : e.tid) = x;
        } else if (t == od::json_type::string) {
          std::string_view s;
          if (v.get_string().get(s)) return bad(key, "invalid string");
          (is_pid ? e.pid_text : e.tid_text).assign(s);
          (is_pid ? e.pid_is_text : e.tid_is_text) = true;
        } else {
          return bad(key, "expected an integer or a string");
        }
        (is_pid ? e.has_pid : e.has_tid) = true;
        break;
      }
      case FieldKind::kTs:
      case FieldKind::kDur: {
        od::json_type t;
        int64_t ns;
        if (v.type().get(t)) return bad(key, "invalid JSON");
        if ((t == od::json_type::number || t == od::json_type::string) &&
            parse_us_to_ns(v.raw_json_token(), &ns)) {
          e.set_time(kind == FieldKind::kTs, ns);
          break;
        }
        // Not a time: fatal for the event unless it is metadata (whose phase may come later).
        if (!e.bad_time) {
          e.bad_time = kind == FieldKind::kTs ? "ts" : "dur";
          e.bad_time_range = t == od::json_type::number;
          const char* tok = v.raw_json_token().data();
          e.bad_time_at = at;
          if (tok >= event_text_ && tok < event_text_ + event_len_)
            e.bad_time_at = at + static_cast<uint64_t>(tok - event_text_);
        }
        // The value must still be valid JSON: read it through.
        if (!read_arg(b_, 0, v)) return bad(key, "invalid JSON value");
        b_.trace().args.pop_back();
        break;
      }
      case FieldKind::kTts:
      case FieldKind::kTdur: {
        // Thread time: kept when it is a time (a number or a numeric string, as ts), ignored
        // (and counted) otherwise; the event does not need it.
        od::json_type t;
        int64_t ns;
        if (v.type().get(t)) return bad(key, "invalid JSON");
        if ((t == od::json_type::number || t == od::json_type::string) &&
            parse_us_to_ns(v.raw_json_token(), &ns) && ns >= 0) {
          (kind == FieldKind::kTts ? e.tts : e.tdur) = ns;
          break;
        }
        if (!e.bad_thread_time) {
          e.bad_thread_time = kind == FieldKind::kTts ? "tts" : "tdur";
          const char* tok = v.raw_json_token().data();
          e.bad_thread_time_at = at;
          if (tok >= event_text_ && tok < event_text_ + event_len_)
            e.bad_thread_time_at = at + static_cast<uint64_t>(tok - event_text_);
        }
        if (!read_arg(b_, 0, v)) return bad(key, "invalid JSON value");
        b_.trace().args.pop_back();
        break;
      }
      case FieldKind::kId: {
        od::json_type t;
        if (v.type().get(t)) return bad(key, "invalid JSON");
        if (t == od::json_type::number) {
          uint64_t u;
          int64_t i;
          if (!v.get_uint64().get(u))
            e.id = u;
          else if (!v.get_int64().get(i))
            e.id = static_cast<uint64_t>(i);
          else
            return bad(key, "expected an integer or a string");
        } else if (t == od::json_type::string) {
          std::string_view s;
          if (v.get_string().get(s)) return bad(key, "invalid string");
          e.id = id_from_text(s);
        } else {
          return bad(key, "expected an integer or a string");
        }
        e.has_id = true;
        break;
      }
      case FieldKind::kId2: {
        od::object o;
        if (v.get_object().get(o)) return bad(key, "expected an object");
        for (auto f : o) {
          od::value iv = f.value();
          std::string_view s;
          uint64_t u;
          if (!iv.get_uint64().get(u))
            e.id = u;
          else if (!iv.get_string().get(s))
            e.id = id_from_text(s);
        }
        e.has_id = true;
        break;
      }
      case FieldKind::kBindId: {
        // Like "id": a number, or a string ("0x402").
        od::json_type t;
        if (v.type().get(t)) return bad(key, "invalid JSON");
        uint64_t u;
        int64_t i;
        std::string_view sv;
        if (t == od::json_type::number && !v.get_uint64().get(u))
          e.bind_id = u;
        else if (t == od::json_type::number && !v.get_int64().get(i))
          e.bind_id = static_cast<uint64_t>(i);
        else if (t == od::json_type::string && !v.get_string().get(sv))
          e.bind_id = id_from_text(sv);
        else
          return bad(key, "expected an integer or a string");
        e.has_bind_id = true;
        break;
      }
      case FieldKind::kFlowIn:
      case FieldKind::kFlowOut: {
        bool x;
        if (v.get_bool().get(x)) return bad(key, "expected true or false");
        (kind == FieldKind::kFlowIn ? e.flow_in : e.flow_out) = x;
        break;
      }
      case FieldKind::kBp:
      case FieldKind::kScope: {
        std::string_view s;
        if (v.get_string().get(s)) return bad(key, "expected a string");
        (kind == FieldKind::kBp ? e.bp : e.scope) = s.empty() ? 0 : s[0];
        break;
      }
      case FieldKind::kArgs: {
        od::json_type t;
        if (v.type().get(t)) return bad(key, "invalid JSON");
        if (t == od::json_type::null) break;
        od::object args;
        if (t != od::json_type::object || v.get_object().get(args))
          return bad(key, "expected an object");
        for (auto af_result : args) {
          od::field af;
          std::string_view ak;
          if (std::move(af_result).get(af) || !field_key(af, &ak))
            return bad(key, "invalid JSON key");
          if (!read_arg(b_, key_id(ak), af.value())) return bad(ak, "invalid JSON value");
        }
        break;
      }
      case FieldKind::kOther: {
        // Unknown event keys are kept as args named "@key" so export writes them back.
        std::string k = "@";
        k += key;
        if (!read_arg(b_, key_id(k), v)) return bad(key, "invalid JSON value");
        break;
      }
    }
  }
  current = nullptr;
  e.args = b_.args_since(e.args_mark);
  if (e.bad_time) {
    if (e.ph != 'M') {
      *problem = {ImportProblem::kBadField, e.bad_time_at,
                  "event field \"" + std::string(e.bad_time) +
                      (e.bad_time_range ? "\": value out of range (beyond +-4.6e15 "
                                          "microseconds, 146 years from the epoch), event skipped"
                                        : "\": expected a number (microseconds), event skipped")};
      return false;
    }
    // Metadata needs no time (Perfetto ignores it): keep the event, count the field.
    note(ImportProblem::kIgnoredField, e.bad_time_at,
         "event field \"" + std::string(e.bad_time) +
             "\" of a metadata event: not a number (ignored)");
  }
  if (e.ends_out_of_range()) {
    *problem = {ImportProblem::kBadField, at,
                "event end (ts + dur) out of range (beyond +-4.6e15 microseconds, 146 years from "
                "the epoch), event skipped"};
    return false;
  }
  if (auto m = e.missing(); m.field) {
    if (e.ph == 0 && !e.has_ts && !e.has_pid && !e.has_tid && e.name == 0 && e.args.count == 0)
      *problem = {ImportProblem::kEmptyEvent, at, "empty event {} skipped"};
    else
      *problem = {ImportProblem::kMissingField, at,
                  "event field \"" + std::string(m.field) + "\": " + m.what + ", event skipped"};
    return false;
  }
  if (e.bad_thread_time)
    note(ImportProblem::kIgnoredField, e.bad_thread_time_at,
         "event field \"" + std::string(e.bad_thread_time) +
             "\": not a non-negative time (thread time ignored)");
  ++events_;
  emit(e);
  return true;
}

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

void ChromeEventParser::parse_top_level(const std::string& key, const std::string& raw,
                                        uint64_t offset) {
  TraceMeta& m = b_.trace().meta;
  m.extra.emplace_back(key, raw);
  if (key == "schemaVersion" || key == "deviceProperties" || key == "distributedInfo" ||
      key == "baseTimeNanoseconds")
    kineto_keys_ = true;
  auto fail_at = [&](std::string_view what, uint64_t at) {
    note(ImportProblem::kBadTopLevel, at,
         "top-level key \"" + printable(key) + "\": " + std::string(what) + " (ignored)");
  };
  auto fail = [&](std::string_view what) { fail_at(what, offset); };
  // The repairs made inside events (a trailing comma, a raw control character in a string) are
  // made here too, so that one bad byte does not cost the devices or the rank.
  JsonRepair r = repair_json_value(raw);
  if (!r.valid) {
    m.extra.pop_back();  // not written back by export either
    return fail_at(std::string("invalid JSON: ") + r.what, offset + r.bad_at);
  }
  if (r.trailing_commas)
    note(ImportProblem::kTrailingComma, offset + r.first_trailing_comma_at,
         "top-level key \"" + printable(key) +
             "\": trailing ',' before a closing bracket (ignored)");
  if (r.control_characters)
    note(ImportProblem::kControlCharacter, offset + r.first_control_character_at,
         "top-level key \"" + printable(key) +
             "\": raw control character in a string (read as if escaped)");
  if (r.repaired()) m.extra.back().second = r.fixed;  // export writes the repaired value
  simdjson::padded_string ps(m.extra.back().second);
  od::parser p;
  od::document doc;
  if (p.iterate(ps).get(doc)) {
    m.extra.pop_back();
    return fail("invalid JSON");
  }
  if (key == "schemaVersion") {
    int64_t v;
    if (!doc.get_int64().get(v)) m.schema_version = static_cast<int32_t>(v);
  } else if (key == "displayTimeUnit") {
    std::string_view s;
    if (!doc.get_string().get(s)) m.display_time_unit.assign(s);
  } else if (key == "baseTimeNanoseconds") {
    int64_t v;
    uint64_t u;
    if (!doc.get_int64().get(v))
      m.base_time_ns = v;
    else if (!doc.get_uint64().get(u))
      m.base_time_ns = static_cast<int64_t>(u);
  } else if (key == "distributedInfo") {
    od::object o;
    if (doc.get_object().get(o)) return fail("expected an object");
    for (auto f : o) {
      std::string_view k;
      if (f.unescaped_key().get(k)) return fail("invalid JSON");
      int64_t v;
      if (k == "rank" && !f.value().get_int64().get(v))
        m.rank = static_cast<int32_t>(v);
      else if (k == "world_size" && !f.value().get_int64().get(v))
        m.world_size = static_cast<int32_t>(v);
    }
  } else if (key == "deviceProperties") {
    od::array a;
    if (doc.get_array().get(a)) return fail("expected an array");
    for (auto elem : a) {
      od::object o;
      if (elem.get_object().get(o)) return fail("expected an array of objects");
      DeviceInfo d;
      for (auto f : o) {
        std::string_view k;
        if (f.unescaped_key().get(k)) return fail("invalid JSON");
        od::value v = f.value();
        if (k == "name") {
          std::string_view s;
          if (!v.get_string().get(s)) d.name.assign(s);
          continue;
        }
        int64_t x = 0;
        if (v.get_int64().get(x)) continue;
        if (k == "id")
          d.id = static_cast<int32_t>(x);
        else if (k == "totalGlobalMem")
          d.total_global_mem = x;
        else if (k == "computeMajor")
          d.compute_major = static_cast<int32_t>(x);
        else if (k == "computeMinor")
          d.compute_minor = static_cast<int32_t>(x);
        else if (k == "numSms")
          d.num_sms = static_cast<int32_t>(x);
        else if (k == "maxThreadsPerBlock")
          d.max_threads_per_block = static_cast<int32_t>(x);
        else if (k == "maxThreadsPerMultiprocessor")
          d.max_threads_per_sm = static_cast<int32_t>(x);
        else if (k == "regsPerBlock")
          d.regs_per_block = static_cast<int32_t>(x);
        else if (k == "regsPerMultiprocessor")
          d.regs_per_sm = static_cast<int32_t>(x);
        else if (k == "warpSize")
          d.warp_size = static_cast<int32_t>(x);
        else if (k == "sharedMemPerBlock")
          d.shared_mem_per_block = x;
        else if (k == "sharedMemPerMultiprocessor")
          d.shared_mem_per_sm = x;
      }
      m.devices.push_back(std::move(d));
    }
  }
}

void ChromeEventParser::reserve_for(uint64_t parsed, uint64_t total) {
  if (parsed == 0 || total <= parsed) return;
  const Trace& t = b_.trace();
  double scale = static_cast<double>(total) / static_cast<double>(parsed) * 1.05;
  auto est = [&](size_t n) { return static_cast<size_t>(static_cast<double>(n) * scale) + 16; };
  b_.reserve(est(t.slices.size()), est(t.instants.size()), est(t.args.size()), est(t.flows.size()),
             est(t.memory.size()));
  // kPart logs every flow endpoint as an op (600k per 1M Kineto events): grown by doubling, the
  // copies cost 7% of an import.
  if (mode_ == Mode::kPart) ops_.reserve(est(ops_.size()));
}

Trace ChromeEventParser::finish(bool bare_array) && {
  Trace& t = b_.trace();
  // Begins without an end: close them at the last timestamp seen, marked unfinished.
  int64_t last = 0;
  for (int64_t x : t.slices.ts) last = std::max(last, x);
  for (size_t i = 0; i < t.slices.size(); ++i)
    last = std::max(last, t.slices.ts[i] + t.slices.dur[i]);
  for (int64_t x : t.instants.ts) last = std::max(last, x);
  StringId unfinished = b_.intern("unfinished");
  for (auto& [track, stack] : open_) {
    for (const Open& o : stack) {
      uint32_t mark = b_.args_mark();
      for (uint32_t i = 0; i < o.args.count; ++i) t.args.push_back(t.args[o.args.begin + i]);
      b_.arg_bool(unfinished, true);
      ArgRange args = b_.args_since(mark);
      b_.add_slice(SliceTable::Row{.ts = o.ts,
                                   .dur = std::max<int64_t>(0, last - o.ts),
                                   .track = track,
                                   .name = o.name,
                                   .cat = o.cat,
                                   .args_begin = args.begin,
                                   .args_count = args.count,
                                   .thread_ts = o.tts});
    }
  }
  size_t open_starts = 0;
  for (const auto& [key, start] : flow_starts_) open_starts += start.used ? 0 : 1;
  if (size_t n = open_starts + flow_ends_.size() + unmatched_flow_ends_) {
    t.meta.skipped_events += n;
    t.meta.import_stats.note(ImportProblem::kUnmatchedFlow, UINT64_MAX,
                             "flow endpoints without their partner (skipped)", n);
  }
  if (saw_string_pid_ && !saw_category_ && bare_array)
    t.meta.format = "pytorch-legacy";
  else
    t.meta.format = kineto_keys_ ? "kineto" : "chrome";
  // TraceBuilder::finish binds a v1 'f' without "bp": "e" (FlowTable::dst_next) to the next slice.
  return std::move(b_).finish();
}

}  // namespace mlprof::import
