#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "render/flame_render.h"

namespace mlprof {

// Widths of each frame's subtree in the profile: its own self time (never negative) plus its
// children's. Frames are created parent first, so a reverse sweep sees children first.
std::vector<int64_t> flame_subtree_self(const FlameGraph& g) {
  std::vector<int64_t> width(g.frames.size(), 0);
  for (size_t i = g.frames.size(); i-- > 1;) {
    width[i] += std::max<int64_t>(0, g.frames[i].self_ns);
    int32_t p = g.frames[i].parent;
    if (p > 0) width[p] += width[i];
  }
  return width;
}

// https://www.speedscope.app/file-format-schema.json: frames are shared by name; the tree is
// laid out depth first (children heaviest first, then the frame's self time), each frame one
// open and one close event at integer nanoseconds. Frames of no width are left out.
void write_flame_speedscope(std::ostream& out, const FlameGraph& g, std::string_view name) {
  std::unordered_map<std::string_view, uint32_t> frame_index;
  std::vector<std::string_view> frame_names;
  std::vector<uint32_t> shared(g.frames.size(), 0);
  for (size_t i = 1; i < g.frames.size(); ++i) {
    auto [it, inserted] = frame_index.try_emplace(g.frames[i].name, frame_names.size());
    if (inserted) frame_names.push_back(g.frames[i].name);
    shared[i] = it->second;
  }
  std::vector<int64_t> width = flame_subtree_self(g);
  int64_t total = 0;
  for (uint32_t c : g.frames.empty() ? std::vector<uint32_t>{} : g.frames[0].children)
    total += width[c];

  std::string buf;
  auto flush = [&](bool force) {
    if (force || buf.size() >= (1 << 20)) {
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  };
  buf += "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"name\":";
  JsonWriter::escape(buf, name);
  buf += ",\"exporter\":\"mlprof\",\"activeProfileIndex\":0,\"shared\":{\"frames\":[";
  for (size_t i = 0; i < frame_names.size(); ++i) {
    buf += i ? ",{\"name\":" : "{\"name\":";
    JsonWriter::escape(buf, frame_names[i]);
    buf += "}";
    flush(false);
  }
  buf += "]},\"profiles\":[{\"type\":\"evented\",\"name\":";
  JsonWriter::escape(buf, name);
  buf += ",\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":" + std::to_string(total) +
         ",\"events\":[";
  bool first = true;
  auto event = [&](char type, uint32_t frame, int64_t at) {
    buf += first ? "{\"type\":\"" : ",{\"type\":\"";
    first = false;
    buf += type;
    buf += "\",\"frame\":" + std::to_string(shared[frame]) + ",\"at\":" + std::to_string(at) + "}";
    flush(false);
  };
  // Depth first without recursion (a stack as deep as the tree, not the call stack).
  struct Open {
    uint32_t frame;
    size_t next_child;
  };
  std::vector<Open> stack;
  int64_t at = 0;
  if (!g.frames.empty()) stack.push_back({0, 0});
  while (!stack.empty()) {
    Open& top = stack.back();
    const FlameFrame& f = g.frames[top.frame];
    if (top.next_child < f.children.size()) {
      uint32_t c = f.children[top.next_child++];
      if (width[c] <= 0) continue;
      event('O', c, at);
      stack.push_back({c, 0});
      continue;
    }
    if (top.frame != 0) {
      at += std::max<int64_t>(0, f.self_ns);
      event('C', top.frame, at);
    }
    stack.pop_back();
  }
  buf += "]}]}";
  flush(true);
}

std::string render_flame_speedscope(const FlameGraph& g, std::string_view name) {
  std::ostringstream out;
  write_flame_speedscope(out, g, name);
  return std::move(out).str();
}

}  // namespace mlprof
