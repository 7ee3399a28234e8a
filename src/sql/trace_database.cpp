#include "sql/trace_database.h"

#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "sql/virtual_table.h"
#include "trace/output_file.h"

namespace mlprof::sql {

struct TraceDatabase::State {
  TraceSet set;
  std::vector<std::string> tables;
  std::vector<std::pair<std::string, std::string>> views;  // name, SELECT
  bool trusted = true;  // setup and export may write; user statements may not
  bool refused = false;
};

namespace {

// Writes are refused outside TEMP (the user's own scratch tables): the trace tables are read-only,
// and nothing may attach files or change the schema.
int authorize(void* user, int action, const char*, const char*, const char* db, const char*) {
  auto* st = static_cast<TraceDatabase::State*>(user);
  if (st->trusted) return SQLITE_OK;
  bool temp = db && std::strcmp(db, "temp") == 0;
  switch (action) {
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
      if (temp) return SQLITE_OK;
      break;
    case SQLITE_CREATE_TABLE:
    case SQLITE_CREATE_INDEX:
    case SQLITE_CREATE_VIEW:
    case SQLITE_CREATE_TRIGGER:
    case SQLITE_DROP_TABLE:
    case SQLITE_DROP_INDEX:
    case SQLITE_DROP_VIEW:
    case SQLITE_DROP_TRIGGER:
    case SQLITE_ALTER_TABLE:
    case SQLITE_CREATE_VTABLE:
    case SQLITE_DROP_VTABLE:
    case SQLITE_ATTACH:
    case SQLITE_DETACH:
    case SQLITE_REINDEX:
    case SQLITE_ANALYZE:
      break;
    default:
      return SQLITE_OK;
  }
  st->refused = true;
  return SQLITE_DENY;
}

bool exec(sqlite3* db, const std::string& sql, std::string& error) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) == SQLITE_OK) return true;
  error = err ? err : sqlite3_errmsg(db);
  sqlite3_free(err);
  return false;
}

}  // namespace

Result<std::unique_ptr<TraceDatabase>> TraceDatabase::open(std::vector<TracePart> parts,
                                                           bool rank_column) {
  std::unique_ptr<TraceDatabase> d(new TraceDatabase());
  d->state_ = std::make_unique<State>();
  TraceSet& set = d->state_->set;
  set.parts = std::move(parts);
  set.rank_column = rank_column;
  int64_t slices = 0;
  for (const TracePart& p : set.parts) slices += static_cast<int64_t>(p.trace->slices.size());
  IdBase next;
  next.instant = slices;  // instant ids follow every slice id
  for (const TracePart& p : set.parts) {
    const Trace& t = *p.trace;
    set.base.push_back(next);
    next.slice += static_cast<int64_t>(t.slices.size());
    next.instant += static_cast<int64_t>(t.instants.size());
    next.track += static_cast<int64_t>(t.tracks.size());
    next.process += static_cast<int64_t>(t.processes.size());
    next.series += static_cast<int64_t>(t.counter_series.size());
    next.flow += static_cast<int64_t>(t.flows.size());
    next.memory += static_cast<int64_t>(t.memory.size());
    next.stack += static_cast<int64_t>(t.stacks.frames_begin.size());
    next.arg += static_cast<int64_t>(t.args.size());
    next.counter += static_cast<int64_t>(t.counters.size());
    next.frame += static_cast<int64_t>(t.stack_frames.size());
  }

  if (sqlite3_open_v2(":memory:", &d->db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK)
    return Status::error(std::string("sqlite: cannot open: ") + sqlite3_errmsg(d->db_));
  sqlite3_set_authorizer(d->db_, authorize, d->state_.get());
  std::string error;
  int rc = register_slice_table(d->db_, set, error);
  if (rc == SQLITE_OK) rc = register_args_table(d->db_, set, error);
  if (rc == SQLITE_OK) rc = register_track_tables(d->db_, set, error);
  if (rc == SQLITE_OK) rc = register_event_tables(d->db_, set, error);
  if (rc == SQLITE_OK) rc = register_analysis_tables(d->db_, set, error);
  if (rc != SQLITE_OK) return Status::error("sqlite: " + error);

  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(d->db_, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid",
                     -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW)
    d->state_->tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);

  std::string rank = rank_column ? ", rank" : "";
  d->state_->views = {
      {"thread",
       "SELECT id, tid, name, pid, process_id" + rank + " FROM track WHERE type = 'thread'"},
      {"gpu_stream", "SELECT id, device, stream, name, pid, process_id" + rank +
                         " FROM track WHERE type = 'gpu_stream'"},
  };
  for (const auto& [name, select] : d->state_->views)
    if (!exec(d->db_, "CREATE VIEW " + name + " AS " + select, error))
      return Status::error("sqlite: view " + name + ": " + error);
  d->state_->trusted = false;
  return d;
}

TraceDatabase::~TraceDatabase() {
  if (db_) sqlite3_close_v2(db_);
}

void TraceDatabase::interrupt() { sqlite3_interrupt(db_); }

std::vector<std::string> TraceDatabase::table_names() const {
  std::vector<std::string> names = state_->tables;
  for (const auto& v : state_->views) names.push_back(v.first);
  return names;
}

