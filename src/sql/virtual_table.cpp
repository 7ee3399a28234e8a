#include "sql/virtual_table.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace mlprof::sql {

bool TraceSet::locate(int64_t IdBase::*member, int64_t id, size_t& part, uint64_t& local,
                      uint64_t (*count)(const Trace&)) const {
  for (size_t p = parts.size(); p-- > 0;) {
    int64_t b = base[p].*member;
    if (id < b) continue;
    uint64_t l = static_cast<uint64_t>(id - b);
    if (l >= count(*parts[p].trace)) return false;
    part = p;
    local = l;
    return true;
  }
  return false;
}

bool TableSpec::has_id() const { return std::strcmp(columns()[0].name, "id") == 0; }

double TableSpec::selectivity(int column, Op op, bool) const {
  return (column == -1 || (column == 0 && has_id())) && op == Op::kEq ? 0.0 : -1.0;
}

void TableSpec::plan(const std::vector<Constraint>& constraints, Scan& scan) const {
  for (const Constraint& c : constraints) {
    if ((c.column == -1 || (c.column == 0 && has_id())) && c.op == Op::kEq) {
      int64_t id;
      scan.ranges.clear();
      if (!int_bound(c.value, true, id) || sqlite3_value_numeric_type(c.value) != SQLITE_INTEGER)
        return;
      for (size_t p = set_.parts.size(); p-- > 0;) {
        if (id < rowid(p, 0) || rows(p) == 0) continue;
        uint64_t local = static_cast<uint64_t>(id - rowid(p, 0));
        if (local < rows(p)) scan.ranges.push_back({p, local, local + 1});
        return;
      }
      return;
    }
  }
  full_scan(scan);
}

uint64_t TableSpec::total_rows() const {
  uint64_t n = 0;
  for (size_t p = 0; p < set_.parts.size(); ++p) n += rows(p);
  return n;
}

void TableSpec::full_scan(Scan& scan) const {
  for (size_t p = 0; p < set_.parts.size(); ++p) scan.ranges.push_back({p, 0, rows(p)});
}

SimpleTable::SimpleTable(const TraceSet& set, const char* name, std::vector<ColumnSpec> columns,
                         Count count, int64_t IdBase::*base, Cell cell)
    : TableSpec(set),
      name_(name),
      columns_(std::move(columns)),
      count_(count),
      base_(base),
      cell_(cell) {
  int64_t n = 0;
  for (const TracePart& part : set.parts) {
    first_.push_back(n);
    n += static_cast<int64_t>(count(*part.trace));
  }
}

bool int_bound(sqlite3_value* v, bool lower, int64_t& out) {
  int type = sqlite3_value_numeric_type(v);
  if (type == SQLITE_INTEGER) {
    out = sqlite3_value_int64(v);
    return true;
  }
  if (type != SQLITE_FLOAT) return false;
  double d = sqlite3_value_double(v);
  if (std::isnan(d)) return false;
  d = lower ? std::floor(d) : std::ceil(d);
  if (d <= -9.2e18)
    out = std::numeric_limits<int64_t>::min();
  else if (d >= 9.2e18)
    out = std::numeric_limits<int64_t>::max();
  else
    out = static_cast<int64_t>(d);
  return true;
}

namespace {

struct Vtab : sqlite3_vtab {
  TableSpec* spec = nullptr;
};

struct Cursor : sqlite3_vtab_cursor {
  TableSpec* spec = nullptr;
  Scan scan;
  size_t range = 0;
  uint64_t row = 0;

