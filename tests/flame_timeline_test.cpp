// Flame graph and timeline analyses on small hand-built traces whose answers are worked out by
// hand in the comments.
#include <gtest/gtest.h>
#include <zlib.h>

#include "mlprof/analyze/flame.h"
#include "mlprof/analyze/timeline.h"
#include "render/flame_render.h"
#include "render/timeline_render.h"
#include "render/web_page.h"

namespace mlprof {
namespace {

const FlameFrame* find(const FlameGraph& g, const std::vector<std::string>& path) {
  int32_t cur = 0;
  for (const std::string& name : path) {
    int32_t next = -1;
    for (uint32_t c : g.frames[cur].children)
      if (g.frames[c].name == name) next = static_cast<int32_t>(c);
    if (next < 0) return nullptr;
    cur = next;
  }
  return &g.frames[cur];
}

// Thread 1: step [0,100) { fwd [10,50) { mm [20,30) }, fwd [60,90) { mm [65,70) } }
// Thread 2: step [0,40)
// GPU stream: kernel [25,45) launched from the first mm, kernel [200,210) launched by nobody.
Trace two_threads_and_gpu() {
  TraceBuilder b;
  uint32_t p = b.process(1);
  uint32_t t1 = b.thread_track(p, 1), t2 = b.thread_track(p, 2);
  uint32_t gp = b.process(0);
  uint32_t s = b.thread_track(gp, 7);
  b.mark_gpu_track(s, 0, 7);
  StringId step = b.intern("step"), fwd = b.intern("fwd"), mm = b.intern("mm"),
           k = b.intern("gemm");
  StringId cat = b.intern("cpu_op"), kcat = b.intern("kernel");
  b.add_slice(t1, 0, 100, step, cat);
  b.add_slice(t1, 10, 40, fwd, cat);
  b.add_slice(t1, 20, 10, mm, cat);
  b.add_slice(t1, 60, 30, fwd, cat);
  b.add_slice(t1, 65, 5, mm, cat);
  b.add_slice(t2, 0, 40, step, cat);
  b.add_slice(s, 25, 20, k, kcat);
  b.add_slice(s, 200, 10, k, kcat);
  b.add_flow(1, b.intern("ac2g"), t1, 21, s, 25);
  return std::move(b).finish();
}

TEST(Flame, MergesByPathPerThreadWithSelfTime) {
  Trace t = two_threads_and_gpu();
  FlameGraph g = build_flame_graph(t, FlameOptions{.include_gpu = false, .split_threads = false});
  const FlameFrame* step = find(g, {"CPU", "step"});
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->total_ns, 140);  // 100 + 40
  EXPECT_EQ(step->self_ns, 70);    // (100 - 40 - 30) + 40
  EXPECT_EQ(step->count, 2u);
  const FlameFrame* fwd = find(g, {"CPU", "step", "fwd"});
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(fwd->total_ns, 70);
  EXPECT_EQ(fwd->self_ns, 55);  // (40 - 10) + (30 - 5)
  const FlameFrame* mm = find(g, {"CPU", "step", "fwd", "mm"});
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->total_ns, 15);
  EXPECT_EQ(g.cpu_ns, 140);
  EXPECT_EQ(g.gpu_ns, 0);
  EXPECT_EQ(find(g, {"GPU"}), nullptr);
  EXPECT_EQ(render_flame_collapsed(g), "CPU;step 70\nCPU;step;fwd 55\nCPU;step;fwd;mm 15\n");
}

