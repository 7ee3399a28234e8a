#include "mlprof/analyze/modeled_calls.h"

#include <map>
#include <tuple>
#include <unordered_map>

#include "analyze/trace_memo.h"
#include "mlprof/analyze/device_time.h"
#include "mlprof/analyze/gpu_events.h"

namespace mlprof {

namespace {

std::string_view arg_text(const Trace& t, uint32_t b, uint32_t n, StringId key) {
  if (key == StringPool::kNotFound) return {};
  const Arg* a = t.find_arg(b, n, key);
  if (a == nullptr || (a->type != ArgType::kJson && a->type != ArgType::kString)) return {};
  return t.str(a->s);
}

// "[4, 197, 768], [768, 768], [768]": Input Dims without the non-tensor arguments' [].
std::string shapes_text(const std::vector<Shape>& dims) {
  size_t last = dims.size();
  while (last > 0 && dims[last - 1].empty()) --last;
  std::string out;
  for (size_t i = 0; i < last; ++i) {
    if (i) out += ", ";
    out += '[';
    for (size_t k = 0; k < dims[i].size(); ++k) {
      if (k) out += ", ";
      out += std::to_string(dims[i][k]);
    }
    out += ']';
  }
  return out;
}

// Input Strides share Input Dims' syntax.
std::vector<Shape> shapes_or_empty(std::string_view text) {
  if (text.empty()) return {};
  auto v = parse_input_dims(text);
  return v ? std::move(*v) : std::vector<Shape>{};
}

// The modeled calls of one trace, and for each slice the call it is part of (-1 none) and why an
// op has no call (1 no model, 2 no shapes, 3 shapes do not fit).
struct CallIndex {
  std::vector<ModeledCall> calls;
  std::vector<int32_t> call_of;
  std::vector<uint8_t> why;
  uint64_t calls_without_shapes = 0;
  // The innermost op that tried a model at or above `op`, else `op` itself, and why it has none.
  std::pair<int32_t, uint8_t> unmodeled_at(const Trace& t, int32_t op) const {
    for (int32_t q = op; q >= 0; q = t.slices.parent[static_cast<size_t>(q)])
      if (why[static_cast<size_t>(q)] != 1) return {q, why[static_cast<size_t>(q)]};
    return {op, 1};
  }
};

// GPU work by category, not by track: a trimmed trace may put ops and kernels on one track.
struct GpuWorkCategories {
  const Trace& trace;
  std::vector<int8_t> cat;
  explicit GpuWorkCategories(const Trace& t) : trace(t), cat(t.strings.size(), -1) {}
  bool operator()(size_t i) {
    int8_t& g = cat[trace.slices.cat[i]];
    if (g < 0) {
      GpuWorkKind k = gpu_work_kind(trace.str(trace.slices.cat[i]), "");
      g = (k == GpuWorkKind::kKernel || k == GpuWorkKind::kMemcpy || k == GpuWorkKind::kMemset) ? 1
                                                                                                : 0;
    }
    return g == 1;
  }
};

CallIndex index_calls(const Trace& trace) {
  CallIndex r;
  const SliceTable& s = trace.slices;
  const size_t n = s.size();
  // Modeled calls: the outermost op with a model whose recorded arguments fit it (an op inside
  // it is part of it: aten::linear's addmm, aten::layer_norm's native_layer_norm).
  StringId dims_key = trace.strings.find("Input Dims");
  StringId type_key = trace.strings.find("Input type");
  StringId conc_key = trace.strings.find("Concrete Inputs");
  StringId strides_key = trace.strings.find("Input Strides");
  std::vector<int8_t> modeled(trace.strings.size(), -1);
  r.call_of.assign(n, -1);
  r.why.assign(n, 1);
  std::vector<int32_t>& call_of = r.call_of;
  std::vector<uint8_t>& why = r.why;
  std::vector<ModeledCall>& calls = r.calls;
  GpuWorkCategories is_gpu_work(trace);
  // Inside a modeled op recorded without shapes: counted once, at the outermost.
  std::vector<uint8_t> no_shapes(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (is_gpu_work(i)) continue;
    int32_t p = s.parent[i];
    if (p >= 0 && call_of[static_cast<size_t>(p)] >= 0) {
      call_of[i] = call_of[static_cast<size_t>(p)];
      continue;
    }
    const bool under_no_shapes = p >= 0 && no_shapes[static_cast<size_t>(p)] != 0;
    no_shapes[i] = under_no_shapes ? 1 : 0;
    int8_t& m = modeled[s.name[i]];
    if (m < 0) m = is_perf_modeled_op(trace.str(s.name[i])) ? 1 : 0;
    if (m == 0) continue;
    std::string_view dims = arg_text(trace, s.args_begin[i], s.args_count[i], dims_key);
    if (dims.empty()) {
      why[i] = 2;
      if (!under_no_shapes) ++r.calls_without_shapes;
      no_shapes[i] = 1;
      continue;
    }
    OpCallArgs a;
    auto d = parse_input_dims(dims);
    auto t = parse_string_list(arg_text(trace, s.args_begin[i], s.args_count[i], type_key));
    if (!d || !t) {
      why[i] = 3;
      continue;
    }
    a.dims = std::move(*d);
    a.types = std::move(*t);
    if (auto c = parse_string_list(arg_text(trace, s.args_begin[i], s.args_count[i], conc_key)))
      a.concrete = std::move(*c);
    a.strides = shapes_or_empty(arg_text(trace, s.args_begin[i], s.args_count[i], strides_key));
    auto e = op_perf(trace.str(s.name[i]), a);
    if (!e) {
      why[i] = 3;
      continue;
    }
    call_of[i] = static_cast<int32_t>(calls.size());
    ModeledCall c;
    c.slice = static_cast<int32_t>(i);
    c.est = std::move(*e);
    c.shapes = shapes_text(a.dims);
    calls.push_back(std::move(c));
  }
  return r;
}

// Charging compute kernels to calls (collect_modeled_calls): the trace's own calls, the capture
// traces' calls indexed as replayed kernels need them, the unmodeled ops' rows.
struct Charging {
  const Trace& trace;
  const GraphsResult* graphs;
  ModeledCalls& r;
  const CallIndex& own;
  GpuWorkCategories is_gpu_work;
  StringId flop_key, gb_key, dtype_key;
  // Replayed kernels: each capture trace's calls, indexed once; one call per (graph launch,
  // capture, captured call).
  std::map<const Trace*, CallIndex> capture_index;
  std::map<std::tuple<int32_t, const Trace*, int32_t>, size_t> replay_call;
  std::unordered_map<std::string, size_t> unmodeled_of;  // op name -> row
  StringId ext_key;
  std::unordered_map<int64_t, int32_t> ext_op;  // External id -> op, built on first use
  Charging(const Trace& t, const GraphsResult* g, ModeledCalls& res, const CallIndex& o)
      : trace(t),
        graphs(g),
        r(res),
        own(o),
        is_gpu_work(t),
        flop_key(t.strings.find("kernel_flop")),
        gb_key(t.strings.find("kernel_num_gb")),
        dtype_key(t.strings.find("kernel_flop_dtype")),
        ext_key(t.strings.find("External id")) {}
};

void note_unmodeled(Charging& ch, const std::string& name, uint8_t w, int64_t dur) {
  ModeledCalls& r = ch.r;
  auto [it, inserted] = ch.unmodeled_of.emplace(name, r.unmodeled.size());
  if (inserted) {
    RooflineUnmodeled u;
    u.name = name;
    u.reason = w == 2 ? "no shapes recorded" : w == 3 ? "shapes do not fit the model" : "no model";
    r.unmodeled.push_back(std::move(u));
  }
  RooflineUnmodeled& u = r.unmodeled[it->second];
  ++u.calls;
  u.kernel_ns += dur;
}

void add_kernel(const SliceTable& s, ModeledCall& c, uint32_t k, int64_t dur) {
  if (c.kernels == 0)
    c.kernel_name = s.name[k];
  else if (c.kernel_name != s.name[k])
    c.one_kernel_name = false;
  ++c.kernels;
  c.kernel_ns += dur;
  c.kernel_slices.push_back(k);
}

// A kernel that carries its own numbers (Inductor's kernel_flop / kernel_num_gb) is a call;
// false: it carries none.
bool kernel_args_call(Charging& ch, uint32_t k, int64_t dur) {
  const Trace& trace = ch.trace;
  const SliceTable& s = trace.slices;
  const StringId flop_key = ch.flop_key, gb_key = ch.gb_key;
  if (flop_key == StringPool::kNotFound && gb_key == StringPool::kNotFound) return false;
  const Arg* f = flop_key == StringPool::kNotFound
                     ? nullptr
                     : trace.find_arg(s.args_begin[k], s.args_count[k], flop_key);
  const Arg* g = gb_key == StringPool::kNotFound
                     ? nullptr
                     : trace.find_arg(s.args_begin[k], s.args_count[k], gb_key);
  double fv = -1, gv = -1;
  if (f) fv = f->as_double().value_or(-1);
  if (g) gv = g->as_double().value_or(-1);
  if (!(fv >= 0 || gv > 0)) return false;
  ModeledCall c;
  c.slice = static_cast<int32_t>(k);
  c.est.family = PerfFamily::kKernelArgs;
  c.est.flops = std::max(0.0, fv);
  c.est.bytes = std::max(0.0, gv) * 1e9;
  // The FLOPs' width where the trace gives it (Proton's flops8/16/32/64); Inductor's
  // kernel_flop has none: a vector-peak roofline.
  c.est.dtype = std::string(arg_text(trace, s.args_begin[k], s.args_count[k], ch.dtype_key));
  c.kernel_ns = dur;
  c.kernels = 1;
  c.kernel_name = s.name[k];
  c.kernel_slices = {k};
  ch.r.calls.push_back(std::move(c));
  return true;
}

// A replayed kernel to its captured op's call; false: not a matched replayed kernel.
bool charge_replayed(Charging& ch, uint32_t k, int64_t dur) {
  const Trace& trace = ch.trace;
  const GraphsResult* graphs = ch.graphs;
  std::vector<ModeledCall>& calls = ch.r.calls;
  const ReplayedKernel* rk = graphs ? graphs->replayed_kernel(k) : nullptr;
  if (rk == nullptr || rk->capture < 0) return false;
  const GraphCapture& cap = graphs->captures[static_cast<size_t>(rk->capture)];
  const Trace* ct = cap.trace ? cap.trace.get() : &trace;
  auto ci_it = ch.capture_index.find(ct);
  if (ci_it == ch.capture_index.end()) ci_it = ch.capture_index.emplace(ct, index_calls(*ct)).first;
  const CallIndex& ix = ci_it->second;
  const int32_t op = rk->captured_op;
  const int32_t ci = op >= 0 ? ix.call_of[static_cast<size_t>(op)] : -1;
  if (ci < 0) {
    if (op < 0) {
      note_unmodeled(ch, graphs->names[rk->op], 1, dur);
    } else {
      auto [at, w] = ix.unmodeled_at(*ct, op);
      note_unmodeled(ch, std::string(ct->str(ct->slices.name[static_cast<size_t>(at)])), w, dur);
    }
    return true;
  }
  auto [it, inserted] = ch.replay_call.emplace(std::tuple{rk->launch, ct, ci}, calls.size());
  if (inserted) {
    const ModeledCall& captured = ix.calls[static_cast<size_t>(ci)];
    ModeledCall c;
    c.slice = captured.slice;
    c.est = captured.est;
    c.shapes = captured.shapes;
    c.source = ct == &trace ? nullptr : ct;
    c.replay_launch = rk->launch;
    std::string_view path = graphs->names[rk->module];
    size_t slash = path.rfind('/');
    c.module = std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
    calls.push_back(std::move(c));
  }
  add_kernel(trace.slices, calls[it->second], k, dur);
  return true;
}

// Trimmed traces (PyTorch's profile_analysis test) link kernels to ops by External id alone:
// the op with kernel k's External id, -1 none.
int32_t op_by_ext(Charging& ch, uint32_t k) {
  const Trace& trace = ch.trace;
  const SliceTable& s = trace.slices;
  const StringId ext_key = ch.ext_key;
  std::unordered_map<int64_t, int32_t>& ext_op = ch.ext_op;
  if (ext_key == StringPool::kNotFound) return -1;
  const Arg* x = trace.find_arg(s.args_begin[k], s.args_count[k], ext_key);
  auto id = x ? x->as_int() : std::nullopt;
  if (!id || *id <= 0) return -1;
  if (ext_op.empty()) {
    for (size_t i = 0; i < s.size(); ++i) {
      if (ch.is_gpu_work(i)) continue;
      const Arg* y = trace.find_arg(s.args_begin[i], s.args_count[i], ext_key);
      if (auto v = y ? y->as_int() : std::nullopt; v && *v > 0)
        ext_op.emplace(*v, static_cast<int32_t>(i));
    }
    ext_op.emplace(-1, -1);  // built
  }
  auto it = ext_op.find(*id);
  return it == ext_op.end() ? -1 : it->second;
}

}  // namespace

std::string_view modeled_call_name(const Trace& trace, const ModeledCall& c) {
  const Trace& t = c.source ? *c.source : trace;
  return t.str(t.slices.name[static_cast<size_t>(c.slice)]);
}

int64_t modeled_call_ts(const Trace& trace, const ModeledCall& c) {
  return trace.slices.ts[static_cast<size_t>(c.replay_launch >= 0 ? c.replay_launch : c.slice)];
}

ModeledCalls collect_modeled_calls(const Trace& trace, const GraphsResult* graphs) {
  ModeledCalls r;
  const SliceTable& s = trace.slices;
  r.gpu = has_gpu(trace);
  CallIndex own = index_calls(trace);
  r.calls = std::move(own.calls);
  r.calls_without_shapes = own.calls_without_shapes;
  const std::vector<int32_t>& call_of = own.call_of;
  Charging ch(trace, graphs, r, own);

  // Each compute kernel to its call.
  std::shared_ptr<const GpuEvents> ev_shared = shared_gpu_events(trace);
  const GpuEvents& ev = *ev_shared;
  OpAttribution attribution(trace);
  for (const GpuEvent& e : ev.events) {
    if (e.kind != GpuWorkKind::kKernel || e.type == KernelType::kCommunication) continue;
    int64_t dur = e.dur();
    r.gpu_kernel_ns += dur;
    const uint32_t k = e.slice;
    if (kernel_args_call(ch, k, dur)) continue;
    if (charge_replayed(ch, k, dur)) continue;
    int32_t op = attribution.op_of(e);
    if (op < 0) op = op_by_ext(ch, k);  // a kernel with no launch record: its own External id
    if (op < 0) continue;
    int32_t ci = call_of[static_cast<size_t>(op)];
    if (ci < 0) {
      auto [at, w] = own.unmodeled_at(trace, op);
      note_unmodeled(ch, std::string(trace.str(s.name[static_cast<size_t>(at)])), w, dur);
      continue;
    }
    add_kernel(s, r.calls[static_cast<size_t>(ci)], k, dur);
  }

  return r;
}

std::shared_ptr<const ModeledCalls> shared_modeled_calls(const Trace& trace,
                                                         const GraphsResult* graphs) {
  TraceMemo* memo = TraceMemo::current();
  if (memo == nullptr)
    return std::make_shared<const ModeledCalls>(collect_modeled_calls(trace, graphs));
  return memo->get<ModeledCalls>(trace, MemoTable::kModeledCalls, graphs,
                                 [&] { return collect_modeled_calls(trace, graphs); });
}

}  // namespace mlprof
