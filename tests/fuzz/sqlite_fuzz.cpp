// libFuzzer target for the SQLite trace readers (Nsight Systems exports, rpd_tracer files,
// rocprofv3's rocpd databases: src/import/sqlite_trace.cpp and the readers it chooses). An input
// is either a database image ("SQLite format 3" first: pages as stored, damaged ones included)
// or an SQL script run into an empty database whose image is then read: mutating SQL reaches odd
// schemas (missing and extra columns, NULLs, text where numbers belong, huge ids, views) far
// more often than mutating pages does. Either way: a Trace or a one-line error naming the file,
// never a crash, a hang (a recursive view included) or a leak.
#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "format_fuzz_check.h"
#include "import/sqlite_db.h"
#include "import/sqlite_trace.h"

namespace {

// The script may build tables, views and rows, nothing outside the database.
int authorize(void*, int action, const char*, const char*, const char*, const char*) {
  switch (action) {
    case SQLITE_ATTACH:
    case SQLITE_DETACH:
    case SQLITE_PRAGMA:
      return SQLITE_DENY;
    default:
      return SQLITE_OK;
  }
}

int stop_after(void* steps) { return ++*static_cast<int*>(steps) > 20000; }

// The database the script builds, as an image ("" when SQLite cannot give one).
std::string run_script(std::string_view script) {
  sqlite3* db = nullptr;
  std::string image;
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, nullptr) ==
      SQLITE_OK) {
    sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 16);
    sqlite3_set_authorizer(db, authorize, nullptr);
    int steps = 0;
    sqlite3_progress_handler(db, 1000, stop_after, &steps);  // a script that loops stops
    std::string sql(script);
    sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);  // what ran before an error stays
    sqlite3_progress_handler(db, 0, nullptr, nullptr);
    sqlite3_int64 n = 0;
    if (unsigned char* p = sqlite3_serialize(db, "main", &n, 0)) {
      image.assign(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
      sqlite3_free(p);
    }
  }
  sqlite3_close(db);
  return image;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::string image =
      in.starts_with(mlprof::import::kSqliteMagic.substr(0, 15)) ? std::string(in) : run_script(in);
  if (image.empty()) return 0;
  auto db = mlprof::import::SqliteDb::open_bytes(std::move(image), "fuzz.sqlite");
  if (!db) {
    mlprof::fuzz::check_result(db.status(), "fuzz.sqlite");
    return 0;
  }
  mlprof::ImportOptions options;
  options.strict = size % 7 == 0;
  mlprof::fuzz::check_result(mlprof::import::import_sqlite_trace(**db, options), "fuzz.sqlite");
  return 0;
}
