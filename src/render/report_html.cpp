#include "mlprof/analysis_compare.h"
#include "render/analysis_output.h"
#include "render/compare_render.h"
#include "render/rank_timeline.h"
#include "render/report.h"
#include "render/timeline_render.h"
#include "render/web_page.h"
#include "trace/json_writer.h"

namespace mlprof {

namespace {

std::string compare_result_json(const CompareResult& r) {
  JsonWriter w;
  w.lead_next_object("schema", json_schema_id("compare", 1));  // as `mlprof compare --json`
  write_compare_json(w, r);
  return w.take();
}

}  // namespace

std::string compare_json(const Trace& base, const Trace& next) {
  // The stage's comparison with the default options (what `mlprof compare BASE NEW` shows).
  return compare_result_json(compare_analyses(AnalysisSet(base), AnalysisSet(next)));
}

std::string report_data_json(const ReportInput& in) {
  AnalysisSet& set = *in.set;
  JsonWriter w;
  w.begin_object();
  w.field("schema", json_schema_id("report", 1));
  w.field("kind", "report");
  w.field("title", in.name);
  w.field("generator", "mlprof");
  w.field("trace", in.name);
  w.key("analyses").raw(analyses_json(set, report_analyses()));
  w.key("ranks").raw(analysis_json(set, AnalysisId::kRanks));
  if (set.has_gpu()) {  // the GPU tab's HTA toggle: the same analyses under HTA's definitions
    w.key("hta_compatible").begin_object();
    w.key("gpu").raw(hta_analysis_json(set, AnalysisId::kGpu));
    w.key("kernels").raw(hta_analysis_json(set, AnalysisId::kKernels));
    w.end_object();
  }
  if (in.base) {
    w.field("base", in.base_name);
    CompareOptions o;  // the report's step model (--step-annotation) on both sides
    o.step_annotation = set.options().steps.step_annotation;
    w.key("compare").raw(compare_result_json(compare_analyses(AnalysisSet(*in.base), set, o)));
  }
  w.end_object();
  return w.take();
}

Result<std::string> render_report_html(const ReportInput& in) {
  std::string events;
  std::string data = report_data_json(in);
  if (in.include_events && in.set->is_rank_set()) {
    // Every rank's lanes over a window of steps; the window goes into the data object.
    RankTimelineWindow window;
    Result<std::string> encoded = encode_rank_timeline(*in.set, in.load_rank, window);
    MLPROF_RETURN_IF_ERROR(encoded);
    events = base64_encode(*encoded);
    JsonWriter w;
    w.begin_object();
    w.key("ranks").begin_array();
    for (int32_t r : window.ranks) w.value(static_cast<int64_t>(r));
    w.end_array();
    w.key("steps").begin_array();
    for (int64_t s : window.steps) w.value(s);
    w.end_array();
    w.field("window_ns", window.window_ns);
    w.field("slices", window.slices);
    w.field("ranks_left_out", static_cast<uint64_t>(window.ranks_left_out));
    w.end_object();
    data.pop_back();  // the closing brace of the data object
    data += ",\"timeline_ranks\":" + w.take() + "}";
  } else if (in.include_events) {
    Result<std::string> encoded = encode_timeline_events(in.set->trace(), in.set->timeline());
    MLPROF_RETURN_IF_ERROR(encoded);
    events = base64_encode(*encoded);
  }
  return render_web_page(WebPage{"report", in.name, std::move(data), std::move(events)});
}

}  // namespace mlprof
