// Recovery: a trace with a bad byte is read up to (or around) it, each kind of problem counted
// in Trace::meta.import_stats, as Perfetto's trace processor does; only what is not a trace at
// all (or, with strict, any problem) is an error. Every case runs through the import paths
// (fast path or simdjson alone; one parser, or two on tiny chunks in threads or taking turns on
// one thread), which must agree.
#include <gtest/gtest.h>

#include <string>

#include "mlprof/import.h"

namespace mlprof {
namespace {

std::vector<ImportOptions> all_paths() {
  std::vector<ImportOptions> v;
  for (bool fast : {true, false}) {
    for (unsigned parsers : {1u, 2u}) {
      ImportOptions o;
      o.fast_path = fast;
      o.parse_threads = parsers;
      o.threads = parsers > 1 ? 3 : 1;
      o.chunk_bytes = parsers > 1 ? 64 : 0;
      v.push_back(o);
      if (parsers > 1) {  // the same split, the parsers taking turns on one thread
        o.threads = 1;
        o.chunk_bytes = 16;
        v.push_back(o);
      }
    }
  }
  return v;
}

// Imports through every path; they must agree on the events and the problem counts.
Trace recovered(const std::string& json) {
  Trace first;
  bool have = false;
  for (const ImportOptions& o : all_paths()) {
    auto r = import_chrome_json_buffer(json, "t.json", o);
    EXPECT_TRUE(r.is_ok()) << r.error();
    if (!r) return Trace();
    if (!have) {
      first = std::move(*r);
      have = true;
      continue;
    }
    EXPECT_EQ(r->slices.name.size(), first.slices.name.size()) << json;
    EXPECT_EQ(r->slices.ts, first.slices.ts) << json;
    EXPECT_EQ(r->meta.import_stats.events_read, first.meta.import_stats.events_read) << json;
    for (size_t k = 0; k < first.meta.import_stats.kinds.size(); ++k) {
      EXPECT_EQ(r->meta.import_stats.kinds[k].count, first.meta.import_stats.kinds[k].count)
          << json << " kind " << import_problem_name(static_cast<ImportProblem>(k));
      EXPECT_EQ(r->meta.import_stats.kinds[k].first_offset,
                first.meta.import_stats.kinds[k].first_offset)
          << json;
    }
  }
  return first;
}

std::string error_of(const std::string& json, bool strict = false) {
  ImportOptions o;
  o.strict = strict;
  auto r = import_chrome_json_buffer(json, "t.json", o);
  EXPECT_FALSE(r.is_ok());
  return r ? "" : r.error();
}

const char* kGood = R"({"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2})";

TEST(ImportRecovery, TruncatedArrayKeepsWholeEvents) {
  std::string json = std::string(R"({"traceEvents":[)") + kGood + "," + kGood + R"(,{"ph":"X")";
  Trace t = recovered(json);
  EXPECT_EQ(t.slices.size(), 2u);
  const ImportStats& s = t.meta.import_stats;
  EXPECT_EQ(s.count(ImportProblem::kTruncated), 1u);
  EXPECT_EQ(s.total(), 1u);
  EXPECT_EQ(s.events_read, 2u);
  EXPECT_EQ(s[ImportProblem::kTruncated].first_offset, json.size());  // where the input ends
  std::vector<std::string> w = import_warnings(t);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "warning: t.json: byte " + std::to_string(json.size()) +
                      ": unexpected end of file (truncated JSON?); 2 events read");
  // Cut anywhere after the first event: never more events than the clean prefix holds.
  std::string full = std::string("[") + kGood + "," + kGood + "," + kGood + "]";
  for (size_t cut = 1 + std::string(kGood).size(); cut < full.size(); ++cut) {
    Trace p = recovered(full.substr(0, cut));
    size_t whole = (cut - 1) / (std::string(kGood).size() + 1);
    EXPECT_LE(p.slices.size(), whole + 1) << cut;
    EXPECT_GE(p.slices.size(), whole) << cut;
  }
}

TEST(ImportRecovery, NothingReadableIsStillAnError) {
  EXPECT_NE(error_of(R"({"traceEvents":[{"ph":"X")").find("unexpected end of file"),
            std::string::npos);
  EXPECT_NE(error_of("").find("empty"), std::string::npos);
  EXPECT_NE(error_of(R"({"rows":[1,2,3]})").find("not a trace"), std::string::npos);
  EXPECT_NE(error_of(R"({"traceEvents":{}})").find("must be an array"), std::string::npos);
  EXPECT_NE(error_of(R"({"traceEvents":[1,2]})").find("event object"), std::string::npos);
  EXPECT_NE(error_of("\x01\x02garbage").find("expected '{' or '['"), std::string::npos);
  // The only event is unusable: its problem is the error, at the bad byte.
  std::string bad_ts = R"({"traceEvents":[{"ph":"X","name":"a","ts":"soon","dur":2}]})";
  std::string e = error_of(bad_ts);
  EXPECT_NE(
      e.find("t.json: byte " + std::to_string(bad_ts.find("\"soon\"")) + ": event field \"ts\""),
      std::string::npos)
      << e;
  EXPECT_NE(e.find("no event could be read"), std::string::npos) << e;
}

