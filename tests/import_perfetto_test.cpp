// The importer against Perfetto's JSON parser tests (its trace processor is the reference reader
// of Chrome/Kineto JSON) and the TensorBoard plugin's old Kineto traces. The expected slices,
// flows and counters follow Perfetto's documented semantics (json_trace_parser_impl.cc,
// FlowTracker, and the expected outputs of its JSON diff tests), not mlprof's output.
// Shared data: $MLPROF_SHARED_DIR (default ../shared beside the repository); skipped if absent.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <string>

#include "mlprof/chrome_export.h"
#include "mlprof/import.h"
#include "mlprof/native_format.h"

namespace mlprof {
namespace {

std::string shared_dir() {
  const char* env = std::getenv("MLPROF_SHARED_DIR");
  return env && *env ? env : std::string(MLPROF_SOURCE_DIR) + "/../shared";
}

std::string peer(const std::string& rel) { return shared_dir() + "/peers/" + rel; }

#define LOAD_PEER(var, rel)                                                        \
  if (!std::filesystem::exists(peer(rel)))                                         \
    GTEST_SKIP() << "shared data absent: " << peer(rel) << " (MLPROF_SHARED_DIR)"; \
  auto var##_r = load_trace(peer(rel));                                            \
  ASSERT_TRUE(var##_r.is_ok()) << var##_r.error();                                 \
  Trace& var = *var##_r

int32_t slice_named(const Trace& t, std::string_view name) {
  for (size_t i = 0; i < t.slices.size(); ++i)
    if (t.str(t.slices.name[i]) == name) return static_cast<int32_t>(i);
  return -1;
}

std::set<std::pair<std::string, std::string>> flow_pairs(const Trace& t) {
  std::set<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < t.flows.size(); ++i) {
    auto name = [&](int32_t s) {
      return s < 0 ? std::string("-") : std::string(t.str(t.slices.name[s]));
    };
    out.emplace(name(t.flows.src_slice[i]), name(t.flows.dst_slice[i]));
  }
  return out;
}

// ---- 1. recovery ------------------------------------------------------------------------------

TEST(PerfettoTraces, TrailingCommaAfterLastEvent) {
  LOAD_PEER(t, "perfetto/traces/json_trailing_comma.json");
  EXPECT_GE(slice_named(t, "Foo"), 0);
  EXPECT_GE(slice_named(t, "Bar"), 0);
  EXPECT_EQ(t.slices.size(), 2u);
  EXPECT_EQ(t.meta.import_stats.count(ImportProblem::kTrailingComma), 1u);
}

TEST(PerfettoTraces, IncompleteArrayKeepsTheWholeEvent) {
  LOAD_PEER(t, "perfetto/traces/json_incomplete.json");
  ASSERT_EQ(t.slices.size(), 1u);
  EXPECT_EQ(t.str(t.slices.name[0]), "typecheck");
  EXPECT_EQ(t.slices.dur[0], 8000000);  // 8000.000 us
  EXPECT_EQ(t.meta.import_stats.count(ImportProblem::kTruncated), 1u);
}

TEST(PerfettoTraces, TrailingEmptyEventIsSkipped) {
  LOAD_PEER(t, "perfetto/traces/trailing_empty_event.json");
  ASSERT_EQ(t.slices.size(), 1u);
  EXPECT_EQ(t.str(t.slices.name[0]), "real_event");
  EXPECT_EQ(t.meta.import_stats.count(ImportProblem::kEmptyEvent), 1u);
}

TEST(PerfettoTraces, MetadataWithMissingOrInvalidTs) {
  LOAD_PEER(t, "perfetto/traces/json_metadata_missing_or_invalid_ts.json");
  std::map<int64_t, std::string> names;
  for (const Process& p : t.processes) names[p.pid] = std::string(t.str(p.name));
  EXPECT_EQ(names[100], "MissingTs");
  EXPECT_EQ(names[101], "NullTs");
  EXPECT_EQ(names[102], "InvalidTs");
  EXPECT_EQ(t.meta.import_stats.count(ImportProblem::kIgnoredField), 2u);
}

TEST(PerfettoTraces, InvalidStringTimesSkipTheirEvents) {
  // Perfetto drops an 'X' whose dur (or ts) is not a number; mlprof too, and counts them.
  LOAD_PEER(t, "perfetto/traces/string_ts_and_dur.json");
  EXPECT_GT(t.slices.size(), 0u);
  auto bad = load_trace(peer("perfetto/traces/invalid_string_ts_and_dur.json"));
  ASSERT_FALSE(bad.is_ok());  // both events unusable: nothing to read
  EXPECT_NE(bad.error().find("no event could be read"), std::string::npos) << bad.error();
}

// ---- 2. a missing tid is the pid --------------------------------------------------------------

TEST(PerfettoSemantics, MissingTidIsThePid) {
  auto r = import_chrome_json_buffer(
      R"([{"ph":"X","name":"outer","pid":7,"tid":7,"ts":1,"dur":10},
          {"ph":"X","name":"inner","pid":7,"ts":2,"dur":3}])",
      "t.json");
  ASSERT_TRUE(r.is_ok()) << r.error();
  const Trace& t = *r;
  ASSERT_EQ(t.slices.size(), 2u);
  EXPECT_EQ(t.slices.track[0], t.slices.track[1]);  // one thread: they nest
  int32_t inner = slice_named(t, "inner");
  EXPECT_EQ(t.slices.parent[inner], slice_named(t, "outer"));
  EXPECT_EQ(t.tracks[t.slices.track[inner]].tid, 7);
}

