#include "mlprof/analyze/compare.h"
#include "mlprof/json_writer.h"
#include "mlprof/render/compare_render.h"
#include "mlprof/render/report.h"
#include "mlprof/render/timeline_render.h"
#include "mlprof/render/web_page.h"
#include "render/analysis_output.h"

namespace mlprof {

std::string compare_json(const Trace& base, const Trace& next) {
  JsonWriter w;
  write_compare_json(w, compare_traces(base, next));
  return w.take();
}

std::string report_data_json(const ReportInput& in) {
  AnalysisSet& set = *in.set;
  JsonWriter w;
  w.begin_object();
  w.field("kind", "report");
  w.field("title", in.name);
  w.field("generator", "mlprof");
  w.field("trace", in.name);
  w.key("analyses").raw(analyses_json(set, report_analyses()));
  w.key("ranks").raw(analysis_json(set, AnalysisId::kRanks));
  if (in.base) {
    w.field("base", in.base_name);
    w.key("compare").raw(compare_json(*in.base, set.trace()));
  }
  w.end_object();
  return w.take();
}

std::string render_report_html(const ReportInput& in) {
  std::string events;
  if (in.include_events)
    events = base64_encode(encode_timeline_events(in.set->trace(), in.set->timeline()));
  return render_web_page(WebPage{"report", in.name, report_data_json(in), std::move(events)});
}

}  // namespace mlprof
