// The SQL tables on hand-built traces (expected rows by construction): stacks, memory, counters,
// instants and their args, ids over two ranks, and narrowed scans (ts, end, track, parent, name,
// rank) giving exactly what the unnarrowed scan gives on random windows. Real traces are checked
// in tests/py/test_sql.py against a Python computation over the JSON.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <random>
#include <string>
#include <vector>

#include "mlprof/trace.h"
#include "sql/trace_database.h"

using namespace mlprof;
using Rows = std::vector<std::vector<std::string>>;

namespace {

class Collect : public sql::RowSink {
 public:
  Rows rows;
  void begin(sqlite3_stmt*) override { rows.clear(); }
  void row(sqlite3_stmt* st) override {
    std::vector<std::string> r;
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      const unsigned char* t = sqlite3_column_text(st, c);
      r.push_back(t ? reinterpret_cast<const char*>(t) : "NULL");
    }
    rows.push_back(std::move(r));
  }
  void end() override {}
};

Rows query(sql::TraceDatabase& db, const std::string& q) {
  Collect c;
  sql::QueryError e;
  EXPECT_TRUE(db.run(q, c, e)) << q << ": " << e.message;
  return c.rows;
}

Trace small_trace() {
  TraceBuilder b;
  uint32_t cpu = b.thread_track(b.process(7), 70);
  uint32_t gpu = b.thread_track(b.process(0), 3);
  b.mark_gpu_track(gpu, 0, 3);
  StringId op = b.intern("cpu_op");
  b.add_slice(cpu, 100, 100, b.intern("step"), op);
  b.add_slice(cpu, 110, 30, b.intern("aten::mm"), op);
  b.add_slice(cpu, 150, 20, b.intern("aten::add"), op);
  b.add_slice(gpu, 130, 50, b.intern("gemm"), b.intern("kernel"));
  uint32_t mark = b.args_mark();
  b.arg_int(b.intern("n"), 5);
  b.arg_string(b.intern("what"), b.intern("marker"));
  b.add_instant(cpu, 120, b.intern("mark"), op, b.args_since(mark));
  uint32_t s = b.counter_series(0, b.intern("rss"));
  b.add_counter(s, 100, 1.5);
  b.add_counter(s, 200, 2.5);
  uint32_t st1 = b.add_stack({b.intern("malloc"), b.intern("f"), b.intern("main")});
  uint32_t st2 = b.add_stack({b.intern("g")});
  b.add_memory(cpu, 115, 0x10, 64, DeviceType::kCpu, -1, -1, -1, st1);
  b.add_memory(cpu, 300, 0x10, -64, DeviceType::kCpu, -1, -1, -1, st2);
  b.add_flow(1, b.intern("ac2g"), cpu, 112, gpu, 131);
  return std::move(b).finish();
}

}  // namespace

TEST(SqlTables, StacksMemoryCountersInstants) {
  Trace t = small_trace();
  auto db = sql::TraceDatabase::open({{&t, 0}}, false);
  ASSERT_TRUE(db.is_ok()) << db.error();
  sql::TraceDatabase& d = *db.value();
  EXPECT_EQ(query(d, "SELECT stack_id, depth, name FROM stack_frame ORDER BY id"),
            (Rows{{"1", "0", "malloc"}, {"1", "1", "f"}, {"1", "2", "main"}, {"2", "0", "g"}}));
  // The allocation lies inside aten::mm (slice 1 on the sorted cpu track); the free in none.
  EXPECT_EQ(query(d,
                  "SELECT m.bytes, m.stack_id, s.name, m.device_type FROM memory m "
                  "LEFT JOIN slice s ON s.id = m.slice_id ORDER BY m.id"),
            (Rows{{"64", "1", "aten::mm", "cpu"}, {"-64", "2", "NULL", "cpu"}}));
  EXPECT_EQ(query(d,
                  "SELECT c.ts, c.value, t.name, c.name FROM counter c "
                  "JOIN counter_track t ON t.id = c.track_id ORDER BY c.ts"),
            (Rows{{"100", "1.5", "rss", "rss"}, {"200", "2.5", "rss", "rss"}}));
  // Instant ids follow the slice ids, so args.event_id names the instant alone.
  EXPECT_EQ(
      query(d,
            "SELECT i.id, a.event_type, a.key, a.value_type, a.value FROM instant i "
            "JOIN args a ON a.event_id = i.id ORDER BY a.key"),
      (Rows{{"4", "instant", "n", "int", "5"}, {"4", "instant", "what", "string", "marker"}}));
  EXPECT_EQ(query(d,
                  "SELECT s.name, k.name FROM flow f JOIN slice s ON s.id = f.slice_out "
                  "JOIN slice k ON k.id = f.slice_in"),
            (Rows{{"aten::mm", "gemm"}}));
  EXPECT_EQ(query(d, "SELECT device, stream FROM gpu_stream"), (Rows{{"0", "3"}}));
  EXPECT_EQ(query(d,
                  "SELECT p.name, c.name FROM slice c JOIN slice p ON p.id = c.parent_id "
                  "ORDER BY c.ts"),
            (Rows{{"step", "aten::mm"}, {"step", "aten::add"}}));
  EXPECT_EQ(query(d, "SELECT name, self FROM slice WHERE name = 'step'"), (Rows{{"step", "50"}}));
}

