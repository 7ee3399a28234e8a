// Importer tests: formats, exact timestamps, nesting, flows, memory, and bad input.
#include "mlprof/import.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "import/chrome_event_parser.h"
#include "mlprof/chrome_export.h"
#include "shared_data.h"

namespace mlprof {
namespace {

std::string data(const char* name) { return std::string(MLPROF_TEST_DATA) + "/" + name; }

// Kineto GPU traces from Holistic Trace Analysis's test data, read from the shared data folder.
constexpr const char* kSimpleAdd =
    "traces/kineto-gpu/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz";
constexpr const char* kOldFormat = "traces/kineto-gpu/trace_file_list/inference_rank_1.json.gz";
constexpr const char* kMemoryTimeline = "traces/kineto-gpu/memory_analysis/memory_timeline.raw.gz";

Trace parse(const std::string& json) {
  auto r = import_chrome_json_buffer(json, "test.json");
  EXPECT_TRUE(r.is_ok()) << (r ? "" : r.error());
  return r ? std::move(r.value()) : Trace();
}

std::string error_of(const std::string& json) {
  auto r = import_chrome_json_buffer(json, "bad.json");
  EXPECT_FALSE(r.is_ok());
  return r ? "" : r.error();
}

std::string temp_file(const std::string& contents, const char* suffix) {
  std::string path = std::string("/tmp/mlprof_import_test_") + std::to_string(::getpid()) + suffix;
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

TEST(ParseMicroseconds, ExactNanoseconds) {
  int64_t ns;
  ASSERT_TRUE(import::parse_us_to_ns("1694039994071256", &ns));
  EXPECT_EQ(ns, 1694039994071256000);
  // 19 significant digits: a double would round this.
  ASSERT_TRUE(import::parse_us_to_ns("1712185898474913.123", &ns));
  EXPECT_EQ(ns, 1712185898474913123);
  ASSERT_TRUE(import::parse_us_to_ns("0.5", &ns));
  EXPECT_EQ(ns, 500);
  ASSERT_TRUE(import::parse_us_to_ns("1.23456", &ns));  // rounds half up at the 4th decimal
  EXPECT_EQ(ns, 1235);
  ASSERT_TRUE(import::parse_us_to_ns("-2.5", &ns));
  EXPECT_EQ(ns, -2500);
  ASSERT_TRUE(import::parse_us_to_ns("1.5e3", &ns));
  EXPECT_EQ(ns, 1500000);
  EXPECT_FALSE(import::parse_us_to_ns("abc", &ns));
  EXPECT_FALSE(import::parse_us_to_ns("", &ns));
  EXPECT_FALSE(import::parse_us_to_ns("99999999999999999999999", &ns));
}

TEST(Import, NestingAndSelfTime) {
  Trace t = parse(R"({"traceEvents":[
    {"ph":"X","name":"child2","pid":1,"tid":1,"ts":60,"dur":20},
    {"ph":"X","name":"parent","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","name":"child1","pid":1,"tid":1,"ts":10,"dur":30},
    {"ph":"X","name":"grandchild","pid":1,"tid":1,"ts":15,"dur":5},
    {"ph":"X","name":"other_thread","pid":1,"tid":2,"ts":0,"dur":7}]})");
  ASSERT_EQ(t.slices.size(), 5u);
  auto find = [&](std::string_view n) {
    for (size_t i = 0; i < t.slices.size(); ++i)
      if (t.str(t.slices.name[i]) == n) return static_cast<int>(i);
    return -1;
  };
  int parent = find("parent"), c1 = find("child1"), c2 = find("child2"), g = find("grandchild");
  EXPECT_EQ(t.slices.parent[c1], parent);
  EXPECT_EQ(t.slices.parent[c2], parent);
  EXPECT_EQ(t.slices.parent[g], c1);
  EXPECT_EQ(t.slices.depth[g], 2);
  EXPECT_EQ(t.slices.self[parent], 50000);  // 100 us - 30 - 20
  EXPECT_EQ(t.slices.self[c1], 25000);
  EXPECT_EQ(t.slices.parent[find("other_thread")], -1);
  EXPECT_EQ(t.span_ns(), 100000);
}

TEST(Import, BeginEndPairsAndUnfinished) {
  Trace t = parse(R"([
    {"ph":"B","name":"outer","pid":1,"tid":1,"ts":1,"args":{"a":1}},
    {"ph":"B","name":"inner","pid":1,"tid":1,"ts":2},
    {"ph":"E","pid":1,"tid":1,"ts":3,"args":{"b":2}},
    {"ph":"E","pid":1,"tid":1,"ts":10},
    {"ph":"E","pid":1,"tid":1,"ts":11},
    {"ph":"B","name":"open","pid":1,"tid":1,"ts":12}])");
  ASSERT_EQ(t.slices.size(), 3u);
  EXPECT_EQ(t.meta.skipped_events, 1u);  // the E without a B
  for (size_t i = 0; i < t.slices.size(); ++i) {
    std::string_view n = t.str(t.slices.name[i]);
    if (n == "inner") {
      EXPECT_EQ(t.slices.dur[i], 1000);
      ASSERT_NE(t.slice_arg(i, "b"), nullptr);
    }
    if (n == "outer") {
      EXPECT_EQ(t.slices.dur[i], 9000);
      EXPECT_EQ(t.slice_arg(i, "a")->as_int().value(), 1);
    }
    if (n == "open") {
      EXPECT_NE(t.slice_arg(i, "unfinished"), nullptr);
    }
  }
}