  bool at_end() const { return range >= scan.ranges.size(); }
  // Moves to the first kept row at or after (range, row).
  void settle() {
    while (range < scan.ranges.size()) {
      const RowRange& r = scan.ranges[range];
      if (row < r.begin) row = r.begin;
      if (row < r.end) {
        if (!scan.keep || scan.keep(r.part, scan.row(row))) return;
        ++row;
        continue;
      }
      ++range;
      row = 0;
    }
  }
};

std::string declaration(const TableSpec& spec) {
  std::string s = "CREATE TABLE x(";
  for (const ColumnSpec& c : spec.columns()) {
    s += c.name;
    s += ' ';
    s += c.type;
    s += ", ";
  }
  s += spec.set().rank_column ? "rank INTEGER)" : "rank INTEGER HIDDEN)";
  return s;
}

int x_connect(sqlite3* db, void* aux, int, const char* const*, sqlite3_vtab** out, char** err) {
  auto* spec = static_cast<TableSpec*>(aux);
  int rc = sqlite3_declare_vtab(db, declaration(*spec).c_str());
  if (rc != SQLITE_OK) {
    *err = sqlite3_mprintf("%s: cannot declare table: %s", spec->name(), sqlite3_errmsg(db));
    return rc;
  }
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  auto* v = new Vtab();
  v->spec = spec;
  *out = v;
  return SQLITE_OK;
}

int x_disconnect(sqlite3_vtab* v) {
  delete static_cast<Vtab*>(v);
  return SQLITE_OK;
}

bool to_op(unsigned char op, Op& out) {
  switch (op) {
    case SQLITE_INDEX_CONSTRAINT_EQ:
      out = Op::kEq;
      return true;
    case SQLITE_INDEX_CONSTRAINT_GT:
      out = Op::kGt;
      return true;
    case SQLITE_INDEX_CONSTRAINT_GE:
      out = Op::kGe;
      return true;
    case SQLITE_INDEX_CONSTRAINT_LT:
      out = Op::kLt;
      return true;
    case SQLITE_INDEX_CONSTRAINT_LE:
      out = Op::kLe;
      return true;
    default:
      return false;
  }
}

int x_best_index(sqlite3_vtab* vt, sqlite3_index_info* info) {
  TableSpec* spec = static_cast<Vtab*>(vt)->spec;
  int ncols = static_cast<int>(spec->columns().size());
  double fraction = 1.0;
  bool unique = false;
  std::string plan;
  std::vector<int> used;
  int argc = 0;
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    Op op;
    if (!c.usable || c.iColumn > ncols || !to_op(c.op, op)) continue;
    if (c.iColumn == ncols) {  // rank = ?: whole traces skipped (x_filter)
      if (op != Op::kEq || spec->set().parts.size() < 2) continue;
      info->aConstraintUsage[i].argvIndex = ++argc;
      plan += static_cast<char>('A' + ncols + 1);
      plan += static_cast<char>(op);
      fraction /= static_cast<double>(spec->set().parts.size());
      continue;
    }
    const char* coll = sqlite3_vtab_collation(info, i);
    bool binary = coll == nullptr || std::strcmp(coll, "BINARY") == 0;
    double s = spec->selectivity(c.iColumn, op, binary);
    if (s < 0) continue;
    info->aConstraintUsage[i].argvIndex = ++argc;
    info->aConstraintUsage[i].omit = 0;  // the narrowed scan is a superset: SQLite rechecks
    plan += static_cast<char>('A' + c.iColumn + 1);
    plan += static_cast<char>(op);
    used.push_back(c.iColumn);
    fraction *= s;
    if (s == 0.0) unique = true;  // an id lookup
  }
  double rows = static_cast<double>(spec->total_rows());
  double est = unique ? 1.0 : std::max(1.0, rows * fraction);
  info->estimatedRows = static_cast<sqlite3_int64>(est);
  info->estimatedCost = est + 1.0;
  if (unique) info->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
  // Every scan returns rows in ascending id (column 0 for tables with an id, else the rowid);
  // some tables also sort by another column themselves (idxNum = column + 1, negative: DESC).
  if (info->nOrderBy == 1) {
    const auto& o = info->aOrderBy[0];
    if (!o.desc && (o.iColumn == -1 || (o.iColumn == 0 && spec->has_id()))) {
      info->orderByConsumed = 1;
    } else if (o.iColumn >= 0 && o.iColumn < ncols && spec->order_by(o.iColumn, o.desc, used)) {
      info->orderByConsumed = 1;
      info->idxNum = o.desc ? -(o.iColumn + 1) : o.iColumn + 1;
    }
  }
  info->idxStr = sqlite3_mprintf("%s", plan.c_str());
  info->needToFreeIdxStr = 1;
  return SQLITE_OK;
}

int x_open(sqlite3_vtab* vt, sqlite3_vtab_cursor** out) {
  auto* c = new Cursor();
  c->spec = static_cast<Vtab*>(vt)->spec;
  *out = c;
  return SQLITE_OK;
}

int x_close(sqlite3_vtab_cursor* c) {
  delete static_cast<Cursor*>(c);
  return SQLITE_OK;
}

