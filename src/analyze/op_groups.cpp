#include "mlprof/analyze/op_groups.h"

#include <algorithm>
#include <unordered_map>

#include "mlprof/analyze/device_time.h"

namespace mlprof {

namespace {

struct Key {
  StringId name;
  StringId shape;
  uint32_t stack;  // index into the stack texts (UINT32_MAX: by shape)
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    return (static_cast<size_t>(k.name) * 1000003u) ^ (static_cast<size_t>(k.shape) << 20) ^
           k.stack;
  }
};

void sort_and_cut(std::vector<OpGroup>& v, size_t top, uint64_t& rows) {
  std::sort(v.begin(), v.end(), [](const OpGroup& a, const OpGroup& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.name != b.name) return a.name < b.name;
    if (a.input_shape != b.input_shape) return a.input_shape < b.input_shape;
    return a.call_stack < b.call_stack;
  });
  rows = v.size();
  if (top && v.size() > top) v.resize(top);
}

}  // namespace

OpGroups op_groups(const Trace& t, const DeviceTime* device, size_t top) {
  OpGroups out;
  const StringId dims_key = t.strings.find("Input Dims");
  if (dims_key == StringPool::kNotFound) return out;
  const StringId stack_key = t.strings.find("Call stack");
  const StringId py_cat = t.strings.find("python_function");
  const SliceTable& s = t.slices;
  bool dev = device && device->has_gpu && device->self_ns.size() == s.size();
  std::unordered_map<Key, size_t, KeyHash> index;
  std::vector<OpGroup> groups[2];
  std::unordered_map<std::string, uint32_t> stack_ids;
  std::vector<std::string> stacks;
  auto add = [&](int which, const Key& k, size_t i, const std::string* stack) {
    auto [it, fresh] = index.try_emplace(k, groups[which].size());
    if (fresh) {
      OpGroup g;
      g.name = std::string(t.str(k.name));
      g.input_shape = std::string(t.str(k.shape));
      if (stack) g.call_stack = *stack;
      if (dev) g.device_total_ns = g.device_self_ns = 0;
      groups[which].push_back(std::move(g));
    }
    OpGroup& g = groups[which][it->second];
    ++g.count;
    g.total_ns += s.dur[i];
    g.self_ns += s.self[i];
    if (dev) {
      g.device_total_ns += device->total_ns[i];
      g.device_self_ns += device->self_ns[i];
    }
  };
  std::string frames;
  for (size_t i = 0; i < s.size(); ++i) {
    if (t.is_gpu_track(s.track[i])) continue;
    const Arg* dims = t.find_arg(s.args_begin[i], s.args_count[i], dims_key);
    if (!dims || (dims->type != ArgType::kJson && dims->type != ArgType::kString)) continue;
    add(0, {s.name[i], dims->s, UINT32_MAX}, i, nullptr);
    // The stack: the recorded "Call stack" (Kineto with_stack on older PyTorch), else the
    // python_function slices enclosing the op on its thread (newer PyTorch).
    frames.clear();
    if (stack_key != StringPool::kNotFound) {
      const Arg* a = t.find_arg(s.args_begin[i], s.args_count[i], stack_key);
      if (a && a->type == ArgType::kString) frames = std::string(t.str(a->s));
    }
    if (frames.empty() && py_cat != StringPool::kNotFound) {
      for (int32_t p = s.parent[i]; p >= 0; p = s.parent[p]) {
        if (s.cat[p] != py_cat) continue;
        if (!frames.empty()) frames += "; ";
        frames += t.str(s.name[p]);
      }
    }
    if (frames.empty()) continue;
    auto [sit, fresh] = stack_ids.try_emplace(frames, static_cast<uint32_t>(stacks.size()));
    if (fresh) stacks.push_back(frames);
    add(1, {s.name[i], dims->s, sit->second}, i, &stacks[sit->second]);
  }
  out.by_shape = std::move(groups[0]);
  out.by_stack = std::move(groups[1]);
  sort_and_cut(out.by_shape, top, out.shape_rows);
  sort_and_cut(out.by_stack, top, out.stack_rows);
  return out;
}

}  // namespace mlprof
