// Plain Python values (None, bool, int, float, str, list, tuple, dict) as the pickle and JSON
// readers build them. Containers are shared (a pickle memo may refer to one object twice) and
// filled through a PyAssembler, which may take a finished record away instead of storing it:
// that is what keeps a multi-GB file's memory bounded.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mlprof/status.h"

namespace mlprof::import {

enum class PyKind : uint8_t {
  kNone,
  kBool,
  kInt,
  kUInt,  // integers above INT64_MAX
  kFloat,
  kStr,
  kList,
  kTuple,
  kDict,
  kStack,     // a frames list already turned into a stack id (PyObj::stack)
  kConsumed,  // a record the assembler took away
};

struct PyObj;
using PyRef = std::shared_ptr<PyObj>;

struct PyVal {
  PyKind kind = PyKind::kNone;
  union {
    int64_t i;
    uint64_t u;
    double d;
    bool b;
  };
  PyRef obj;  // strings and containers
  PyVal() : i(0) {}
  // The object's kind when there is one (a list may become kStack or kConsumed in place).
  PyKind type() const;
  bool is_str(std::string_view s) const;
  std::string_view str() const;  // "" when not a string
  bool as_int(int64_t& out) const;
  bool as_double(double& out) const;
};

// Nesting depth a reader accepts (pickle and JSON alike): a memory snapshot nests about 6 deep.
constexpr int kMaxPyDepth = 256;

struct PyObj {
  PyKind kind = PyKind::kNone;
  // The pickle reader's bookkeeping: containers nested below this one (0: no container inside),
  // and whether it was stored in another container (then it may not change: see adopt()).
  uint16_t depth = 0;
  bool stored = false;
  std::string str;
  std::vector<PyVal> items;  // list/tuple items; dicts: key, value, key, value...
  uint32_t stack = 0;        // kStack
  uint64_t serial = 0;       // lists: creation order
  PyObj() = default;
  PyObj(const PyObj&) = delete;
  PyObj& operator=(const PyObj&) = delete;
  ~PyObj();
};

// Frees the tree below in a loop: children whose last reference this is hand their items up
// instead of recursing, so no nesting (a hostile file, or a bug in a depth check) can overflow
// the stack while a tree is freed.
inline PyObj::~PyObj() {
  if (items.empty()) return;
  std::vector<PyVal> pending = std::move(items);
  while (!pending.empty()) {
    PyVal v = std::move(pending.back());
    pending.pop_back();
    if (v.obj && v.obj.use_count() == 1 && !v.obj->items.empty()) {
      for (PyVal& x : v.obj->items) pending.push_back(std::move(x));
      v.obj->items.clear();
    }
  }  // v's object (if this was its last reference) is freed here with no items left
}

inline PyKind PyVal::type() const { return obj ? obj->kind : kind; }
inline std::string_view PyVal::str() const {
  return obj && obj->kind == PyKind::kStr ? std::string_view(obj->str) : std::string_view();
}
inline bool PyVal::is_str(std::string_view s) const {
  return obj && obj->kind == PyKind::kStr && obj->str == s;
}
inline bool PyVal::as_int(int64_t& out) const {
  if (kind == PyKind::kInt) return out = i, true;
  if (kind == PyKind::kBool) return out = b, true;
  if (kind == PyKind::kUInt) return out = static_cast<int64_t>(u), true;
  // A float beyond int64 (or NaN) is no integer: converting it would be undefined.
  if (kind == PyKind::kFloat && d > -9.2e18 && d < 9.2e18)
    return out = static_cast<int64_t>(d), true;
  return false;
}
inline bool PyVal::as_double(double& out) const {
  if (kind == PyKind::kFloat) return out = d, true;
  int64_t v;
  if (kind != PyKind::kUInt && as_int(v)) return out = static_cast<double>(v), true;
  if (kind == PyKind::kUInt) return out = static_cast<double>(u), true;
  return false;
}

// A dict's value for a string key, or nullptr.
inline const PyVal* py_get(const PyObj& dict, std::string_view key) {
  for (size_t k = 0; k + 1 < dict.items.size(); k += 2)
    if (dict.items[k].is_str(key)) return &dict.items[k + 1];
  return nullptr;
}

// Receives containers as they fill. Returning an error stops the reader.
class PyAssembler {
 public:
  virtual ~PyAssembler() = default;
  // Appends `item` to `list` (or takes it away).
  virtual Status append(PyObj& list, PyVal item) = 0;
  // Sets dict[key] = value (or keeps a compacted form of value).
  virtual Status set_item(PyObj& dict, PyVal key, PyVal value) = 0;
};

class ByteSource;

// Runs the pickle (protocols 2-5, the opcodes plain containers use) from `src`; returns the
// top-level value. Errors: "NAME: byte N: what".
Result<PyVal> read_pickle(ByteSource& src, const std::string& name, PyAssembler& assembler);

// Parses JSON from `src` into the same values (integers that fit int64/uint64 stay integers).
Result<PyVal> read_json_values(ByteSource& src, const std::string& name, PyAssembler& assembler);

}  // namespace mlprof::import
