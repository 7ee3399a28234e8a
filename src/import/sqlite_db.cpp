#include "import/sqlite_db.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace mlprof::import {

SqliteDb::~SqliteDb() {
  if (db_) sqlite3_close(db_);
}

Status SqliteDb::error(std::string_view what) const {
  std::string msg = name_ + ": " + std::string(what);
  if (db_ && sqlite3_errcode(db_) != SQLITE_OK) {
    // SQLite quotes names from the damaged file: printable ASCII only, the rest as \xNN.
    msg += " (SQLite: ";
    for (const char* p = sqlite3_errmsg(db_); *p; ++p) {
      auto c = static_cast<unsigned char>(*p);
      if (c >= 0x20 && c < 0x7f) {
        msg += static_cast<char>(c);
      } else {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02X", c);
        msg += buf;
      }
    }
    msg += ")";
  }
  if (spent_ > budget_)
    msg +=
        " (stopped: reading it took more work than a database of its size can need; a view "
        "that does not end?)";
  return Status::error(msg);
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::open_file(const std::string& path) {
  std::unique_ptr<SqliteDb> db(new SqliteDb);
  db->name_ = path;
  // Read-only, no locking or journal: another profiler's output, never changed by us.
  std::string uri = "file:";
  for (char c : path) {  // URI-escape what the URI syntax would read
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      uri += buf;
    } else {
      uri += c;
    }
  }
  uri += "?immutable=1";
  if (sqlite3_open_v2(uri.c_str(), &db->db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) !=
      SQLITE_OK)
    return db->error("cannot open as an SQLite database");
  std::error_code ec;
  uint64_t bytes = std::filesystem::file_size(path, ec);
  db->bound_work(ec ? 0 : bytes);
  MLPROF_RETURN_IF_ERROR(db->load_tables());
  return db;
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::open_bytes(std::string bytes, const std::string& name) {
  std::unique_ptr<SqliteDb> db(new SqliteDb);
  db->name_ = name;
  db->image_ = std::move(bytes);
  if (sqlite3_open_v2(":memory:", &db->db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK)
    return db->error("cannot open an in-memory SQLite database");
  auto* data = reinterpret_cast<unsigned char*>(db->image_.data());
  auto n = static_cast<sqlite3_int64>(db->image_.size());
  if (sqlite3_deserialize(db->db_, "main", data, n, n, SQLITE_DESERIALIZE_READONLY) != SQLITE_OK)
    return db->error("cannot read the SQLite database image");
  db->bound_work(db->image_.size());
  MLPROF_RETURN_IF_ERROR(db->load_tables());
  return db;
}

// In units of 10,000 SQLite VM steps: ~1,250 steps per byte of the file, at least 2e8 steps.
// Reading a real export takes a few steps per byte (every row is read once, joins by key).
void SqliteDb::bound_work(uint64_t file_bytes) {
  budget_ = 20000 + file_bytes / 8;
  sqlite3_progress_handler(db_, 10000, over_budget, this);
}

int SqliteDb::over_budget(void* self) {
  auto* db = static_cast<SqliteDb*>(self);
  return ++db->spent_ > db->budget_;
}

Status SqliteDb::load_tables() {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT name FROM sqlite_master WHERE type IN ('table','view')", -1,
                         &st, nullptr) != SQLITE_OK)
    return error("not a readable SQLite database");
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    tables_.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return error("not a readable SQLite database");
  return Status::ok();
}

Result<std::vector<std::string>> SqliteDb::tables() { return tables_; }

bool SqliteDb::has_table(std::string_view table) const {
  return std::find(tables_.begin(), tables_.end(), table) != tables_.end();
}

std::vector<std::string> SqliteDb::columns(std::string_view table) {
  std::vector<std::string> out;
  if (!has_table(table)) return out;
  std::string sql = "PRAGMA table_info(\"" + std::string(table) + "\")";
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return out;
  while (sqlite3_step(st) == SQLITE_ROW)
    out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
  sqlite3_finalize(st);
  return out;
}

SqliteQuery::SqliteQuery(SqliteDb& db, std::string table, const std::vector<std::string>& columns,
                         std::string where_order)
    : db_(db), table_(std::move(table)) {
  std::vector<std::string> have = db.columns(table_);
  if (have.empty()) {
    status_ = Status::error(db.name() + ": no table " + table_);
    return;
  }
  std::string sql = "SELECT ";
  for (size_t i = 0; i < columns.size(); ++i) {
    bool optional = !columns[i].empty() && columns[i][0] == '?';
    std::string col = optional ? columns[i].substr(1) : columns[i];
    if (i) sql += ", ";
    if (std::find(have.begin(), have.end(), col) != have.end()) {
      sql += "\"" + col + "\"";
    } else {
      missing_.push_back(col);
      if (!optional) missing_required_.push_back(col);
      sql += "NULL";
    }
  }
  if (!missing_required_.empty()) {
    std::string list;
    for (const std::string& c : missing_required_) list += (list.empty() ? "" : ", ") + c;
    status_ = Status::error(db.name() + ": table " + table_ + " has no column " + list);
    return;
  }
  sql += " FROM \"" + table_ + "\" " + where_order;
  if (sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) {
    status_ = db.error("cannot read table " + table_);
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
  }
}

SqliteQuery::~SqliteQuery() {
  if (stmt_) sqlite3_finalize(stmt_);
}

bool SqliteQuery::next() {
  if (!stmt_) return false;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE && status_.is_ok()) status_ = db_.error("cannot read table " + table_);
  return false;
}

}  // namespace mlprof::import