TEST(Flame, KernelsSitUnderTheirLaunchingOpInTheGpuSubtree) {
  Trace t = two_threads_and_gpu();
  FlameGraph g = build_flame_graph(t, FlameOptions{.include_gpu = true, .split_threads = false});
  EXPECT_EQ(g.gpu_ns, 30);
  const FlameFrame* launched = find(g, {"GPU", "step", "fwd", "mm", "gemm"});
  ASSERT_NE(launched, nullptr);
  EXPECT_EQ(launched->total_ns, 20);
  EXPECT_EQ(launched->self_ns, 20);
  const FlameFrame* copy_of_mm = find(g, {"GPU", "step", "fwd", "mm"});
  EXPECT_EQ(copy_of_mm->total_ns, 20);
  EXPECT_EQ(copy_of_mm->self_ns, 0);
  const FlameFrame* stray = find(g, {"GPU", t.track_label(2), "gemm"});
  ASSERT_NE(stray, nullptr);
  EXPECT_EQ(stray->total_ns, 10);
  EXPECT_EQ(g.frames[0].total_ns, 170);  // 140 CPU + 30 GPU
  // The CPU subtree is unchanged by the GPU one.
  EXPECT_EQ(find(g, {"CPU", "step"})->total_ns, 140);
}

TEST(Flame, SplitThreadsAddsAThreadLevel) {
  Trace t = two_threads_and_gpu();
  FlameGraph g = build_flame_graph(t);
  const FlameFrame* s1 = find(g, {"CPU", t.track_label(0), "step"});
  const FlameFrame* s2 = find(g, {"CPU", t.track_label(1), "step"});
  ASSERT_NE(s1, nullptr);
  ASSERT_NE(s2, nullptr);
  EXPECT_EQ(s1->total_ns, 100);
  EXPECT_EQ(s2->total_ns, 40);
  for (const FlameFrame& f : g.frames) {  // children are sorted heaviest first
    for (size_t i = 1; i < f.children.size(); ++i)
      EXPECT_GE(g.frames[f.children[i - 1]].total_ns, g.frames[f.children[i]].total_ns);
  }
}

TEST(Flame, SpeedscopeEventsLayOutSelfTimeInIntegerNanoseconds) {
  Trace t = two_threads_and_gpu();
  FlameGraph g = build_flame_graph(t, FlameOptions{.include_gpu = false, .split_threads = false});
  std::string s = render_flame_speedscope(g, "x");
  EXPECT_NE(s.find("\"type\":\"evented\""), std::string::npos);
  EXPECT_NE(s.find("\"endValue\":140"), std::string::npos) << s;
  // Frame 0 is "CPU" (the root "all" is not a frame of the profile); step's self time is 70,
  // fwd's 55, mm's 15: each frame closes after its children and its own self time.
  EXPECT_NE(s.find("\"events\":[{\"type\":\"O\",\"frame\":0,\"at\":0},"
                   "{\"type\":\"O\",\"frame\":1,\"at\":0},{\"type\":\"O\",\"frame\":2,\"at\":0},"
                   "{\"type\":\"O\",\"frame\":3,\"at\":0},{\"type\":\"C\",\"frame\":3,\"at\":15},"
                   "{\"type\":\"C\",\"frame\":2,\"at\":70},{\"type\":\"C\",\"frame\":1,\"at\":140},"
                   "{\"type\":\"C\",\"frame\":0,\"at\":140}]"),
            std::string::npos)
      << s;
}

TEST(Flame, CollapsedStacksFoldFramesBelowTheDepthLimit) {
  Trace t = two_threads_and_gpu();
  FlameGraph g = build_flame_graph(t, FlameOptions{.include_gpu = false, .split_threads = false});
  // CPU (depth 1) > step (2) > fwd (3) > mm (4): at a limit of 2, fwd and mm fold into one line.
  EXPECT_EQ(render_flame_collapsed(g, 2), "CPU;step 70\nCPU;step;[frames below depth 2] 70\n");
  EXPECT_EQ(render_flame_collapsed(g, 0), render_flame_collapsed(g, 4));
}

TEST(Flame, EmptyTraceHasOnlyTheRoot) {
  TraceBuilder b;
  Trace t = std::move(b).finish();
  FlameGraph g = build_flame_graph(t);
  ASSERT_EQ(g.frames.size(), 1u);
  EXPECT_EQ(render_flame_collapsed(g), "");
}

