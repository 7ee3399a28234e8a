// The .mlprof file: every Trace table round-trips; truncated, bit-flipped and structurally
// hostile files are errors naming the file, never crashes (run under ASan+UBSan too).
#include <gtest/gtest.h>
#include <unistd.h>
#include <zstd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "mlprof/chrome_export.h"
#include "mlprof/import.h"
#include "mlprof/mlprof.h"
#include "mlprof/native_format.h"
#include "trace/formats/native_layout.h"
#include "trace_equality.h"

namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/recorder_native_" + std::to_string(::getpid()) + "_" + name;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A trace with something in every table.
mlprof::Trace sample_trace() {
  using namespace mlprof;
  TraceBuilder b;
  uint32_t p = b.process(42);
  b.trace().processes[p].name = b.intern("python");
  b.trace().processes[p].labels.emplace_back(b.intern("label"), b.intern("train"));
  uint32_t gpu = b.process_labeled("GPU functions");
  uint32_t t0 = b.thread_track(p, 7);
  b.trace().tracks[t0].name = b.intern("main");
  uint32_t t1 = b.thread_track_labeled(p, "loader");
  uint32_t g = b.thread_track(gpu, 3);
  b.mark_gpu_track(g, 0, 3);
  uint32_t a = b.async_track(p, b.intern("async"), 99);

  uint32_t mark = b.args_mark();
  b.arg_int(b.intern("int"), -5);
  b.arg_uint(b.intern("uint"), 18446744073709551615ull);
  b.arg_double(b.intern("double"), 2.5);
  b.arg_bool(b.intern("bool"), true);
  b.arg_string(b.intern("string"), b.intern("hello"));
  b.arg_json(b.intern("json"), "[1,2,{\"a\":3}]");
  b.arg_null(b.intern("null"));
  ArgRange args = b.args_since(mark);
  b.add_slice(t0, 1000, 500, b.intern("forward"), b.intern("cpu_op"), args);
  b.add_slice(t0, 1100, 100, b.intern("aten::mm"), b.intern("cpu_op"));
  b.add_slice(t1, 900, 50, b.intern("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"),
              b.intern("user_annotation"));
  b.add_slice(g, 1150, 300, b.intern("sgemm_kernel"), b.intern("kernel"));
  b.add_slice(a, 1000, 2000, b.intern("async_range"), b.intern("async"));
  uint32_t mark2 = b.args_mark();
  b.arg_int(b.intern("Device Type"), 0);
  b.add_instant(t0, 1200, b.intern("[memory]"), b.intern("cpu_instant_event"), b.args_since(mark2),
                'p');
  b.add_counter(b.counter_series(p, b.intern("loss")), 1000, 0.31);
  b.add_counter(b.counter_series(p, b.intern("loss")), 2000, 0.25);
  b.trace().counter_series[0].unit = b.intern("nats");
  b.add_flow(17, b.intern("ac2g"), t0, 1150, g, 1160);
  uint32_t stack = b.add_stack({b.intern("malloc"), b.intern("at::empty"), b.intern("main")});
  b.add_memory(t0, 1120, 0xdeadbeef, 4096, DeviceType::kCuda, 1, 8192, 16384, stack);
  b.add_memory(t0, 1400, 0xdeadbeef, -4096, DeviceType::kCuda, 1);
  Trace& t = b.trace();
  t.meta.format = "kineto";
  t.meta.base_time_ns = 1700000000000000000;
  t.meta.rank = 3;
  t.meta.world_size = 8;
  t.meta.schema_version = 1;
  t.meta.display_time_unit = "ms";
  DeviceInfo d;
  d.id = 0;
  d.name = "NVIDIA A100";
  d.total_global_mem = 42949672960;
  d.compute_major = 8;
  d.num_sms = 108;
  d.shared_mem_per_sm = 167936;
  t.meta.devices.push_back(d);
  t.meta.extra.emplace_back("traceName", "\"x.json\"");
  t.meta.dropped_events = 12;
  t.meta.skipped_events = 3;
  return std::move(b).finish();
}

// Every table and column (tests/trace_equality.h); .mlprof files do not keep `labeled`.
void expect_same_trace(const mlprof::Trace& a, const mlprof::Trace& b) {
  mlprof::test::expect_same_trace(a, b, {.labeled = false});
}

