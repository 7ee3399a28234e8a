// A streaming JSON reader into PyVal (the JSON twin of a memory snapshot). simdjson needs the
// whole document in memory; this reads in 64 KiB pieces and hands each finished record to the
// assembler, so memory stays bounded by the records kept, not by the file.
#include <cerrno>
#include <cmath>
#include <cstring>

#include "import/byte_source.h"
#include "import/error_text.h"
#include "import/py_value.h"

namespace mlprof::import {
namespace {

constexpr int kMaxDepth = kMaxPyDepth;
constexpr size_t kMaxString = 1ull << 30;

class JsonValueReader {
 public:
  JsonValueReader(ByteSource& src, const std::string& name, PyAssembler& a)
      : src_(src), name_(name), asm_(a) {}

  Result<PyVal> run() {
    PyVal v;
    MLPROF_RETURN_IF_ERROR(value(v, 0));
    skip_ws();
    int c = peek();
    if (c >= 0) return fail("data after the JSON value");
    MLPROF_RETURN_IF_ERROR(src_.status());
    return v;
  }

 private:
  int peek() {
    if (pos_ == end_) {
      end_ = src_.read(buf_, sizeof buf_);
      pos_ = 0;
      if (end_ == 0) return -1;
    }
    return static_cast<unsigned char>(buf_[pos_]);
  }
  int get() {
    int c = peek();
    if (c >= 0) {
      ++pos_;
      ++offset_;
    }
    return c;
  }
  void skip_ws() {
    for (int c = peek(); c == ' ' || c == '\t' || c == '\n' || c == '\r'; c = peek()) get();
  }
  Status fail(const std::string& what) const {
    return Status::error(name_ + ": byte " + std::to_string(offset_) + ": " + what);
  }
  Status eof() const {
    MLPROF_RETURN_IF_ERROR(src_.status());
    return fail("truncated JSON (the data ends inside a value)");
  }
  Status expect(const char* word) {
    for (const char* p = word; *p; ++p)
      if (get() != *p) return fail(std::string("expected '") + word + "'");
    return Status::ok();
  }

  Status value(PyVal& out, int depth) {
    if (depth > kMaxDepth) return fail("JSON nested deeper than 256 levels");
    skip_ws();
    int c = peek();
    if (c < 0) return eof();
    switch (c) {
      case '{':
        return object(out, depth);
      case '[':
        return array(out, depth);
      case '"':
        out = PyVal();
        out.kind = PyKind::kStr;
        out.obj = std::make_shared<PyObj>();
        out.obj->kind = PyKind::kStr;
        return string(out.obj->str);
      case 't':
        out = PyVal();
        out.kind = PyKind::kBool;
        out.b = true;
        return expect("true");
      case 'f':
        out = PyVal();
        out.kind = PyKind::kBool;
        out.b = false;
        return expect("false");
      case 'n':
        out = PyVal();
        return expect("null");
      case 'N':  // Python's json.dumps writes NaN / Infinity
        out = PyVal();
        out.kind = PyKind::kFloat;
        out.d = std::nan("");
        return expect("NaN");
      case 'I':
        out = PyVal();
        out.kind = PyKind::kFloat;
        out.d = INFINITY;
        return expect("Infinity");
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return number(out);
        return fail("unexpected '" + printable(std::string(1, static_cast<char>(c))) + "'");
    }
  }

  Status object(PyVal& out, int depth) {
    get();  // '{'
    out = PyVal();
    out.kind = PyKind::kDict;
    out.obj = std::make_shared<PyObj>();
    out.obj->kind = PyKind::kDict;
    skip_ws();
    if (peek() == '}') return get(), Status::ok();
    for (;;) {
      skip_ws();
      if (peek() != '"') return peek() < 0 ? eof() : fail("expected a string key");
      PyVal key;
      key.kind = PyKind::kStr;
      key.obj = std::make_shared<PyObj>();
      key.obj->kind = PyKind::kStr;
      MLPROF_RETURN_IF_ERROR(string(key.obj->str));
      skip_ws();
      if (get() != ':') return fail("expected ':' after a key");
      PyVal v;
      MLPROF_RETURN_IF_ERROR(value(v, depth + 1));
      if (Status s = asm_.set_item(*out.obj, std::move(key), std::move(v)); !s)
        return fail(s.message());
      skip_ws();
      int c = get();
      if (c == '}') return Status::ok();
      if (c != ',') return c < 0 ? eof() : fail("expected ',' or '}'");
    }
  }

