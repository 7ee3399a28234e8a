// The fast path for events of plain JSON.
//
// Why not simdjson alone: perf showed a third of the import's CPU in simdjson On-Demand's field
// iteration, mostly store-forwarding stalls copying simdjson_result<field> pairs (perf annotate
// on parse_event, 1M-event trace). Trace events are small flat objects, so they are read here
// directly from the chunk, for the subset of JSON whose meaning cannot differ between the two
// readers: strings without escapes, control or non-ASCII bytes; integers of at most 18 digits;
// decimals without an exponent (correctly rounded by std::from_chars, as by simdjson); literals;
// nested args values (kept as raw JSON text). Anything else (and every malformed event) takes
// simdjson's path, which also writes every error message. Tests compare both paths' Traces.
#include <charconv>
#include <cstring>
#include <string>

#include "import/chrome_event_fields.h"
#include "import/chrome_event_parser.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mlprof::import {

namespace {

inline const char* skip_ws(const char* p) {
  while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') ++p;
  return p;
}

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

inline bool is_delimiter(char c) {
  return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// p at '"': a string of printable ASCII without escapes; p ends past the closing quote. The
// chunk holds whole events, so a closing quote (or a byte that stops us) always comes before
// the buffer's end, and 16-byte loads past it stay inside the buffer's padding.
inline bool plain_string(const char*& p, std::string_view* out) {
  const char* s = p + 1;
  const char* q = s;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'),
                space = _mm_set1_epi8(0x20);
  for (;;) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    // Bytes >= 0x80 are negative as signed bytes, so one compare catches them and controls.
    int m = _mm_movemask_epi8(
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                     _mm_cmplt_epi8(v, space)));
    if (m) {
      q += __builtin_ctz(static_cast<unsigned>(m));
      break;
    }
    q += 16;
  }
#else
  while (static_cast<signed char>(*q) >= 0x20 && *q != '"' && *q != '\\') ++q;
#endif
  if (*q != '"') return false;
  *out = std::string_view(s, static_cast<size_t>(q - s));
  p = q + 1;
  return true;
}

// A JSON number at p; p ends past it. `integer`: no fraction or exponent.
struct Number {
  std::string_view text;
  bool integer = true, exponent = false, negative = false;
  int digits = 0;  // of the integer part
};

inline bool json_number(const char*& p, Number* n) {
  const char* s = p;
  const char* q = p;
  n->negative = *q == '-';
  if (n->negative) ++q;
  const char* int_start = q;
  if (*q == '0') {
    ++q;
  } else if (*q >= '1' && *q <= '9') {
    while (is_digit(*q)) ++q;
  } else {
    return false;
  }
  n->digits = static_cast<int>(q - int_start);
  if (*q == '.') {
    ++q;
    if (!is_digit(*q)) return false;
    while (is_digit(*q)) ++q;
    n->integer = false;
  }
  if (*q == 'e' || *q == 'E') {
    ++q;
    if (*q == '+' || *q == '-') ++q;
    if (!is_digit(*q)) return false;
    while (is_digit(*q)) ++q;
    n->integer = false;
    n->exponent = true;
  }
  if (!is_delimiter(*q)) return false;
  n->text = std::string_view(s, static_cast<size_t>(q - s));
  p = q;
  return true;
}

// Integers simdjson reads as int64 (and not -0, which it may read as a double).
inline bool small_integer(const Number& n, int64_t* v) {
  if (!n.integer || n.digits > 18) return false;
  int64_t x = 0;
  for (char c : n.text)
    if (c != '-') x = x * 10 + (c - '0');
  if (n.negative && x == 0) return false;
  *v = n.negative ? -x : x;
  return true;
}

inline bool literal(const char*& p, const char* word, size_t len) {
  if (std::memcmp(p, word, len) != 0 || !is_delimiter(p[len])) return false;
  p += len;
  return true;
}

// After an object member: 1 and p at the next key (','), 0 and p past the '}', -1 otherwise.
inline int next_member(const char*& p) {
  p = skip_ws(p);
  if (*p == ',') {
    p = skip_ws(p + 1);
    return 1;
  }
  if (*p != '}') return -1;
  ++p;
  return 0;
}