TEST(Import, ArgsKeepTypesAndUnknownKeys) {
  Trace t = parse(R"({"traceEvents":[{"ph":"X","name":"op","pid":1,"tid":1,"ts":1,"dur":2,
    "tts":77,"sf":5,"args":{"i":-3,"u":10159970886766084423,"d":1.5,"s":"x","b":true,"n":null,
    "dims":[[32,64],[64]],"obj":{"k":1},"huge":123456789012345678901234567890}}]})");
  ASSERT_EQ(t.slices.size(), 1u);
  EXPECT_EQ(t.slice_arg(0, "i")->as_int().value(), -3);
  EXPECT_EQ(t.slice_arg(0, "u")->type, ArgType::kUInt);
  EXPECT_EQ(t.slice_arg(0, "u")->u, 10159970886766084423ull);
  EXPECT_DOUBLE_EQ(t.slice_arg(0, "d")->d, 1.5);
  EXPECT_EQ(t.str(t.slice_arg(0, "s")->s), "x");
  EXPECT_TRUE(t.slice_arg(0, "b")->b);
  EXPECT_EQ(t.slice_arg(0, "n")->type, ArgType::kNull);
  EXPECT_EQ(t.str(t.slice_arg(0, "dims")->s), "[[32,64],[64]]");
  EXPECT_EQ(t.str(t.slice_arg(0, "obj")->s), "{\"k\":1}");
  EXPECT_EQ(t.slice_arg(0, "huge")->type, ArgType::kJson);
  ASSERT_NE(t.slice_arg(0, "@sf"), nullptr);  // unknown event keys are kept
  EXPECT_EQ(t.slice_arg(0, "@sf")->as_int().value(), 5);
  EXPECT_EQ(t.slice_arg(0, "@tts"), nullptr);  // thread time is a column
  EXPECT_EQ(t.slices.thread_ts[0], 77000);
}