TEST(PerfettoSemantics, MissingTidWithStringPidIsThePidsThread) {
  // Legacy traces: pid "CPU functions". Without a tid the event is on the thread that has the
  // pid's own text as tid (Perfetto: tid = pid), so it nests with that thread's slices.
  auto r = import_chrome_json_buffer(
      R"([{"ph":"X","name":"outer","pid":"CPU functions","ts":1,"dur":10},
          {"ph":"X","name":"inner","pid":"CPU functions","tid":"CPU functions","ts":2,"dur":3},
          {"ph":"X","name":"other","pid":"CPU functions","tid":"worker","ts":2,"dur":3}])",
      "t.json");
  ASSERT_TRUE(r.is_ok()) << r.error();
  const Trace& t = *r;
  ASSERT_EQ(t.slices.size(), 3u);
  int32_t outer = slice_named(t, "outer"), inner = slice_named(t, "inner");
  EXPECT_EQ(t.slices.track[outer], t.slices.track[inner]);
  EXPECT_EQ(t.slices.parent[inner], outer);
  EXPECT_NE(t.slices.track[slice_named(t, "other")], t.slices.track[outer]);
  const Track& tr = t.tracks[t.slices.track[outer]];
  EXPECT_TRUE(tr.labeled);
  EXPECT_EQ(t.str(tr.label), "CPU functions");
}

// ---- 3. numeric-string ids are numbers --------------------------------------------------------

TEST(PerfettoSemantics, NumericStringIdIsTheNumber) {
  auto r = import_chrome_json_buffer(
      R"([{"ph":"X","name":"op","pid":"5","tid":"123","ts":1,"dur":10},
          {"ph":"i","name":"[memory]","pid":5,"tid":123,"ts":4,
           "args":{"Bytes":64,"Addr":1,"Device Type":0}}])",
      "t.json");
  ASSERT_TRUE(r.is_ok()) << r.error();
  const Trace& t = *r;
  ASSERT_EQ(t.memory.size(), 1u);
  EXPECT_EQ(t.memory.track[0], t.slices.track[0]);
  EXPECT_EQ(t.memory.slice[0], 0);  // charged to the op
  EXPECT_EQ(t.tracks[t.slices.track[0]].tid, 123);
  EXPECT_FALSE(t.tracks[t.slices.track[0]].labeled);
}

