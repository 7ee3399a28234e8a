// Parallel parsing (several parsers on alternate chunks, merged in chunk order) must build
// exactly the Trace one parser builds: same string ids, tracks, rows, args and errors. Small
// chunks make every real trace span many chunks, so B/E pairs, flows, metadata and GPU track
// marks cross parser boundaries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "import/json_chunker.h"
#include "mlprof/import.h"
#include "shared_data.h"
#include "trace_equality.h"

namespace mlprof {
namespace {

ImportOptions serial() {
  ImportOptions o;
  o.threads = 1;
  o.parse_threads = 1;
  o.chunk_bytes = 16 << 10;
  return o;
}

ImportOptions parallel(unsigned parsers, size_t chunk) {
  ImportOptions o;
  o.threads = parsers + 1;
  o.parse_threads = parsers;
  o.chunk_bytes = chunk;
  return o;
}

void expect_same_problems(const ImportStats& a, const ImportStats& b) {
  EXPECT_EQ(a.events_read, b.events_read);
  for (size_t k = 0; k < a.kinds.size(); ++k) {
    SCOPED_TRACE(import_problem_name(static_cast<ImportProblem>(k)));
    EXPECT_EQ(a.kinds[k].count, b.kinds[k].count);
    EXPECT_EQ(a.kinds[k].first_offset, b.kinds[k].first_offset);
    EXPECT_EQ(a.kinds[k].first_what, b.kinds[k].first_what);
  }
}

void expect_same(const Trace& a, const Trace& b) {
  expect_same_problems(a.meta.import_stats, b.meta.import_stats);
  test::expect_same_trace(a, b);
}

// Kineto GPU traces from Holistic Trace Analysis's test data, in the shared data folder.
const char* const kSharedTraces[] = {
    "traces/kineto-gpu/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz",
    "traces/kineto-gpu/trace_file_list/inference_rank_1.json.gz",
    "traces/kineto-gpu/large_integer_trace/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz",
    "traces/kineto-gpu/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "traces/kineto-gpu/with_gpu_user_annotation/step_based_trace_2543932.json.gz",
    "traces/kineto-gpu/nccl_parser_config/nccl_data.json.gz",
    "traces/kineto-gpu/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "traces/kineto-gpu/trace_diff/control/control.json.gz",
    "traces/kineto-gpu/trace_diff/test/test.json.gz",
};

// Our own traces in tests/data, then the shared ones that are present; `missing` names the
// first absent shared file (the caller skips after checking the rest).
std::vector<std::string> real_traces(std::string* missing = nullptr) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(std::string(MLPROF_TEST_DATA))) {
    std::string p = e.path().string();
    bool json = p.find(".json") != std::string::npos;
    if (e.is_regular_file() && json) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  for (const char* rel : kSharedTraces) {
    if (auto p = test::shared_path(rel)) {
      out.push_back(*p);
    } else if (missing != nullptr && missing->empty()) {
      *missing = test::missing_shared(rel);
    }
  }
  return out;
}

TEST(ParallelImport, RealTracesGiveTheSerialTrace) {
  std::string missing;
  std::vector<std::string> files = real_traces(&missing);
  ASSERT_GE(files.size(), missing.empty() ? 15u : 6u);
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    auto one = load_trace(f, serial());
    ASSERT_TRUE(one.is_ok()) << one.error();
    for (auto [parsers, chunk] : {std::pair<unsigned, size_t>{2, 16 << 10}, {3, 4 << 10}}) {
      auto many = load_trace(f, parallel(parsers, chunk));
      ASSERT_TRUE(many.is_ok()) << many.error();
      expect_same(*one, *many);
    }
  }
  if (!missing.empty()) GTEST_SKIP() << missing;
}

