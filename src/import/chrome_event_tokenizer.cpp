// The Chrome event parser's tokenizer: one event's JSON (simdjson On-Demand, the path for what
// the fast path does not take) read field by field into a Pending event, each value checked for
// its field's type; times, ids and args as the Trace stores them. What the event means is
// chrome_event_semantics.cpp; B/E and flow pairing, chrome_event_pairing.cpp.
#include <simdjson.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "import/chrome_event_fields.h"
#include "import/chrome_event_parser.h"
#include "import/error_text.h"

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

// One field of an event into `e`: its value checked for the field's type. Returns the field and
// what is wrong with it (what == nullptr: read).
ChromeEventParser::FieldError ChromeEventParser::read_field(FieldKind kind, std::string_view key,
                                                            void* value, Pending& e, uint64_t at) {
  od::value& v = *static_cast<od::value*>(value);
  switch (kind) {
    case FieldKind::kPh: {
      std::string_view s;
      if (v.get_string().get(s) || s.empty()) return {key, "expected a one-letter string"};
      e.ph = s[0];
      break;
    }
    case FieldKind::kName: {
      std::string_view s;
      if (v.get_string().get(s)) return {key, "expected a string"};
      e.name = b_.intern(s);
      break;
    }
    case FieldKind::kCat: {
      std::string_view s;
      if (v.get_string().get(s)) return {key, "expected a string"};
      e.cat = category_id(s);
      e.has_cat = true;
      break;
    }
    case FieldKind::kPid:
    case FieldKind::kTid: {
      od::json_type t;
      if (v.type().get(t)) return {key, "invalid JSON"};
      bool is_pid = kind == FieldKind::kPid;
      if (t == od::json_type::number) {
        int64_t x;
        if (v.get_int64().get(x)) {
          double d;
          if (v.get_double().get(d)) return {key, "expected an integer or a string"};
          // 1e20 would not fit (and converting it is undefined): the real problem, named.
          if (!(d > -9.2e18 && d < 9.2e18)) return {key, "value out of range"};
          x = static_cast<int64_t>(d);
        }
        (is_pid ? e.pid : e.tid) = x;
      } else if (t == od::json_type::string) {
        std::string_view s;
        if (v.get_string().get(s)) return {key, "invalid string"};
        (is_pid ? e.pid_text : e.tid_text).assign(s);
        (is_pid ? e.pid_is_text : e.tid_is_text) = true;
      } else {
        return {key, "expected an integer or a string"};
      }
      (is_pid ? e.has_pid : e.has_tid) = true;
      break;
    }
    case FieldKind::kTs:
    case FieldKind::kDur:
    case FieldKind::kTts:
    case FieldKind::kTdur:
      return read_time_field(kind, key, value, e, at);
    case FieldKind::kId:
    case FieldKind::kId2:
    case FieldKind::kBindId:
      return read_id_field(kind, key, value, e);
    case FieldKind::kFlowIn:
    case FieldKind::kFlowOut: {
      bool x;
      if (v.get_bool().get(x)) return {key, "expected true or false"};
      (kind == FieldKind::kFlowIn ? e.flow_in : e.flow_out) = x;
      break;
    }
    case FieldKind::kBp:
    case FieldKind::kScope: {
      std::string_view s;
      if (v.get_string().get(s)) return {key, "expected a string"};
      (kind == FieldKind::kBp ? e.bp : e.scope) = s.empty() ? 0 : s[0];
      break;
    }
    case FieldKind::kArgs: {
      od::json_type t;
      if (v.type().get(t)) return {key, "invalid JSON"};
      if (t == od::json_type::null) break;
      od::object args;
      if (t != od::json_type::object || v.get_object().get(args))
        return {key, "expected an object"};
      for (auto af_result : args) {
        od::field af;
        std::string_view ak;
        if (std::move(af_result).get(af) || !field_key(af, &ak)) return {key, "invalid JSON key"};
        if (!read_arg(b_, key_id(ak), af.value())) return {ak, "invalid JSON value"};
      }
      break;
    }
    case FieldKind::kOther: {
      // Unknown event keys are kept as args named "@key" so export writes them back.
      std::string k = "@";
      k += key;
      if (!read_arg(b_, key_id(k), v)) return {key, "invalid JSON value"};
      break;
    }
  }
  return {};
}

// ts and dur (fatal for the event unless it is metadata when not a time), tts and tdur (ignored
// when not a time).
ChromeEventParser::FieldError ChromeEventParser::read_time_field(FieldKind kind,
                                                                 std::string_view key, void* value,
                                                                 Pending& e, uint64_t at) {
  od::value& v = *static_cast<od::value*>(value);
  switch (kind) {
    case FieldKind::kTs:
    case FieldKind::kDur: {
      od::json_type t;
      int64_t ns;
      if (v.type().get(t)) return {key, "invalid JSON"};
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
      if (!read_arg(b_, 0, v)) return {key, "invalid JSON value"};
      b_.trace().args.pop_back();
      break;
    }
    case FieldKind::kTts:
    case FieldKind::kTdur: {
      // Thread time: kept when it is a time (a number or a numeric string, as ts), ignored
      // (and counted) otherwise; the event does not need it.
      od::json_type t;
      int64_t ns;
      if (v.type().get(t)) return {key, "invalid JSON"};
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
      if (!read_arg(b_, 0, v)) return {key, "invalid JSON value"};
      b_.trace().args.pop_back();
      break;
    }
    default:
      break;
  }
  return {};
}

// id (a number, or a string: hex, decimal, else hashed), id2 {"local"|"global": id}, bind_id.
ChromeEventParser::FieldError ChromeEventParser::read_id_field(FieldKind kind, std::string_view key,
                                                               void* value, Pending& e) {
  od::value& v = *static_cast<od::value*>(value);
  switch (kind) {
    case FieldKind::kId: {
      od::json_type t;
      if (v.type().get(t)) return {key, "invalid JSON"};
      if (t == od::json_type::number) {
        uint64_t u;
        int64_t i;
        if (!v.get_uint64().get(u))
          e.id = u;
        else if (!v.get_int64().get(i))
          e.id = static_cast<uint64_t>(i);
        else
          return {key, "expected an integer or a string"};
      } else if (t == od::json_type::string) {
        std::string_view s;
        if (v.get_string().get(s)) return {key, "invalid string"};
        e.id = id_from_text(s);
      } else {
        return {key, "expected an integer or a string"};
      }
      e.has_id = true;
      break;
    }
    case FieldKind::kId2: {
      od::object o;
      if (v.get_object().get(o)) return {key, "expected an object"};
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
      if (v.type().get(t)) return {key, "invalid JSON"};
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
        return {key, "expected an integer or a string"};
      e.has_bind_id = true;
      break;
    }
    default:
      break;
  }
  return {};
}

// The event as a whole: a time that is not one (fatal but for metadata), an end out of range, a
// required field missing (one rule for both paths), an ignored thread time. False: skipped.
bool ChromeEventParser::check_event(const Pending& e, uint64_t at, Problem* problem) {
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
  return true;
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
    FieldError error = read_field(classify(key), key, &v, e, at);
    if (error.what) return bad(error.field, error.what);
  }
  current = nullptr;
  e.args = b_.args_since(e.args_mark);
  if (!check_event(e, at, problem)) return false;
  ++events_;
  emit(e);
  return true;
}

}  // namespace mlprof::import
