// `slice`: every complete slice of every trace (Perfetto: slice). Slices are sorted by (track,
// ts), so track_id = ?, ts ranges and parent_id = ? narrow to a binary-searched range; name and
// category equality compare interned ids instead of text.
#include <algorithm>

#include "sql/virtual_table.h"

namespace mlprof::sql {
namespace {

enum Col {
  kId,
  kTs,
  kDur,
  kEnd,
  kTrack,
  kName,
  kCategory,
  kDepth,
  kParent,
  kSelf,
  kThreadTs,
  kThreadDur
};

class SliceVtab : public TableSpec {
 public:
  using TableSpec::TableSpec;
  const char* name() const override { return "slice"; }
  const std::vector<ColumnSpec>& columns() const override {
    static const std::vector<ColumnSpec> c = {
        {"id", "INTEGER"},    {"ts", "INTEGER"},        {"dur", "INTEGER"},
        {"end", "INTEGER"},   {"track_id", "INTEGER"},  {"name", "TEXT"},
        {"category", "TEXT"}, {"depth", "INTEGER"},     {"parent_id", "INTEGER"},
        {"self", "INTEGER"},  {"thread_ts", "INTEGER"}, {"thread_dur", "INTEGER"}};
    return c;
  }
  uint64_t rows(size_t p) const override { return set_.parts[p].trace->slices.size(); }
  int64_t rowid(size_t p, uint64_t row) const override {
    return set_.base[p].slice + static_cast<int64_t>(row);
  }
  void column(sqlite3_context* ctx, size_t p, uint64_t row, int col) const override {
    const Trace& t = *set_.parts[p].trace;
    const mlprof::SliceTable& s = t.slices;
    switch (col) {
      case kId:
        sqlite3_result_int64(ctx, rowid(p, row));
        break;
      case kTs:
        sqlite3_result_int64(ctx, s.ts[row]);
        break;
      case kDur:
        sqlite3_result_int64(ctx, s.dur[row]);
        break;
      case kEnd:
        sqlite3_result_int64(ctx, s.ts[row] + s.dur[row]);
        break;
      case kTrack:
        sqlite3_result_int64(ctx, set_.base[p].track + s.track[row]);
        break;
      case kName:
        result_string(ctx, t, s.name[row]);
        break;
      case kCategory:
        result_string(ctx, t, s.cat[row]);
        break;
      case kDepth:
        sqlite3_result_int(ctx, s.depth[row]);
        break;
      case kParent:
        if (s.parent[row] < 0)
          sqlite3_result_null(ctx);
        else
          sqlite3_result_int64(ctx, set_.base[p].slice + s.parent[row]);
        break;
      case kSelf:
        sqlite3_result_int64(ctx, s.self[row]);
        break;
      case kThreadTs:  // thread (CPU) time, as Perfetto's columns: NULL when not recorded
      case kThreadDur: {
        int64_t v = col == kThreadTs ? s.thread_ts[row] : s.thread_dur[row];
        if (v < 0)
          sqlite3_result_null(ctx);
        else
          sqlite3_result_int64(ctx, v);
        break;
      }
    }
  }

  double selectivity(int col, Op op, bool binary) const override {
    if ((col == -1 || col == kId) && op == Op::kEq) return 0.0;
    if (col == kTs) return op == Op::kEq ? 0.001 : 0.25;
    if (col == kEnd && op != Op::kEq) return 0.5;  // bounds ts through the longest slice
    if (col == kTrack && op == Op::kEq) return 0.05;
    if (col == kParent && op == Op::kEq) return 0.001;
    if ((col == kName || col == kCategory) && op == Op::kEq && binary) return 0.2;
    return -1;
  }

  // ORDER BY / GROUP BY name or category on one trace: a permutation sorted by the text (by
  // interned id, then a sort of the few distinct names), built once; SQLite then skips its sort.
  bool order_by(int col, bool, const std::vector<int>& used) const override {
    if (set_.parts.size() != 1 || (col != kName && col != kCategory)) return false;
    for (int u : used)
      if (u != kName && u != kCategory) return false;  // a narrowed scan is cheaper to sort
    return true;
  }