TEST(ImportRecovery, TrailingCommas) {
  // After the last event, inside args, and after the last top-level value.
  std::string json = std::string(R"({"traceEvents":[)") + kGood +
                     R"(,{"ph":"X","name":"b","pid":1,"tid":1,"ts":5,"dur":1,"args":{"k":1,}},
                     ],})";
  Trace t = recovered(json);
  ASSERT_EQ(t.slices.size(), 2u);
  EXPECT_NE(t.slice_arg(1, "k"), nullptr);
  EXPECT_EQ(t.meta.import_stats.count(ImportProblem::kTrailingComma), 3u);
  EXPECT_EQ(t.meta.import_stats[ImportProblem::kTrailingComma].first_offset, json.find(",}"));
}

TEST(ImportRecovery, RawControlCharacterInString) {
  std::string json =
      "[{\"ph\":\"X\",\"name\":\"two\nlines\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2}]";
  Trace t = recovered(json);
  ASSERT_EQ(t.slices.size(), 1u);
  EXPECT_EQ(t.str(t.slices.name[0]), "two\nlines");
  EXPECT_EQ(t.meta.import_stats.count(ImportProblem::kControlCharacter), 1u);
  EXPECT_EQ(t.meta.import_stats[ImportProblem::kControlCharacter].first_offset, json.find('\n'));
}

TEST(ImportRecovery, SkippedEventsAreCountedByKind) {
  std::string json = std::string("[") + kGood +
                     R"(,{"ph":"X","name":"nodur","pid":1,"tid":1,"ts":3},{},)" +
                     R"({"ph":"X","name":"bad","pid":1,"tid":1,"ts":4,"dur":tru},)" +
                     R"({"ph":"X","name":"x","pid":{},"tid":1,"ts":4,"dur":1},)" + kGood + "]";
  Trace t = recovered(json);
  EXPECT_EQ(t.slices.size(), 2u);
  const ImportStats& s = t.meta.import_stats;
  EXPECT_EQ(s.count(ImportProblem::kMissingField), 1u);
  EXPECT_EQ(s.count(ImportProblem::kEmptyEvent), 1u);
  EXPECT_EQ(s.count(ImportProblem::kInvalidJson), 1u);
  EXPECT_EQ(s.count(ImportProblem::kBadField), 1u);
  EXPECT_EQ(s.events_read, 2u);
  // Offsets: the event for a missing field, the bad byte for bad JSON or a bad value.
  EXPECT_EQ(s[ImportProblem::kMissingField].first_offset, json.find(R"({"ph":"X","name":"nodur")"));
  EXPECT_EQ(s[ImportProblem::kInvalidJson].first_offset, json.find("tru}"));
  EXPECT_EQ(s[ImportProblem::kBadField].first_offset, json.find("{},\"tid\""));
  EXPECT_NE(s[ImportProblem::kMissingField].first_what.find("\"dur\""), std::string::npos);
  EXPECT_EQ(import_warnings(t).size(), 4u);
}

TEST(ImportRecovery, MissingCommaAndTrailingData) {
  std::string json = std::string("[") + kGood + kGood + "] trailing";
  Trace t = recovered(json);
  EXPECT_EQ(t.slices.size(), 2u);
  EXPECT_EQ(t.meta.import_stats.count(ImportProblem::kInvalidJson), 1u);
  EXPECT_EQ(t.meta.import_stats.count(ImportProblem::kTrailingData), 1u);
  EXPECT_EQ(t.meta.import_stats[ImportProblem::kTrailingData].first_offset, json.find("trailing"));
}

TEST(ImportRecovery, GarbageAfterEventsEndsTheEvents) {
  std::string json = std::string("[") + kGood + "," + kGood + std::string(100, '\0');
  Trace t = recovered(json);
  EXPECT_EQ(t.slices.size(), 2u);
  EXPECT_EQ(t.meta.import_stats.count(ImportProblem::kInvalidJson), 1u);
}

TEST(ImportRecovery, StrictMakesAnyProblemAnError) {
  std::string json = std::string("[") + kGood + ",";
  std::string e = error_of(json, /*strict=*/true);
  EXPECT_EQ(e, "t.json: byte " + std::to_string(json.size()) +
                   ": unexpected end of file (truncated JSON?) (--strict: 1 import problem)");
  ImportOptions o;
  o.strict = true;
  EXPECT_TRUE(import_chrome_json_buffer(std::string("[") + kGood + "]", "t.json", o).is_ok());
}