TEST(Timeline, LanesBusyTimeAndOverlap) {
  Trace t = two_threads_and_gpu();
  TimelineResult r = analyze_timeline(t);
  ASSERT_EQ(r.lanes.size(), 3u);
  EXPECT_FALSE(r.lanes[0].gpu);
  EXPECT_FALSE(r.lanes[1].gpu);
  EXPECT_TRUE(r.lanes[2].gpu);
  EXPECT_EQ(r.lanes[0].max_depth, 3u);
  EXPECT_EQ(r.lanes[0].busy_ns, 100);
  EXPECT_EQ(r.cpu_busy_ns, 100);  // [0,100) ∪ [0,40)
  EXPECT_EQ(r.gpu_busy_ns, 30);   // [25,45) + [200,210)
  EXPECT_EQ(r.overlap_ns, 20);    // [25,45) lies inside CPU work
  EXPECT_EQ(r.gpu_span_ns, 185);  // 25 .. 210
  EXPECT_EQ(r.gpu_idle_ns, 155);
  EXPECT_DOUBLE_EQ(r.gpu_busy_overlapped_pct, 100.0 * 20 / 30);
  EXPECT_EQ(r.slices, 8u);
  EXPECT_EQ(r.flows, 1u);
}

TEST(Timeline, CountersAreThinnedKeepingExtremes) {
  TraceBuilder b;
  uint32_t p = b.process(1);
  uint32_t series = b.counter_series(p, b.intern("util"));
  for (int i = 0; i < 10000; ++i) b.add_counter(series, i * 10, i == 5000 ? 99.0 : 1.0);
  Trace t = std::move(b).finish();
  TimelineOptions o;
  o.max_counter_points = 100;
  TimelineResult r = analyze_timeline(t, o);
  ASSERT_EQ(r.counters.size(), 1u);
  EXPECT_EQ(r.counters[0].samples, 10000u);
  EXPECT_LE(r.counters[0].values.size(), 100u);
  EXPECT_DOUBLE_EQ(r.counters[0].max, 99.0);
  EXPECT_NE(std::find(r.counters[0].values.begin(), r.counters[0].values.end(), 99.0),
            r.counters[0].values.end());
}

// Decodes the events encoding back (an independent reader of the documented format).
struct Reader {
  std::string buf;
  size_t p = 0;
  uint64_t u() {
    uint64_t x = 0;
    for (int shift = 0;; shift += 7) {
      uint8_t b = static_cast<uint8_t>(buf[p++]);
      x |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return x;
    }
  }
  int64_t z() {
    uint64_t v = u();
    return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
  }
};

