// A pickle virtual machine for plain data only: no classes, no globals, no reduce, so a hostile
// file can do nothing but fail. Opcodes per Lib/pickletools.py (protocols 0-5 subset that
// dicts/lists/tuples/str/bytes/int/float/bool/None use).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <unordered_map>

#include "import/byte_source.h"
#include "import/py_value.h"

namespace mlprof::import {
namespace {

constexpr size_t kMaxString = 1ull << 30;  // one str/bytes object
constexpr size_t kMaxStack = 1ull << 24;   // values waiting on the VM stack
constexpr size_t kMaxMarks = 1ull << 16;   // nesting of MARKs

class Input {
 public:
  explicit Input(ByteSource& src) : src_(src) {}
  // Returns false at the end of the data (or on a read error: check src.status()).
  bool byte(uint8_t& c) {
    if (pos_ == end_ && !fill()) return false;
    c = static_cast<uint8_t>(buf_[pos_++]);
    ++offset_;
    return true;
  }
  bool bytes(char* dst, size_t n) {
    while (n) {
      if (pos_ == end_ && !fill()) return false;
      size_t k = std::min(n, end_ - pos_);
      std::memcpy(dst, buf_ + pos_, k);
      pos_ += k;
      offset_ += k;
      dst += k;
      n -= k;
    }
    return true;
  }
  bool line(std::string& out) {  // protocol 0 text arguments, up to '\n'
    out.clear();
    uint8_t c;
    while (byte(c)) {
      if (c == '\n') return true;
      if (out.size() > 4096) return false;
      out.push_back(static_cast<char>(c));
    }
    return false;
  }
  uint64_t offset() const { return offset_; }

 private:
  bool fill() {
    end_ = src_.read(buf_, sizeof buf_);
    pos_ = 0;
    return end_ != 0;
  }
  ByteSource& src_;
  char buf_[1 << 16];
  size_t pos_ = 0, end_ = 0;
  uint64_t offset_ = 0;
};

uint64_t le(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int k = n - 1; k >= 0; --k) v = v << 8 | p[k];
  return v;
}

// The pickle memo: MEMOIZE numbers every object in order and a later GET may name any of them, so
// no slot can be forgotten. A snapshot has a few memo slots per trace entry (the entry's dict,
// its frames list, a fresh "N/A" string), so a multi-GB file has hundreds of millions. Slots are
// kept in chunks of 64Ki: the two newest chunks hold full values; older chunks are packed into
// one word per slot (records the assembler took away: empty; frames lists: their stack id;
// shared short strings: their index; anything else, or a payload that does not fit, in a
// per-chunk overflow list): 2 bytes (2 tag bits, 14 bits of payload) when every slot of the
// chunk fits, as in PyTorch's files (few stacks and shared strings), else 4 bytes (30 bits).
// Chunks never move, so the memo grows without the copy a doubling vector makes.
class Memo {
 public:
  static constexpr size_t kChunkBits = 16, kChunk = size_t{1} << kChunkBits;
  explicit Memo(const std::vector<PyRef>& interned) : interned_(interned) {}
  size_t size() const { return size_; }

  void put(size_t idx, const PyVal& v) {
    size_t c = idx >> kChunkBits, off = idx & (kChunk - 1);
    while (chunks_.size() <= c) chunks_.emplace_back();
    Chunk& ch = chunks_[c];
    if (!ch.packed()) {
      if (ch.hot.empty()) ch.hot.resize(kChunk);
      ch.hot[off] = v;
    } else {
      write(ch, off, pack(ch, v));
    }
    size_ = std::max(size_, idx + 1);
    // Records finish within a chunk or two of their MEMOIZE: pack what is older.
    while (packed_below_ + 2 < chunks_.size()) {
      Chunk& old = chunks_[packed_below_++];
      if (old.hot.empty()) continue;
      scratch_.resize(kChunk);
      bool narrow = true;
      for (size_t k = 0; k < kChunk; ++k) {
        scratch_[k] = pack(old, old.hot[k]);
        narrow = narrow && fits16(scratch_[k]);
      }
      if (narrow) {
        old.narrow.resize(kChunk);
        for (size_t k = 0; k < kChunk; ++k) old.narrow[k] = to16(scratch_[k]);
      } else {
        old.wide = scratch_;
      }
      std::vector<PyVal>().swap(old.hot);
    }
  }

