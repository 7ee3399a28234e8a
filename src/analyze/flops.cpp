#include "mlprof/analyze/flops.h"

#include <algorithm>
#include <charconv>
#include <unordered_map>

#include "analyze/step_lookup.h"
#include "analyze/trace_memo.h"
#include "mlprof/analyze/device_peaks.h"
#include "mlprof/analyze/modeled_calls.h"
#include "mlprof/analyze/perf_model.h"

namespace mlprof {

namespace {

enum class FlopKind : int8_t {
  kNone = -1,
  kMm,                 // [M,K] x [K,N]
  kAddmm,              // bias, [M,K], [K,N]
  kMatmul,             // broadcasting matmul
  kLinear,             // input [..., K], weight [N, K]
  kBmm,                // [B,M,K] x [B,K,N]
  kBaddbmm,            // input, [B,M,K], [B,K,N]
  kConv,               // input [N,C,...], weight [Cout, C/g, k...]
  kConvBackward,       // grad_out [N,Cout,out...], input, weight
  kAttention,          // q [B,H,L,E], k [B,H,S,E], v [B,H,S,Ev]
  kAttentionBackward,  // grad_out, q, k, v
};

std::string_view strip_aten(std::string_view op) {
  constexpr std::string_view kPrefix = "aten::";
  return op.starts_with(kPrefix) ? op.substr(kPrefix.size()) : op;
}

FlopKind flop_kind(std::string_view full) {
  std::string_view op = strip_aten(full);
  if (op == "mm") return FlopKind::kMm;
  if (op == "addmm") return FlopKind::kAddmm;
  if (op == "matmul") return FlopKind::kMatmul;
  if (op == "linear") return FlopKind::kLinear;
  if (op == "bmm") return FlopKind::kBmm;
  if (op == "baddbmm") return FlopKind::kBaddbmm;
  if (op == "conv1d" || op == "conv2d" || op == "conv3d" || op == "convolution" ||
      op == "_convolution" || op == "cudnn_convolution" || op == "mkldnn_convolution")
    return FlopKind::kConv;
  if (op == "convolution_backward") return FlopKind::kConvBackward;
  if (op == "scaled_dot_product_attention" || op == "_scaled_dot_product_flash_attention" ||
      op == "_scaled_dot_product_efficient_attention" ||
      op == "_scaled_dot_product_cudnn_attention" || op == "_flash_attention_forward" ||
      op == "_efficient_attention_forward")
    return FlopKind::kAttention;
  if (op == "_scaled_dot_product_flash_attention_backward" ||
      op == "_scaled_dot_product_efficient_attention_backward" ||
      op == "_scaled_dot_product_cudnn_attention_backward" || op == "_flash_attention_backward" ||
      op == "_efficient_attention_backward")
    return FlopKind::kAttentionBackward;
  return FlopKind::kNone;
}

double prod(const Shape& s, size_t from, size_t to) {
  double p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i) p *= static_cast<double>(s[i]);
  return p;
}

std::optional<double> mm_flops(const Shape& a, const Shape& b) {
  if (a.size() != 2 || b.size() != 2) return std::nullopt;
  return 2.0 * a[0] * a[1] * b[1];
}

std::optional<double> matmul_flops(Shape a, Shape b) {
  if (a.empty() || b.empty()) return std::nullopt;
  if (a.size() == 1) a.insert(a.begin(), 1);  // vector as a 1 x K row
  if (b.size() == 1) b.push_back(1);          // vector as a K x 1 column
  double m = static_cast<double>(a[a.size() - 2]), k = static_cast<double>(a.back());
  double n = static_cast<double>(b.back());
  // Broadcast batch dimensions: the larger of each aligned pair (1 broadcasts).
  size_t ba = a.size() - 2, bb = b.size() - 2, nb = std::max(ba, bb);
  double batch = 1;
  for (size_t i = 0; i < nb; ++i) {
    int64_t da = i < nb - ba ? 1 : a[i - (nb - ba)];
    int64_t db = i < nb - bb ? 1 : b[i - (nb - bb)];
    batch *= static_cast<double>(std::max(da, db));
  }
  return 2.0 * batch * m * k * n;
}

std::optional<double> conv_flops(const Shape& input, const Shape& weight, const Shape* out) {
  if (input.size() < 3 || weight.size() != input.size()) return std::nullopt;
  double n = static_cast<double>(input[0]);
  double cout = static_cast<double>(weight[0]);
  double cin_per_group = static_cast<double>(weight[1]);
  double kernel = prod(weight, 2, weight.size());
  double out_spatial = out ? prod(*out, 2, out->size()) : prod(input, 2, input.size());
  return 2.0 * n * cout * out_spatial * cin_per_group * kernel;
}

std::optional<double> attention_flops(const Shape& q, const Shape& k, const Shape& v) {
  if (q.size() < 3 || k.size() != q.size() || v.size() != q.size()) return std::nullopt;
  double batch = prod(q, 0, q.size() - 2);
  double l = static_cast<double>(q[q.size() - 2]), e = static_cast<double>(q.back());
  double s = static_cast<double>(k[k.size() - 2]), ev = static_cast<double>(v.back());
  return 2.0 * batch * l * s * e + 2.0 * batch * l * s * ev;  // Q K^T, then softmax(.) V
}

}  // namespace