TEST(TbPluginTraces, MemoryEventsLandOnTheirOps) {
  // Old Kineto: ops carry "tid": "N", [memory] events "tid": N. Every memory event of a CPU
  // thread that runs inside an op must now find it.
  LOAD_PEER(t, "tb_plugin/unit/memory_view.json");
  ASSERT_GT(t.memory.size(), 0u);
  size_t charged = 0;
  for (size_t i = 0; i < t.memory.size(); ++i) charged += t.memory.slice[i] >= 0;
  EXPECT_GT(charged, 0u);
  for (const Track& tr : t.tracks)
    if (tr.labeled) {
      int64_t v;
      std::string_view l = t.str(tr.label);
      EXPECT_FALSE(!l.empty() &&
                   std::all_of(l.begin(), l.end(), [](char c) { return c >= '0' && c <= '9'; }))
          << "numeric label kept as text: " << l;
      (void)v;
    }
}

// ---- 4. flows ---------------------------------------------------------------------------------

TEST(PerfettoTraces, FlowsV1BindToNextSliceAndChainSteps) {
  LOAD_PEER(t, "perfetto/traces/flow_events_json_v1.json");
  // 0x403: s in SenderB, f (no bp) -> the next slice on its thread: Blergh.
  // 0x402: s in SenderA, t in OtherSlice, f (no bp) -> SomeSlice: one flow per hop.
  std::set<std::pair<std::string, std::string>> want = {
      {"SenderB", "Blergh"}, {"SenderA", "OtherSlice"}, {"OtherSlice", "SomeSlice"}};
  EXPECT_EQ(flow_pairs(t), want);
  EXPECT_EQ(t.meta.import_stats.count(ImportProblem::kUnmatchedFlow), 0u);
}

TEST(PerfettoTraces, FlowsV2FromBindId) {
  LOAD_PEER(t, "perfetto/traces/flow_events_json_v2.json");
  // flow_out begins, flow_in + flow_out steps, flow_in ends without closing (FlowTracker).
  std::set<std::pair<std::string, std::string>> want = {{"SenderB", "Blergh"},
                                                        {"SenderA", "OtherSlice"},
                                                        {"OtherSlice", "SomeSlice"},
                                                        {"OtherSlice", "SomeOtherSlice"}};
  EXPECT_EQ(flow_pairs(t), want);
  EXPECT_EQ(t.flows.size(), 4u);
  for (size_t i = 0; i < t.slices.size(); ++i) {
    EXPECT_EQ(t.slice_arg(i, "@bind_id"), nullptr);
    EXPECT_EQ(t.slice_arg(i, "@flow_in"), nullptr);
  }
}

TEST(PerfettoSemantics, FlowEndWithBpEBindsTheEnclosingSlice) {
  auto r = import_chrome_json_buffer(
      R"([{"ph":"X","name":"src","pid":1,"tid":1,"ts":0,"dur":10},
          {"ph":"s","id":1,"cat":"c","pid":1,"tid":1,"ts":1},
          {"ph":"X","name":"encl","pid":1,"tid":2,"ts":0,"dur":10},
          {"ph":"f","id":1,"cat":"c","bp":"e","pid":1,"tid":2,"ts":5},
          {"ph":"X","name":"next","pid":1,"tid":2,"ts":12,"dur":1}])",
      "t.json");
  ASSERT_TRUE(r.is_ok()) << r.error();
  std::set<std::pair<std::string, std::string>> want = {{"src", "encl"}};
  EXPECT_EQ(flow_pairs(*r), want);
}

// A v1 'f' between an enclosing slice and the next one on its thread: without "bp": "e" it
// binds the next slice ("next", which begins at 12, after the f at 5), with it the enclosing
// one ("encl"). The rule travels with the flow: the same slice after a .mlprof round trip and
// after export -> import (Perfetto's rule, json_trace_parser_impl.cc: kBindToNext unless bp).
std::string flow_end_trace(bool bp_e) {
  return std::string(R"([{"ph":"X","name":"src","pid":1,"tid":1,"ts":0,"dur":10},
      {"ph":"s","id":1,"cat":"c","pid":1,"tid":1,"ts":1},
      {"ph":"X","name":"encl","pid":1,"tid":2,"ts":0,"dur":10},
      {"ph":"X","name":"inner","pid":1,"tid":2,"ts":2,"dur":2},
      {"ph":"f","id":1,"cat":"c",)") +
         (bp_e ? R"("bp":"e",)" : "") +
         R"("pid":1,"tid":2,"ts":5},
      {"ph":"X","name":"next","pid":1,"tid":2,"ts":12,"dur":4},
      {"ph":"X","name":"next_child","pid":1,"tid":2,"ts":12,"dur":1}])";
}