// Every order-dependent kind of event, repeated so that with 1 KiB chunks begins and ends,
// flow starts and finishes, and metadata land in different parsers.
std::string mixed_events(int rounds) {
  std::ostringstream o;
  o << "{\"schemaVersion\": 1, \"traceEvents\": [\n";
  o << R"({"ph":"M","name":"process_name","pid":1,"args":{"name":"trainer"}})";
  for (int i = 0; i < rounds; ++i) {
    long t = 1000L * i;
    o << ",\n"
      << R"({"ph":"B","name":"outer )" << i % 7 << R"(","pid":1,"tid":)" << 1 + i % 3 << R"(,"ts":)"
      << t << R"(,"args":{"begin_arg":)" << i << "}}";
    o << ",\n"
      << R"({"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":)" << 1 + i % 3 << R"(,"ts":)"
      << t + 10 << R"(,"dur":20,"args":{"External id":)" << i << "}}";
    o << ",\n"
      << R"({"ph":"s","cat":"ac2g","id":)" << i << R"(,"pid":1,"tid":)" << 1 + i % 3 << R"(,"ts":)"
      << t + 12 << "}";
    if (i % 2)  // Kineto sometimes writes the finish first: put some before the start's chunk
      o << ",\n"
        << R"({"ph":"f","bp":"e","cat":"ac2g","id":)" << i + 1 << R"(,"pid":0,"tid":7,"ts":)"
        << t + 1500 << "}";
    o << ",\n"
      << R"({"ph":"X","cat":"kernel","name":"k)" << i % 5 << R"(","pid":0,"tid":)" << 7 + i % 2
      << R"(,"ts":)" << t + 40 << R"(,"dur":30,"args":{"device":0,"stream":)" << 7 + i % 2 << "}}";
    if (i % 2 == 0)
      o << ",\n"
        << R"({"ph":"f","bp":"e","cat":"ac2g","id":)" << i << R"(,"pid":0,"tid":7,"ts":)" << t + 45
        << "}";
    o << ",\n"
      << R"({"ph":"C","name":"mem","pid":1,"ts":)" << t + 50 << R"(,"args":{"a":)" << i
      << R"(,"b":)" << 2 * i << "}}";
    o << ",\n"
      << R"({"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":)" << t + 60
      << R"(,"args":{"Addr":)" << 4096 + i << R"(,"Bytes":)" << (i % 3 ? 256 : -256)
      << R"(,"Device Type":0,"Total Allocated":)" << 1000 + i << "}}";
    o << ",\n"
      << R"({"ph":"b","cat":"async","name":"req","id":)" << i % 4 << R"(,"pid":1,"tid":1,"ts":)"
      << t + 70 << "}";
    o << ",\n"
      << R"({"ph":"e","cat":"async","name":"req","id":)" << i % 4 << R"(,"pid":1,"tid":1,"ts":)"
      << t + 90 << "}";
    if (i % 4 == 3)  // an end with args of its own joins the begin's
      o << ",\n"
        << R"({"ph":"E","pid":1,"tid":)" << 1 + i % 3 << R"(,"ts":)" << t + 900
        << R"(,"args":{"end_arg":"x)" << i << "\"}}";
    else if (i % 4 != 1)  // i % 4 == 1 stays open until the end: unfinished
      o << ",\n"
        << R"({"ph":"E","pid":1,"tid":)" << 1 + i % 3 << R"(,"ts":)" << t + 900 << "}";
    if (i % 10 == 9) {
      o << ",\n"
        << R"({"ph":"M","name":"thread_name","pid":1,"tid":)" << 1 + i % 3
        << R"(,"args":{"name":"worker )" << i << "\"}}";
      o << ",\n"
        << R"({"ph":"M","name":"process_labels","pid":0,"args":{"labels":"r)" << i << "\"}}";
      o << ",\n"
        << R"({"ph":"E","pid":1,"tid":9,"ts":)" << t << "}";  // an end without a begin
      // String pids and tids, the empty string among them (Kineto writes pid "" at times).
      o << ",\n"
        << R"({"ph":"i","s":"t","name":"mark","pid":")" << (i % 20 == 9 ? "" : "Spans")
        << R"(","tid":")" << (i % 30 == 9 ? "" : "t") << R"(","ts":)" << t + 5 << "}";
    }
  }
  o << "\n], \"displayTimeUnit\": \"ns\"}\n";
  return o.str();
}

