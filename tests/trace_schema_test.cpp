// The declared Trace schema (mlprof/trace.h, mlprof/table_schema.h): every column in a table's
// list is pushed by the builder, kept in its row by the post-sort reordering, written and read
// by .mlprof files and compared by the tests' equality, with no per-column code anywhere; files
// written by version 1 still load.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "mlprof/import.h"
#include "mlprof/native_format.h"
#include "mlprof/trace.h"
#include "trace/formats/native_layout.h"
#include "trace_equality.h"

namespace mlprof {
namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/trace_schema_" + std::to_string(::getpid()) + "_" + name;
}

std::string data(const std::string& name) { return std::string(MLPROF_TEST_DATA) + "/" + name; }

// A value for row i of input column `index` that is valid for what the column references.
struct Limits {
  size_t strings, tracks, series, stacks;
};
template <typename Column>
typename Column::Value value_for(size_t i, int index, const Limits& l) {
  using V = typename Column::Value;
  switch (Column::ref) {
    case schema::Ref::kString:
      return static_cast<V>(1 + (i + index) % (l.strings - 1));
    case schema::Ref::kTrack:
      return static_cast<V>((i + index) % l.tracks);
    case schema::Ref::kSeries:
      return static_cast<V>((i + index) % l.series);
    case schema::Ref::kStack:
      return static_cast<V>(1 + i % (l.stacks - 1));
    default:
      return static_cast<V>(1 + (i * 7 + index * 13) % 97);  // never a column's default
  }
}

// `n` rows in `table`, every input column filled with its own row-dependent values.
template <typename Table>
void fill(Table& table, size_t n, const Limits& l, size_t nargs) {
  for (size_t i = 0; i < n; ++i) {
    typename Table::Row row;
    int index = 0;
    schema::for_each_input_column<Table>(
        [&](auto c) { row.*c.row_member = value_for<decltype(c)>(i, index++, l); });
    // Value rules the reader enforces beyond references.
    if constexpr (requires { row.args_begin; }) {
      row.args_begin = static_cast<uint32_t>(i % (nargs - 1));
      row.args_count = 1;
    }
    if constexpr (requires { row.device_type; }) row.device_type = static_cast<int8_t>(i % 3);
    if constexpr (requires { row.dst_next; }) row.dst_next = static_cast<uint8_t>(i % 2);
    schema::push_row(table, row);
  }
}

// Each input row as its raw bytes: rows can be compared as a multiset.
template <typename Table>
std::vector<std::string> row_images(const Table& t) {
  std::vector<std::string> out(schema::rows(t));
  schema::for_each_input_column<Table>([&](auto c) {
    const auto& column = t.*c.member;
    for (size_t i = 0; i < out.size(); ++i)
      out[i].append(reinterpret_cast<const char*>(&column[i]), sizeof(column[i]));
  });
  std::sort(out.begin(), out.end());
  return out;
}

