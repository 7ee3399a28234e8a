// `args`: every slice and instant argument with its typed value (Perfetto: args, keyed there by
// arg_set_id; here by the event's id, which is unique over slices and instants). event_id = ?
// narrows to that event's argument range; key = ? compares interned ids.
#include <limits>

#include "sql/virtual_table.h"

namespace mlprof::sql {
namespace {

enum Col { kEvent, kEventType, kKey, kType, kValue, kInt, kReal, kString };
constexpr uint32_t kNoOwner = std::numeric_limits<uint32_t>::max();

std::string_view arg_type_name(ArgType t) {
  switch (t) {
    case ArgType::kNull:
      return "null";
    case ArgType::kBool:
      return "bool";
    case ArgType::kInt:
      return "int";
    case ArgType::kUInt:
      return "uint";
    case ArgType::kDouble:
      return "real";
    case ArgType::kString:
      return "string";
    case ArgType::kJson:
      return "json";
  }
  return "null";
}

class ArgsVtab : public TableSpec {
 public:
  explicit ArgsVtab(const TraceSet& set) : TableSpec(set), owners_(set.parts.size()) {}
  const char* name() const override { return "args"; }
  const std::vector<ColumnSpec>& columns() const override {
    static const std::vector<ColumnSpec> c = {{"event_id", "INTEGER"}, {"event_type", "TEXT"},
                                              {"key", "TEXT"},         {"value_type", "TEXT"},
                                              {"value", ""},           {"int_value", "INTEGER"},
                                              {"real_value", "REAL"},  {"string_value", "TEXT"}};
    return c;
  }
  uint64_t rows(size_t p) const override { return set_.parts[p].trace->args.size(); }
  int64_t rowid(size_t p, uint64_t row) const override {
    return set_.base[p].arg + static_cast<int64_t>(row);
  }

  void column(sqlite3_context* ctx, size_t p, uint64_t row, int col) const override {
    const Trace& t = *set_.parts[p].trace;
    const Arg& a = t.args[row];
    switch (col) {
      case kEvent: {
        uint32_t e = owner(p)[row];
        size_t slices = t.slices.size();
        if (e == kNoOwner)
          sqlite3_result_null(ctx);
        else if (e < slices)
          sqlite3_result_int64(ctx, set_.base[p].slice + e);
        else
          sqlite3_result_int64(ctx, set_.base[p].instant + (e - static_cast<int64_t>(slices)));
        break;
      }
      case kEventType: {
        uint32_t e = owner(p)[row];
        if (e == kNoOwner)
          sqlite3_result_null(ctx);
        else
          result_text(ctx, e < t.slices.size() ? "slice" : "instant");
        break;
      }
      case kKey:
        result_string(ctx, t, a.key);
        break;
      case kType:
        result_text(ctx, arg_type_name(a.type));
        break;
      case kValue:
        switch (a.type) {
          case ArgType::kNull:
            sqlite3_result_null(ctx);
            break;
          case ArgType::kBool:
            sqlite3_result_int(ctx, a.b ? 1 : 0);
            break;
          case ArgType::kInt:
            sqlite3_result_int64(ctx, a.i);
            break;
          case ArgType::kUInt:
            sqlite3_result_double(ctx, static_cast<double>(a.u));
            break;
          case ArgType::kDouble:
            sqlite3_result_double(ctx, a.d);
            break;
          case ArgType::kString:
            result_string(ctx, t, a.s);
            break;
          case ArgType::kJson:
            result_string(ctx, t, a.s);
            break;
        }
        break;
      case kInt: {
        auto v = a.as_int();
        if (v && a.type != ArgType::kDouble)
          sqlite3_result_int64(ctx, *v);
        else
          sqlite3_result_null(ctx);
        break;
      }
      case kReal:
        if (a.type == ArgType::kDouble || a.type == ArgType::kUInt)
          sqlite3_result_double(ctx, *a.as_double());
        else
          sqlite3_result_null(ctx);
        break;
      case kString:
        if (a.type == ArgType::kString || a.type == ArgType::kJson)
          result_string(ctx, t, a.s);
        else
          sqlite3_result_null(ctx);
        break;
    }
  }