TEST(ParallelImport, OrderDependentEventsAcrossParsers) {
  std::string json = mixed_events(600);
  auto one = import_chrome_json_buffer(json, "mixed.json", serial());
  ASSERT_TRUE(one.is_ok()) << one.error();
  // The scenario really exercises what it claims.
  EXPECT_GT(one->flows.size(), 250u);
  EXPECT_GT(one->meta.skipped_events, 0u);
  EXPECT_GT(one->memory.size(), 500u);
  EXPECT_GT(one->counters.size(), 1000u);
  for (unsigned parsers : {2u, 3u, 4u}) {
    SCOPED_TRACE(parsers);
    auto many = import_chrome_json_buffer(json, "mixed.json", parallel(parsers, 1024));
    ASSERT_TRUE(many.is_ok()) << many.error();
    expect_same(*one, *many);
  }
}

TEST(ParallelImport, FirstErrorInFileOrderWins) {
  std::string json = mixed_events(400);
  std::vector<std::string> broken;
  // A bad event late in the file, one early, and a truncated file.
  std::string late = json;
  late.replace(late.rfind("\"ph\":\"X\""), 8, "\"ph\":\"X\",\"ts\":[]");
  broken.push_back(late);
  std::string early = json;
  size_t at = early.find("\"dur\":20", early.size() / 3);
  early.replace(at, 8, "\"dur\":\"x\"");
  early.replace(early.rfind("\"ph\":\"X\""), 8, "\"ph\":\"X\",\"ts\":[]");  // and a later one
  broken.push_back(early);
  broken.push_back(json.substr(0, json.size() * 2 / 3));
  // Recovered: the same Trace and the same problem counts whichever parser met the problem;
  // with strict, the same error (the first problem in file order).
  for (const std::string& bad : broken) {
    auto one = import_chrome_json_buffer(bad, "bad.json", serial());
    ASSERT_TRUE(one.is_ok()) << one.error();
    EXPECT_TRUE(one->meta.import_stats.any());
    ImportOptions strict = serial();
    strict.strict = true;
    auto one_strict = import_chrome_json_buffer(bad, "bad.json", strict);
    ASSERT_FALSE(one_strict.is_ok());
    for (unsigned parsers : {2u, 3u}) {
      auto many = import_chrome_json_buffer(bad, "bad.json", parallel(parsers, 1024));
      ASSERT_TRUE(many.is_ok()) << many.error();
      expect_same(*one, *many);
      ImportOptions many_strict = parallel(parsers, 1024);
      many_strict.strict = true;
      auto e = import_chrome_json_buffer(bad, "bad.json", many_strict);
      ASSERT_FALSE(e.is_ok());
      EXPECT_EQ(one_strict.error(), e.error());
    }
  }
}

}  // namespace
}  // namespace mlprof

namespace mlprof {
namespace {

// The vectorized event scanner agrees with the one-value-at-a-time scanner on event runs full of
// what trips string and bracket tracking: escaped quotes, runs of backslashes, brackets inside
// strings, nesting, and every cut point (a buffer can end anywhere).
TEST(EventScanner, VectorizedMatchesScalarAtEveryCut) {
  std::vector<std::string> events = {
      R"({"name":"a","args":{"x":[1,2,{"y":"}"}]}})",
      R"({"name":"q\"uote{","ph":"X"})",
      R"({"name":"back\\\\","s":"\\\"]}"})",
      R"({"n":"\\\\\\\"{[","deep":[[[[{"a":{}}]]]]})",
      R"({})",
      R"({"long":")" + std::string(150, 'x') + R"(\\\"}"})",
  };
  std::string run;
  for (int i = 0; i < 40; ++i) {
    if (i) run += i % 3 ? ", " : ",\n  ";
    run += events[(i * 7) % events.size()];
  }
  std::vector<std::string> inputs = {
      run, run + "]", run + ", 12, {}", run + "}{\"a\":1}", run + ", \"s{\", {}", run + ",, {}"};
  for (const std::string& in : inputs) {
    for (size_t cut = 1; cut <= in.size(); ++cut) {
      std::string buf = in.substr(0, cut);
      const char* b = buf.data();
      const char* v = import::scan_events(b, b + cut);
      const char* s = import::scan_events_scalar(b, b + cut);
      ASSERT_EQ(v ? v - b : -1, s ? s - b : -1) << "cut " << cut << " of: " << in;
    }
  }
  // The full run ends exactly at its last '}'.
  const char* b = run.data();
  EXPECT_EQ(import::scan_events(b, b + run.size()), b + run.size());
}

}  // namespace
}  // namespace mlprof