Trace every_column_trace(std::vector<std::string>* slice_rows_before) {
  TraceBuilder b;
  for (const char* s : {"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}) b.intern(s);
  uint32_t p = b.process(1), q = b.process(2);
  b.thread_track(p, 10);
  b.thread_track(p, 11);
  b.thread_track(q, 20);
  b.counter_series(p, b.intern("rss"));
  b.counter_series(q, b.intern("util"));
  for (int i = 0; i < 8; ++i) b.arg_int(b.intern("k"), i);
  b.add_stack({b.intern("malloc"), b.intern("main")});
  b.add_stack({b.intern("operator new")});
  Trace& t = b.trace();
  const Limits l{t.strings.size(), t.tracks.size(), t.counter_series.size(), t.stacks.size()};
  const size_t nargs = t.args.size();
  fill(t.slices, 60, l, nargs);
  // Starts in reverse order, so finish() has to reorder every row.
  for (size_t i = 0; i < t.slices.size(); ++i) t.slices.ts[i] = 100000 - 1000 * i;
  fill(t.instants, 20, l, nargs);
  fill(t.counters, 20, l, nargs);
  fill(t.flows, 20, l, nargs);
  fill(t.memory, 20, l, nargs);
  *slice_rows_before = row_images(t.slices);
  return std::move(b).finish();
}

TEST(TraceSchema, EveryInputColumnKeepsItsRowThroughTheSort) {
  std::vector<std::string> before;
  Trace t = every_column_trace(&before);
  EXPECT_EQ(row_images(t.slices), before);
  for (size_t i = 1; i < t.slices.size(); ++i) {
    if (t.slices.track[i] == t.slices.track[i - 1]) {
      ASSERT_LE(t.slices.ts[i - 1], t.slices.ts[i]);
    }
  }
  // Computed columns are sized by finish().
  Trace::for_each_table([&](std::string_view name, auto member) {
    const auto& table = t.*member;
    using Table = std::remove_cvref_t<decltype(table)>;
    Table::for_each_column([&](auto c) {
      EXPECT_EQ((table.*c.member).size(), schema::rows(table)) << name << "." << c.name;
    });
  });
}

TEST(TraceSchema, EveryColumnIsWrittenAndRead) {
  std::vector<std::string> before;
  Trace t = every_column_trace(&before);
  std::string path = temp_path("every_column.mlprof");
  ASSERT_TRUE(save_native(t, path).is_ok());
  auto back = load_native(path);
  std::remove(path.c_str());
  ASSERT_TRUE(back.is_ok()) << back.error();
  test::expect_same_trace(t, *back, {.labeled = false});
}

TEST(TraceSchema, FilesAreWrittenAsTheCurrentVersion) {
  std::vector<std::string> before;
  Trace t = every_column_trace(&before);
  std::string path = temp_path("version.mlprof");
  ASSERT_TRUE(save_native(t, path).is_ok());
  std::ifstream f(path, std::ios::binary);
  char header[native::kHeaderBytes];
  f.read(header, sizeof(header));
  std::remove(path.c_str());
  uint32_t version = 0;
  std::memcpy(&version, header + 8, 4);
  EXPECT_EQ(version, native::kNativeVersion);
}

// tests/data/native_v1/*.mlprof were written by mlprof's version 1 writer: kineto.v1.mlprof by
// `mlprof export tests/data/a_mlp_b32_w64.kineto.json.gz -o ...`, run.v1.mlprof by `mlprof run
// --memory --max-depth 8 -- /bin/echo hi` (memory events with call stacks).
TEST(TraceSchema, Version1FilesStillLoad) {
  auto v1 = load_trace(data("native_v1/kineto.v1.mlprof"));
  ASSERT_TRUE(v1.is_ok()) << v1.error();
  auto json = load_trace(data("a_mlp_b32_w64.kineto.json.gz"));
  ASSERT_TRUE(json.is_ok()) << json.error();
  test::expect_same_trace(*json, *v1, {.labeled = false});
  EXPECT_GT(v1->memory.size(), 0u);
  EXPECT_GT(v1->flows.size(), 0u);
}

TEST(TraceSchema, Version1StacksStillLoad) {
  auto v1 = load_trace(data("native_v1/run.v1.mlprof"));
  ASSERT_TRUE(v1.is_ok()) << v1.error();
  EXPECT_EQ(v1->meta.format, "mlprof");
  EXPECT_GT(v1->memory.size(), 100u);
  ASSERT_GT(v1->stacks.size(), 1u);
  size_t with_stack = 0;
  for (size_t i = 0; i < v1->memory.size(); ++i) {
    uint32_t s = v1->memory.stack[i];
    ASSERT_LT(s, v1->stacks.size());
    with_stack += s != 0;
  }
  EXPECT_GT(with_stack, 0u);
  for (size_t s = 1; s < v1->stacks.size(); ++s) {
    ASSERT_LE(v1->stacks.frames_begin[s] + v1->stacks.frames_count[s], v1->stack_frames.size());
    for (uint32_t k = 0; k < v1->stacks.frames_count[s]; ++k)
      EXPECT_FALSE(v1->str(v1->stack_frames.name[v1->stacks.frames_begin[s] + k]).empty());
  }
  // Saved again (as the current version), it is the same trace.
  std::string path = temp_path("run.mlprof");
  ASSERT_TRUE(save_native(*v1, path).is_ok());
  auto v2 = load_native(path);
  std::remove(path.c_str());
  ASSERT_TRUE(v2.is_ok()) << v2.error();
  test::expect_same_trace(*v1, *v2, {.labeled = false});
}

// The payload of a .mlprof file, and the file rebuilt around a changed payload.
std::string payload_of(const std::string& file) {
  const size_t header = native::kHeaderBytes;
  std::string p(ZSTD_getFrameContentSize(file.data() + header, file.size() - header), '\0');
  EXPECT_EQ(ZSTD_decompress(p.data(), p.size(), file.data() + header, file.size() - header),
            p.size());
  return p;
}
std::string with_payload(const std::string& file, const std::string& p) {
  std::string out = file.substr(0, native::kHeaderBytes);
  uint64_t size = p.size();
  std::memcpy(out.data() + 16, &size, 8);
  std::string z(ZSTD_compressBound(p.size()), '\0');
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  z.resize(ZSTD_compress2(c, z.data(), z.size(), p.data(), p.size()));
  ZSTD_freeCCtx(c);
  return out + z;
}

// Removes column `column` of table `table` from a version 2 payload, as if the file had been
// written before that column existed.
std::string without_column(std::string p, std::string_view table, std::string_view column) {
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, p.data() + at, 4);
    return v;
  };
  auto name_at = [&](size_t at) { return std::string_view(p).substr(at + 4, u32(at)); };
  std::string tag = "TABL" + std::string(1, char(table.size())) + std::string(3, '\0');
  size_t at = p.find(tag + std::string(table));
  if (at == std::string::npos) return p;
  at += 4;
  size_t rows_at = at + 4 + table.size();
  uint64_t rows;
  std::memcpy(&rows, p.data() + rows_at, 8);
  size_t count_at = rows_at + 8, col = count_at + 4;
  for (uint32_t i = 0, n = u32(count_at); i < n; ++i) {
    size_t name_len = u32(col);
    size_t bytes = static_cast<uint8_t>(p[col + 4 + name_len + 1]);
    size_t end = col + 4 + name_len + 2 + rows * bytes;
    if (name_at(col) == column) {
      p.erase(col, end - col);
      uint32_t left = n - 1;
      std::memcpy(p.data() + count_at, &left, 4);
      return p;
    }
    col = end;
  }
  return p;
}