TEST(Import, FlowsBindLaunchToKernelInEitherOrder) {
  Trace t = parse(R"({"schemaVersion":1,"traceEvents":[
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":10,"tid":10,"ts":100,"dur":5,"args":{"correlation":7}},
    {"ph":"f","id":7,"pid":0,"tid":7,"ts":120,"cat":"ac2g","name":"ac2g","bp":"e"},
    {"ph":"s","id":7,"pid":10,"tid":10,"ts":100,"cat":"ac2g","name":"ac2g"},
    {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":120,"dur":50,"args":{"correlation":7,"stream":7,"device":0}}]})");
  ASSERT_EQ(t.flows.size(), 1u);
  int32_t src = t.flows.src_slice[0], dst = t.flows.dst_slice[0];
  ASSERT_GE(src, 0);
  ASSERT_GE(dst, 0);
  EXPECT_EQ(t.str(t.slices.name[src]), "cudaLaunchKernel");
  EXPECT_EQ(t.str(t.slices.name[dst]), "gemm");
  EXPECT_TRUE(t.is_gpu_track(t.slices.track[dst]));
  EXPECT_EQ(t.tracks[t.slices.track[dst]].stream, 7);
  EXPECT_FALSE(t.is_gpu_track(t.slices.track[src]));
  EXPECT_EQ(t.meta.format, "kineto");
}

TEST(Import, MetadataCountersAndMemory) {
  Trace t = parse(
      R"({"distributedInfo":{"rank":3,"world_size":8},"baseTimeNanoseconds":1700000000000000000,
    "deviceProperties":[{"id":0,"name":"NVIDIA H100","numSms":132,"totalGlobalMem":85000000000}],
    "traceEvents":[
    {"ph":"M","name":"process_name","pid":5,"tid":0,"args":{"name":"python"}},
    {"ph":"M","name":"thread_name","pid":5,"tid":9,"args":{"name":"main"}},
    {"ph":"C","name":"util","pid":5,"ts":1,"args":{"value":0.5}},
    {"ph":"C","name":"mem","pid":5,"ts":2,"args":{"used":10,"free":20}},
    {"ph":"i","name":"[memory]","pid":5,"tid":9,"ts":3,"s":"t","cat":"cpu_instant_event",
     "args":{"Device Type":1,"Device Id":0,"Addr":4096,"Bytes":512,"Total Allocated":1024,"Total Reserved":2048}},
    {"ph":"i","name":"marker","pid":5,"tid":9,"ts":4,"s":"p"}]})");
  EXPECT_EQ(t.meta.rank, 3);
  EXPECT_EQ(t.meta.world_size, 8);
  EXPECT_EQ(t.meta.base_time_ns, 1700000000000000000);
  ASSERT_EQ(t.meta.devices.size(), 1u);
  EXPECT_EQ(t.meta.devices[0].num_sms, 132);
  EXPECT_EQ(t.str(t.processes[0].name), "python");
  EXPECT_EQ(t.counter_series.size(), 3u);  // util, "mem used", "mem free"
  EXPECT_EQ(t.counters.size(), 3u);
  ASSERT_EQ(t.memory.size(), 1u);
  EXPECT_EQ(t.memory.bytes[0], 512);
  EXPECT_EQ(t.memory.addr[0], 4096u);
  EXPECT_EQ(t.memory.total_reserved[0], 2048);
  EXPECT_EQ(t.memory.device_type[0], static_cast<int8_t>(DeviceType::kCuda));
  ASSERT_EQ(t.instants.size(), 1u);
  EXPECT_EQ(t.instants.scope[0], 'p');
}

TEST(Import, ReadsEveryRealTraceFormat) {
  for (const char* f : {"tiny_linear.json", "mlp_bs64.json.gz", "a_mlp_b32_w64.kineto.json.gz"}) {
    auto r = load_trace(data(f));
    ASSERT_TRUE(r.is_ok()) << f << ": " << r.error();
    EXPECT_GT(r->event_count(), 0u) << f;
  }
  auto legacy = load_trace(data("tiny_linear.json"));
  EXPECT_EQ(legacy->meta.format, "pytorch-legacy");
  EXPECT_EQ(legacy->slices.size(), 176u);
}

