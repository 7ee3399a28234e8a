#include "mlprof/analyze/op_groups.h"

#include <algorithm>
#include <climits>
#include <unordered_map>

#include "analyze/op_groups_replayed.h"
#include "mlprof/analyze/device_time.h"
#include "mlprof/analyze/graphs.h"

namespace mlprof {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

struct Key {
  StringId name;
  StringId shape;
  uint32_t stack;  // index into the stack texts (kNone: by shape)
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    return (static_cast<size_t>(k.name) * 1000003u) ^ (static_cast<size_t>(k.shape) << 20) ^
           k.stack;
  }
};

// The value groups are ordered by, as the ops rows are (--sort).
double sort_key(const OpGroup& g, OpSort by) {
  switch (by) {
    case OpSort::kTotal:
      return static_cast<double>(g.total_ns);
    case OpSort::kSelf:
      return static_cast<double>(g.self_ns);
    case OpSort::kMean:
      return g.count ? static_cast<double>(g.total_ns) / static_cast<double>(g.count) : 0.0;
    case OpSort::kCount:
      return static_cast<double>(g.count);
    case OpSort::kDeviceSelf:
      return static_cast<double>(g.device_self_ns);
    case OpSort::kDeviceTotal:
      return static_cast<double>(g.device_total_ns);
  }
  return 0;
}

void sort_and_cut(std::vector<OpGroup>& v, size_t top, OpSort by, uint64_t& rows) {
  std::sort(v.begin(), v.end(), [by](const OpGroup& a, const OpGroup& b) {
    double ka = sort_key(a, by), kb = sort_key(b, by);
    if (ka != kb) return ka > kb;
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.name != b.name) return a.name < b.name;
    if (a.input_shape != b.input_shape) return a.input_shape < b.input_shape;
    return a.call_stack < b.call_stack;
  });
  rows = v.size();
  if (top && v.size() > top) v.resize(top);
}

// What groups one op slice of `t`: its "Input Dims" and its call stack. The stack: the recorded
// "Call stack" arg (Kineto with_stack on older PyTorch), else the names of the python_function
// slices enclosing the op on its thread (starting no later, ending no earlier), innermost first,
// "; "-separated (newer PyTorch). One
// rule for the analyzed trace's ops and for the captured ops of a graph replay.
struct GroupArgs {
  StringId dims_key, stack_key, py_cat;
  explicit GroupArgs(const Trace& t)
      : dims_key(t.strings.find("Input Dims")),
        stack_key(t.strings.find("Call stack")),
        py_cat(t.strings.find("python_function")) {}
  // The op's input shape arg, null when it has none.
  const Arg* dims(const Trace& t, size_t i) const {
    if (dims_key == StringPool::kNotFound) return nullptr;
    const Arg* d = t.find_arg(t.slices.args_begin[i], t.slices.args_count[i], dims_key);
    return d && (d->type == ArgType::kJson || d->type == ArgType::kString) ? d : nullptr;
  }
  void stack(const Trace& t, size_t i, std::string& frames) const {
    const SliceTable& s = t.slices;
    frames.clear();
    if (stack_key != StringPool::kNotFound) {
      const Arg* a = t.find_arg(s.args_begin[i], s.args_count[i], stack_key);
      if (a && a->type == ArgType::kString) frames = std::string(t.str(a->s));
    }
    if (!frames.empty() || py_cat == StringPool::kNotFound) return;
    // The parent chain is every slice open when the op started; a frame that ended before the
    // op did (left open under a longer slice: the trace is not always well nested) does not
    // enclose it.
    for (int32_t p = s.parent[i]; p >= 0; p = s.parent[static_cast<size_t>(p)]) {
      size_t q = static_cast<size_t>(p);
      if (s.cat[q] != py_cat || s.end(q) < s.end(i)) continue;
      if (!frames.empty()) frames += "; ";
      frames += t.str(s.name[q]);
    }
  }
};

class GroupBuilder {
 public:
  GroupBuilder(const Trace& t, bool dev) : t_(t), dev_(dev) {}

  // The groups (by shape, by stack; kNone: none) of op slice i of trace `src` (t_ or a capture
  // pass), created empty where new.
  std::pair<uint32_t, uint32_t> groups_of(const Trace& src, const GroupArgs& args, size_t i) {
    const Arg* d = args.dims(src, i);
    if (!d) return {kNone, kNone};
    std::string_view name = src.str(src.slices.name[i]), shape = src.str(d->s);
    Key k{id_of(src, src.slices.name[i], name), id_of(src, d->s, shape), kNone};
    std::pair<uint32_t, uint32_t> out{group(0, k, name, shape, nullptr), kNone};
    args.stack(src, i, frames_);
    if (frames_.empty()) return out;
    auto [sit, fresh] = stack_ids_.try_emplace(frames_, static_cast<uint32_t>(stacks_.size()));
    if (fresh) stacks_.push_back(frames_);
    k.stack = sit->second;
    out.second = group(1, k, name, shape, &stacks_[sit->second]);
    return out;
  }
  OpGroup& at(int which, uint32_t g) { return groups_[which][g]; }
  std::vector<OpGroup>& list(int which) { return groups_[which]; }