int x_filter(sqlite3_vtab_cursor* vc, int ordered, const char* idx, int argc,
             sqlite3_value** argv) {
  auto* c = static_cast<Cursor*>(vc);
  std::vector<Constraint> constraints;
  std::vector<sqlite3_value*> ranks;
  int rank_column = static_cast<int>(c->spec->columns().size());
  size_t n = idx ? std::strlen(idx) / 2 : 0;
  for (size_t i = 0; i < n && static_cast<int>(i) < argc; ++i) {
    int col = idx[2 * i] - 'A' - 1;
    if (col == rank_column)
      ranks.push_back(argv[i]);
    else
      constraints.push_back({col, static_cast<Op>(idx[2 * i + 1]), argv[i]});
  }
  c->scan = Scan();
  try {
    if (ordered != 0)
      c->spec->plan_ordered(constraints, (ordered > 0 ? ordered : -ordered) - 1, ordered < 0,
                            c->scan);
    else
      c->spec->plan(constraints, c->scan);
  } catch (const std::exception& e) {  // an analysis that failed: an SQL error, not a crash
    sqlite3_free(vc->pVtab->zErrMsg);
    vc->pVtab->zErrMsg = sqlite3_mprintf("%s: %s", c->spec->name(), e.what());
    return SQLITE_ERROR;
  }
  for (sqlite3_value* v : ranks) {  // a superset again: SQLite rechecks rank = ?
    if (sqlite3_value_numeric_type(v) != SQLITE_INTEGER) continue;
    int64_t want = sqlite3_value_int64(v);
    const auto& parts = c->spec->set().parts;
    std::erase_if(c->scan.ranges, [&](const RowRange& r) { return parts[r.part].rank != want; });
  }
  c->range = 0;
  c->row = 0;
  c->settle();
  return SQLITE_OK;
}

int x_next(sqlite3_vtab_cursor* vc) {
  auto* c = static_cast<Cursor*>(vc);
  ++c->row;
  c->settle();
  return SQLITE_OK;
}

int x_eof(sqlite3_vtab_cursor* vc) { return static_cast<Cursor*>(vc)->at_end() ? 1 : 0; }

int x_column(sqlite3_vtab_cursor* vc, sqlite3_context* ctx, int col) {
  auto* c = static_cast<Cursor*>(vc);
  size_t part = c->scan.ranges[c->range].part;
  if (col == static_cast<int>(c->spec->columns().size())) {
    sqlite3_result_int(ctx, c->spec->set().parts[part].rank);
  } else {
    c->spec->column(ctx, part, c->scan.row(c->row), col);
  }
  return SQLITE_OK;
}

int x_rowid(sqlite3_vtab_cursor* vc, sqlite3_int64* out) {
  auto* c = static_cast<Cursor*>(vc);
  *out = c->spec->rowid(c->scan.ranges[c->range].part, c->scan.row(c->row));
  return SQLITE_OK;
}

const sqlite3_module* module() {
  static const sqlite3_module m = [] {
    sqlite3_module x{};
    x.iVersion = 0;
    x.xCreate = x_connect;
    x.xConnect = x_connect;
    x.xBestIndex = x_best_index;
    x.xDisconnect = x_disconnect;
    x.xDestroy = x_disconnect;
    x.xOpen = x_open;
    x.xClose = x_close;
    x.xFilter = x_filter;
    x.xNext = x_next;
    x.xEof = x_eof;
    x.xColumn = x_column;
    x.xRowid = x_rowid;
    // No xUpdate: the tables are read-only ("table slice may not be modified").
    return x;
  }();
  return &m;
}

}  // namespace

int register_table(sqlite3* db, std::unique_ptr<TableSpec> spec, std::string& error) {
  std::string table = spec->name();
  std::string mod = "mlprof_" + table;
  TableSpec* raw = spec.release();
  int rc = sqlite3_create_module_v2(db, mod.c_str(), module(), raw,
                                    [](void* p) { delete static_cast<TableSpec*>(p); });
  if (rc != SQLITE_OK) {
    error = mod + ": " + sqlite3_errmsg(db);
    return rc;
  }
  std::string create = "CREATE VIRTUAL TABLE " + table + " USING " + mod;
  char* err = nullptr;
  rc = sqlite3_exec(db, create.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    error = table + ": " + (err ? err : sqlite3_errmsg(db));
    sqlite3_free(err);
  }
  return rc;
}

}  // namespace mlprof::sql