TEST(Import, ReadsEveryKinetoGpuTraceFormat) {
  for (const char* rel :
       {kSimpleAdd, kOldFormat, kMemoryTimeline,
        "traces/kineto-gpu/large_integer_trace/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz",
        "traces/kineto-gpu/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
        "traces/kineto-gpu/with_gpu_user_annotation/step_based_trace_2543932.json.gz"}) {
    MLPROF_SHARED_OR_SKIP(path, rel);
    auto r = load_trace(path);
    ASSERT_TRUE(r.is_ok()) << path << ": " << r.error();
    EXPECT_GT(r->event_count(), 0u) << path;
  }
  MLPROF_SHARED_OR_SKIP(old_path, kOldFormat);
  auto old = load_trace(old_path);
  size_t gpu = 0;
  for (size_t i = 0; i < old->slices.size(); ++i) gpu += old->is_gpu_track(old->slices.track[i]);
  EXPECT_EQ(gpu, 4u);  // old "Kernel" category events sit on GPU streams
  MLPROF_SHARED_OR_SKIP(mt_path, kMemoryTimeline);
  auto mt = load_trace(mt_path);
  EXPECT_EQ(mt->meta.format, "pytorch-memory-timeline");
  EXPECT_EQ(mt->memory.size(), 16845u);
}

TEST(Import, ExportRoundTripKeepsTables) {
  std::vector<std::string> files = {data("a_mlp_b32_w64.kineto.json.gz"), data("tiny_linear.json")};
  std::optional<std::string> gpu_trace = test::shared_path(kSimpleAdd);
  if (gpu_trace) files.push_back(*gpu_trace);
  for (const std::string& f : files) {
    auto a = load_trace(f);
    ASSERT_TRUE(a.is_ok()) << a.error();
    std::ostringstream out;
    write_chrome_json(*a, out);
    auto b = import_chrome_json_buffer(out.str(), "roundtrip.json");
    ASSERT_TRUE(b.is_ok()) << f << ": " << b.error();
    EXPECT_EQ(a->slices.size(), b->slices.size()) << f;
    EXPECT_EQ(a->slices.ts, b->slices.ts) << f;
    EXPECT_EQ(a->slices.dur, b->slices.dur) << f;
    EXPECT_EQ(a->slices.self, b->slices.self) << f;
    EXPECT_EQ(a->slices.depth, b->slices.depth) << f;
    for (size_t i = 0; i < a->slices.size(); ++i) {
      ASSERT_EQ(a->str(a->slices.name[i]), b->str(b->slices.name[i])) << f;
      ASSERT_EQ(a->slices.args_count[i], b->slices.args_count[i]) << f << " slice " << i;
    }
    EXPECT_EQ(a->instants.size(), b->instants.size()) << f;
    EXPECT_EQ(a->flows.size(), b->flows.size()) << f;
    EXPECT_EQ(a->flows.dst_slice, b->flows.dst_slice) << f;
    EXPECT_EQ(a->memory.bytes, b->memory.bytes) << f;
    EXPECT_EQ(a->memory.total_allocated, b->memory.total_allocated) << f;
    EXPECT_EQ(a->counters.value, b->counters.value) << f;
    EXPECT_EQ(a->meta.rank, b->meta.rank) << f;
    EXPECT_EQ(a->meta.devices.size(), b->meta.devices.size()) << f;
    EXPECT_EQ(a->tracks.size(), b->tracks.size()) << f;
  }
  if (!gpu_trace) GTEST_SKIP() << test::missing_shared(kSimpleAdd);
}