std::optional<std::vector<Shape>> parse_input_dims(std::string_view j) {
  std::vector<Shape> out;
  size_t i = 0, n = j.size();
  auto skip_ws = [&] {
    while (i < n && (j[i] == ' ' || j[i] == '\n' || j[i] == '\t' || j[i] == '\r')) ++i;
  };
  skip_ws();
  if (i >= n || j[i] != '[') return std::nullopt;
  ++i;
  while (true) {
    skip_ws();
    if (i < n && j[i] == ']') {
      ++i;
      break;
    }
    if (i >= n) return std::nullopt;
    if (j[i] == '[') {
      ++i;
      Shape s;
      while (true) {
        skip_ws();
        if (i < n && j[i] == ']') {
          ++i;
          break;
        }
        // Nested lists (TensorList inputs) are not shapes of one tensor: skip them.
        if (i < n && j[i] == '[') {
          int depth = 0;
          while (i < n) {
            if (j[i] == '[') ++depth;
            if (j[i] == ']' && --depth == 0) break;
            ++i;
          }
          ++i;
          s.clear();
        } else {
          int64_t v = 0;
          auto [p, ec] = std::from_chars(j.data() + i, j.data() + n, v);
          if (ec != std::errc()) return std::nullopt;
          i = static_cast<size_t>(p - j.data());
          s.push_back(v);
        }
        skip_ws();
        if (i < n && j[i] == ',') ++i;
      }
      out.push_back(std::move(s));
    } else {
      // A non-list element (null, a number): keep the position with an empty shape.
      while (i < n && j[i] != ',' && j[i] != ']') ++i;
      out.emplace_back();
    }
    skip_ws();
    if (i < n && j[i] == ',') ++i;
  }
  return out;
}

bool is_flop_counted_op(std::string_view op) { return flop_kind(op) != FlopKind::kNone; }

std::optional<double> op_flops(std::string_view op, const std::vector<Shape>& d) {
  auto at = [&](size_t k) -> const Shape* { return k < d.size() ? &d[k] : nullptr; };
  switch (flop_kind(op)) {
    case FlopKind::kMm:
      if (!at(1)) return std::nullopt;
      return mm_flops(d[0], d[1]);
    case FlopKind::kAddmm:
      if (!at(2)) return std::nullopt;
      return mm_flops(d[1], d[2]);
    case FlopKind::kMatmul:
      if (!at(1)) return std::nullopt;
      return matmul_flops(d[0], d[1]);
    case FlopKind::kLinear: {
      if (!at(1) || d[0].empty() || d[1].size() != 2) return std::nullopt;
      double rows = prod(d[0], 0, d[0].size() - 1);
      return 2.0 * rows * static_cast<double>(d[1][1]) * static_cast<double>(d[1][0]);
    }
    case FlopKind::kBmm:
      if (!at(1) || d[0].size() != 3 || d[1].size() != 3) return std::nullopt;
      return 2.0 * d[0][0] * d[0][1] * d[0][2] * d[1][2];
    case FlopKind::kBaddbmm:
      if (!at(2) || d[1].size() != 3 || d[2].size() != 3) return std::nullopt;
      return 2.0 * d[1][0] * d[1][1] * d[1][2] * d[2][2];
    case FlopKind::kConv:
      if (!at(1)) return std::nullopt;
      return conv_flops(d[0], d[1], nullptr);
    case FlopKind::kConvBackward: {
      if (!at(2)) return std::nullopt;
      auto f = conv_flops(d[1], d[2], &d[0]);
      if (!f) return std::nullopt;
      return 2 * *f;
    }
    case FlopKind::kAttention:
      if (!at(2)) return std::nullopt;
      return attention_flops(d[0], d[1], d[2]);
    case FlopKind::kAttentionBackward: {
      // Inputs start with grad_out, then q, k, v: 5 matmuls of the forward's size vs 2.
      if (!at(3)) return std::nullopt;
      auto f = attention_flops(d[1], d[2], d[3]);
      if (!f) return std::nullopt;
      return 2.5 * *f;
    }
    case FlopKind::kNone:
      break;
  }
  return std::nullopt;
}

FlopsResult analyze_flops(const Trace& trace, const FlopsOptions& options) {
  return analyze_flops(trace, analyze_steps(trace), options);
}