  // The value at idx; false when nothing is there (never stored, or a record already read).
  bool get(size_t idx, PyVal& out) const {
    size_t c = idx >> kChunkBits, off = idx & (kChunk - 1);
    if (idx >= size_ || c >= chunks_.size()) return false;
    const Chunk& ch = chunks_[c];
    if (!ch.packed()) {
      if (ch.hot.empty() || ch.hot[off].type() == PyKind::kNone ||
          ch.hot[off].type() == PyKind::kConsumed)
        return false;
      out = ch.hot[off];
      return true;
    }
    uint32_t w = ch.narrow.empty() ? ch.wide[off] : from16(ch.narrow[off]);
    uint32_t payload = w & kPayload;
    switch (w >> 30) {
      case kEmpty:
        return false;
      case kStackId:
        out = PyVal();
        out.kind = PyKind::kStack;
        out.i = static_cast<int64_t>(payload);
        return true;
      case kOverflow:
        out = ch.overflow[payload];
        return true;
      default:
        out = PyVal();
        out.kind = PyKind::kStr;
        out.obj = interned_[payload];
        return true;
    }
  }

 private:
  enum : uint32_t { kEmpty = 0, kStackId = 1, kOverflow = 2, kInterned = 3 };
  static constexpr uint32_t kPayload = (uint32_t{1} << 30) - 1;
  struct Chunk {
    std::vector<PyVal> hot;        // kChunk values while new
    std::vector<uint16_t> narrow;  // kChunk words once packed, when all fit 2 bytes
    std::vector<uint32_t> wide;    // ... else
    std::vector<PyVal> overflow;   // packed slots that are not empty, a stack or a shared string
    bool packed() const { return !narrow.empty() || !wide.empty(); }
  };
  static uint32_t word(uint32_t tag, uint64_t payload) {
    return tag << 30 | static_cast<uint32_t>(payload);
  }
  static bool fits16(uint32_t w) { return (w & kPayload) < (1u << 14); }
  static uint16_t to16(uint32_t w) { return static_cast<uint16_t>((w >> 30) << 14 | (w & 0x3fff)); }
  static uint32_t from16(uint16_t h) { return word(h >> 14, h & 0x3fff); }
  // A PUT into a packed chunk (rare): widens a narrow chunk whose new word does not fit.
  static void write(Chunk& ch, size_t off, uint32_t w) {
    if (!ch.narrow.empty()) {
      if (fits16(w)) {
        ch.narrow[off] = to16(w);
        return;
      }
      ch.wide.resize(kChunk);
      for (size_t k = 0; k < kChunk; ++k) ch.wide[k] = from16(ch.narrow[k]);
      std::vector<uint16_t>().swap(ch.narrow);
    }
    ch.wide[off] = w;
  }
  uint32_t pack(Chunk& ch, const PyVal& v) {
    PyKind k = v.type();
    if (k == PyKind::kNone || k == PyKind::kConsumed) return word(kEmpty, 0);
    if (k == PyKind::kStack) {
      uint64_t id = static_cast<uint32_t>(v.obj ? v.obj->stack : v.i);
      if (id <= kPayload) return word(kStackId, id);
    }
    if (k == PyKind::kStr && v.obj->serial > 0 && v.obj->serial <= interned_.size() &&
        interned_[v.obj->serial - 1] == v.obj && v.obj->serial - 1 <= kPayload)
      return word(kInterned, v.obj->serial - 1);
    ch.overflow.push_back(v);  // at most kChunk per chunk: fits the payload
    return word(kOverflow, ch.overflow.size() - 1);
  }
  const std::vector<PyRef>& interned_;
  std::vector<Chunk> chunks_;
  std::vector<uint32_t> scratch_;
  size_t size_ = 0, packed_below_ = 0;
};

PyVal make_obj(PyKind kind) {
  PyVal v;
  v.kind = kind;
  v.obj = std::make_shared<PyObj>();
  v.obj->kind = kind;
  return v;
}

class PickleVm {
 public:
  PickleVm(ByteSource& src, const std::string& name, PyAssembler& a)
      : in_(src), src_(src), name_(name), asm_(a) {}