TEST(ImportErrors, OneLineMessagesWithFileAndOffset) {
  // What is not a trace at all is an error; what holds readable events is recovered
  // (import_recovery_test.cpp).
  EXPECT_NE(error_of(R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2)")
                .find("bad.json: byte"),
            std::string::npos);
  EXPECT_NE(error_of("").find("empty"), std::string::npos);
  EXPECT_NE(error_of("   \n").find("bad.json"), std::string::npos);
  EXPECT_NE(error_of(R"({"rows":[1,2,3]})").find("not a trace"), std::string::npos);
  EXPECT_NE(error_of(R"({"traceEvents":{}})").find("must be an array"), std::string::npos);
  EXPECT_NE(
      error_of(R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"dur":2}]})").find("\"ts\""),
      std::string::npos);
  EXPECT_NE(error_of(R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":{},"dur":2}]})")
                .find("expected a number"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"traceEvents":[{"ph":"X","name":7,"pid":1,"tid":1,"ts":1,"dur":2}]})")
                .find("\"name\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"traceEvents":[{"ph":"X","name":"a","pid":[],"tid":1,"ts":1,"dur":2}]})")
                .find("\"pid\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"traceEvents":[1,2]})").find("event object"), std::string::npos);
  EXPECT_NE(error_of(R"({"traceEvents":[{"ph":"X",,}]})").find("invalid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"traceEvents":[]} trailing)").find("after the end"), std::string::npos);
  EXPECT_NE(error_of("\x01\x02garbage").find("expected '{' or '['"), std::string::npos);
  for (const std::string& e : {error_of("{"), error_of("[{\"ph\":\"X\"")})
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

TEST(ImportErrors, FilesystemAndGzip) {
  auto missing = load_trace("/nonexistent/trace.json");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.error().find("/nonexistent/trace.json: cannot open"), std::string::npos);
  auto dir = load_trace("/tmp");
  ASSERT_FALSE(dir.is_ok());
  EXPECT_NE(dir.error().find("directory"), std::string::npos);

  // A real gzip trace cut in half, and one with flipped bytes in the middle.
  std::ifstream in(data("mlp_bs64.json.gz"), std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Cut: the events inflated before the cut are kept, the cut is a warning.
  std::string cut = temp_file(gz.substr(0, gz.size() / 2), "_cut.json.gz");
  auto r1 = load_trace(cut);
  ASSERT_TRUE(r1.is_ok()) << r1.error();
  EXPECT_GT(r1->slices.size(), 0u);
  EXPECT_EQ(r1->meta.import_stats.count(ImportProblem::kTruncated), 1u);
  EXPECT_NE(r1->meta.import_stats[ImportProblem::kTruncated].first_what.find("truncated gzip"),
            std::string::npos);
  ImportOptions strict;
  strict.strict = true;
  auto r1s = load_trace(cut, strict);
  ASSERT_FALSE(r1s.is_ok());
  EXPECT_NE(r1s.error().find("truncated gzip"), std::string::npos) << r1s.error();
  std::string corrupt = gz;
  for (size_t i = gz.size() / 3; i < gz.size() / 3 + 64; ++i)
    corrupt[i] = static_cast<char>(~corrupt[i]);
  std::string bad = temp_file(corrupt, "_corrupt.json.gz");
  auto r2 = load_trace(bad, strict);
  ASSERT_FALSE(r2.is_ok());
  EXPECT_NE(r2.error().find(bad), std::string::npos) << r2.error();
  std::string empty = temp_file("", "_empty.json");
  auto r3 = load_trace(empty);
  ASSERT_FALSE(r3.is_ok());
  EXPECT_NE(r3.error().find("empty file"), std::string::npos);
  std::remove(cut.c_str());
  std::remove(bad.c_str());
  std::remove(empty.c_str());
}

TEST(ImportErrors, HugeValueIsRejectedNotBuffered) {
  // A single 3 MiB string inside one event: larger than a chunk, so the buffer grows; parsing
  // must still succeed. (The 1 GiB limit itself is exercised by the fuzz corpus.)
  std::string big(3 << 20, 'x');
  Trace t = parse(R"({"traceEvents":[{"ph":"X","name":")" + big +
                  R"(","pid":1,"tid":1,"ts":1,"dur":2}]})");
  ASSERT_EQ(t.slices.size(), 1u);
  EXPECT_EQ(t.str(t.slices.name[0]).size(), big.size());
}

}  // namespace
}  // namespace mlprof
