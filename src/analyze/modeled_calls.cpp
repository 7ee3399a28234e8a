#include "mlprof/analyze/modeled_calls.h"

#include <unordered_map>

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

}  // namespace

ModeledCalls collect_modeled_calls(const Trace& trace) {
  ModeledCalls r;
  const SliceTable& s = trace.slices;
  const size_t n = s.size();
  r.gpu = has_gpu(trace);
  // Modeled calls: the outermost op with a model whose recorded arguments fit it (an op inside
  // it is part of it: aten::linear's addmm, aten::layer_norm's native_layer_norm).
  StringId dims_key = trace.strings.find("Input Dims");
  StringId type_key = trace.strings.find("Input type");
  StringId conc_key = trace.strings.find("Concrete Inputs");
  StringId strides_key = trace.strings.find("Input Strides");
  StringId flop_key = trace.strings.find("kernel_flop");
  StringId gb_key = trace.strings.find("kernel_num_gb");
  StringId dtype_key = trace.strings.find("kernel_flop_dtype");  // Triton Proton's flops width
  std::vector<int8_t> modeled(trace.strings.size(), -1);
  std::vector<int32_t> call_of(n, -1);
  // Why an op with kernels has no call: 1 no model, 2 no shapes, 3 shapes do not fit.
  std::vector<uint8_t> why(n, 1);
  std::vector<ModeledCall>& calls = r.calls;
  // GPU work by category, not by track: a trimmed trace may put ops and kernels on one track.
  std::vector<int8_t> gpu_cat(trace.strings.size(), -1);
  auto is_gpu_work = [&](size_t i) {
    int8_t& g = gpu_cat[s.cat[i]];
    if (g < 0) {
      GpuWorkKind k = gpu_work_kind(trace.str(s.cat[i]), "");
      g = (k == GpuWorkKind::kKernel || k == GpuWorkKind::kMemcpy || k == GpuWorkKind::kMemset) ? 1
                                                                                                : 0;
    }
    return g == 1;
  };
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

  // Each compute kernel to its call.
  GpuEvents ev = collect_gpu_events(trace);
  OpAttribution attribution(trace);
  // Trimmed traces (PyTorch's profile_analysis test) link kernels to ops by External id alone.
  StringId ext_key = trace.strings.find("External id");
  std::unordered_map<int64_t, int32_t> ext_op;
  auto op_by_ext = [&](uint32_t k) -> int32_t {
    if (ext_key == StringPool::kNotFound) return -1;
    const Arg* x = trace.find_arg(s.args_begin[k], s.args_count[k], ext_key);
    auto id = x ? x->as_int() : std::nullopt;
    if (!id || *id <= 0) return -1;
    if (ext_op.empty()) {
      for (size_t i = 0; i < n; ++i) {
        if (is_gpu_work(i)) continue;
        const Arg* y = trace.find_arg(s.args_begin[i], s.args_count[i], ext_key);
        if (auto v = y ? y->as_int() : std::nullopt; v && *v > 0)
          ext_op.emplace(*v, static_cast<int32_t>(i));
      }
      ext_op.emplace(-1, -1);  // built
    }
    auto it = ext_op.find(*id);
    return it == ext_op.end() ? -1 : it->second;
  };
  std::unordered_map<int32_t, size_t> unmodeled_of;  // op slice -> row
  for (const GpuEvent& e : ev.events) {
    if (e.kind != GpuWorkKind::kKernel || e.type == KernelType::kCommunication) continue;
    int64_t dur = e.dur();
    r.gpu_kernel_ns += dur;
    const uint32_t k = e.slice;
    // A kernel that carries its own numbers (Inductor's kernel_flop / kernel_num_gb) is a call.
    if (flop_key != StringPool::kNotFound || gb_key != StringPool::kNotFound) {
      const Arg* f = flop_key == StringPool::kNotFound
                         ? nullptr
                         : trace.find_arg(s.args_begin[k], s.args_count[k], flop_key);
      const Arg* g = gb_key == StringPool::kNotFound
                         ? nullptr
                         : trace.find_arg(s.args_begin[k], s.args_count[k], gb_key);
      double fv = -1, gv = -1;
      if (f) fv = f->as_double().value_or(-1);
      if (g) gv = g->as_double().value_or(-1);
      if (fv >= 0 || gv > 0) {
        ModeledCall c;
        c.slice = static_cast<int32_t>(k);
        c.est.family = PerfFamily::kKernelArgs;
        c.est.flops = std::max(0.0, fv);
        c.est.bytes = std::max(0.0, gv) * 1e9;
        // The FLOPs' width where the trace gives it (Proton's flops8/16/32/64); Inductor's
        // kernel_flop has none: a vector-peak roofline.
        c.est.dtype = std::string(arg_text(trace, s.args_begin[k], s.args_count[k], dtype_key));
        c.kernel_ns = dur;
        c.kernels = 1;
        c.kernel_name = s.name[k];
        c.kernel_slices = {k};
        calls.push_back(std::move(c));
        continue;
      }
    }
    int32_t op = attribution.op_of(e);
    if (op < 0) op = op_by_ext(k);  // a kernel with no launch record: its own External id
    if (op < 0) continue;
    int32_t ci = call_of[static_cast<size_t>(op)];
    if (ci < 0) {
      // The innermost op that tried a model, else the op itself.
      int32_t q = op, named = -1;
      while (q >= 0) {
        if (why[static_cast<size_t>(q)] != 1) {
          named = q;
          break;
        }
        q = s.parent[static_cast<size_t>(q)];
      }
      int32_t at = named >= 0 ? named : op;
      auto [it, inserted] =
          unmodeled_of.emplace(s.name[static_cast<size_t>(at)], r.unmodeled.size());
      if (inserted) {
        RooflineUnmodeled u;
        u.name = std::string(trace.str(s.name[static_cast<size_t>(at)]));
        uint8_t w = named >= 0 ? why[static_cast<size_t>(named)] : 1;
        u.reason = w == 2   ? "no shapes recorded"
                   : w == 3 ? "shapes do not fit the model"
                            : "no model";
        r.unmodeled.push_back(std::move(u));
      }
      RooflineUnmodeled& u = r.unmodeled[it->second];
      ++u.calls;
      u.kernel_ns += dur;
      continue;
    }
    ModeledCall& c = calls[static_cast<size_t>(ci)];
    if (c.kernels == 0)
      c.kernel_name = s.name[k];
    else if (c.kernel_name != s.name[k])
      c.one_kernel_name = false;
    ++c.kernels;
    c.kernel_ns += dur;
    c.kernel_slices.push_back(k);
  }

  return r;
}

}  // namespace mlprof