 private:
  // An id for a name or shape: the analyzed trace's own, else one past its pool per text (a
  // capture pass's strings), so equal texts of both traces share a group.
  StringId id_of(const Trace& src, StringId id, std::string_view text) {
    if (&src == &t_) return id;
    StringId own = t_.strings.find(text);
    if (own != StringPool::kNotFound) return own;
    auto [it, fresh] = foreign_.try_emplace(
        std::string(text), static_cast<StringId>(t_.strings.size() + foreign_.size()));
    return it->second;
  }
  uint32_t group(int which, const Key& k, std::string_view name, std::string_view shape,
                 const std::string* stack) {
    auto [it, fresh] = index_.try_emplace(k, static_cast<uint32_t>(groups_[which].size()));
    if (fresh) {
      OpGroup g;
      g.name = std::string(name);
      g.input_shape = std::string(shape);
      if (stack) g.call_stack = *stack;
      if (dev_) g.device_total_ns = g.device_self_ns = 0;
      groups_[which].push_back(std::move(g));
    }
    return it->second;
  }

  const Trace& t_;
  bool dev_;
  std::unordered_map<Key, uint32_t, KeyHash> index_;
  std::vector<OpGroup> groups_[2];
  std::unordered_map<std::string, uint32_t> stack_ids_;
  std::vector<std::string> stacks_;
  std::unordered_map<std::string, StringId> foreign_;
  std::string frames_;
};

// Each matched replayed kernel's GPU time, as if the graph had run eagerly (as the ops rows
// charge it): to the groups of the op that launched it in the capture pass (its input shapes and
// call stack there), out of the groups of the graph launch's op. `launch_groups`: the groups of
// each launch op, found while grouping the analyzed trace's slices.
void charge_replays(const Trace& t, const GraphsResult& g,
                    const std::unordered_map<int32_t, std::pair<uint32_t, uint32_t>>& launch_groups,
                    GroupBuilder& b) {
  std::unordered_map<const Trace*, GroupArgs> args;
  std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>> captured;  // (capture, op slice)
  auto move = [&](std::pair<uint32_t, uint32_t> gs, int64_t ns) {
    for (int which = 0; which < 2; ++which) {
      uint32_t at = which ? gs.second : gs.first;
      if (at == kNone) continue;
      b.at(which, at).device_self_ns += ns;
      b.at(which, at).device_total_ns += ns;
    }
  };
  for (const ReplayedKernel& k : g.replayed) {
    if (k.capture < 0 || k.captured_op < 0) continue;
    const GraphCapture& cap = g.captures[static_cast<size_t>(k.capture)];
    const Trace& src = cap.trace ? *cap.trace : t;
    if (static_cast<size_t>(k.captured_op) >= src.slices.size()) continue;
    uint64_t key = (static_cast<uint64_t>(k.capture) << 32) | static_cast<uint32_t>(k.captured_op);
    auto [it, fresh] = captured.try_emplace(key, kNone, kNone);
    if (fresh) {
      const GroupArgs& ga = args.try_emplace(&src, src).first->second;
      it->second = b.groups_of(src, ga, static_cast<size_t>(k.captured_op));
    }
    if (it->second.first == kNone) continue;  // the captured op has no input shapes
    int64_t ns = t.slices.dur[k.slice];
    move(it->second, ns);
    if (auto from = launch_groups.find(k.launch_op); from != launch_groups.end())
      move(from->second, -ns);
  }
}

}  // namespace

OpGroups op_groups(const Trace& t, const DeviceTime* device, size_t top) {
  return op_groups_replayed(t, device, nullptr, top, OpSort::kTotal);
}

OpGroups op_groups_replayed(const Trace& t, const DeviceTime* device, const GraphsResult* replays,
                            size_t top, OpSort by) {
  OpGroups out;
  const SliceTable& s = t.slices;
  bool dev = device && device->has_gpu && device->self_ns.size() == s.size();
  if (!dev || (replays && replays->replayed.empty())) replays = nullptr;
  GroupArgs args(t);
  if (args.dims_key == StringPool::kNotFound && !replays) return out;
  GroupBuilder b(t, dev);
  // The graph launches' ops, whose groups give up the replayed GPU time.
  std::unordered_map<int32_t, std::pair<uint32_t, uint32_t>> launch_groups;
  if (replays)
    for (const ReplayedKernel& k : replays->replayed)
      if (k.launch_op >= 0) launch_groups.try_emplace(k.launch_op, kNone, kNone);
  for (size_t i = 0; i < s.size(); ++i) {
    if (t.is_gpu_track(s.track[i]) || args.dims_key == StringPool::kNotFound) continue;
    auto gs = b.groups_of(t, args, i);
    if (gs.first == kNone) continue;
    for (int which = 0; which < 2; ++which) {
      uint32_t at = which ? gs.second : gs.first;
      if (at == kNone) continue;
      OpGroup& g = b.at(which, at);
      ++g.count;
      g.total_ns += s.dur[i];
      g.self_ns += s.self[i];
      if (dev) {
        g.device_total_ns += device->total_ns[i];
        g.device_self_ns += device->self_ns[i];
      }
    }
    if (!launch_groups.empty())
      if (auto it = launch_groups.find(static_cast<int32_t>(i)); it != launch_groups.end())
        it->second = gs;
  }
  if (replays) charge_replays(t, *replays, launch_groups, b);
  out.by_shape = std::move(b.list(0));
  out.by_stack = std::move(b.list(1));
  sort_and_cut(out.by_shape, top, by, out.shape_rows);
  sort_and_cut(out.by_stack, top, by, out.stack_rows);
  return out;
}

}  // namespace mlprof