TEST(recorder_native_format, EveryTableRoundTrips) {
  mlprof::Trace t = sample_trace();
  std::string path = temp_path("all.mlprof");
  ASSERT_TRUE(mlprof::save_native(t, path).is_ok());
  std::string bytes = read_file(path);
  ASSERT_EQ(bytes.substr(0, mlprof::kNativeMagic.size()), mlprof::kNativeMagic);
  mlprof::Result<mlprof::Trace> back = mlprof::load_native(path);
  ASSERT_TRUE(back.is_ok()) << back.error();
  expect_same_trace(t, *back);
  EXPECT_EQ(back->meta.source, path);
  // load_trace() recognizes the file by content, whatever its name.
  std::string renamed = temp_path("no_extension");
  std::rename(path.c_str(), renamed.c_str());
  mlprof::Result<mlprof::Trace> via_load = mlprof::load_trace(renamed);
  ASSERT_TRUE(via_load.is_ok()) << via_load.error();
  expect_same_trace(t, *via_load);
  std::remove(renamed.c_str());
}

TEST(recorder_native_format, RecordedSessionRoundTripsThroughNativeAndChromeJson) {
  mlprof::SessionOptions o;
  o.buffer_mb = 4;
  o.rss_interval_ms = 0;
  mlprof::Session s(o);
  ASSERT_TRUE(s.start().is_ok());
  for (int i = 0; i < 5; ++i) {
    MLPROF_STEP("train");
    {
      MLPROF_SCOPE_CAT("forward", "compute");
      mlprof::counter("loss", 1.0 / (i + 1));
    }
    mlprof::track_alloc(&o + i, 100 + i);
  }
  mlprof::Trace t = s.stop();
  ASSERT_EQ(t.slices.size(), 10u);

  std::string native = temp_path("session.mlprof");
  ASSERT_TRUE(mlprof::save_native(t, native).is_ok());
  auto back = mlprof::load_native(native);
  ASSERT_TRUE(back.is_ok()) << back.error();
  expect_same_trace(t, *back);
  std::remove(native.c_str());

  std::string json = temp_path("session.json");
  ASSERT_TRUE(mlprof::save_chrome_json(t, json).is_ok());
  auto from_json = mlprof::load_trace(json);
  ASSERT_TRUE(from_json.is_ok()) << from_json.error();
  const mlprof::Trace& j = *from_json;
  ASSERT_EQ(j.slices.size(), t.slices.size());
  for (size_t i = 0; i < t.slices.size(); ++i) {
    // Chrome JSON keeps ns as fractional microseconds: exact for these magnitudes to +-1 ns.
    EXPECT_EQ(j.str(j.slices.name[i]), t.str(t.slices.name[i]));
    EXPECT_NEAR(static_cast<double>(j.slices.ts[i]), static_cast<double>(t.slices.ts[i]), 1.0);
    EXPECT_NEAR(static_cast<double>(j.slices.dur[i]), static_cast<double>(t.slices.dur[i]), 2.0);
    EXPECT_EQ(j.slices.depth[i], t.slices.depth[i]);
  }
  EXPECT_EQ(j.counters.size(), t.counters.size());
  EXPECT_EQ(j.memory.size(), t.memory.size());
  std::remove(json.c_str());
}

TEST(recorder_native_format, TruncatedFilesAreErrorsNamingTheFile) {
  std::string path = temp_path("trunc.mlprof");
  ASSERT_TRUE(mlprof::save_native(sample_trace(), path).is_ok());
  std::string bytes = read_file(path);
  std::remove(path.c_str());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = mlprof::load_native_buffer(std::string_view(bytes).substr(0, n), "cut.mlprof");
    ASSERT_FALSE(r.is_ok()) << "prefix of " << n << " bytes loaded";
    EXPECT_EQ(r.error().rfind("cut.mlprof: ", 0), 0u) << r.error();
  }
  auto missing = mlprof::load_native(temp_path("does_not_exist.mlprof"));
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.error().find("does_not_exist.mlprof"), std::string::npos);
}

TEST(recorder_native_format, FlippedBytesNeverCrash) {
  std::string path = temp_path("flip.mlprof");
  mlprof::Trace original = sample_trace();
  ASSERT_TRUE(mlprof::save_native(original, path).is_ok());
  std::string bytes = read_file(path);
  std::remove(path.c_str());
  int loaded = 0;
  for (size_t pos = 0; pos < bytes.size(); ++pos) {
    for (int bit : {0, 3, 7}) {
      std::string bad = bytes;
      bad[pos] = static_cast<char>(bad[pos] ^ (1 << bit));
      auto r = mlprof::load_native_buffer(bad, "flip.mlprof");
      if (r.is_ok()) {
        // The reserved header field is unchecked, and some bits of zstd's entropy tables do
        // not change the output (the content checksum still matches): same trace.
        ++loaded;
        EXPECT_EQ(r->event_count(), original.event_count()) << pos;
        EXPECT_EQ(r->strings.size(), original.strings.size()) << pos;
      } else
        EXPECT_EQ(r.error().rfind("flip.mlprof: ", 0), 0u);
    }
  }
  EXPECT_LT(loaded, static_cast<int>(bytes.size()));
}