FlopsResult analyze_flops(const Trace& trace, const StepsResult& steps, const FlopsOptions& options,
                          const GraphsResult* graphs) {
  // A view over the calls the roofline prices (modeled_calls.h): the same model, FLOPs and GPU
  // time per call, so an op's FLOPs and TFLOP/s here equal its row in `mlprof roofline`. The rate
  // is over the GPU time of the kernels the op launched, never its host time: a host call returns
  // long before its kernels end (issue 26: aten::conv2d at 2,234.8 TFLOP/s on an H100 whose dense
  // bf16 peak is 989).
  FlopsResult r;
  const SliceTable& s = trace.slices;
  std::shared_ptr<const ModeledCalls> mc_shared = shared_modeled_calls(trace, graphs);
  const ModeledCalls& mc = *mc_shared;
  r.calls_without_shapes = mc.calls_without_shapes;
  std::unordered_map<std::string, size_t> row_of;
  std::vector<OpFlops> rows;
  std::vector<StepFlops> per_step(steps.steps.size());
  for (size_t k = 0; k < steps.steps.size(); ++k) {
    per_step[k].number = steps.steps[k].number;
    per_step[k].dur_ns = steps.steps[k].dur_ns;
  }
  double flops_in_steps = 0;
  std::unordered_map<std::string, double> matrix_flops_by_dtype;
  for (const ModeledCall& c : mc.calls) {
    if (c.est.flops <= 0) continue;  // copies: bytes only
    const size_t i = static_cast<size_t>(c.slice);
    const bool replayed = c.replay_launch >= 0;  // its op is in the capture's trace
    std::string name(modeled_call_name(trace, c));
    auto [it, inserted] = row_of.emplace(name, rows.size());
    if (inserted) {
      OpFlops row;
      row.name = name;
      rows.push_back(std::move(row));
    }
    OpFlops& row = rows[it->second];
    ++row.calls;
    // On a GPU trace a call is counted by its kernels, as in the roofline; one whose kernels
    // did not run (or were not recorded) has no rate.
    if (mc.gpu && c.kernel_ns <= 0) continue;
    ++row.calls_counted;
    row.flops += c.est.flops;
    const int64_t host_ns = replayed ? 0 : s.dur[i];  // a replay has no host call of its own
    row.total_ns += host_ns;
    row.gpu_ns += c.kernel_ns;
    r.total_flops += c.est.flops;
    r.counted_op_ns += mc.gpu ? c.kernel_ns : host_ns;
    if (perf_estimate_uses_matrix_units(c.est) && !c.est.dtype.empty())
      matrix_flops_by_dtype[c.est.dtype] += c.est.flops;
    int64_t k = step_index_at(steps, modeled_call_ts(trace, c));
    if (k >= 0) {
      per_step[static_cast<size_t>(k)].flops += c.est.flops;
      flops_in_steps += c.est.flops;
    }
  }
  for (OpFlops& row : rows) {
    int64_t t = mc.gpu ? row.gpu_ns : row.total_ns;
    // 1 FLOP/ns = 1e9 FLOP/s = 1e-3 TFLOP/s.
    row.tflops_per_s = t > 0 ? row.flops / static_cast<double>(t) / 1e3 : 0;
  }
  // An op none of whose calls ran kernels has no FLOPs counted here nor a roofline row.
  std::erase_if(rows, [](const OpFlops& o) { return o.calls_counted == 0; });
  std::sort(rows.begin(), rows.end(), [](const OpFlops& a, const OpFlops& b) {
    return a.flops != b.flops ? a.flops > b.flops : a.name < b.name;
  });
  if (options.top > 0 && rows.size() > options.top) rows.resize(options.top);
  r.ops = std::move(rows);
  r.op_tflops_per_s =
      r.counted_op_ns > 0 ? r.total_flops / static_cast<double>(r.counted_op_ns) / 1e3 : 0;
  if (!steps.steps.empty()) {
    r.wall_ns = steps.total_ns;
    r.achieved_tflops_per_s =
        r.wall_ns > 0 ? flops_in_steps / static_cast<double>(r.wall_ns) / 1e3 : 0;
  } else {
    r.wall_ns = trace.span_ns();
    r.achieved_tflops_per_s =
        r.wall_ns > 0 ? r.total_flops / static_cast<double>(r.wall_ns) / 1e3 : 0;
  }
  // MFU's peak, as the roofline's: the matrix peak of the dtype doing most matrix FLOPs.
  double best = 0;
  for (const auto& [dt, f] : matrix_flops_by_dtype)
    if (f > best || (f == best && dt < r.dtype)) best = f, r.dtype = dt;
  for (const DeviceInfo& d : trace.meta.devices)
    if (!d.name.empty()) {
      r.device = d.name;
      break;
    }
  if (options.peak_tflops > 0) {
    r.peak_tflops = options.peak_tflops;
    r.peak_source = "--peak-tflops";
  } else if (!r.device.empty() && !r.dtype.empty()) {
    if (auto p = find_device_peaks(r.device)) {
      r.peak_tflops = peak_tflops(*p, r.dtype, true);
      if (r.peak_tflops > 0) r.peak_source = "table: " + p->name + " " + r.dtype + " dense";
    }
  }
  for (StepFlops& st : per_step) {
    st.tflops_per_s = st.dur_ns > 0 ? st.flops / static_cast<double>(st.dur_ns) / 1e3 : 0;
    if (r.peak_tflops > 0) st.mfu = st.tflops_per_s / r.peak_tflops;
  }
  if (r.peak_tflops > 0) r.mfu = r.achieved_tflops_per_s / r.peak_tflops;
  r.steps = std::move(per_step);
  return r;
}

}  // namespace mlprof