TEST(ImportRecovery, StrictCountsOnlyWhatItFailsOn) {
  // Two flow ends without their starts (counted, never a --strict error), an X without dur and
  // a cut end: the message counts the two problems --strict fails on.
  std::string json = std::string("[") + kGood +
                     R"(,{"ph":"f","id":1,"bp":"e","cat":"c","pid":1,"tid":1,"ts":1},)" +
                     R"({"ph":"f","id":2,"bp":"e","cat":"c","pid":1,"tid":1,"ts":2},)" +
                     R"({"ph":"X","name":"nodur","pid":1,"tid":1,"ts":3},)" + kGood + ",";
  Trace t = recovered(json);
  EXPECT_EQ(t.meta.import_stats.count(ImportProblem::kUnmatchedFlow), 2u);
  std::string e = error_of(json, /*strict=*/true);
  EXPECT_NE(e.find("(--strict: 2 import problems)"), std::string::npos) << e;
}

TEST(ImportRecovery, TopLevelValuesAreRepairedAsEventsAre) {
  // Kineto's deviceProperties with a trailing comma and a raw newline, distributedInfo with a raw
  // newline: read (devices, rank), each repair counted under its own kind at its first byte, not
  // as bad_top_level.
  std::string json = std::string(R"({"schemaVersion":1,"deviceProperties":[)") +
                     R"({"id":0,"name":"A100","numSms":108,},{"id":1,"name":"A1)" + "\n" +
                     R"(00"}],)" +
                     "\"distributedInfo\":{\"backend\":\"nc\ncl\",\"rank\":3,\"world_size\":8},"
                     "\"traceEvents\":[" +
                     kGood + "]}";
  Trace t = recovered(json);
  const ImportStats& s = t.meta.import_stats;
  EXPECT_EQ(s.count(ImportProblem::kBadTopLevel), 0u);
  ASSERT_EQ(t.meta.devices.size(), 2u);
  EXPECT_EQ(t.meta.devices[0].num_sms, 108);
  EXPECT_EQ(t.meta.rank, 3);
  EXPECT_EQ(t.meta.world_size, 8);
  EXPECT_EQ(s.count(ImportProblem::kTrailingComma), 1u);
  EXPECT_EQ(s[ImportProblem::kTrailingComma].first_offset, json.find(",}"));
  EXPECT_EQ(s.count(ImportProblem::kControlCharacter), 2u);
  // Each kind at its own first byte (both in deviceProperties: the ',' first).
  EXPECT_EQ(s[ImportProblem::kControlCharacter].first_offset, json.find('\n'));
  EXPECT_EQ(t.meta.devices[1].name, "A1\n00");
  EXPECT_EQ(import_warnings(t).size(), 2u);
  // Export writes the repaired value, which reads back clean.
  for (const auto& [key, raw] : t.meta.extra) {
    if (key == "deviceProperties" || key == "distributedInfo") {
      EXPECT_EQ(raw.find_first_of("\n"), std::string::npos) << raw;
    }
  }

  // Not JSON even so: ignored, at its first bad byte.
  std::string bad = std::string(R"({"deviceProperties":[{"id":0,"name":"A100"} {"id":1}],)") +
                    "\"traceEvents\":[" + kGood + "]}";
  Trace b = recovered(bad);
  EXPECT_EQ(b.meta.import_stats.count(ImportProblem::kBadTopLevel), 1u);
  EXPECT_EQ(b.meta.import_stats[ImportProblem::kBadTopLevel].first_offset, bad.find("{\"id\":1}"));
  EXPECT_TRUE(b.meta.devices.empty());
}

TEST(ImportRecovery, NoEventsIsNotATrace) {
  for (const char* json :
       {"[]", R"({"traceEvents":[]})", R"({"traceEvents": [ ], "schemaVersion": 1})"}) {
    std::string e = error_of(json);
    EXPECT_EQ(e, "t.json: no trace events (an empty events array)") << json;
  }
  // Only metadata is still events (a process with no slices yet).
  auto r = import_chrome_json_buffer(
      R"([{"ph":"M","name":"process_name","pid":1,"args":{"name":"p"}}])", "t.json");
  EXPECT_TRUE(r.is_ok()) << r.error();
}

TEST(ImportRecovery, CleanTraceHasNoProblems) {
  Trace t = recovered(std::string("{\"traceEvents\":[") + kGood + "]}");
  EXPECT_FALSE(t.meta.import_stats.any());
  EXPECT_EQ(t.meta.import_stats.events_read, 1u);
  EXPECT_TRUE(import_warnings(t).empty());
}

}  // namespace
}  // namespace mlprof
