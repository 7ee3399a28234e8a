// The generic SQLite virtual-table glue: a table is a TableSpec (columns, rows per trace, how to
// read one cell, which constraints it can narrow by); one module per spec turns it into xBestIndex/
// xFilter/xNext/xColumn. Rows are addressed (part, local row); ids are global over the parts.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sql/trace_database.h"

namespace mlprof::sql {

// Per part, the first global id of each id space, so ids stay unique over a directory of ranks.
// Instant ids follow all slice ids: args.event_id names either without ambiguity.
struct IdBase {
  int64_t slice = 0, instant = 0, track = 0, process = 0, series = 0, flow = 0, memory = 0,
          stack = 0, arg = 0, counter = 0, frame = 0;
};

struct TraceSet {
  std::vector<TracePart> parts;
  std::vector<IdBase> base;  // one per part
  bool rank_column = false;
  // Part holding global id `id` in the id space `member` (parts in order, bases ascending),
  // and the local index; false when no part holds it.
  bool locate(int64_t IdBase::*member, int64_t id, size_t& part, uint64_t& local,
              uint64_t (*count)(const Trace&)) const;
};

struct ColumnSpec {
  const char* name;
  const char* type;  // declared type: INTEGER, REAL, TEXT or "" (any)
};

enum class Op : char { kEq = '=', kGt = '>', kGe = 'g', kLt = '<', kLe = 'l' };

struct Constraint {
  int column;  // -1 = rowid (the id)
  Op op;
  sqlite3_value* value;
};

struct RowRange {
  size_t part;
  uint64_t begin, end;
};

// The rows a cursor visits: ascending ranges (so rows come in id order), optionally filtered.
// With `order`, a range indexes that permutation of the part's rows instead (an ORDER BY or
// GROUP BY the table delivers itself).
struct Scan {
  std::vector<RowRange> ranges;
  std::function<bool(size_t part, uint64_t row)> keep;  // empty = keep all
  const std::vector<uint32_t>* order = nullptr;
  uint64_t row(uint64_t i) const { return order ? (*order)[i] : i; }
};

class TableSpec {
 public:
  explicit TableSpec(const TraceSet& set) : set_(set) {}
  virtual ~TableSpec() = default;
  virtual const char* name() const = 0;
  virtual const std::vector<ColumnSpec>& columns() const = 0;
  virtual uint64_t rows(size_t part) const = 0;
  virtual int64_t rowid(size_t part, uint64_t row) const = 0;
  virtual void column(sqlite3_context* ctx, size_t part, uint64_t row, int col) const = 0;
  // Fraction of rows left by a constraint it narrows by (the planner's estimate), or < 0 when
  // it cannot use it. A narrowed scan may return more rows than match: SQLite rechecks them.
  virtual double selectivity(int column, Op op, bool binary_collation) const;
  // Fills `scan` for the constraints selectivity() accepted; default: id = ?, else every row.
  virtual void plan(const std::vector<Constraint>& constraints, Scan& scan) const;
  // Whether the table can return its rows sorted by `column` (the whole ORDER BY, or the GROUP BY
  // SQLite would otherwise sort for) when narrowed only by the constraints on `used` columns.
  virtual bool order_by(int /*column*/, bool /*desc*/, const std::vector<int>& /*used*/) const {
    return false;
  }
  virtual void plan_ordered(const std::vector<Constraint>& constraints, int /*column*/,
                            bool /*desc*/, Scan& scan) const {
    plan(constraints, scan);
  }

  const TraceSet& set() const { return set_; }
  bool has_id() const;  // column 0 is "id" (the global id; rowid otherwise counts rows)
  uint64_t total_rows() const;
  // The whole of every part.
  void full_scan(Scan& scan) const;

 protected:
  const TraceSet& set_;
};

// A table given by functions: the row count of a trace, the id space its ids live in (null: ids
// are row numbers over the parts in order), and one cell.
class SimpleTable : public TableSpec {
 public:
  using Count = uint64_t (*)(const Trace&);
  using Cell = void (*)(sqlite3_context*, const TraceSet&, size_t part, uint64_t row, int col);
  SimpleTable(const TraceSet& set, const char* name, std::vector<ColumnSpec> columns, Count count,
              int64_t IdBase::*base, Cell cell);
  const char* name() const override { return name_; }
  const std::vector<ColumnSpec>& columns() const override { return columns_; }
  uint64_t rows(size_t p) const override { return count_(*set_.parts[p].trace); }
  int64_t rowid(size_t p, uint64_t row) const override {
    return (base_ ? set_.base[p].*base_ : first_[p]) + static_cast<int64_t>(row);
  }
  void column(sqlite3_context* ctx, size_t p, uint64_t row, int col) const override {
    cell_(ctx, set_, p, row, col);
  }

 private:
  const char* name_;
  std::vector<ColumnSpec> columns_;
  Count count_;
  int64_t IdBase::*base_;
  Cell cell_;
  std::vector<int64_t> first_;
};

// Registers `spec` as module "mlprof_NAME" and creates the virtual table NAME over it.
int register_table(sqlite3* db, std::unique_ptr<TableSpec> spec, std::string& error);

// Helpers for column():
inline void result_text(sqlite3_context* ctx, std::string_view s) {
  // An empty view may have no data pointer, which SQLite would take for NULL.
  sqlite3_result_text(ctx, s.empty() ? "" : s.data(), static_cast<int>(s.size()), SQLITE_STATIC);
}
inline void result_string(sqlite3_context* ctx, const Trace& t, StringId id) {
  result_text(ctx, t.str(id));
}

// The constraint value as an integer bound usable for a superset: `lower` rounds down (floor),
// else up. False when the value is not numeric (the constraint is then not narrowed on).
bool int_bound(sqlite3_value* v, bool lower, int64_t& out);

// All the tables, created into `db` over `set` (defined with each table's file).
int register_slice_table(sqlite3* db, const TraceSet& set, std::string& error);
int register_args_table(sqlite3* db, const TraceSet& set, std::string& error);
int register_track_tables(sqlite3* db, const TraceSet& set, std::string& error);
int register_event_tables(sqlite3* db, const TraceSet& set, std::string& error);
int register_analysis_tables(sqlite3* db, const TraceSet& set, std::string& error);

}  // namespace mlprof::sql
