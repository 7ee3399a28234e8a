#include "render/flame_render.h"

namespace mlprof {

void write_flame_json(JsonWriter& w, const FlameGraph& g) {
  w.begin_object();
  w.field("cpu_ns", g.cpu_ns);
  w.field("gpu_ns", g.gpu_ns);
  w.field("slices", g.slices);
  w.field("max_depth", g.max_depth);
  w.key("frames").begin_array();
  for (const FlameFrame& f : g.frames) {
    w.begin_object();
    w.field("name", f.name);
    w.field("total_ns", f.total_ns);
    w.field("self_ns", f.self_ns);
    w.field("count", f.count);
    w.field("parent", f.parent);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace mlprof
