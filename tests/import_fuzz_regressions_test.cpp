// Every way of parsing gives the same Trace, the same warnings and the same error, damaged input
// included: the fuzzer's differential checks (tests/fuzz/import_fuzz.cpp) as a test, on the
// inputs it found that once differed or crashed (tests/fuzz/regressions/TARGET/, one per bug: the
// file name says which) and on constructed damaged inputs (a corrupt gzip stream big enough for
// several inflate units, a cut in every place of a small trace).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/fuzz_compare.h"
#include "fuzz/native_input.h"
#include "import/json_chunker.h"
#include "mlprof/import.h"
#include "mlprof/native_format.h"

namespace mlprof {
namespace {

struct Way {
  std::string name;
  ImportOptions options;
};

// One parser on one chunk (the reference), simdjson alone, one parser on tiny chunks, two or
// three parsers splitting tiny chunks on one thread and in the threaded pipeline.
std::vector<Way> ways() {
  std::vector<Way> v;
  auto add = [&](std::string name, bool fast, unsigned parsers, size_t chunk, unsigned threads) {
    ImportOptions o;
    o.fast_path = fast;
    o.parse_threads = parsers;
    o.chunk_bytes = chunk;
    o.threads = threads;
    v.push_back({std::move(name), o});
  };
  add("fast path, one chunk", true, 1, 1 << 20, 1);
  add("simdjson only", false, 1, 1 << 20, 1);
  for (size_t chunk : {16, 37, 150, 600}) {
    std::string c = " chunks of " + std::to_string(chunk);
    add("one parser," + c, true, 1, chunk, 1);
    add("2 parsers inline," + c, true, 2, chunk, 1);
    add("3 parsers threaded," + c, true, 3, chunk, 4);
  }
  return v;
}

// Every way agrees with the first; returns the first way's result.
Result<Trace> every_way(std::string_view input, const std::string& label) {
  std::vector<Way> all = ways();
  Result<Trace> first = import_chrome_json_buffer(input, "t.json", all[0].options);
  for (size_t i = 1; i < all.size(); ++i) {
    SCOPED_TRACE(label + ": " + all[0].name + " / " + all[i].name);
    Result<Trace> r = import_chrome_json_buffer(input, "t.json", all[i].options);
    if (r.is_ok() != first.is_ok()) {
      ADD_FAILURE() << "one failed: " << (r ? first.error() : r.error());
      continue;
    }
    if (!r) {
      EXPECT_EQ(r.error(), first.error());
      continue;
    }
    try {
      fuzz::Compare{first.value(), r.value(), "", true, true}.all();
    } catch (const fuzz::Difference& d) {
      ADD_FAILURE() << "differ: " << d.what;
    }
  }
  return first;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::filesystem::path regressions(const char* target) {
  return std::filesystem::path(MLPROF_SOURCE_DIR) / "tests/fuzz/regressions" / target;
}

TEST(ImportFuzzRegressions, EveryWayAgreesOnTheFoundInputs) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(regressions("import"))) {
    // every_way checks the paths agree itself; whether this input imports does not matter here.
    (void)every_way(slurp(e.path()), e.path().filename().string());
    ++n;
  }
  EXPECT_GE(n, 4u);
}

// native_fuzz's inputs: the first byte says what the rest is (tests/fuzz/native_input.h).
TEST(ImportFuzzRegressions, NativeReaderErrorsAreOneLine) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(regressions("native"))) {
    SCOPED_TRACE(e.path().filename().string());
    std::string input = slurp(e.path());
    ASSERT_FALSE(input.empty());
    std::string file = fuzz::native_file(input);
    Result<Trace> r = load_native_buffer(file, "t.mlprof");
    if (!r) {
      EXPECT_EQ(r.error().find('\n'), std::string::npos) << r.error();
    }
    ++n;
  }
  EXPECT_GE(n, 1u);
}

