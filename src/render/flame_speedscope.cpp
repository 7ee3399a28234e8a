#include <unordered_map>

#include "mlprof/render/flame_render.h"

namespace mlprof {

// https://www.speedscope.app/file-format-schema.json: frames are shared by name; each frame with
// self time becomes one "sample" (its stack) weighted by that self time in integer nanoseconds.
std::string render_flame_speedscope(const FlameGraph& g, std::string_view name) {
  std::unordered_map<std::string, uint32_t> frame_index;
  std::vector<const std::string*> frame_names;
  std::vector<uint32_t> shared(g.frames.size(), 0);
  for (size_t i = 1; i < g.frames.size(); ++i) {
    auto [it, inserted] = frame_index.try_emplace(g.frames[i].name, frame_names.size());
    if (inserted) frame_names.push_back(&it->first);
    shared[i] = it->second;
  }
  JsonWriter w;
  w.begin_object();
  w.field("$schema", "https://www.speedscope.app/file-format-schema.json");
  w.field("name", name);
  w.field("exporter", "mlprof");
  w.field("activeProfileIndex", 0);
  w.key("shared").begin_object().key("frames").begin_array();
  for (const std::string* n : frame_names) w.begin_object().field("name", *n).end_object();
  w.end_array().end_object();
  w.key("profiles").begin_array().begin_object();
  w.field("type", "sampled");
  w.field("name", name);
  w.field("unit", "nanoseconds");
  w.field("startValue", 0);
  int64_t total = 0;
  for (size_t i = 1; i < g.frames.size(); ++i) total += std::max<int64_t>(0, g.frames[i].self_ns);
  w.field("endValue", total);
  w.key("samples").begin_array();
  std::vector<uint32_t> path;
  for (size_t i = 1; i < g.frames.size(); ++i) {
    if (g.frames[i].self_ns <= 0) continue;
    path.clear();
    for (int32_t f = static_cast<int32_t>(i); f > 0; f = g.frames[f].parent)
      path.push_back(shared[f]);
    w.begin_array();
    for (auto it = path.rbegin(); it != path.rend(); ++it) w.value(static_cast<uint64_t>(*it));
    w.end_array();
  }
  w.end_array();
  w.key("weights").begin_array();
  for (size_t i = 1; i < g.frames.size(); ++i)
    if (g.frames[i].self_ns > 0) w.value(g.frames[i].self_ns);
  w.end_array();
  w.end_object().end_array();
  w.end_object();
  return w.take();
}

}  // namespace mlprof