// Validates a nested array or object (the same plain subset); p ends past it.
bool skip_nested(const char*& p, int depth) {
  if (depth > 64) return false;
  char close = *p == '{' ? '}' : ']';
  bool object = close == '}';
  p = skip_ws(p + 1);
  if (*p == close) {
    ++p;
    return true;
  }
  for (;;) {
    std::string_view s;
    if (object) {
      if (*p != '"' || !plain_string(p, &s)) return false;
      p = skip_ws(p);
      if (*p != ':') return false;
      p = skip_ws(p + 1);
    }
    switch (*p) {
      case '"':
        if (!plain_string(p, &s)) return false;
        break;
      case '{':
      case '[':
        if (!skip_nested(p, depth + 1)) return false;
        break;
      case 't':
        if (!literal(p, "true", 4)) return false;
        break;
      case 'f':
        if (!literal(p, "false", 5)) return false;
        break;
      case 'n':
        if (!literal(p, "null", 4)) return false;
        break;
      default: {
        Number n;
        if (!json_number(p, &n)) return false;
      }
    }
    p = skip_ws(p);
    if (*p == ',') {
      p = skip_ws(p + 1);
      continue;
    }
    if (*p != close) return false;
    ++p;
    return true;
  }
}

}  // namespace

bool ChromeEventParser::fast_arg(StringId key, const char*& p) {
  switch (*p) {
    case '"': {
      std::string_view s;
      if (!plain_string(p, &s)) return false;
      b_.arg_string(key, cached_intern(s));
      return true;
    }
    case 't':
      if (!literal(p, "true", 4)) return false;
      b_.arg_bool(key, true);
      return true;
    case 'f':
      if (!literal(p, "false", 5)) return false;
      b_.arg_bool(key, false);
      return true;
    case 'n':
      if (!literal(p, "null", 4)) return false;
      b_.arg_null(key);
      return true;
    case '[':
    case '{': {
      // Kept as its JSON text; like simdjson's raw_json(), up to the next token.
      const char* start = p;
      if (!skip_nested(p, 0)) return false;
      p = skip_ws(p);
      Arg a;  // b_.arg_json, through the cache
      a.key = key;
      a.type = ArgType::kJson;
      a.s = cached_intern(std::string_view(start, static_cast<size_t>(p - start)));
      b_.trace().args.push_back(a);
      return true;
    }
    default: {
      Number n;
      if (!json_number(p, &n)) return false;
      int64_t i;
      if (small_integer(n, &i)) {
        b_.arg_int(key, i);
        return true;
      }
      if (n.integer || n.exponent) return false;
      double d;
      auto r = std::from_chars(n.text.data(), n.text.data() + n.text.size(), d);
      if (r.ec != std::errc() || r.ptr != n.text.data() + n.text.size()) return false;
      b_.arg_double(key, d);
      return true;
    }
  }
}