bool TraceDatabase::run(std::string_view sql, RowSink& sink, QueryError& error) {
  const char* start = sql.data();
  const char* end = start + sql.size();
  const char* p = start;
  state_->refused = false;
  auto fail = [&](sqlite3_stmt* st, int rc, const char* at) {
    error.message = sqlite3_errmsg(db_);
    int off = sqlite3_error_offset(db_);
    error.offset = off >= 0 ? (at - start) + off : -1;
    error.interrupted = rc == SQLITE_INTERRUPT;
    // The authorizer's refusals, and SQLite's own for virtual tables (no xUpdate, no index).
    error.refused_write = rc == SQLITE_AUTH || state_->refused ||
                          error.message.find("may not be modified") != std::string::npos ||
                          error.message.find("may not be indexed") != std::string::npos;
    sqlite3_finalize(st);
    return false;
  };
  while (p < end) {
    sqlite3_stmt* st = nullptr;
    const char* tail = nullptr;
    int rc = sqlite3_prepare_v2(db_, p, static_cast<int>(end - p), &st, &tail);
    if (rc != SQLITE_OK) return fail(st, rc, p);
    if (!st) {  // only whitespace or a comment left
      p = tail;
      continue;
    }
    bool rows = sqlite3_column_count(st) > 0;
    if (rows) sink.begin(st);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) sink.row(st);
    if (rc != SQLITE_DONE) return fail(st, rc, p);  // a table's partial rows are not shown
    if (rows) sink.end();
    sqlite3_finalize(st);
    p = tail;
  }
  return true;
}

namespace {

// Indexes for the usual joins and filters in the exported file (ids are the primary keys).
const char* kExportIndexes[] = {
    "CREATE INDEX out.slice_track_ts ON slice(track_id, ts)",
    "CREATE INDEX out.slice_name ON slice(name)",
    "CREATE INDEX out.slice_parent ON slice(parent_id)",
    "CREATE INDEX out.args_event ON args(event_id)",
    "CREATE INDEX out.flow_out ON flow(slice_out)",
    "CREATE INDEX out.flow_in ON flow(slice_in)",
    "CREATE INDEX out.instant_track_ts ON instant(track_id, ts)",
    "CREATE INDEX out.counter_track_ts ON counter(track_id, ts)",
    "CREATE INDEX out.memory_ts ON memory(ts)",
    "CREATE INDEX out.stack_frame_stack ON stack_frame(stack_id)",
    "CREATE INDEX out.launches_kernel ON launches(kernel_id)",
    "CREATE INDEX out.launches_launch ON launches(launch_id)",
    "CREATE INDEX out.track_type ON track(type)",
};

}  // namespace

Status TraceDatabase::export_sqlite(const std::string& path) {
  // SQLite opens the file by name: a named temporary file, renamed into place at the end.
  Result<OutputFile> file = OutputFile::open(path, OutputFile::Options{.need_name = true});
  MLPROF_RETURN_IF_ERROR(file);
  if (file->special())
    return Status::error(StatusCode::kInvalidArgument,
                         path + ": a SQLite database needs a regular file, not a device or FIFO");
  const std::string& tmp = file->write_path();
  state_->trusted = true;
  std::string error;
  bool ok = true;
  auto step = [&](const std::string& sql) {
    if (ok && !exec(db_, sql, error)) ok = false;
  };
  char* quoted = sqlite3_mprintf("%Q", tmp.c_str());
  step(std::string("ATTACH ") + quoted + " AS out");
  sqlite3_free(quoted);
  step("PRAGMA out.journal_mode = OFF");
  step("PRAGMA out.synchronous = OFF");
  step("BEGIN");
  for (const std::string& table : state_->tables) {
    if (!ok) break;
    // Every column, the hidden rank included; ids become the primary key.
    std::string cols, decl;
    bool first = true;
    sqlite3_stmt* st = nullptr;
    std::string info = "PRAGMA main.table_xinfo(" + table + ")";
    sqlite3_prepare_v2(db_, info.c_str(), -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW) {
      std::string name = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
      std::string type = reinterpret_cast<const char*>(sqlite3_column_text(st, 2));
      if (!cols.empty()) cols += ", ", decl += ", ";
      cols += "\"" + name + "\"";
      decl += "\"" + name + "\" " + type;
      if (name == "id" && first) decl += " PRIMARY KEY";
      first = false;
    }
    sqlite3_finalize(st);
    step("CREATE TABLE out." + table + "(" + decl + ")");
    step("INSERT INTO out." + table + " SELECT " + cols + " FROM main." + table);
  }
  for (const auto& [name, select] : state_->views)
    step("CREATE VIEW out." + name + " AS " + select);
  for (const char* index : kExportIndexes) step(index);
  step("COMMIT");
  if (!ok) {
    std::string ignored;
    exec(db_, "ROLLBACK", ignored);
  }
  std::string detach_error;
  exec(db_, "DETACH out", detach_error);
  state_->trusted = false;
  if (!ok)
    return Status::error(StatusCode::kIo,
                         path + ": " + error);  // `file` removes the temporary file
  return file->commit();
}

}  // namespace mlprof::sql
