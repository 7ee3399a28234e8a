// Read-only access to an SQLite database another profiler wrote (Nsight Systems exports, rpd
// files): tables and columns are looked up by name, because the schemas change across releases,
// and every SQLite error becomes one line naming the file.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "mlprof/status.h"

namespace mlprof::import {

inline constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};

class SqliteDb {
 public:
  // A database file, opened read-only.
  static Result<std::unique_ptr<SqliteDb>> open_file(const std::string& path);
  // A database image in memory (a gzip'ed .rpd, inflated): SQLite reads the bytes in place.
  static Result<std::unique_ptr<SqliteDb>> open_bytes(std::string bytes, const std::string& name);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  const std::string& name() const { return name_; }
  sqlite3* handle() { return db_; }
  // Table names; an unreadable schema (not a database, corrupt) is the error.
  Result<std::vector<std::string>> tables();
  bool has_table(std::string_view table) const;
  const std::vector<std::string>& table_names() const { return tables_; }
  // Column names of `table` (empty when it does not exist).
  std::vector<std::string> columns(std::string_view table);

  // "PATH: what (SQLite: message)".
  Status error(std::string_view what) const;

 private:
  SqliteDb() = default;
  Status load_tables();
  // A hostile file's view can recurse without end: SQLite's work is bounded by the file's size.
  void bound_work(uint64_t file_bytes);
  static int over_budget(void* self);
  uint64_t budget_ = 0, spent_ = 0;
  sqlite3* db_ = nullptr;
  std::string name_;
  std::string image_;  // open_bytes: the bytes SQLite reads
  std::vector<std::string> tables_;
};

// One SELECT over a table whose columns are asked for by name: required columns that are
// missing make the query fail (missing() says which), optional ones read as NULL.
class SqliteQuery {
 public:
  // `columns`: names; a leading '?' marks an optional one ("?graphId").
  SqliteQuery(SqliteDb& db, std::string table, const std::vector<std::string>& columns,
              std::string where_order = "");
  ~SqliteQuery();
  SqliteQuery(const SqliteQuery&) = delete;
  SqliteQuery& operator=(const SqliteQuery&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  // Missing columns (required and optional alike), for the import report.
  const std::vector<std::string>& missing() const { return missing_; }
  const std::vector<std::string>& missing_required() const { return missing_required_; }
  // Advances; false at the end or on an error (then status() holds it).
  bool next();
  const Status& status() const { return status_; }

  bool null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  int64_t i64(int col) const { return sqlite3_column_int64(stmt_, col); }
  double f64(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string_view text(int col) const {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    return p ? std::string_view(reinterpret_cast<const char*>(p),
                                static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string_view();
  }

 private:
  SqliteDb& db_;
  std::string table_;
  sqlite3_stmt* stmt_ = nullptr;
  std::vector<std::string> missing_, missing_required_;
  Status status_;
};

}  // namespace mlprof::import