// One field's value at p (its key classified as `kind`) into e, or an arg; false if it is not
// plain JSON the fast path takes (the caller then drops the args pushed).
[[gnu::always_inline]] inline bool ChromeEventParser::fast_field(FieldKind kind,
                                                                 std::string_view key,
                                                                 const char*& p, Pending& e) {
  std::string_view s;
  switch (kind) {
    case FieldKind::kPh:
      if (*p != '"' || !plain_string(p, &s) || s.empty()) return false;
      e.ph = s[0];
      break;
    case FieldKind::kName:
      if (*p != '"' || !plain_string(p, &s)) return false;
      e.name = cached_intern(s);
      break;
    case FieldKind::kCat:
      if (*p != '"' || !plain_string(p, &s)) return false;
      e.cat = category_id(s);
      e.has_cat = true;
      break;
    case FieldKind::kPid:
    case FieldKind::kTid: {
      bool is_pid = kind == FieldKind::kPid;
      if (*p == '"') {
        if (!plain_string(p, &s)) return false;
        (is_pid ? e.pid_text : e.tid_text).assign(s);
        (is_pid ? e.pid_is_text : e.tid_is_text) = true;
      } else {
        Number n;
        int64_t v;
        if (!json_number(p, &n) || !small_integer(n, &v)) return false;
        (is_pid ? e.pid : e.tid) = v;
      }
      (is_pid ? e.has_pid : e.has_tid) = true;
      break;
    }
    case FieldKind::kTs:
    case FieldKind::kDur: {
      Number n;
      int64_t ns;
      if (!json_number(p, &n) || !parse_us_to_ns(n.text, &ns)) return false;
      e.set_time(kind == FieldKind::kTs, ns);
      break;
    }
    case FieldKind::kTts:
    case FieldKind::kTdur: {
      // Anything but a plain non-negative time goes to simdjson, which counts it as ignored.
      Number n;
      int64_t ns;
      if (!json_number(p, &n) || !parse_us_to_ns(n.text, &ns) || ns < 0) return false;
      (kind == FieldKind::kTts ? e.tts : e.tdur) = ns;
      break;
    }
    case FieldKind::kId: {
      if (*p == '"') {
        if (!plain_string(p, &s)) return false;
        e.id = id_from_text(s);
      } else {
        Number n;
        int64_t v;
        if (!json_number(p, &n) || !small_integer(n, &v)) return false;
        e.id = static_cast<uint64_t>(v);
      }
      e.has_id = true;
      break;
    }
    case FieldKind::kBp:
    case FieldKind::kScope:
      if (*p != '"' || !plain_string(p, &s)) return false;
      (kind == FieldKind::kBp ? e.bp : e.scope) = s.empty() ? 0 : s[0];
      break;
    case FieldKind::kArgs:
      if (!fast_args(p)) return false;
      break;
    case FieldKind::kId2:
      return false;
    case FieldKind::kBindId: {
      if (*p == '"') {
        if (!plain_string(p, &s)) return false;
        e.bind_id = id_from_text(s);
      } else {
        Number n;
        int64_t v;
        if (!json_number(p, &n) || !small_integer(n, &v)) return false;
        e.bind_id = static_cast<uint64_t>(v);
      }
      e.has_bind_id = true;
      break;
    }
    case FieldKind::kFlowIn:
    case FieldKind::kFlowOut: {
      bool x;
      if (literal(p, "true", 4))
        x = true;
      else if (literal(p, "false", 5))
        x = false;
      else
        return false;
      (kind == FieldKind::kFlowIn ? e.flow_in : e.flow_out) = x;
      break;
    }
    case FieldKind::kOther: {
      std::string k = "@";
      k += key;
      if (!fast_arg(key_id(k), p)) return false;
      break;
    }
  }
  return true;
}

// The "args" object (or null) at p, its members pushed as args; false if not plain.
[[gnu::always_inline]] inline bool ChromeEventParser::fast_args(const char*& p) {
  if (*p == 'n') return literal(p, "null", 4);
  if (*p != '{') return false;
  p = skip_ws(p + 1);
  if (*p == '}') {
    ++p;
    return true;
  }
  for (;;) {
    std::string_view ak;
    if (*p != '"' || !plain_string(p, &ak)) return false;
    p = skip_ws(p);
    if (*p != ':') return false;
    p = skip_ws(p + 1);
    if (!fast_arg(key_id(ak), p)) return false;
    int more = next_member(p);
    if (more < 0) return false;
    if (!more) break;
  }
  return true;
}

bool ChromeEventParser::fast_event(const char*& p_in) {
  const char* p = skip_ws(p_in + 1);
  Pending e;
  e.args_mark = b_.args_mark();
  auto bail = [&] {
    b_.trace().args.resize(e.args_mark);
    return false;
  };
  if (*p == '}') return bail();
  for (;;) {
    std::string_view key;
    if (*p != '"' || !plain_string(p, &key)) return bail();
    p = skip_ws(p);
    if (*p != ':') return bail();
    p = skip_ws(p + 1);
    if (!fast_field(classify(key), key, p, e)) return bail();
    int more = next_member(p);
    if (more < 0) return bail();
    if (!more) break;
  }
  e.args = b_.args_since(e.args_mark);
  // Events the slow path rejects are left to it, for its error message.
  if (e.missing().field || e.ends_out_of_range()) return bail();  // simdjson's path says why
  ++events_;
  emit(e);
  p_in = p;
  return true;
}

}  // namespace mlprof::import
