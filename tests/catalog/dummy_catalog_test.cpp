// "A new analysis is one row plus its own files": this test build adds the dummy analysis of
// catalog/dummy_analysis.{h,cpp} as one more row of the catalogue (MLPROF_EXTRA_ANALYSES_HEADER)
// and recompiles only the stage's catalogue-derived files (analysis_set.cpp, analysis_compute.cpp,
// analysis_output.cpp, analysis_csv.cpp) with it. Nothing else was edited, yet the dummy has an
// id, options, a getter, its declared input computed first, JSON, text and CSV, a report tab and
// a section of `mlprof analyze`.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "catalog/dummy_analysis.h"
#include "mlprof/analysis_set.h"
#include "mlprof/import.h"
#include "render/analysis_csv.h"
#include "render/analysis_output.h"

namespace mlprof {
namespace {

Trace two_steps() {
  std::string j = R"({"traceEvents": [
    {"ph":"X","pid":1,"tid":1,"name":"ProfilerStep#1","cat":"user_annotation","ts":0,"dur":100},
    {"ph":"X","pid":1,"tid":1,"name":"aten::mm","cat":"cpu_op","ts":10,"dur":40},
    {"ph":"X","pid":1,"tid":1,"name":"ProfilerStep#2","cat":"user_annotation","ts":100,"dur":100}
  ]})";
  Result<Trace> t = import_chrome_json_buffer(j, "two_steps.json");
  EXPECT_TRUE(t.is_ok());
  return std::move(t.value());
}

// Rows counted from the catalogue itself (a hand-kept number broke when the roofline and graphs
// rows were added).
#define MLPROF_TEST_COUNT_ROW(...) +1
constexpr size_t kRows = 0 MLPROF_ANALYSES(MLPROF_TEST_COUNT_ROW);
constexpr size_t kExtraRows = 0 MLPROF_EXTRA_ANALYSES(MLPROF_TEST_COUNT_ROW);

bool has(const std::vector<AnalysisId>& ids, AnalysisId id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

TEST(AnalysisCatalog, OneRowMakesAnAnalysis) {
  // The id, the count and the row: the dummy is one row added to the production catalogue.
  EXPECT_EQ(kExtraRows, 1u);
  EXPECT_EQ(kAnalysisCount, kRows);
  EXPECT_EQ(analysis_id("dummy"), AnalysisId::kDummy);
  const AnalysisInfo& info = analysis_info(AnalysisId::kDummy);
  EXPECT_EQ(info.name, "dummy");
  EXPECT_EQ(info.needs, std::vector<AnalysisId>{AnalysisId::kSteps});
  EXPECT_EQ(info.title, "Dummy count");

  // Its options in AnalysisOptions, its getter, its input computed first.
  Trace trace = two_steps();
  AnalysisOptions options;
  options.dummy.scale = 10;
  AnalysisSet set(trace, options);
  EXPECT_FALSE(set.unavailable(AnalysisId::kDummy));
  EXPECT_EQ(set.dummy().slices, 30u);
  EXPECT_EQ(set.dummy().steps, 2u);
  EXPECT_TRUE(set.computed(AnalysisId::kSteps));

  // JSON (stamped with the schema of its row), text and CSV through the stage's writers.
  EXPECT_EQ(
      analysis_json(set, AnalysisId::kDummy),
      R"({"schema":"mlprof.dummy/1","counts":[{"what":"slices","n":30},{"what":"steps","n":2}]})");
  EXPECT_EQ(render_analysis_text(set, AnalysisId::kDummy), "30 slices, 2 steps\n");
  EXPECT_EQ(analysis_main_table(AnalysisId::kDummy), "counts");
  Result<std::string> csv = analysis_csv(set, AnalysisId::kDummy);
  ASSERT_TRUE(csv.is_ok()) << csv.error();
  EXPECT_NE(csv->find("slices,30"), std::string::npos) << *csv;

  // A report tab (and serve endpoint), a key of `analyze --json`, a section of its text.
  EXPECT_TRUE(has(report_analyses(), AnalysisId::kDummy));
  EXPECT_EQ(analyze_analyses().back(), AnalysisId::kDummy);
  EXPECT_EQ(analyze_sections().back(), AnalysisId::kDummy);
  std::string all = analyses_json(set, analyze_analyses());
  EXPECT_NE(all.find(R"("dummy":{"schema":"mlprof.dummy/1","counts")"), std::string::npos);

  // Parallel computation of every row, the dummy included, agrees with one by one.
  AnalysisSet parallel(trace, options);
  std::vector<AnalysisId> ids;
  for (const AnalysisInfo& a : analysis_table()) ids.push_back(a.id);
  parallel.compute(ids);
  for (AnalysisId id : ids) EXPECT_EQ(analysis_json(parallel, id), analysis_json(set, id));
}

}  // namespace
}  // namespace mlprof