  double selectivity(int col, Op op, bool binary) const override {
    if (col == -1 && op == Op::kEq) return 0.0;
    if (col == kEvent && op == Op::kEq) return 1e-5;
    if (col == kKey && op == Op::kEq && binary) return 0.1;
    return -1;
  }

  void plan(const std::vector<Constraint>& cs, Scan& scan) const override {
    for (const Constraint& c : cs)
      if (c.column == -1 && c.op == Op::kEq) return TableSpec::plan({c}, scan);
    bool by_event = false;
    std::string key;
    bool by_key = false;
    for (const Constraint& c : cs) {
      if (c.column == kEvent) {
        if (sqlite3_value_numeric_type(c.value) != SQLITE_INTEGER) return;  // no integer id
        if (!by_event) event_range(sqlite3_value_int64(c.value), scan);
        by_event = true;
      } else if (c.column == kKey && sqlite3_value_type(c.value) == SQLITE_TEXT) {
        key.assign(reinterpret_cast<const char*>(sqlite3_value_text(c.value)),
                   static_cast<size_t>(sqlite3_value_bytes(c.value)));
        by_key = true;
      }
    }
    if (!by_event) full_scan(scan);
    std::vector<StringId> key_ids;
    if (by_key)
      for (const TracePart& part : set_.parts) key_ids.push_back(part.trace->strings.find(key));
    const ArgsVtab* self = this;
    scan.keep = [self, by_key, key_ids](size_t p, uint64_t row) {
      if (self->owner(p)[row] == kNoOwner) return false;
      return !by_key || self->set_.parts[p].trace->args[row].key == key_ids[p];
    };
  }

 private:
  void event_range(int64_t id, Scan& scan) const {
    for (size_t p = 0; p < set_.parts.size(); ++p) {
      const Trace& t = *set_.parts[p].trace;
      int64_t s = id - set_.base[p].slice, i = id - set_.base[p].instant;
      if (s >= 0 && s < static_cast<int64_t>(t.slices.size())) {
        uint64_t b = t.slices.args_begin[s];
        scan.ranges.push_back({p, b, b + t.slices.args_count[s]});
        return;
      }
      if (i >= 0 && i < static_cast<int64_t>(t.instants.size())) {
        uint64_t b = t.instants.args_begin[i];
        scan.ranges.push_back({p, b, b + t.instants.args_count[i]});
        return;
      }
    }
  }

  // Which event owns each argument (slices first, then instants), built on first use.
  const std::vector<uint32_t>& owner(size_t p) const {
    std::vector<uint32_t>& o = owners_[p];
    const Trace& t = *set_.parts[p].trace;
    if (o.size() != t.args.size()) {
      o.assign(t.args.size(), kNoOwner);
      auto mark = [&](uint32_t begin, uint32_t count, uint32_t event) {
        for (uint32_t k = begin; k < begin + count && k < o.size(); ++k) o[k] = event;
      };
      for (size_t i = 0; i < t.slices.size(); ++i)
        mark(t.slices.args_begin[i], t.slices.args_count[i], static_cast<uint32_t>(i));
      for (size_t i = 0; i < t.instants.size(); ++i)
        mark(t.instants.args_begin[i], t.instants.args_count[i],
             static_cast<uint32_t>(t.slices.size() + i));
    }
    return o;
  }
  mutable std::vector<std::vector<uint32_t>> owners_;
};

}  // namespace

int register_args_table(sqlite3* db, const TraceSet& set, std::string& error) {
  return register_table(db, std::make_unique<ArgsVtab>(set), error);
}

}  // namespace mlprof::sql