  Status array(PyVal& out, int depth) {
    get();  // '['
    out = PyVal();
    out.kind = PyKind::kList;
    out.obj = std::make_shared<PyObj>();
    out.obj->kind = PyKind::kList;
    out.obj->serial = list_serial_++;
    skip_ws();
    if (peek() == ']') return get(), Status::ok();
    for (;;) {
      PyVal v;
      MLPROF_RETURN_IF_ERROR(value(v, depth + 1));
      if (Status s = asm_.append(*out.obj, std::move(v)); !s) return fail(s.message());
      skip_ws();
      int c = get();
      if (c == ']') return Status::ok();
      if (c != ',') return c < 0 ? eof() : fail("expected ',' or ']'");
    }
  }

  static void put_utf8(std::string& s, uint32_t cp) {
    if (cp < 0x80) {
      s.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      s.push_back(static_cast<char>(0xc0 | cp >> 6));
      s.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
      s.push_back(static_cast<char>(0xe0 | cp >> 12));
      s.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3f)));
      s.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      s.push_back(static_cast<char>(0xf0 | cp >> 18));
      s.push_back(static_cast<char>(0x80 | (cp >> 12 & 0x3f)));
      s.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3f)));
      s.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }
  Status hex4(uint32_t& v) {
    v = 0;
    for (int k = 0; k < 4; ++k) {
      int c = get();
      if (c < 0) return eof();
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) return fail("bad \\u escape");
      v = v << 4 | static_cast<uint32_t>(d);
    }
    return Status::ok();
  }
  Status string(std::string& s) {
    get();  // '"'
    for (;;) {
      int c = get();
      if (c < 0) return eof();
      if (c == '"') return Status::ok();
      if (s.size() > kMaxString) return fail("string longer than 1 GiB");
      if (c != '\\') {
        s.push_back(static_cast<char>(c));
        continue;
      }
      c = get();
      switch (c) {
        case '"':
        case '\\':
        case '/':
          s.push_back(static_cast<char>(c));
          break;
        case 'b':
          s.push_back('\b');
          break;
        case 'f':
          s.push_back('\f');
          break;
        case 'n':
          s.push_back('\n');
          break;
        case 'r':
          s.push_back('\r');
          break;
        case 't':
          s.push_back('\t');
          break;
        case 'u': {
          uint32_t cp;
          MLPROF_RETURN_IF_ERROR(hex4(cp));
          if (cp >= 0xd800 && cp < 0xdc00 && peek() == '\\') {
            get();
            if (get() != 'u') return fail("bad surrogate pair");
            uint32_t lo;
            MLPROF_RETURN_IF_ERROR(hex4(lo));
            if (lo >= 0xdc00 && lo < 0xe000) cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          }
          put_utf8(s, cp);
          break;
        }
        default:
          return c < 0 ? eof() : fail("bad escape in a string");
      }
    }
  }
  Status number(PyVal& out) {
    std::string t;
    for (int c = peek(); c >= 0 && (std::strchr("+-.eE", c) || (c >= '0' && c <= '9'));
         c = peek()) {
      if (t.size() > 64) return fail("number too long");
      t.push_back(static_cast<char>(get()));
    }
    out = PyVal();
    char* end = nullptr;
    bool integral = t.find_first_of(".eE") == std::string::npos;
    if (integral) {
      errno = 0;
      if (t[0] == '-') {
        out.kind = PyKind::kInt;
        out.i = std::strtoll(t.c_str(), &end, 10);
      } else {
        unsigned long long u = std::strtoull(t.c_str(), &end, 10);
        if (u > static_cast<unsigned long long>(INT64_MAX)) {
          out.kind = PyKind::kUInt;
          out.u = u;
        } else {
          out.kind = PyKind::kInt;
          out.i = static_cast<int64_t>(u);
        }
      }
      if (errno == ERANGE) integral = false;  // beyond 64 bits: keep it as a float
    }
    if (!integral) {
      out.kind = PyKind::kFloat;
      out.d = std::strtod(t.c_str(), &end);
    }
    if (t.empty() || t == "-" || end != t.data() + t.size()) return fail("bad number");
    return Status::ok();
  }

  ByteSource& src_;
  const std::string& name_;
  PyAssembler& asm_;
  char buf_[1 << 16];
  size_t pos_ = 0, end_ = 0;
  uint64_t offset_ = 0;
  uint64_t list_serial_ = 0;
};

}  // namespace

Result<PyVal> read_json_values(ByteSource& src, const std::string& name, PyAssembler& assembler) {
  auto r = std::make_unique<JsonValueReader>(src, name, assembler);
  return r->run();
}

}  // namespace mlprof::import
