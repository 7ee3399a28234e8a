// The analysis stage: each result computed once, the dependencies the table declares are the ones
// used, parallel and one-by-one computation agree, unavailable analyses say why, and a rank set
// analyzes the straggler (else the slowest rank) in depth with the ranks result reaching the
// bottleneck rules.
#include "mlprof/analysis_set.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "mlprof/import.h"
#include "render/analysis_output.h"

namespace mlprof {
namespace {

// Two ProfilerSteps of host work; `scale` stretches every time (a slower rank), `gpu` adds a
// launch -> kernel pair on a GPU stream.
Trace make_trace(int64_t scale, bool gpu, int rank = 0) {
  auto us = [&](int64_t v) { return std::to_string(v * scale); };
  std::string j =
      R"({"distributedInfo": {"rank": )" + std::to_string(rank) + R"(}, "traceEvents": [)";
  j +=
      R"({"ph":"X","pid":1,"tid":1,"name":"ProfilerStep#1","cat":"user_annotation","ts":0,"dur":)" +
      us(100) + "},";
  j += R"({"ph":"X","pid":1,"tid":1,"name":"aten::mm","cat":"cpu_op","ts":10,"dur":)" + us(40) +
       R"(,"args":{"Input Dims":[[64,64],[64,64]],"Input type":["float","float"]}},)";
  j += R"({"ph":"X","pid":1,"tid":1,"name":"ProfilerStep#2","cat":"user_annotation","ts":)" +
       us(100) + R"(,"dur":)" + us(100) + "},";
  j += R"({"ph":"X","pid":1,"tid":1,"name":"aten::add","cat":"cpu_op","ts":)" + us(120) +
       R"(,"dur":)" + us(30) + "}";
  if (gpu) {
    j += R"(,{"ph":"X","pid":1,"tid":1,"name":"cudaLaunchKernel","cat":"cuda_runtime","ts":)" +
         us(20) + R"(,"dur":5,"args":{"correlation":7}})";
    j += R"(,{"ph":"X","pid":0,"tid":7,"name":"gemm_kernel","cat":"kernel","ts":)" + us(30) +
         R"(,"dur":)" + us(20) + R"(,"args":{"correlation":7,"stream":7,"device":0}})";
  }
  j += "]}";
  Result<Trace> t = import_chrome_json_buffer(j, "rank" + std::to_string(rank) + ".json");
  EXPECT_TRUE(t.is_ok()) << (t ? "" : t.error());
  t->meta.source = "rank" + std::to_string(rank) + ".json";
  return std::move(t.value());
}

// The declared inputs of `id`, transitively, that this set can compute.
void closure(const AnalysisSet& s, AnalysisId id, std::set<AnalysisId>& out) {
  if (s.unavailable(id) || !out.insert(id).second) return;
  for (AnalysisId need : analysis_info(id).needs) closure(s, need, out);
}

TEST(AnalysisSet, NamesRoundTripThroughTheTable) {
  for (const AnalysisInfo& a : analysis_table()) {
    EXPECT_EQ(analysis_id(a.name), a.id);
    EXPECT_EQ(&analysis_info(a.id), &a);
  }
  EXPECT_FALSE(analysis_id("nope"));
}

TEST(AnalysisSet, ComputesExactlyTheDeclaredDependencies) {
  for (bool gpu : {false, true}) {
    Trace trace = make_trace(1, gpu);
    for (const AnalysisInfo& a : analysis_table()) {
      AnalysisSet s(trace);
      if (s.unavailable(a.id)) continue;
      analysis_json(s, a.id);
      std::set<AnalysisId> want;
      closure(s, a.id, want);
      for (const AnalysisInfo& b : analysis_table())
        EXPECT_EQ(s.computed(b.id), want.count(b.id) == 1)
            << a.name << " (gpu " << gpu << ") and " << b.name;
    }
  }
}

TEST(AnalysisSet, EachResultIsComputedOnce) {
  Trace trace = make_trace(1, true);
  AnalysisSet s(trace);
  const StepsResult* steps = &s.steps();
  s.bottlenecks();
  s.flops();
  EXPECT_EQ(steps, &s.steps());
  EXPECT_EQ(s.steps().steps.size(), 2u);
}

TEST(AnalysisSet, ParallelComputeEqualsOneByOne) {
  Trace trace = make_trace(1, true);
  AnalysisSet parallel(trace), serial(trace);
  std::vector<AnalysisId> all;
  for (const AnalysisInfo& a : analysis_table()) all.push_back(a.id);
  parallel.compute(all);
  for (AnalysisId id : all) EXPECT_EQ(analysis_json(parallel, id), analysis_json(serial, id));
}

TEST(AnalysisSet, UnavailableAnalysesSayWhy) {
  Trace cpu = make_trace(1, false);
  AnalysisSet s(cpu);
  EXPECT_FALSE(s.has_gpu());
  ASSERT_TRUE(s.unavailable(AnalysisId::kGpu));
  EXPECT_EQ(analysis_json(s, AnalysisId::kGpu),
            "{\"schema\":\"mlprof.gpu/1\",\"unavailable\":\"no GPU streams in this trace (a "
            "CPU-only profile)\"}");
  EXPECT_EQ(analysis_json(s, AnalysisId::kKernels),
            "{\"schema\":\"mlprof.kernels/1\",\"unavailable\":\"no GPU streams in this trace (a "
            "CPU-only profile)\"}");
  EXPECT_TRUE(s.unavailable(AnalysisId::kRanks));
  EXPECT_FALSE(s.unavailable(AnalysisId::kSteps));
  Trace gpu = make_trace(1, true);
  AnalysisSet g(gpu);
  EXPECT_TRUE(g.has_gpu());
  EXPECT_FALSE(g.unavailable(AnalysisId::kGpu));
}

TEST(AnalysisSet, RankSetAnalyzesTheSlowestRankAndFeedsBottlenecks) {
  std::vector<Trace> ranks;
  ranks.push_back(make_trace(1, false, 0));
  ranks.push_back(make_trace(3, false, 1));  // three times slower
  ranks.push_back(make_trace(1, false, 2));
  AnalysisSet s(std::move(ranks));
  EXPECT_TRUE(s.is_rank_set());
  EXPECT_EQ(s.trace().meta.source, "rank1.json");
  EXPECT_FALSE(s.unavailable(AnalysisId::kRanks));
  EXPECT_EQ(s.ranks().ranks.size(), 3u);
  bool imbalance = false;
  for (const Finding& f : s.bottlenecks().findings)
    imbalance |= f.kind.find("imbalance") != std::string::npos ||
                 f.kind.find("straggler") != std::string::npos;
  EXPECT_TRUE(imbalance) << analysis_json(s, AnalysisId::kBottlenecks);
}

// Views that need content of their own: compiled regions (compile), the CUDA allocator's state
// (memory_snapshot, only when the trace was loaded from a snapshot).
TEST(AnalysisSet, ContentViewsSayWhyWithoutTheirContent) {
  Trace plain = make_trace(1, true);
  AnalysisSet p(plain);
  ASSERT_TRUE(p.unavailable(AnalysisId::kCompile));
  EXPECT_NE(p.unavailable(AnalysisId::kCompile)->find("no torch.compile regions"),
            std::string::npos);
  ASSERT_TRUE(p.unavailable(AnalysisId::kMemorySnapshot));
  EXPECT_NE(analysis_json(p, AnalysisId::kMemorySnapshot).find("not a CUDA memory snapshot"),
            std::string::npos);

  // A compiled region on the host thread, and the kernel launched inside it.
  std::string j = R"({"traceEvents": [
    {"ph":"X","pid":1,"tid":1,"name":"Torch-Compiled Region: 0/1","cat":"cpu_op","ts":0,"dur":100},
    {"ph":"X","pid":1,"tid":1,"name":"cudaLaunchKernel","cat":"cuda_runtime","ts":10,"dur":5,
     "args":{"correlation":7}},
    {"ph":"X","pid":0,"tid":7,"name":"triton_poi_fused_add_0","cat":"kernel","ts":30,"dur":20,
     "args":{"correlation":7,"stream":7,"device":0}},
    {"ph":"X","pid":0,"tid":7,"name":"Torch-Compiled Region: 9/9","cat":"gpu_user_annotation",
     "ts":30,"dur":20}]})";
  Trace compiled = std::move(import_chrome_json_buffer(j, "compiled.json").value());
  AnalysisSet c(compiled);
  ASSERT_FALSE(c.unavailable(AnalysisId::kCompile));
  const CompileResult& r = c.compile();
  ASSERT_EQ(r.runtime.regions.size(), 1u);  // the GPU-track annotation is not a region
  EXPECT_EQ(r.runtime.regions[0].compile_id, "0/1");
  EXPECT_EQ(r.runtime.regions[0].triton_kernels, 1u);
  EXPECT_EQ(r.runtime.regions[0].gpu_busy_ns, 20000);

  // Only the GPU-track annotation: no region a host thread ran.
  std::string g = R"({"traceEvents": [
    {"ph":"X","pid":0,"tid":7,"name":"Torch-Compiled Region: 0/0","cat":"gpu_user_annotation",
     "ts":30,"dur":20,"args":{"stream":7,"device":0}}]})";
  Trace gpu_only = std::move(import_chrome_json_buffer(g, "gpu_only.json").value());
  AnalysisSet go(gpu_only);
  EXPECT_TRUE(go.unavailable(AnalysisId::kCompile));
}

