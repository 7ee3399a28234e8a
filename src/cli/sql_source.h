// A trace file or a directory of rank traces opened as an SQL database (mlprof sql, export).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mlprof/trace.h"
#include "sql/trace_database.h"

namespace mlprof::cli {

struct SqlSource {
  std::vector<Trace> traces;  // the database reads these in place
  std::unique_ptr<sql::TraceDatabase> db;
};

// Loads PATH (a directory: every trace in it, one rank each, with a visible rank column); on
// failure prints the one-line error and returns it (exit with exit_code_of its code).
Result<std::unique_ptr<SqlSource>> open_sql_source(const std::string& path);

// `mlprof export PATH -o out.sqlite | out.csv [--table NAME]`: every table to a SQLite file, or
// one table (default slice) as CSV. Returns the exit code.
int export_sql_tables(const std::string& path, const std::string& out, const std::string& table);

}  // namespace mlprof::cli