  Result<PyVal> run() {
    uint64_t list_serial = 0;
    for (;;) {
      uint64_t at = in_.offset();
      uint8_t op;
      if (!in_.byte(op)) return truncated(at);
      switch (op) {
        case 0x80: {  // PROTO
          uint8_t p;
          if (!in_.byte(p)) return truncated(at);
          if (p > 5) return fail(at, "pickle protocol " + std::to_string(p) + " (expected 0-5)");
          break;
        }
        case 0x95: {  // FRAME: a length we do not need, the data follows inline
          unsigned char b[8];
          if (!in_.bytes(reinterpret_cast<char*>(b), 8)) return truncated(at);
          break;
        }
        case '.': {  // STOP
          if (stack_.size() != 1 || !marks_.empty())
            return fail(at, "STOP with " + std::to_string(stack_.size()) + " values on the stack");
          return std::move(stack_.back());
        }
        case '}':
          MLPROF_RETURN_IF_ERROR(push(make_obj(PyKind::kDict)));
          break;
        case ']': {
          PyVal v = make_obj(PyKind::kList);
          v.obj->serial = list_serial++;
          MLPROF_RETURN_IF_ERROR(push(std::move(v)));
          break;
        }
        case ')':
          MLPROF_RETURN_IF_ERROR(push(make_obj(PyKind::kTuple)));
          break;
        case '(':
          if (marks_.size() >= kMaxMarks) return fail(at, "MARKs nested too deep");
          marks_.push_back(stack_.size());
          break;
        case '0':  // POP
          if (stack_.empty()) return fail(at, "POP on an empty stack");
          stack_.pop_back();
          break;
        case '1': {  // POP_MARK
          size_t m;
          if (!pop_mark(m)) return fail(at, "POP_MARK without MARK");
          stack_.resize(m);
          break;
        }
        case '2':  // DUP
          if (stack_.empty()) return fail(at, "DUP on an empty stack");
          MLPROF_RETURN_IF_ERROR(push(PyVal(stack_.back())));
          break;
        case 0x94:  // MEMOIZE
          if (stack_.empty()) return fail(at, "MEMOIZE on an empty stack");
          MLPROF_RETURN_IF_ERROR(memo_put(memo_.size(), at));
          break;
        case 'q':
        case 'r':
        case 'p': {  // BINPUT, LONG_BINPUT, PUT
          uint64_t idx;
          if (!index_arg(op, idx)) return truncated(at);
          if (stack_.empty()) return fail(at, "PUT on an empty stack");
          MLPROF_RETURN_IF_ERROR(memo_put(idx, at));
          break;
        }
        case 'h':
        case 'j':
        case 'g': {  // BINGET, LONG_BINGET, GET
          uint64_t idx;
          if (!index_arg(op, idx)) return truncated(at);
          PyVal v;
          if (!memo_.get(idx, v))
            return fail(at, "memo index " + std::to_string(idx) +
                                " not available (never stored, or a record already read)");
          MLPROF_RETURN_IF_ERROR(push(std::move(v)));
          break;
        }
        case 'N':
          MLPROF_RETURN_IF_ERROR(push(PyVal()));
          break;
        case 0x88:
        case 0x89: {  // NEWTRUE, NEWFALSE
          PyVal v;
          v.kind = PyKind::kBool;
          v.b = op == 0x88;
          MLPROF_RETURN_IF_ERROR(push(std::move(v)));
          break;
        }
        case 'K':
        case 'M':
        case 'J': {  // BININT1, BININT2, BININT
          int n = op == 'K' ? 1 : op == 'M' ? 2 : 4;
          unsigned char b[4];
          if (!in_.bytes(reinterpret_cast<char*>(b), n)) return truncated(at);
          PyVal v;
          v.kind = PyKind::kInt;
          uint64_t raw = le(b, n);
          v.i = op == 'J' ? static_cast<int32_t>(static_cast<uint32_t>(raw))
                          : static_cast<int64_t>(raw);
          MLPROF_RETURN_IF_ERROR(push(std::move(v)));
          break;
        }
        case 0x8a:
        case 0x8b: {  // LONG1, LONG4: little-endian two's complement
          uint64_t n;
          if (op == 0x8a) {
            uint8_t k;
            if (!in_.byte(k)) return truncated(at);
            n = k;
          } else {
            unsigned char b[4];
            if (!in_.bytes(reinterpret_cast<char*>(b), 4)) return truncated(at);
            n = le(b, 4);
          }
          if (n > 9)
            return fail(at,
                        "integer of " + std::to_string(n) + " bytes (at most 64 bits expected)");
          unsigned char b[9] = {};
          if (!in_.bytes(reinterpret_cast<char*>(b), n)) return truncated(at);
          PyVal v;
          v.kind = PyKind::kInt;
          if (n == 0) {
            v.i = 0;
          } else if (n == 9) {  // a positive value needing the 64th bit: sign byte 0
            if (b[8] != 0) return fail(at, "integer wider than 64 bits");
            v.kind = PyKind::kUInt;
            v.u = le(b, 8);
          } else {
            uint64_t raw = le(b, static_cast<int>(n));
            if (n < 8 && (b[n - 1] & 0x80)) raw |= ~0ull << (8 * n);  // sign extend
            v.i = static_cast<int64_t>(raw);
          }
          MLPROF_RETURN_IF_ERROR(push(std::move(v)));
          break;
        }
        case 'G': {  // BINFLOAT, big-endian
          unsigned char b[8];
          if (!in_.bytes(reinterpret_cast<char*>(b), 8)) return truncated(at);
          uint64_t raw = 0;
          for (int k = 0; k < 8; ++k) raw = raw << 8 | b[k];
          PyVal v;
          v.kind = PyKind::kFloat;
          std::memcpy(&v.d, &raw, 8);
          MLPROF_RETURN_IF_ERROR(push(std::move(v)));
          break;
        }
        case 'I':
        case 'L':
        case 'F': {  // protocol 0 INT / LONG / FLOAT as text
          std::string t;
          if (!in_.line(t)) return truncated(at);
          if (!t.empty() && t.back() == 'L') t.pop_back();
          PyVal v;
          char* end = nullptr;
          if (op == 'F') {
            v.kind = PyKind::kFloat;
            v.d = std::strtod(t.c_str(), &end);
          } else if (t == "00" || t == "01") {
            v.kind = PyKind::kBool;
            v.b = t == "01";
            end = t.data() + t.size();
          } else {
            v.kind = PyKind::kInt;
            v.i = std::strtoll(t.c_str(), &end, 10);
          }
          if (t.empty() || end != t.data() + t.size()) return fail(at, "bad number text");
          MLPROF_RETURN_IF_ERROR(push(std::move(v)));
          break;
        }
        case 0x8c:
        case 'X':
        case 0x8d:
        case 'C':
        case 'B':
        case 0x8e: {  // SHORT_BINUNICODE, BINUNICODE, BINUNICODE8, SHORT_BINBYTES, BINBYTES,
                      // BINBYTES8
          int w = (op == 0x8c || op == 'C') ? 1 : (op == 'X' || op == 'B') ? 4 : 8;
          unsigned char b[8];
          if (!in_.bytes(reinterpret_cast<char*>(b), w)) return truncated(at);
          uint64_t n = le(b, w);
          if (n > kMaxString) return fail(at, "string of " + std::to_string(n) + " bytes");
          std::string text;
          // Grown as the bytes arrive: a lying length must not allocate a gigabyte up front.
          for (uint64_t done = 0; done < n;) {
            size_t k = static_cast<size_t>(std::min<uint64_t>(n - done, 1u << 16));
            text.resize(done + k);
            if (!in_.bytes(text.data() + done, k)) return truncated(at);
            done += k;
          }
          PyVal v = make_string(std::move(text));
          MLPROF_RETURN_IF_ERROR(push(std::move(v)));
          break;
        }
        case 'a': {  // APPEND
          if (stack_.size() < 2) return fail(at, "APPEND needs a list and a value");
          PyVal item = std::move(stack_.back());
          stack_.pop_back();
          PyVal& list = stack_.back();
          if (list.type() != PyKind::kList) return fail(at, "APPEND to a non-list");
          MLPROF_RETURN_IF_ERROR(adopt(*list.obj, item, at));
          if (Status s = asm_.append(*list.obj, std::move(item)); !s) return fail(at, s.message());
          break;
        }
        case 'e': {  // APPENDS
          size_t m;
          if (!pop_mark(m) || m == 0) return fail(at, "APPENDS without MARK and list");
          PyVal& list = stack_[m - 1];
          if (list.type() != PyKind::kList) return fail(at, "APPENDS to a non-list");
          for (size_t k = m; k < stack_.size(); ++k) {
            MLPROF_RETURN_IF_ERROR(adopt(*list.obj, stack_[k], at));
            if (Status s = asm_.append(*list.obj, std::move(stack_[k])); !s)
              return fail(at, s.message());
          }
          stack_.resize(m);
          break;
        }
        case 's': {  // SETITEM
          if (stack_.size() < 3) return fail(at, "SETITEM needs a dict, a key and a value");
          PyVal value = std::move(stack_.back());
          stack_.pop_back();
          PyVal key = std::move(stack_.back());
          stack_.pop_back();
          PyVal& dict = stack_.back();
          if (dict.type() != PyKind::kDict) return fail(at, "SETITEM on a non-dict");
          MLPROF_RETURN_IF_ERROR(adopt(*dict.obj, key, at));
          MLPROF_RETURN_IF_ERROR(adopt(*dict.obj, value, at));
          if (Status s = asm_.set_item(*dict.obj, std::move(key), std::move(value)); !s)
            return fail(at, s.message());
          break;
        }
        case 'u': {  // SETITEMS
          size_t m;
          if (!pop_mark(m) || m == 0) return fail(at, "SETITEMS without MARK and dict");
          if ((stack_.size() - m) % 2) return fail(at, "SETITEMS with an odd number of values");
          PyVal& dict = stack_[m - 1];
          if (dict.type() != PyKind::kDict) return fail(at, "SETITEMS on a non-dict");
          for (size_t k = m; k < stack_.size(); k += 2) {
            MLPROF_RETURN_IF_ERROR(adopt(*dict.obj, stack_[k], at));
            MLPROF_RETURN_IF_ERROR(adopt(*dict.obj, stack_[k + 1], at));
            if (Status s = asm_.set_item(*dict.obj, std::move(stack_[k]), std::move(stack_[k + 1]));
                !s)
              return fail(at, s.message());
          }
          stack_.resize(m);
          break;
        }
        case 'l':
        case 'd':
        case 't': {  // LIST, DICT, TUPLE from the values since MARK
          size_t m;
          if (!pop_mark(m)) return fail(at, "LIST/DICT/TUPLE without MARK");
          PyVal v = make_obj(op == 'l'   ? PyKind::kList
                             : op == 'd' ? PyKind::kDict
                                         : PyKind::kTuple);
          if (op == 'l') v.obj->serial = list_serial++;
          if (op == 'd' && (stack_.size() - m) % 2)
            return fail(at, "DICT with an odd number of values");
          for (size_t k = m; k < stack_.size(); op == 'd' ? k += 2 : ++k) {
            Status s = adopt(*v.obj, stack_[k], at);
            if (s && op == 'd') s = adopt(*v.obj, stack_[k + 1], at);
            if (!s) return s;
            if (op == 'l')
              s = asm_.append(*v.obj, std::move(stack_[k]));
            else if (op == 'd')
              s = asm_.set_item(*v.obj, std::move(stack_[k]), std::move(stack_[k + 1]));
            else
              v.obj->items.push_back(std::move(stack_[k]));
            if (!s) return fail(at, s.message());
          }
          stack_.resize(m);
          MLPROF_RETURN_IF_ERROR(push(std::move(v)));
          break;
        }
        case 0x85:
        case 0x86:
        case 0x87: {  // TUPLE1..3
          size_t n = op - 0x84u;
          if (stack_.size() < n) return fail(at, "TUPLE" + std::to_string(n) + " on a short stack");
          PyVal v = make_obj(PyKind::kTuple);
          for (size_t k = stack_.size() - n; k < stack_.size(); ++k) {
            MLPROF_RETURN_IF_ERROR(adopt(*v.obj, stack_[k], at));
            v.obj->items.push_back(std::move(stack_[k]));
          }
          stack_.resize(stack_.size() - n);
          MLPROF_RETURN_IF_ERROR(push(std::move(v)));
          break;
        }
        default: {
          char buf[160];
          std::snprintf(buf, sizeof buf,
                        "pickle opcode 0x%02x is not plain data (a memory snapshot holds only "
                        "dicts, lists, str, int, float)",
                        op);
          return fail(at, buf);
        }
      }
    }
  }