// Corrupt the payload itself and re-compress it with a valid checksum, so the structural
// validation (counts, indices, enum values) is what has to catch it.
TEST(recorder_native_format, HostilePayloadsAreRejectedByValidation) {
  std::string path = temp_path("hostile.mlprof");
  ASSERT_TRUE(mlprof::save_native(sample_trace(), path).is_ok());
  std::string bytes = read_file(path);
  std::remove(path.c_str());
  const size_t header = mlprof::native::kHeaderBytes;
  std::string payload(ZSTD_getFrameContentSize(bytes.data() + header, bytes.size() - header), '\0');
  ASSERT_EQ(
      ZSTD_decompress(payload.data(), payload.size(), bytes.data() + header, bytes.size() - header),
      payload.size());
  auto rebuild = [&](const std::string& p) {
    std::string out = bytes.substr(0, header);
    uint64_t size = p.size();
    std::memcpy(out.data() + 16, &size, 8);
    std::string z(ZSTD_compressBound(p.size()), '\0');
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    size_t n = ZSTD_compress2(c, z.data(), z.size(), p.data(), p.size());
    ZSTD_freeCCtx(c);
    z.resize(n);
    return out + z;
  };
  ASSERT_TRUE(mlprof::load_native_buffer(rebuild(payload), "same").is_ok());
  std::mt19937 rng(99);
  int rejected = 0;
  for (int iter = 0; iter < 1000; ++iter) {
    std::string p = payload;
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % p.size();
      switch (rng() % 3) {
        case 0:
          p[pos] = static_cast<char>(rng());
          break;
        case 1:
          p[pos] = static_cast<char>(0xff);
          break;
        default:
          p.resize(pos);
          break;
      }
      if (p.empty()) break;
    }
    auto r = mlprof::load_native_buffer(rebuild(p), "hostile.mlprof");
    if (!r.is_ok()) {
      ++rejected;
      EXPECT_EQ(r.error().rfind("hostile.mlprof: ", 0), 0u) << r.error();
    }
  }
  EXPECT_GT(rejected, 300);
}

TEST(recorder_native_format, WrongVersionAndGarbageAreClearErrors) {
  std::string path = temp_path("ver.mlprof");
  ASSERT_TRUE(mlprof::save_native(sample_trace(), path).is_ok());
  std::string bytes = read_file(path);
  std::remove(path.c_str());
  bytes[8] = 9;
  auto r = mlprof::load_native_buffer(bytes, "v9.mlprof");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.error().find("version 9"), std::string::npos) << r.error();
  auto g = mlprof::load_native_buffer("{\"traceEvents\": []}", "x.json");
  ASSERT_FALSE(g.is_ok());
  EXPECT_NE(g.error().find("not a .mlprof file"), std::string::npos) << g.error();
  auto h = mlprof::load_native_buffer(std::string(mlprof::kNativeMagic) + "1234", "short.mlprof");
  ASSERT_FALSE(h.is_ok());
  EXPECT_NE(h.error().find("truncated .mlprof file (the header is 12 of 24 bytes)"),
            std::string::npos)
      << h.error();
}

TEST(recorder_native_format, SaveIsAtomicAndReportsUnwritablePaths) {
  auto s = mlprof::save_native(sample_trace(), "/nonexistent-dir/x.mlprof");
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("/nonexistent-dir/x.mlprof"), std::string::npos);
}

}  // namespace

// The header's payload size must match what the frame inflates to, on both inflate paths:
// one shot (the frame states the declared size) and streamed (it does not, or the declared size
// is implausibly large for the compressed bytes).
TEST(recorder_native_format, DeclaredPayloadSizeIsChecked) {
  std::string path = temp_path("declared.mlprof");
  ASSERT_TRUE(mlprof::save_native(sample_trace(), path).is_ok());
  std::string bytes = read_file(path);
  std::remove(path.c_str());
  uint64_t declared;
  std::memcpy(&declared, bytes.data() + 16, 8);
  ASSERT_TRUE(mlprof::load_native_buffer(bytes, "ok.mlprof").is_ok());
  for (uint64_t lie : {declared - 1, declared + 1, declared * 1000}) {
    std::string bad = bytes;
    std::memcpy(bad.data() + 16, &lie, 8);
    auto r = mlprof::load_native_buffer(bad, "lie.mlprof");
    ASSERT_FALSE(r.is_ok()) << lie;
    EXPECT_EQ(r.error().rfind("lie.mlprof: ", 0), 0u) << r.error();
  }
}