TEST(AnalysisSet, PrettyJsonKeepsEveryToken) {
  std::string compact = R"({"a":[1,2.5,{"b":"x,y:{}"}],"c":{},"d":[],"e":"q\"}"})";
  std::string pretty = pretty_json(compact);
  std::string squeezed;
  bool in_string = false;
  for (size_t i = 0; i < pretty.size(); ++i) {
    char c = pretty[i];
    if (c == '"' && (i == 0 || pretty[i - 1] != '\\')) in_string = !in_string;
    if (in_string || (c != ' ' && c != '\n')) squeezed.push_back(c);
  }
  EXPECT_EQ(squeezed, compact);
  JsonWriter w(true);
  w.begin_object().field("a", 1).key("b").begin_array().value("x").end_array();
  w.key("c").begin_object().end_object().end_object();
  JsonWriter c;
  c.begin_object().field("a", 1).key("b").begin_array().value("x").end_array();
  c.key("c").begin_object().end_object().end_object();
  EXPECT_EQ(pretty_json(c.str()), w.str());  // the CLI's --json layout is unchanged
}

// `--json` of a large result is indented in pieces on its way out: the pieces make the same text
// as the whole, and none is much over 64 KB.
TEST(AnalysisSet, PrettyJsonInPiecesIsTheWholeText) {
  JsonWriter c, p(true);
  for (JsonWriter* w : {&c, &p}) {
    w->begin_object().key("rows").begin_array();
    for (int i = 0; i < 5000; ++i)
      w->begin_object()
          .field("i", i)
          .field("name", "a \"quoted\", {braced}: [" + std::to_string(i) + "]")
          .key("empty")
          .begin_array()
          .end_array()
          .end_object();
    w->end_array().end_object();
  }
  std::vector<std::string> pieces;
  pretty_json(c.str(), [&](std::string_view part) { pieces.emplace_back(part); });
  ASSERT_GT(pieces.size(), 3u);
  std::string joined;
  for (const std::string& part : pieces) {
    EXPECT_LE(part.size(), 65u * 1024);
    joined += part;
  }
  EXPECT_EQ(joined, p.str());
  EXPECT_EQ(pretty_json(c.str()), p.str());
}

}  // namespace
}  // namespace mlprof
