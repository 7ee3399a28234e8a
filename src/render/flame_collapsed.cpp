#include <algorithm>

#include "mlprof/render/flame_render.h"

namespace mlprof {
namespace {

// Collapsed-stack frames cannot hold ';' (the separator) or line breaks.
void append_frame_name(std::string& out, std::string_view name) {
  for (char c : name) out.push_back(c == ';' ? ':' : (c == '\n' || c == '\r') ? ' ' : c);
}

}  // namespace

std::string render_flame_collapsed(const FlameGraph& g) {
  std::string out;
  std::vector<std::string> prefix(g.frames.size());
  for (size_t i = 1; i < g.frames.size(); ++i) {
    const FlameFrame& f = g.frames[i];
    std::string& p = prefix[i];
    if (f.parent > 0) {
      p = prefix[f.parent];
      p.push_back(';');
    }
    append_frame_name(p, f.name);
    if (f.self_ns > 0) {
      out += p;
      out.push_back(' ');
      out += std::to_string(f.self_ns);
      out.push_back('\n');
    }
  }
  return out;
}

std::string render_flame_text(const FlameGraph& g, size_t width, size_t max_lines) {
  std::string out;
  if (g.frames.size() <= 1) return "no slices: nothing to draw\n";
  const double root = std::max<int64_t>(1, g.frames[0].total_ns);
  size_t lines = 0;
  // Depth-first over the heaviest children, skipping frames under 1% of the root.
  std::vector<std::pair<uint32_t, uint32_t>> stack;  // (frame, depth)
  for (auto it = g.frames[0].children.rbegin(); it != g.frames[0].children.rend(); ++it)
    stack.emplace_back(*it, 0);
  while (!stack.empty() && lines < max_lines) {
    auto [f, depth] = stack.back();
    stack.pop_back();
    const FlameFrame& fr = g.frames[f];
    double pct = 100.0 * static_cast<double>(fr.total_ns) / root;
    if (pct < 1.0) continue;
    char head[64];
    std::snprintf(head, sizeof head, "%6.2f%% %6.2f%% ", pct, 100.0 * fr.self_ns / root);
    std::string line = head + std::string(2 * depth, ' ') + fr.name;
    if (line.size() > width) line = line.substr(0, width - 3) + "...";
    out += line + "\n";
    ++lines;
    for (auto it = fr.children.rbegin(); it != fr.children.rend(); ++it)
      stack.emplace_back(*it, depth + 1);
  }
  return " total    self   frame (share of all time; frames under 1% hidden)\n" + out;
}

}  // namespace mlprof
