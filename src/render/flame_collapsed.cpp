#include <algorithm>
#include <sstream>

#include "render/flame_render.h"

namespace mlprof {
namespace {

// Collapsed-stack frames cannot hold ';' (the separator) or line breaks.
void append_frame_name(std::string& out, std::string_view name) {
  for (char c : name) out.push_back(c == ';' ? ':' : (c == '\n' || c == '\r') ? ' ' : c);
}

}  // namespace

void write_flame_collapsed(std::ostream& out, const FlameGraph& g, uint32_t max_depth) {
  std::vector<int64_t> below = flame_subtree_self(g);
  std::string prefix, buf;
  auto line = [&](std::string_view last, int64_t ns) {
    buf += prefix;
    if (!last.empty()) buf.append(";").append(last);
    buf.push_back(' ');
    buf += std::to_string(ns);
    buf.push_back('\n');
    if (buf.size() >= (1 << 20)) {
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  };
  // Depth first without recursion; `prefix` is the current stack, so memory follows depth.
  struct Open {
    uint32_t frame;
    size_t next_child;
    size_t prefix_size;  // before this frame's name was appended
  };
  std::vector<Open> stack;
  if (!g.frames.empty()) stack.push_back({0, 0, 0});
  while (!stack.empty()) {
    Open& top = stack.back();
    const FlameFrame& f = g.frames[top.frame];
    uint32_t depth = static_cast<uint32_t>(stack.size() - 1);  // the root "all" is depth 0
    if (top.next_child == 0 && top.frame != 0) {
      if (f.self_ns > 0) line({}, f.self_ns);
      if (max_depth && depth >= max_depth && !f.children.empty()) {
        int64_t rest = below[top.frame] - std::max<int64_t>(0, f.self_ns);
        if (rest > 0) line("[frames below depth " + std::to_string(max_depth) + "]", rest);
        top.next_child = f.children.size();
      }
    }
    if (top.next_child < f.children.size()) {
      uint32_t c = f.children[top.next_child++];
      size_t size = prefix.size();
      if (!prefix.empty()) prefix.push_back(';');
      append_frame_name(prefix, g.frames[c].name);
      stack.push_back({c, 0, size});
      continue;
    }
    prefix.resize(top.prefix_size);
    stack.pop_back();
  }
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

std::string render_flame_collapsed(const FlameGraph& g, uint32_t max_depth) {
  std::ostringstream out;
  write_flame_collapsed(out, g, max_depth);
  return std::move(out).str();
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