  void plan_ordered(const std::vector<Constraint>& cs, int col, bool desc,
                    Scan& scan) const override {
    const std::vector<uint32_t>& order = sorted(col, desc);
    scan.order = &order;
    scan.ranges.push_back({0, 0, order.size()});
    keep_text_equal(cs, scan);
  }

  void plan(const std::vector<Constraint>& cs, Scan& scan) const override {
    for (const Constraint& c : cs)
      if ((c.column == -1 || c.column == kId) && c.op == Op::kEq) return TableSpec::plan({c}, scan);
    int64_t lo = INT64_MIN, hi = INT64_MAX;  // ts in [lo, hi]
    int64_t end_lo = INT64_MIN;              // end >= end_lo
    bool has_track = false, has_parent = false;
    int64_t track = 0, parent = 0;
    for (const Constraint& c : cs) {
      int64_t v;
      switch (c.column) {
        case kTs:
          if (c.op == Op::kEq || c.op == Op::kGe || c.op == Op::kGt) {
            if (int_bound(c.value, true, v)) lo = std::max(lo, v);
          }
          if (c.op == Op::kEq || c.op == Op::kLe || c.op == Op::kLt) {
            if (int_bound(c.value, false, v)) hi = std::min(hi, v);
          }
          break;
        case kEnd:
          // end >= x: ts >= x - (the track's longest slice), below; end <= x: ts <= x.
          if (c.op == Op::kGe || c.op == Op::kGt) {
            if (int_bound(c.value, true, v)) end_lo = std::max(end_lo, v);
          } else if (int_bound(c.value, false, v)) {
            hi = std::min(hi, v);
          }
          break;
        case kTrack:
          if (sqlite3_value_numeric_type(c.value) != SQLITE_INTEGER) return;  // matches nothing
          if (has_track && track != sqlite3_value_int64(c.value)) return;
          has_track = true;
          track = sqlite3_value_int64(c.value);
          break;
        case kParent:
          if (sqlite3_value_numeric_type(c.value) != SQLITE_INTEGER) return;
          has_parent = true;
          parent = sqlite3_value_int64(c.value);
          break;
        default:
          break;
      }
    }
    if (lo > hi) return;
    for (size_t p = 0; p < set_.parts.size(); ++p) {
      const Trace& t = *set_.parts[p].trace;
      const auto& begin = t.track_slice_begin;
      if (begin.size() != t.tracks.size() + 1) {  // no per-track index: the whole part
        scan.ranges.push_back({p, 0, t.slices.size()});
        continue;
      }
      uint64_t first_track = 0, last_track = t.tracks.size();
      if (has_track) {
        int64_t local = track - set_.base[p].track;
        if (local < 0 || local >= static_cast<int64_t>(t.tracks.size())) continue;
        first_track = static_cast<uint64_t>(local);
        last_track = first_track + 1;
      }
      uint64_t parent_row = 0;
      if (has_parent) {
        int64_t local = parent - set_.base[p].slice;
        if (local < 0 || local >= static_cast<int64_t>(t.slices.size())) continue;
        parent_row = static_cast<uint64_t>(local);
        uint32_t tr = t.slices.track[parent_row];
        if (tr < first_track || tr >= last_track) continue;
        first_track = tr;
        last_track = tr + 1;
        // Children start inside the parent, after it in (ts, longest first) order.
        lo = std::max(lo, t.slices.ts[parent_row]);
        hi = std::min(hi, t.slices.end(parent_row));
        if (lo > hi) continue;
      }
      for (uint64_t tr = first_track; tr < last_track; ++tr) {
        const int64_t* ts = t.slices.ts.data();
        uint64_t b = begin[tr], e = begin[tr + 1];
        if (has_parent) b = std::max(b, parent_row + 1);
        if (b >= e) continue;
        int64_t track_lo = lo;
        if (end_lo != INT64_MIN) {
          int64_t longest = longest_slice(p)[tr];
          if (end_lo > INT64_MIN + longest) track_lo = std::max(track_lo, end_lo - longest);
        }
        if (track_lo != INT64_MIN) b = std::lower_bound(ts + b, ts + e, track_lo) - ts;
        if (hi != INT64_MAX) e = std::upper_bound(ts + b, ts + e, hi) - ts;
        if (b >= e) continue;
        if (!scan.ranges.empty() && scan.ranges.back().part == p && scan.ranges.back().end == b)
          scan.ranges.back().end = e;  // adjacent tracks: one range
        else
          scan.ranges.push_back({p, b, e});
      }
    }
    keep_text_equal(cs, scan);
  }