// The trace as imported, saved and loaded, and exported and imported again.
std::vector<std::pair<std::string, Trace>> flow_end_round_trips(bool bp_e) {
  std::vector<std::pair<std::string, Trace>> out;
  auto a = import_chrome_json_buffer(flow_end_trace(bp_e), "t.json");
  EXPECT_TRUE(a.is_ok()) << a.error();
  if (!a) return out;
  std::string path = ::testing::TempDir() + "/flow_end_" + std::to_string(::getpid()) + ".mlprof";
  EXPECT_TRUE(save_native(*a, path).is_ok());
  auto native = load_native(path);
  std::remove(path.c_str());
  EXPECT_TRUE(native.is_ok()) << native.error();
  std::ostringstream json;
  write_chrome_json(*a, json);
  auto exported = import_chrome_json_buffer(json.str(), "export.json");
  EXPECT_TRUE(exported.is_ok()) << exported.error();
  EXPECT_EQ(json.str().find(R"("bp":"e")") != std::string::npos, bp_e) << json.str();
  out.emplace_back("import", std::move(*a));
  if (native) out.emplace_back(".mlprof round trip", std::move(*native));
  if (exported) out.emplace_back("export -> import", std::move(*exported));
  return out;
}

TEST(PerfettoSemantics, FlowEndWithoutBpBindsTheNextSliceAfterEveryRoundTrip) {
  std::set<std::pair<std::string, std::string>> want = {{"src", "next"}};
  for (auto& [way, t] : flow_end_round_trips(false)) {
    EXPECT_EQ(flow_pairs(t), want) << way;
    ASSERT_EQ(t.flows.size(), 1u) << way;
    EXPECT_EQ(t.flows.dst_next[0], 1) << way;
    EXPECT_EQ(t.flows.dst_ts[0], 12000) << way;  // the flow ends where "next" begins
  }
}

TEST(PerfettoSemantics, FlowEndWithBpEBindsTheEnclosingSliceAfterEveryRoundTrip) {
  std::set<std::pair<std::string, std::string>> want = {{"src", "encl"}};
  for (auto& [way, t] : flow_end_round_trips(true)) {
    EXPECT_EQ(flow_pairs(t), want) << way;
    ASSERT_EQ(t.flows.size(), 1u) << way;
    EXPECT_EQ(t.flows.dst_next[0], 0) << way;
    EXPECT_EQ(t.flows.dst_ts[0], 5000) << way;
  }
}

TEST(PerfettoSemantics, FlowEndWithoutBpAndNoSliceAfterItIsUnbound) {
  auto r = import_chrome_json_buffer(
      R"([{"ph":"X","name":"src","pid":1,"tid":1,"ts":0,"dur":10},
          {"ph":"s","id":1,"cat":"c","pid":1,"tid":1,"ts":1},
          {"ph":"X","name":"encl","pid":1,"tid":2,"ts":0,"dur":10},
          {"ph":"f","id":1,"cat":"c","pid":1,"tid":2,"ts":5}])",
      "t.json");
  ASSERT_TRUE(r.is_ok()) << r.error();
  std::set<std::pair<std::string, std::string>> want = {{"src", "-"}};
  EXPECT_EQ(flow_pairs(*r), want);
}

// ---- 5. counter values given as strings ------------------------------------------------------

TEST(PerfettoTraces, CounterStringValues) {
  LOAD_PEER(t, "perfetto/traces/json_counter_args.json");
  std::map<std::string, double> got;
  for (size_t i = 0; i < t.counters.size(); ++i)
    got[std::string(t.str(t.counter_series[t.counters.series[i]].name))] = t.counters.value[i];
  std::map<std::string, double> want = {{"CounterStringEdgeCases leading_dot", 0.75},
                                        {"CounterStringEdgeCases trailing_dot", 246},
                                        {"CounterStringEdgeCases leading_zero_float", 1.23},
                                        {"CounterStringEdgeCases leading_zero_int_str", 50},
                                        {"CounterStringEdgeCases plus_val", 10.5}};
  EXPECT_EQ(got, want);
}