// dst_next: 1 for a flow whose end binds the next slice beginning on its track (a Chrome v1 'f'
// without "bp":"e"), ts_in moved to that slice's start; 0 for one bound to the enclosing slice.
TEST(SqlTables, FlowDstNext) {
  TraceBuilder b;
  uint32_t a = b.thread_track(b.process(1), 1);
  uint32_t c = b.thread_track(b.process(1), 2);
  b.add_slice(a, 0, 10, b.intern("src"), 0);
  b.add_slice(c, 0, 10, b.intern("encl"), 0);
  b.add_slice(c, 12, 4, b.intern("next"), 0);
  b.add_flow(1, b.intern("c"), a, 1, c, 5, /*dst_next=*/true);
  b.add_flow(2, b.intern("c"), a, 2, c, 6);
  Trace t = std::move(b).finish();
  auto db = sql::TraceDatabase::open({{&t, 0}}, false);
  ASSERT_TRUE(db.is_ok()) << db.error();
  EXPECT_EQ(query(*db.value(),
                  "SELECT f.flow_id, f.dst_next, f.ts_in, s.name FROM flow f "
                  "JOIN slice s ON s.id = f.slice_in ORDER BY f.flow_id"),
            (Rows{{"1", "1", "12", "next"}, {"2", "0", "6", "encl"}}));
}

TEST(SqlTables, WritesRefused) {
  Trace t = small_trace();
  auto db = sql::TraceDatabase::open({{&t, 0}}, false);
  ASSERT_TRUE(db.is_ok());
  for (const char* q : {"DELETE FROM slice", "UPDATE slice SET dur = 1", "DROP VIEW thread",
                        "CREATE INDEX i ON slice(name)", "ATTACH ':memory:' AS x"}) {
    Collect c;
    sql::QueryError e;
    EXPECT_FALSE(db.value()->run(q, c, e)) << q;
    EXPECT_TRUE(e.refused_write) << q << ": " << e.message;
  }
  EXPECT_EQ(query(*db.value(), "SELECT count(*) FROM slice"), (Rows{{"4"}}));
}

TEST(SqlTables, TwoRanksKeepIdsApartAndNarrowedScansMatchFullScans) {
  Trace a = small_trace(), b = small_trace();
  auto db = sql::TraceDatabase::open({{&a, 3}, {&b, 5}}, true);
  ASSERT_TRUE(db.is_ok());
  sql::TraceDatabase& d = *db.value();
  EXPECT_EQ(query(d, "SELECT rank, count(*), min(id), max(id) FROM slice GROUP BY rank"),
            (Rows{{"3", "4", "0", "3"}, {"5", "4", "4", "7"}}));
  EXPECT_EQ(query(d, "SELECT min(id) FROM instant"), (Rows{{"8"}}));
  EXPECT_EQ(query(d,
                  "SELECT count(*) FROM slice s JOIN track t ON t.id = s.track_id "
                  "WHERE s.rank != t.rank"),
            (Rows{{"0"}}));
  EXPECT_EQ(query(d, "SELECT count(*) FROM stack_frame WHERE rank = 5"), (Rows{{"4"}}));
  // Random windows: each narrowed form equals the same filter SQLite evaluates on a full scan.
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) {
    int64_t lo = rng() % 320, hi = lo + rng() % 120;
    std::string w = std::to_string(lo), h = std::to_string(hi);
    for (std::string cond :
         {"ts >= " + w + " AND ts < " + h, "ts > " + w + " AND ts <= " + h, "ts = " + w,
          "ts < " + h + " AND end > " + w, "end >= " + w + " AND end <= " + h,
          "track_id = " + std::to_string(i % 5),
          "parent_id = " + std::to_string(i % 9) + " AND ts >= " + w,
          "name = 'aten::mm' AND rank = " + std::to_string(3 + 2 * (i % 2))}) {
      std::string plain = cond;
      for (const char* col : {"ts", "end", "track_id", "parent_id", "name", "rank"}) {
        std::string from = std::string(col) + " ", to = "+" + from;
        for (size_t p = plain.find(from); p != std::string::npos; p = plain.find(from, p + 2))
          if (p == 0 || plain[p - 1] == ' ') plain.replace(p, from.size(), to);
      }
      EXPECT_EQ(query(d, "SELECT id FROM slice WHERE " + cond + " ORDER BY id"),
                query(d, "SELECT id FROM slice WHERE " + plain + " ORDER BY id"))
          << cond << " vs " << plain;
    }
  }
}
