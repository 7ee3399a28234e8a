// `SELECT name, count(*), sum(dur) FROM slice GROUP BY name` over mlprof's virtual tables (read
// in place from the Trace) next to the same query over an ordinary SQLite table holding the same
// rows (the baseline, after an import step this tool also times), in one process and run.
//   usage: sql_bench_tool TRACE [RUNS]   (best of RUNS, interleaved; default 3)
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mlprof/import.h"
#include "sql/trace_database.h"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Runs `sql`, returning (rows, sum of the last column) as a check that both tables agree.
bool run(sqlite3* db, const char* sql, double& secs, long& rows, double& checksum) {
  auto t = Clock::now();
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
    return false;
  }
  rows = 0;
  checksum = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    ++rows;
    checksum += sqlite3_column_double(st, sqlite3_column_count(st) - 1);
  }
  sqlite3_finalize(st);
  secs = seconds_since(t);
  return rc == SQLITE_DONE;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TRACE [RUNS]\n", argv[0]);
    return 2;
  }
  int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  auto t = Clock::now();
  mlprof::Result<mlprof::Trace> trace = mlprof::load_trace(argv[1]);
  if (!trace) {
    std::fprintf(stderr, "%s\n", trace.error().c_str());
    return 2;
  }
  double load_s = seconds_since(t);
  t = Clock::now();
  auto opened = mlprof::sql::TraceDatabase::open({{&trace.value(), 0}}, false);
  if (!opened) {
    std::fprintf(stderr, "%s\n", opened.error().c_str());
    return 2;
  }
  double open_s = seconds_since(t);
  sqlite3* db = opened.value()->handle();

  // The baseline: the same slice rows in an ordinary (in-memory) SQLite table.
  t = Clock::now();
  const char* import_sql =
      "PRAGMA temp_store = MEMORY;"
      "CREATE TEMP TABLE native_slice(id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER, "
      "\"end\" INTEGER, track_id INTEGER, name TEXT, category TEXT, depth INTEGER, "
      "parent_id INTEGER, self INTEGER);"
      "INSERT INTO native_slice SELECT id, ts, dur, \"end\", track_id, name, category, depth, "
      "parent_id, self FROM slice;";
  char* err = nullptr;
  if (sqlite3_exec(db, import_sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::fprintf(stderr, "import: %s\n", err);
    return 1;
  }
  double import_s = seconds_since(t);

  const char* q_vtab = "SELECT name, count(*), sum(dur) FROM slice GROUP BY name";
  const char* q_native = "SELECT name, count(*), sum(dur) FROM native_slice GROUP BY name";
  // `+name` hides the column from the table, so SQLite sorts the scanned rows itself: the scan
  // alone, without the sorted permutation the slice table hands SQLite for GROUP BY name.
  const char* q_scan = "SELECT name, count(*), sum(dur) FROM slice GROUP BY +name";
  double best_v = 1e9, best_n = 1e9, best_s = 1e9;
  long rows_v = 0, rows_n = 0, rows_s = 0;
  double sum_v = 0, sum_n = 0, sum_s = 0;
  for (int i = 0; i < runs; ++i) {
    double s;
    if (!run(db, q_native, s, rows_n, sum_n)) return 1;
    best_n = std::min(best_n, s);
    if (!run(db, q_vtab, s, rows_v, sum_v)) return 1;
    best_v = std::min(best_v, s);
    if (!run(db, q_scan, s, rows_s, sum_s)) return 1;
    best_s = std::min(best_s, s);
  }
  if (rows_v != rows_n || sum_v != sum_n || rows_s != rows_n || sum_s != sum_n) {
    std::fprintf(stderr, "results differ: %ld rows (sum %.0f) vs %ld rows (sum %.0f)\n", rows_v,
                 sum_v, rows_n, sum_n);
    return 1;
  }
  std::printf("trace: %s (%zu slices; load %.2f s, open tables %.4f s)\n", argv[1],
              trace->slices.size(), load_s, open_s);
  std::printf("query: %s  -> %ld groups\n", q_vtab, rows_v);
  std::printf("%-44s %9s\n", "", "best s");
  std::printf("%-44s %9.3f\n", "virtual table over the Trace (no import)", best_v);
  std::printf("%-44s %9.3f\n", "  same, SQLite sorting (GROUP BY +name)", best_s);
  std::printf("%-44s %9.3f   (+ %.3f s to import the rows first)\n",
              "ordinary SQLite table (baseline)", best_n, import_s);
  std::printf("virtual / ordinary: %.2fx (bar: <= 1.5x); with SQLite sorting: %.2fx\n",
              best_v / best_n, best_s / best_n);
  return 0;
}