// ---- 6. thread time (tts/tdur) -------------------------------------------------------------
// Perfetto's slice.thread_ts / thread_dur: an X's tts and tdur; a B's tts, and the E's tts minus
// it; numeric strings as ts. Absent: -1 here (NULL there).

struct ThreadTime {
  int64_t ts, thread_ts, thread_dur;
  bool operator==(const ThreadTime&) const = default;
};
std::ostream& operator<<(std::ostream& o, const ThreadTime& t) {
  return o << "{" << t.ts << ", " << t.thread_ts << ", " << t.thread_dur << "}";
}

ThreadTime thread_time(const Trace& t, std::string_view name) {
  int32_t i = slice_named(t, name);
  if (i < 0) return {-2, -2, -2};
  return {t.slices.ts[i], t.slices.thread_ts[i], t.slices.thread_dur[i]};
}

// Every way of parsing gives the same thread times (fast path, simdjson only, split parse).
std::vector<Trace> every_way(const std::string& path) {
  std::vector<Trace> out;
  for (int way = 0; way < 3; ++way) {
    ImportOptions o;
    o.fast_path = way != 1;
    if (way == 2) {
      o.threads = 3;
      o.parse_threads = 2;
      o.chunk_bytes = 64;
    }
    auto r = load_trace(path, o);
    EXPECT_TRUE(r.is_ok()) << r.error();
    if (r) out.push_back(std::move(*r));
  }
  return out;
}

TEST(PerfettoTraces, ThreadTimeFromStrings) {
  if (!std::filesystem::exists(peer("perfetto/traces/string_tts_and_tdur.json")))
    GTEST_SKIP() << "shared data absent (MLPROF_SHARED_DIR)";
  for (const Trace& t : every_way(peer("perfetto/traces/string_tts_and_tdur.json")))
    EXPECT_EQ(thread_time(t, "StringTtsTdur"), (ThreadTime{400000, 390500, 80500}));
  for (const Trace& t : every_way(peer("perfetto/traces/string_ts_and_dur.json"))) {
    EXPECT_EQ(thread_time(t, "CompleteEvent"), (ThreadTime{250000, 240000, 40500}));
    EXPECT_EQ(thread_time(t, "BeginEvent"), (ThreadTime{100000, -1, -1}));
  }
}

TEST(PerfettoTraces, ThreadTimeOfCompleteAndBeginEnd) {
  if (!std::filesystem::exists(peer("perfetto/traces/flow_events_json_v2.json")))
    GTEST_SKIP() << "shared data absent (MLPROF_SHARED_DIR)";
  for (const Trace& t : every_way(peer("perfetto/traces/flow_events_json_v2.json"))) {
    EXPECT_EQ(thread_time(t, "SenderA"), (ThreadTime{3002000, 3005000, 7000}));
    EXPECT_EQ(thread_time(t, "SenderB"), (ThreadTime{0, 1000, 5000}));
    EXPECT_EQ(thread_time(t, "Blergh"), (ThreadTime{1001000, -1, -1}));
    // B tts 3335, E tts 4331.
    EXPECT_EQ(thread_time(t, "SomeOtherSlice"), (ThreadTime{3333000, 3335000, 996000}));
  }
  for (const Trace& t : every_way(peer("perfetto/traces/json_all_slice_types.json"))) {
    EXPECT_EQ(thread_time(t, "CompleteEvent"), (ThreadTime{250000, 240000, 40000}));
    // Only the E has a tts: no thread start, so no thread duration.
    EXPECT_EQ(thread_time(t, "BeginEvent"), (ThreadTime{100000, -1, -1}));
  }
  for (const Trace& t : every_way(peer("perfetto/traces/json_extreme_vals.json"))) {
    EXPECT_EQ(thread_time(t, "CompleteNoTDUR"), (ThreadTime{1300000, 1290000, -1}));
    EXPECT_EQ(thread_time(t, "BeginNoTTS"), (ThreadTime{1100000, -1, -1}));
  }
}