 private:
  // name = / category = as interned ids, one per part (a name a part never interned matches
  // none of its rows). Other constraints are rechecked by SQLite.
  void keep_text_equal(const std::vector<Constraint>& cs, Scan& scan) const {
    std::vector<std::pair<int, std::string>> text_eq;
    for (const Constraint& c : cs)
      if ((c.column == kName || c.column == kCategory) && c.op == Op::kEq &&
          sqlite3_value_type(c.value) == SQLITE_TEXT)
        text_eq.emplace_back(c.column,
                             std::string(reinterpret_cast<const char*>(sqlite3_value_text(c.value)),
                                         static_cast<size_t>(sqlite3_value_bytes(c.value))));
    if (text_eq.empty()) return;
    auto ids = std::make_shared<std::vector<std::vector<StringId>>>(text_eq.size());
    for (size_t k = 0; k < text_eq.size(); ++k)
      for (const TracePart& part : set_.parts)
        (*ids)[k].push_back(part.trace->strings.find(text_eq[k].second));
    std::vector<int> cols;
    for (auto& [col, _] : text_eq) cols.push_back(col);
    const TraceSet* set = &set_;
    scan.keep = [ids, cols, set](size_t p, uint64_t row) {
      const mlprof::SliceTable& s = set->parts[p].trace->slices;
      for (size_t k = 0; k < cols.size(); ++k) {
        StringId have = cols[k] == kName ? s.name[row] : s.cat[row];
        if ((*ids)[k][p] != have) return false;
      }
      return true;
    };
  }

  // The longest slice of each track of part p (for end >= x), computed on first use.
  const std::vector<int64_t>& longest_slice(size_t p) const {
    if (longest_.size() != set_.parts.size()) longest_.resize(set_.parts.size());
    std::vector<int64_t>& l = longest_[p];
    const Trace& t = *set_.parts[p].trace;
    if (l.size() == t.tracks.size()) return l;
    l.assign(t.tracks.size(), 0);
    for (size_t i = 0; i < t.slices.size(); ++i)
      l[t.slices.track[i]] = std::max(l[t.slices.track[i]], t.slices.dur[i]);
    return l;
  }
  mutable std::vector<std::vector<int64_t>> longest_;

  const std::vector<uint32_t>& sorted(int col, bool desc) const {
    std::vector<uint32_t>& order = sorted_[(col == kName ? 0 : 2) + (desc ? 1 : 0)];
    const Trace& t = *set_.parts[0].trace;
    if (order.size() == t.slices.size()) return order;
    const std::vector<StringId>& ids = col == kName ? t.slices.name : t.slices.cat;
    std::vector<uint32_t> start(t.strings.size() + 1, 0);
    for (StringId id : ids) ++start[id];
    std::vector<StringId> distinct;
    for (StringId id = 0; id < t.strings.size(); ++id)
      if (start[id]) distinct.push_back(id);
    // BINARY collation is memcmp order: string_view's compare.
    std::sort(distinct.begin(), distinct.end(), [&](StringId a, StringId b) {
      return desc ? t.str(b) < t.str(a) : t.str(a) < t.str(b);
    });
    uint32_t next = 0;
    for (StringId id : distinct) {  // counts -> first position of each name
      uint32_t count = start[id];
      start[id] = next;
      next += count;
    }
    order.resize(ids.size());
    for (uint32_t row = 0; row < ids.size(); ++row) order[start[ids[row]]++] = row;
    return order;
  }
  mutable std::vector<uint32_t> sorted_[4];  // name asc/desc, category asc/desc
};

}  // namespace

int register_slice_table(sqlite3* db, const TraceSet& set, std::string& error) {
  return register_table(db, std::make_unique<SliceVtab>(set), error);
}

}  // namespace mlprof::sql