std::string gunzip(const std::string& in) {
  z_stream zs{};
  inflateInit2(&zs, 15 + 16);
  std::string out(1 << 20, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  inflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  inflateEnd(&zs);
  return out;
}

TEST(Timeline, EventEncodingRoundTrips) {
  Trace t = two_threads_and_gpu();
  TimelineResult r = analyze_timeline(t);
  Reader rd{gunzip(encode_timeline_events(t, r).value())};
  ASSERT_EQ(rd.buf.substr(0, 4), "MLTL");
  rd.p = 4;
  EXPECT_EQ(rd.u(), 3u);
  EXPECT_EQ(rd.z(), 0);  // begin_ns
  std::vector<std::string> strings(rd.u());
  for (std::string& s : strings) {
    size_t n = rd.u();
    s = rd.buf.substr(rd.p, n);
    rd.p += n;
  }
  ASSERT_EQ(rd.u(), 3u);
  // Lane 0: thread 1, five slices.
  EXPECT_EQ(strings[rd.u()], r.lanes[0].name);
  EXPECT_EQ(rd.buf[rd.p++], 0);
  ASSERT_EQ(rd.u(), 5u);
  EXPECT_EQ(rd.u(), 3u);
  std::vector<int64_t> ts;
  int64_t prev = 0;
  for (int i = 0; i < 5; ++i) ts.push_back(prev += rd.z());
  EXPECT_EQ(ts, (std::vector<int64_t>{0, 10, 20, 60, 65}));
  std::vector<uint64_t> dur, depth;
  for (int i = 0; i < 5; ++i) dur.push_back(rd.u());
  EXPECT_EQ(dur, (std::vector<uint64_t>{100, 40, 10, 30, 5}));
  std::vector<std::string> names;
  for (int i = 0; i < 5; ++i) names.push_back(strings[rd.u()]);
  EXPECT_EQ(names, (std::vector<std::string>{"step", "fwd", "mm", "fwd", "mm"}));
  for (int i = 0; i < 5; ++i) depth.push_back(rd.u());
  EXPECT_EQ(depth, (std::vector<uint64_t>{0, 1, 2, 1, 2}));
  std::vector<std::vector<int64_t>> starts{ts};
  for (int lane = 1; lane < 3; ++lane) {  // the other lanes: their starts, for the flows
    rd.u();
    rd.p++;
    size_t n = rd.u();
    rd.u();
    starts.emplace_back();
    for (int64_t t = 0; starts.back().size() < n;) starts.back().push_back(t += rd.z());
    for (size_t i = 0; i < 3 * n; ++i) rd.u();
  }
  // Version 2's flows, in columns: per side its lane, the index of the last slice starting at or
  // before the end (a delta), and the offset from that start.
  ASSERT_EQ(rd.u(), 1u);
  uint64_t src_lane = rd.u();
  int64_t src_index = rd.z(), src_offset = rd.z();
  uint64_t dst_lane = rd.u();
  int64_t dst_index = rd.z(), dst_offset = rd.z();
  ASSERT_LT(src_lane, 3u);
  ASSERT_LT(dst_lane, 3u);
  EXPECT_EQ(r.lanes[src_lane].gpu, false);
  EXPECT_EQ(r.lanes[dst_lane].gpu, true);
  EXPECT_EQ(starts[src_lane][src_index] + src_offset, 21);
  EXPECT_EQ(starts[dst_lane][dst_index] + dst_offset, 25);
  // Version 3's args: none here (no strings, sets or id keys; every slice's set is 0).
  EXPECT_EQ(rd.u(), 0u);
  EXPECT_EQ(rd.u(), 0u);
  EXPECT_EQ(rd.u(), 0u);
  for (size_t lane = 0; lane < 3; ++lane) {
    EXPECT_EQ(rd.u(), starts[lane].size() + 1);  // the block's bytes
    for (size_t i = 0; i < starts[lane].size(); ++i) EXPECT_EQ(rd.u(), 0u);
    EXPECT_EQ(rd.u(), 0u);  // id columns
  }
  EXPECT_EQ(rd.p, rd.buf.size());
}

// Two kernels whose µs-rounded times overlap by 400 ns share one row (depth 0 both), and each
// slice's args come back: shared sets by value, ids (correlation) as per-slice columns.
TEST(Timeline, EventEncodingArgsAndRoundingOverlap) {
  TraceBuilder b;
  uint32_t gp = b.process(0);
  uint32_t s = b.thread_track(gp, 7);
  b.mark_gpu_track(s, 0, 7);
  StringId k = b.intern("gemm"), kcat = b.intern("kernel");
  StringId grid = b.intern("grid"), corr = b.intern("correlation"), ann = b.intern("annotation");
  uint32_t m = b.args_mark();
  b.arg_json(grid, "[1, 2, 3]");
  b.arg_int(corr, 7);
  b.add_slice(s, 1000, 1400, k, kcat, b.args_since(m));
  m = b.args_mark();
  b.arg_json(grid, "[1, 2, 3]");
  b.arg_int(corr, 9);
  b.add_slice(s, 2000, 500, k, kcat, b.args_since(m));
  b.add_slice(s, 3000, 1000, ann, kcat);  // an annotation holding a kernel: a real second row
  b.add_slice(s, 3100, 100, k, kcat);
  Trace t = std::move(b).finish();
  ASSERT_EQ(t.slices.depth[1], 1);  // the trace's nesting sees the overlap
  TimelineResult r = analyze_timeline(t);
  Reader rd{gunzip(encode_timeline_events(t, r).value())};
  rd.p = 4;
  ASSERT_EQ(rd.u(), 3u);
  rd.z();
  std::vector<std::string> strings(rd.u());
  for (std::string& str : strings) {
    size_t n = rd.u();
    str = rd.buf.substr(rd.p, n);
    rd.p += n;
  }
  ASSERT_EQ(rd.u(), 1u);
  rd.u();
  rd.p++;
  ASSERT_EQ(rd.u(), 4u);
  EXPECT_EQ(rd.u(), 2u);  // rows: the annotation's kernel, not the rounding overlap
  for (int i = 0; i < 4 * 3; ++i) rd.u();  // ts, dur, name
  std::vector<uint64_t> depth;
  for (int i = 0; i < 4; ++i) depth.push_back(rd.u());
  EXPECT_EQ(depth, (std::vector<uint64_t>{0, 0, 0, 1}));
  EXPECT_EQ(rd.u(), 0u);  // flows
  std::vector<std::string> args(rd.u());
  for (std::string& str : args) {
    size_t n = rd.u();
    str = rd.buf.substr(rd.p, n);
    rd.p += n;
  }
  ASSERT_EQ(rd.u(), 1u);  // one distinct set: grid [1, 2, 3]
  ASSERT_EQ(rd.u(), 1u);
  EXPECT_EQ(args[rd.u()], "grid");
  EXPECT_EQ(args[rd.u()], "[1, 2, 3]");
  ASSERT_EQ(rd.u(), 1u);  // id keys
  EXPECT_EQ(args[rd.u()], "correlation");
  size_t block = rd.u();
  size_t block_end = rd.p + block;
  std::vector<uint64_t> sets;
  for (int i = 0; i < 4; ++i) sets.push_back(rd.u());
  EXPECT_EQ(sets, (std::vector<uint64_t>{1, 1, 0, 0}));
  ASSERT_EQ(rd.u(), 1u);  // id columns used by the lane
  EXPECT_EQ(rd.u(), 0u);  // the first id key's
  std::vector<int64_t> ids;
  int64_t prev = 0;
  for (int i = 0; i < 4; ++i) {
    uint64_t v = rd.u();
    if (v == 0) {
      ids.push_back(-1);
      continue;
    }
    v -= 1;
    prev += static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
    ids.push_back(prev);
  }
  EXPECT_EQ(ids, (std::vector<int64_t>{7, 9, -1, -1}));
  EXPECT_EQ(rd.p, block_end);
  EXPECT_EQ(rd.p, rd.buf.size());
}

TEST(WebPage, ScriptTextCannotCloseTheScriptElement) {
  EXPECT_EQ(script_safe("{\"a\":\"</script><!--\"}"), "{\"a\":\"<\\/script><\\!--\"}");
  std::string page = render_web_page(WebPage{"report", "t", "{\"x\":\"</script>\"}", ""});
  EXPECT_EQ(page.find("</script>\"}"), std::string::npos);
  EXPECT_NE(page.find("<script id=\"mlprof-data\""), std::string::npos);
  EXPECT_GT(web_bundle_js().size(), 10000u);
  EXPECT_EQ(base64_encode("ab"), "YWI=");
  EXPECT_EQ(base64_encode("abc"), "YWJj");
  EXPECT_EQ(base64_encode("a"), "YQ==");
}

}  // namespace
}  // namespace mlprof