 private:
  // Before `item` goes into `container`: pickle fills a container before storing it in another
  // (Lib/pickle.py saves children first), so a container that was stored already, or the
  // container itself, would only be changed to build a cycle (which would never be freed):
  // refused. Stored containers never change, so the nesting depth counted here is exact, and
  // it is bounded (the tree is freed iteratively anyway: py_value.h).
  Status adopt(PyObj& container, const PyVal& item, uint64_t at) {
    if (container.stored || item.obj.get() == &container)
      return fail(at,
                  "a container changed after it was stored in another, or stored in itself "
                  "(a cycle: not plain data)");
    if (!item.obj || item.obj->kind == PyKind::kStr) return Status::ok();
    item.obj->stored = true;
    int depth = item.obj->depth + 1;
    if (depth >= kMaxPyDepth)
      return fail(at, "pickle nested deeper than " + std::to_string(kMaxPyDepth) + " levels");
    container.depth = static_cast<uint16_t>(std::max<int>(container.depth, depth));
    return Status::ok();
  }
  Status push(PyVal v) {
    if (stack_.size() >= kMaxStack)
      return fail(in_.offset(), "pickle stack deeper than 16M values");
    stack_.push_back(std::move(v));
    return Status::ok();
  }
  Status memo_put(uint64_t idx, uint64_t at) {
    if (stack_.empty()) return fail(at, "MEMOIZE/PUT on an empty stack");
    if (idx > memo_.size() + (1u << 20))
      return fail(at, "memo index " + std::to_string(idx) + " out of sequence");
    memo_.put(idx, stack_.back());
    return Status::ok();
  }
  // Short strings are shared by content: PyTorch writes e.g. compile_context "N/A" as a new
  // string object in every trace entry. A shared string's serial is its index + 1 in interned_.
  PyVal make_string(std::string&& text) {
    if (text.size() <= 64 && strings_.size() < (1u << 20)) {
      auto it = strings_.find(text);
      if (it != strings_.end()) {
        PyVal v;
        v.kind = PyKind::kStr;
        v.obj = it->second;
        return v;
      }
    }
    PyVal v = make_obj(PyKind::kStr);
    v.obj->str = std::move(text);
    if (v.obj->str.size() <= 64 && strings_.size() < (1u << 20)) {
      strings_.emplace(v.obj->str, v.obj);
      interned_.push_back(v.obj);
      v.obj->serial = interned_.size();
    }
    return v;
  }
  bool pop_mark(size_t& m) {
    if (marks_.empty()) return false;
    m = marks_.back();
    marks_.pop_back();
    return m <= stack_.size();
  }
  bool index_arg(uint8_t op, uint64_t& idx) {
    if (op == 'q' || op == 'h') {
      uint8_t k;
      if (!in_.byte(k)) return false;
      idx = k;
      return true;
    }
    if (op == 'r' || op == 'j') {
      unsigned char b[4];
      if (!in_.bytes(reinterpret_cast<char*>(b), 4)) return false;
      idx = le(b, 4);
      return true;
    }
    std::string t;
    if (!in_.line(t)) return false;
    idx = std::strtoull(t.c_str(), nullptr, 10);
    return true;
  }
  Status fail(uint64_t at, const std::string& what) const {
    return Status::error(name_ + ": byte " + std::to_string(at) + ": " + what);
  }
  Status truncated(uint64_t at) const {
    MLPROF_RETURN_IF_ERROR(src_.status());
    return fail(at, "truncated pickle (the data ends before STOP)");
  }

  Input in_;
  ByteSource& src_;
  const std::string& name_;
  PyAssembler& asm_;
  std::vector<PyVal> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<std::string, PyRef> strings_;
  std::vector<PyRef> interned_;  // before memo_: the memo refers to it
  Memo memo_{interned_};
};

}  // namespace

Result<PyVal> read_pickle(ByteSource& src, const std::string& name, PyAssembler& assembler) {
  auto vm = std::make_unique<PickleVm>(src, name, assembler);
  return vm->run();
}

}  // namespace mlprof::import