namespace mlprof {
namespace {

ImportOptions simdjson_only() {
  ImportOptions o = serial();
  o.fast_path = false;
  return o;
}

TEST(FastPath, RealTracesGiveTheSimdjsonTrace) {
  std::string missing;
  for (const std::string& f : real_traces(&missing)) {
    SCOPED_TRACE(f);
    auto slow = load_trace(f, simdjson_only());
    ASSERT_TRUE(slow.is_ok()) << slow.error();
    auto fast = load_trace(f, serial());
    ASSERT_TRUE(fast.is_ok()) << fast.error();
    expect_same(*slow, *fast);
  }
  if (!missing.empty()) GTEST_SKIP() << missing;
}

// Values where a reader could go wrong: each event is read by the fast path or handed to
// simdjson, and the Trace must not show which.
TEST(FastPath, TrickyValuesReadAsSimdjsonReadsThem) {
  std::vector<std::string> values = {"0",
                                     "-1",
                                     "123456789012345678",
                                     "1234567890123456789",
                                     "12345678901234567890",
                                     "-9223372036854775808",
                                     "99999999999999999999999",
                                     "-0",
                                     "0.1",
                                     "-0.0",
                                     "1.5",
                                     "2.2250738585072014e-308",
                                     "1e5",
                                     "1E+2",
                                     "4.9e-324",
                                     "1.7976931348623157e308",
                                     "123.456789012345678901",
                                     "true",
                                     "false",
                                     "null",
                                     "\"plain\"",
                                     "\"q\\\"uote\"",
                                     "\"caf\xc3\xa9\"",
                                     "\"\\u00e9\"",
                                     "\"tab\\t\"",
                                     "[1, [2, 3] ]",
                                     "[ ]",
                                     "{ }",
                                     "{\"a\": [1, {\"b\": null}], \"c\": \"d\"}",
                                     "[\"x\\\\\", 1e3]",
                                     "[1,2]   ",
                                     "{\"k\":\"\xe2\x82\xac\"}"};
  std::ostringstream o;
  o << "[";
  int i = 0;
  for (const std::string& v : values) {
    if (i) o << ",\n";
    o << "{\"ph\":\"X\",\"name\":\"op" << i << "\",\"pid\":1,\"tid\":1,\"ts\":" << i * 10
      << ",\"dur\":5,\"args\":{\"v\": " << v << " , \"n\":" << i << "}, \"extra\":" << v << "}";
    ++i;
  }
  // Field forms: string pids, hex ids, string timestamps, null args, duplicate keys, spaces.
  o << R"(,
{"ph":"X","name":"p","pid":"CPU functions","tid":"stream 7","ts":"1000.5","dur":2,"args":null},
{ "ph" : "i" , "name" : "i" , "pid" : 2 , "tid" : 3 , "ts" : 7.25 , "s" : "p" },
{"ph":"s","cat":"ac2g","id":"0x1f","pid":1,"tid":1,"ts":11},
{"ph":"f","bp":"e","cat":"ac2g","id":31,"pid":1,"tid":1,"ts":12},
{"ph":"X","name":"dup","name":"dup2","pid":1,"tid":1,"ts":20,"dur":1,"args":{"a":1},"args":{"b":2}},
{"ph":"X","name":"n\u0041me","pid":1,"tid":1,"ts":30,"dur":1},
{"ph":"X","name":"float pid","pid":1.0,"tid":1,"ts":40,"dur":1},
{"ph":"X","name":"id2","id2":{"local":"0x5"},"pid":1,"tid":1,"ts":50,"dur":1}
])";
  std::string json = o.str();
  auto slow = import_chrome_json_buffer(json, "tricky.json", simdjson_only());
  ASSERT_TRUE(slow.is_ok()) << slow.error();
  auto fast = import_chrome_json_buffer(json, "tricky.json", serial());
  ASSERT_TRUE(fast.is_ok()) << fast.error();
  expect_same(*slow, *fast);
  EXPECT_EQ(slow->slices.size(), values.size() + 5);
}

