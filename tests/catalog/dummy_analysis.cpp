// The dummy analysis's own files in one: its computation from the set and its writers.
#include "catalog/dummy_analysis.h"

#include <string>

#include "mlprof/analysis_set.h"
#include "render/analysis_output.h"

namespace mlprof {

namespace analysis_stage {
DummyResult compute_dummy(AnalysisSet& s) {
  DummyResult r;
  r.slices = s.trace().slices.size() * static_cast<uint64_t>(s.options().dummy.scale);
  r.steps = s.steps().steps.size();
  return r;
}
}  // namespace analysis_stage

void write_dummy_json(JsonWriter& w, const DummyResult& r) {
  w.begin_object();
  w.key("counts").begin_array();
  w.begin_object().field("what", "slices").field("n", r.slices).end_object();
  w.begin_object().field("what", "steps").field("n", r.steps).end_object();
  w.end_array();
  w.end_object();
}

std::string render_dummy_text(const DummyResult& r, const TextOptions&) {
  return std::to_string(r.slices) + " slices, " + std::to_string(r.steps) + " steps\n";
}

}  // namespace mlprof