TEST(ImportFuzzRegressions, EscapedQuoteOutsideAStringEndsNoValue) {
  // A '\' before a quote outside any string (invalid JSON): the chunker's 64-byte scan and the
  // parser's one-value scan both read the quote as escaped, so they agree where events end.
  // The first event ends at the '}' after the escaped quote: it is not JSON (skipped); the
  // second is read.
  std::string bad = R"({"ph":"X","name":"a","ts":1,"dur":1,"x":\"})";
  std::string json = "[" + bad + "," + R"({"ph":"X","name":"b","ts":2,"dur":1})" + "]";
  const char* p = json.data() + 1;
  EXPECT_EQ(import::scan_events(p, json.data() + json.size()),
            import::scan_events_scalar(p, json.data() + json.size()));
  Result<Trace> t = every_way(json, "escaped quote");
  ASSERT_TRUE(t.is_ok()) << t.error();
  EXPECT_EQ(t->slices.size(), 1u);
  EXPECT_EQ(t->meta.import_stats.count(ImportProblem::kInvalidJson), 1u);
}

TEST(ImportFuzzRegressions, CorruptGzipStreamReadsTheSameTextWhateverTheBufferSizes) {
  // Big enough for several 64 KiB inflate units; a byte flipped in the middle of the stream.
  std::string json = R"({"traceEvents":[)";
  for (int i = 0; i < 4000; ++i) {
    if (i) json += ",";
    json += R"({"ph":"X","cat":"cpu_op","name":"op)" + std::to_string(i % 97) +
            R"(","pid":1,"tid":1,"ts":)" + std::to_string(i * 10) + R"(,"dur":5,"args":{"k":")" +
            std::to_string(i * 7919 % 10007) + R"("}})";
  }
  json += "]}";
  std::string gz;
  {
    std::string path = ::testing::TempDir() + "/mlprof-regression.json";
    std::ofstream(path) << json;
    ASSERT_EQ(std::system(("gzip -f -6 " + path).c_str()), 0);
    gz = slurp(path + ".gz");
    std::filesystem::remove(path + ".gz");
  }
  ASSERT_GT(gz.size(), 1000u);
  std::string corrupt = gz;
  corrupt[corrupt.size() / 2] ^= 0x5a;
  Result<Trace> whole = every_way(gz, "gzip");
  ASSERT_TRUE(whole.is_ok()) << whole.error();
  EXPECT_EQ(whole->slices.size(), 4000u);
  Result<Trace> t = every_way(corrupt, "corrupt gzip");
  if (t) {
    EXPECT_TRUE(t->meta.import_stats.damaged());  // what was lost is never silent
  }
}

TEST(ImportFuzzRegressions, EveryCutOfASmallTraceReadsAPrefix) {
  std::string json = R"({"schemaVersion":1,"traceEvents":[)"
                     R"({"ph":"B","name":"a","pid":1,"tid":1,"ts":1,"tts":1,"args":{"k":1}},)"
                     R"({"ph":"X","name":"b","pid":1,"tid":2,"ts":2,"dur":3,"cat":"kernel"},)"
                     R"({"ph":"s","id":1,"pid":1,"tid":1,"ts":2,"cat":"f"},)"
                     R"({"ph":"E","pid":1,"tid":1,"ts":9,"tts":4,"args":{"k":2}},)"
                     R"({"ph":"f","id":1,"pid":1,"tid":2,"ts":3,"cat":"f","bp":"e"},)"
                     R"({"ph":"C","name":"c","pid":1,"ts":4,"args":{"v":"1.5"}}]})";
  uint64_t previous = 0;
  for (size_t cut = 1; cut <= json.size(); ++cut) {
    Result<Trace> t = every_way(json.substr(0, cut), "cut at " + std::to_string(cut));
    uint64_t events = t ? t->meta.import_stats.events_read : 0;
    EXPECT_LE(events, 6u) << cut;
    EXPECT_GE(events, previous) << cut;  // more of the input never reads fewer events
    previous = events;
  }
  EXPECT_EQ(previous, 6u);
}

}  // namespace
}  // namespace mlprof