TEST(TraceSchema, AColumnAbsentFromAFileGetsItsDefault) {
  std::vector<std::string> before;
  Trace t = every_column_trace(&before);
  std::string path = temp_path("absent.mlprof");
  ASSERT_TRUE(save_native(t, path).is_ok());
  std::ifstream f(path, std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  std::string payload = payload_of(file);
  std::string older = without_column(payload, "memory", "total_reserved");
  ASSERT_LT(older.size(), payload.size());  // the column was found and removed
  auto back = load_native_buffer(with_payload(file, older), "older.mlprof");
  ASSERT_TRUE(back.is_ok()) << back.error();
  EXPECT_EQ(back->memory.total_reserved, std::vector<int64_t>(t.memory.size(), -1));
  EXPECT_EQ(back->memory.total_allocated, t.memory.total_allocated);
  // Files written before flows had dst_next (a v1 flow end's binding rule): every flow end
  // binds its enclosing slice, as those mlprof versions bound it.
  ASSERT_GT(std::count(t.flows.dst_next.begin(), t.flows.dst_next.end(), 1), 0);
  std::string no_rule = without_column(payload, "flows", "dst_next");
  ASSERT_LT(no_rule.size(), payload.size());
  auto old_flows = load_native_buffer(with_payload(file, no_rule), "older.mlprof");
  ASSERT_TRUE(old_flows.is_ok()) << old_flows.error();
  EXPECT_EQ(old_flows->flows.dst_next, std::vector<uint8_t>(t.flows.size(), 0));
  EXPECT_EQ(old_flows->flows.dst_ts, t.flows.dst_ts);
  for (size_t i = 0; i < t.flows.size(); ++i)
    EXPECT_EQ(old_flows->flows.dst_slice[i],
              old_flows->enclosing_slice(t.flows.dst_track[i], t.flows.dst_ts[i]))
        << i;
  // A column this mlprof does not know is an error, not silently dropped.
  std::string renamed = payload;
  size_t at = renamed.find("total_reserved");
  ASSERT_NE(at, std::string::npos);
  renamed[at] = 'T';
  auto bad = load_native_buffer(with_payload(file, renamed), "newer.mlprof");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.error().find("unknown column memory.Total_reserved"), std::string::npos)
      << bad.error();
}

// What "adding a column" means: one line in a table's list. A test-only table shows the Row,
// the defaults and the generic walks picking the new column up.
#define DEMO_COLUMNS(X)                 \
  X(int64_t, ts, kNone, kInput, 0)      \
  X(StringId, name, kString, kInput, 0) \
  X(int64_t, added, kNone, kInput, -1)  \
  X(int32_t, derived, kSlice, kComputed, -1)

struct DemoTable {
  MLPROF_TABLE(DemoTable, DEMO_COLUMNS)
};
static_assert(schema::well_formed<DemoTable>());
static_assert(schema::column_count<DemoTable>() == 4);

TEST(TraceSchema, ANewColumnIsOneLineInTheList) {
  DemoTable t;
  schema::reserve_rows(t, 2);
  schema::push_row(t, DemoTable::Row{.ts = 5, .name = 1});  // `added` takes its default
  schema::push_row(t, DemoTable::Row{.ts = 6, .name = 2, .added = 7});
  EXPECT_EQ(schema::rows(t), 2u);
  EXPECT_EQ(t.added, (std::vector<int64_t>{-1, 7}));
  EXPECT_TRUE(t.derived.empty());  // computed: not pushed
  schema::set_row(t, 0, schema::get_row(t, 1));
  EXPECT_EQ(t.ts, (std::vector<int64_t>{6, 6}));
  EXPECT_EQ(t.added, (std::vector<int64_t>{7, 7}));
  std::vector<std::string> names;
  schema::for_each_input_column<DemoTable>([&](auto c) { names.push_back(c.name); });
  EXPECT_EQ(names, (std::vector<std::string>{"ts", "name", "added"}));
}

}  // namespace
}  // namespace mlprof
