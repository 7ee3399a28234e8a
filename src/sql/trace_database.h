// SQL over traces: an in-memory SQLite connection whose tables are virtual tables reading the
// Trace's columns directly (nothing is copied into SQLite storage). Table and column names are
// listed in docs/sql.md next to Perfetto's trace processor equivalents.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mlprof/status.h"
#include "mlprof/trace.h"

struct sqlite3;
struct sqlite3_stmt;

namespace mlprof::sql {

// One trace of the set, with the rank shown in the `rank` column.
struct TracePart {
  const Trace* trace = nullptr;
  int32_t rank = 0;
};

// Receives the rows of each statement that returns rows.
class RowSink {
 public:
  virtual ~RowSink() = default;
  virtual void begin(sqlite3_stmt* stmt) = 0;  // column names and count from the statement
  virtual void row(sqlite3_stmt* stmt) = 0;    // the current row
  virtual void end() = 0;
};

// Why a query failed: SQLite's message, the byte offset in the query text (-1 when unknown),
// and whether it was stopped by interrupt() or refused as a write.
struct QueryError {
  std::string message;
  int64_t offset = -1;
  bool interrupted = false;
  bool refused_write = false;
};

class TraceDatabase {
 public:
  // The traces must outlive the database. `rank_column` shows the rank column in SELECT *
  // (a directory of ranks); it is a hidden column otherwise.
  static Result<std::unique_ptr<TraceDatabase>> open(std::vector<TracePart> parts,
                                                     bool rank_column);
  ~TraceDatabase();
  TraceDatabase(const TraceDatabase&) = delete;
  TraceDatabase& operator=(const TraceDatabase&) = delete;

  // Runs every statement of `sql` in order; statements that return rows go to `sink`.
  // Writes to the trace tables are refused. Returns false and fills `error` on failure.
  bool run(std::string_view sql, RowSink& sink, QueryError& error);

  // Stops the running statement (async-signal-safe: call it from a SIGINT handler).
  void interrupt();

  // Writes every table (the analysis tables materialized) and view to a new SQLite file,
  // indexed for the common joins. Written to a temporary name and renamed into place.
  Status export_sqlite(const std::string& path);

  // Table and view names, tables first.
  std::vector<std::string> table_names() const;
  sqlite3* handle() { return db_; }

  struct State;  // the traces' id spaces and the write guard (trace_database.cpp)

 private:
  TraceDatabase() = default;
  sqlite3* db_ = nullptr;
  std::unique_ptr<State> state_;
};

}  // namespace mlprof::sql
