#include "mlprof/analyze/timeline.h"
#include "mlprof/json_writer.h"
#include "mlprof/render/report.h"
#include "mlprof/render/timeline_render.h"
#include "mlprof/render/web_page.h"

namespace mlprof {

std::string report_data_json(const ReportInput& in) {
  JsonWriter w;
  w.begin_object();
  w.field("kind", "report");
  w.field("title", in.name);
  w.field("generator", "mlprof");
  w.field("trace", in.name);
  w.key("analyses").raw(all_analyses_json(*in.trace));
  std::vector<const Trace*> ranks = in.ranks;
  if (ranks.empty()) ranks.push_back(in.trace);
  w.key("ranks").raw(ranks_json(ranks));
  if (in.base) {
    w.field("base", in.base_name);
    w.key("compare").raw(compare_json(*in.base, *in.trace));
  }
  w.end_object();
  return w.take();
}

std::string render_report_html(const ReportInput& in) {
  std::string events;
  if (in.include_events)
    events = base64_encode(encode_timeline_events(*in.trace, analyze_timeline(*in.trace)));
  return render_web_page(WebPage{"report", in.name, report_data_json(in), std::move(events)});
}

}  // namespace mlprof