TEST(PerfettoSemantics, BadThreadTimeIsIgnoredNotFatal) {
  for (bool fast : {true, false}) {
    ImportOptions o;
    o.fast_path = fast;
    auto r = import_chrome_json_buffer(
        R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2,"tts":"x","tdur":1},
            {"ph":"X","name":"b","pid":1,"tid":1,"ts":5,"dur":2,"tts":-3}])",
        "t.json", o);
    ASSERT_TRUE(r.is_ok()) << r.error();
    EXPECT_EQ(r->slices.size(), 2u);
    EXPECT_EQ(thread_time(*r, "a"), (ThreadTime{1000, -1, -1}));
    EXPECT_EQ(thread_time(*r, "b"), (ThreadTime{5000, -1, -1}));
    EXPECT_EQ(r->meta.import_stats.count(ImportProblem::kIgnoredField), 2u);
    EXPECT_EQ(r->args.size(), 0u);  // tts and tdur are columns, not pass-through args
  }
}

TEST(PerfettoSemantics, BeginEndArgsOncePerKey) {
  // The end's value wins for a key both have (Perfetto's args of a B/E pair).
  const char* json = R"([{"ph":"B","name":"op","pid":1,"tid":1,"ts":10,"tts":5,"sf":7,
                           "args":{"k":1,"b":4}},
                         {"ph":"X","name":"other","pid":1,"tid":2,"ts":11,"dur":1,"args":{"z":0}},
                         {"ph":"E","pid":1,"tid":1,"ts":30,"tts":12,"sf":8,"args":{"k":2}}])";
  for (unsigned way = 0; way < 8; ++way) {
    unsigned parsers = way % 2 + 1;
    ImportOptions o;
    o.threads = parsers + 1;
    o.parse_threads = parsers;
    o.chunk_bytes = 48u << (way / 2);  // the B and the E in the same or separate chunks
    auto r = import_chrome_json_buffer(json, "t.json", o);
    ASSERT_TRUE(r.is_ok()) << r.error();
    int32_t i = slice_named(*r, "op");
    ASSERT_GE(i, 0);
    EXPECT_EQ(thread_time(*r, "op"), (ThreadTime{10000, 5000, 7000}));
    std::map<std::string, std::string> args;
    std::multiset<std::string> keys;
    for (uint32_t a = 0; a < r->slices.args_count[i]; ++a) {
      const Arg& arg = r->args[r->slices.args_begin[i] + a];
      keys.insert(std::string(r->str(arg.key)));
      args[std::string(r->str(arg.key))] = r->arg_text(arg);
    }
    EXPECT_EQ(keys.size(), 3u) << way;
    std::map<std::string, std::string> want = {{"@sf", "8"}, {"k", "2"}, {"b", "4"}};
    EXPECT_EQ(args, want) << way;
  }
}

// ---- 7. old GPU tracks, ROCm memory -----------------------------------------------------------

TEST(PerfettoSemantics, OldStyleStreamLabelIsTheStream) {
  auto r = import_chrome_json_buffer(
      R"([{"ph":"X","cat":"Kernel","name":"k","pid":0,"tid":"stream 7","ts":1,"dur":2}])",
      "t.json");
  ASSERT_TRUE(r.is_ok()) << r.error();
  const Track& tr = r->tracks[r->slices.track[0]];
  EXPECT_EQ(tr.kind, TrackKind::kGpuStream);
  EXPECT_EQ(tr.stream, 7);
  EXPECT_EQ(tr.device, 0);
}

TEST(PerfettoSemantics, RocmMemoryIsGpuMemory) {
  auto r = import_chrome_json_buffer(
      R"([{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":1,
           "args":{"Bytes":1024,"Addr":99,"Device Type":6,"Device Id":2}}])",
      "t.json");
  ASSERT_TRUE(r.is_ok()) << r.error();
  ASSERT_EQ(r->memory.size(), 1u);
  EXPECT_EQ(r->memory.device_type[0], static_cast<int8_t>(DeviceType::kCuda));
  EXPECT_EQ(r->memory.device_id[0], 2);
}

}  // namespace
}  // namespace mlprof