TEST(FastPath, BadFieldsGetTheSameMessage) {
  std::vector<std::string> bad = {
      R"({"name":"a","pid":1,"tid":1,"ts":1,"dur":1})",                    // no ph
      R"({"ph":"X","name":"a","pid":1,"tid":1,"dur":1})",                  // no ts
      R"({"ph":"X","name":"a","pid":1,"tid":1,"ts":1})",                   // X without dur
      R"({"ph":"X","name":7,"pid":1,"tid":1,"ts":1,"dur":1})",             // name not a string
      R"({"ph":"X","name":"a","pid":[1],"tid":1,"ts":1,"dur":1})",         // pid an array
      R"({"ph":"X","name":"a","pid":1,"tid":1,"ts":"soon","dur":1})",      // ts not a number
      R"({"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":3})",  // args not an object
      R"({"ph":"","name":"a","pid":1,"tid":1,"ts":1,"dur":1})",            // empty ph
      R"({"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"a":tru}})",  // bad literal
      R"({"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"a":nul}})",  // (threw once)
      R"({"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":na:1})",
  };
  for (const std::string& ev : bad) {
    std::string json =
        "[{\"ph\":\"X\",\"name\":\"ok\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1},\n" + ev + "]";
    auto slow = import_chrome_json_buffer(json, "bad.json", simdjson_only());
    auto fast = import_chrome_json_buffer(json, "bad.json", serial());
    ASSERT_TRUE(slow.is_ok()) << ev;
    ASSERT_TRUE(fast.is_ok()) << ev;
    EXPECT_EQ(slow->meta.import_stats.total(), 1u) << ev;
    EXPECT_EQ(slow->slices.size(), 1u) << ev;
    SCOPED_TRACE(ev);
    expect_same(*slow, *fast);
  }
}

}  // namespace
}  // namespace mlprof

namespace mlprof {
namespace {

// Found by the differential fuzzer: a bad event, then one whose string never closes.
TEST(ParallelImport, ParseErrorBeforeTruncation) {
  std::string json =
      R"({"traceEvents":[{"ph":"B","name":"a","pid":!,"tid":1,"ts":1},{"ph":"E","pithon_functi1,"ts":2}]})";
  auto one = import_chrome_json_buffer(json, "f.json", serial());
  auto fast = import_chrome_json_buffer(json, "f.json", serial());
  ImportOptions o = serial();
  o.fast_path = false;
  auto slow = import_chrome_json_buffer(json, "f.json", o);
  auto split = import_chrome_json_buffer(json, "f.json", parallel(2, 512));
  ASSERT_FALSE(fast.is_ok());
  ASSERT_FALSE(slow.is_ok());
  ASSERT_FALSE(split.is_ok());
  EXPECT_EQ(fast.error(), split.error());
  EXPECT_EQ(fast.error(), slow.error());
}

}  // namespace
}  // namespace mlprof

namespace mlprof {
namespace {

// An event that ends exactly where a chunk buffer is full must still have simdjson's padding
// after it (an off-by-one once rejected such chunks). Shifting the first event's length moves
// the chunk boundary through every position of the events after it.
TEST(ChunkBoundaries, EventEndingAtTheBufferEnd) {
  for (int pad = 0; pad < 140; ++pad) {
    std::string json = "[{\"ph\":\"X\",\"name\":\"" + std::string(pad, 'p') +
                       "\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1}";
    int n = 0;
    while (json.size() < 20000) {  // escapes: these go through simdjson even on the fast path
      ++n;
      json += ",{\"ph\":\"X\",\"name\":\"e\\\"" + std::to_string(n) +
              "\",\"pid\":1,\"tid\":1,\"ts\":" + std::to_string(n) + ",\"dur\":1}";
    }
    json += "]";
    for (bool fast : {true, false}) {
      ImportOptions o = serial();
      o.chunk_bytes = 1024;
      o.fast_path = fast;
      auto t = import_chrome_json_buffer(json, "edge.json", o);
      ASSERT_TRUE(t.is_ok()) << "pad " << pad << ": " << t.error();
      ASSERT_EQ(t->slices.size(), static_cast<size_t>(n + 1)) << "pad " << pad;
    }
  }
}

}  // namespace
}  // namespace mlprof
