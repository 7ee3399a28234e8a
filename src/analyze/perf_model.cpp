#include "mlprof/analyze/perf_model.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <unordered_map>

namespace mlprof {

namespace {

std::string_view strip_aten(std::string_view op) {
  constexpr std::string_view kPrefix = "aten::";
  return op.starts_with(kPrefix) ? op.substr(kPrefix.size()) : op;
}

// How to read an op's arguments: which model, and where its flags sit in Concrete Inputs.
enum class Model : uint8_t {
  kMm,
  kAddmm,
  kScaledMm,
  kBmm,
  kBaddbmm,
  kMatmul,
  kLinear,
  kGroupedMm,
  kSdpa,      // [B, H, L, d] layout
  kSdpaBLHD,  // _flash_attention_forward / _efficient_attention_forward: [B, L, H, d]
  kSdpaBwd,   // grad_out, q, k, v in [B, H, L, d]
  kSdpaBwdBLHD,
  kConvolution,  // convolution / _convolution
  kConvNd,       // conv1d / conv2d / conv3d
  kConvTransposeNd,
  kConvBwd,
  kLayerNorm,
  kBatchNorm,
  kGroupNorm,  // group_norm(input, num_groups, weight, bias, ...)
  kNativeGroupNorm,
  kRmsNorm,
  kLayerNormBwd,
  kBatchNormBwd,
  kGroupNormBwd,
  kRmsNormBwd,
  kSoftmax,
  kSoftmaxBwd,
  kPointwise,
  kCompare,  // pointwise with a bool result
  kReduce,
  kScan,  // cumsum / cumprod: output as large as the input
  kEmbedding,
  kEmbeddingBwd,
  kCopy,
  kFill,
};

struct ModelInfo {
  Model model;
  int flag = -1;  // Concrete Inputs index of is_causal / training / half_to_float / dim
};

// The ops named with their model (and the Concrete Inputs index of their flag).
std::unordered_map<std::string_view, ModelInfo> named_models() {
  return {
      {"mm", {Model::kMm}},
      {"addmm", {Model::kAddmm}},
      {"_scaled_mm", {Model::kScaledMm}},
      {"bmm", {Model::kBmm}},
      {"baddbmm", {Model::kBaddbmm}},
      {"matmul", {Model::kMatmul}},
      {"linear", {Model::kLinear}},
      {"_grouped_mm", {Model::kGroupedMm}},
      {"_scaled_grouped_mm", {Model::kGroupedMm}},
      // Attention: the Concrete Inputs index of is_causal (custom_mask_type for efficient).
      {"scaled_dot_product_attention", {Model::kSdpa, 5}},
      {"_scaled_dot_product_flash_attention", {Model::kSdpa, 4}},
      {"_scaled_dot_product_efficient_attention", {Model::kSdpa, 6}},
      {"_scaled_dot_product_cudnn_attention", {Model::kSdpa, 6}},
      {"_flash_attention_forward", {Model::kSdpaBLHD, 8}},
      {"_efficient_attention_forward", {Model::kSdpaBLHD, 9}},
      {"_scaled_dot_product_flash_attention_backward", {Model::kSdpaBwd, 11}},
      {"_scaled_dot_product_efficient_attention_backward", {Model::kSdpaBwd, 11}},
      {"_scaled_dot_product_cudnn_attention_backward", {Model::kSdpaBwd, 14}},
      {"_flash_attention_backward", {Model::kSdpaBwdBLHD, 11}},
      {"_efficient_attention_backward", {Model::kSdpaBwdBLHD, 14}},
      {"convolution", {Model::kConvolution}},
      {"_convolution", {Model::kConvolution}},
      {"conv1d", {Model::kConvNd}},
      {"conv2d", {Model::kConvNd}},
      {"conv3d", {Model::kConvNd}},
      {"conv_transpose1d", {Model::kConvTransposeNd}},
      {"conv_transpose2d", {Model::kConvTransposeNd}},
      {"conv_transpose3d", {Model::kConvTransposeNd}},
      {"convolution_backward", {Model::kConvBwd}},
      {"layer_norm", {Model::kLayerNorm}},
      {"native_layer_norm", {Model::kLayerNorm}},
      {"batch_norm", {Model::kBatchNorm, 5}},
      {"native_batch_norm", {Model::kBatchNorm, 5}},
      {"_batch_norm_impl_index", {Model::kBatchNorm, 5}},
      {"cudnn_batch_norm", {Model::kBatchNorm, 5}},
      {"miopen_batch_norm", {Model::kBatchNorm, 5}},
      {"_native_batch_norm_legit", {Model::kBatchNorm, 5}},
      {"group_norm", {Model::kGroupNorm}},
      {"native_group_norm", {Model::kNativeGroupNorm}},
      {"rms_norm", {Model::kRmsNorm}},
      {"_fused_rms_norm", {Model::kRmsNorm}},
      {"native_layer_norm_backward", {Model::kLayerNormBwd}},
      {"native_batch_norm_backward", {Model::kBatchNormBwd}},
      {"native_group_norm_backward", {Model::kGroupNormBwd}},
      {"_fused_rms_norm_backward", {Model::kRmsNormBwd}},
      {"softmax", {Model::kSoftmax, -1}},
      {"_softmax", {Model::kSoftmax, 2}},
      {"log_softmax", {Model::kSoftmax, -1}},
      {"_log_softmax", {Model::kSoftmax, 2}},
      {"_softmax_backward_data", {Model::kSoftmaxBwd}},
      {"_log_softmax_backward_data", {Model::kSoftmaxBwd}},
      {"embedding", {Model::kEmbedding}},
      {"embedding_dense_backward", {Model::kEmbeddingBwd}},
      {"embedding_backward", {Model::kEmbeddingBwd}},
      {"copy_", {Model::kCopy}},
      {"fill_", {Model::kFill}},
      {"zero_", {Model::kFill}},
      {"cumsum", {Model::kScan}},
      {"cumprod", {Model::kScan}},
      {"norm", {Model::kReduce, 2}},
      {"linalg_vector_norm", {Model::kReduce, 2}},
  };
}

// Reductions: Concrete Inputs index 1 is the dims.
constexpr std::string_view kReduceOps[] = {
    "sum",      "mean",     "amax",      "amin", "max", "min",    "prod",   "var",          "std",
    "var_mean", "std_mean", "logsumexp", "any",  "all", "argmax", "argmin", "count_nonzero"};

// Pointwise: TraceLens's unary and binary elementwise lists, and the other common ones.
constexpr std::string_view kPointwiseOps[] = {"abs",
                                              "neg",
                                              "exp",
                                              "exp2",
                                              "log",
                                              "log2",
                                              "log1p",
                                              "sqrt",
                                              "rsqrt",
                                              "sin",
                                              "cos",
                                              "tanh",
                                              "sigmoid",
                                              "silu",
                                              "gelu",
                                              "relu",
                                              "hardswish",
                                              "hardsigmoid",
                                              "leaky_relu",
                                              "elu",
                                              "erf",
                                              "reciprocal",
                                              "clamp",
                                              "clamp_min",
                                              "clamp_max",
                                              "pow",
                                              "mish",
                                              "softplus",
                                              "sign",
                                              "floor",
                                              "ceil",
                                              "round",
                                              "trunc",
                                              "square",
                                              "hardtanh",
                                              "threshold",
                                              "nan_to_num",
                                              "add",
                                              "sub",
                                              "rsub",
                                              "mul",
                                              "div",
                                              "maximum",
                                              "minimum",
                                              "where",
                                              "masked_fill",
                                              "gelu_backward",
                                              "silu_backward",
                                              "sigmoid_backward",
                                              "tanh_backward",
                                              "threshold_backward",
                                              "hardtanh_backward",
                                              "fmod",
                                              "remainder",
                                              "lerp",
                                              "addcmul",
                                              "addcdiv",
                                              "logical_and",
                                              "logical_or",
                                              "logical_not",
                                              "bitwise_and",
                                              "bitwise_or",
                                              "bitwise_not",
                                              "copysign",
                                              "atan2",
                                              "relu_",
                                              "gelu_",
                                              "silu_",
                                              "add_",
                                              "sub_",
                                              "mul_",
                                              "div_",
                                              "clamp_",
                                              "clamp_min_",
                                              "clamp_max_",
                                              "tanh_",
                                              "sigmoid_",
                                              "exp_",
                                              "neg_",
                                              "masked_fill_",
                                              "pow_",
                                              "sqrt_",
                                              "rsqrt_",
                                              "hardtanh_",
                                              "threshold_",
                                              "addcmul_",
                                              "addcdiv_",
                                              "lerp_",
                                              "leaky_relu_"};

// Pointwise with a bool result.
constexpr std::string_view kCompareOps[] = {"eq", "ne",    "lt",    "le",      "gt",
                                            "ge", "isnan", "isinf", "isfinite"};

const std::unordered_map<std::string_view, ModelInfo>& model_table() {
  static const std::unordered_map<std::string_view, ModelInfo> t = [] {
    std::unordered_map<std::string_view, ModelInfo> m = named_models();
    for (std::string_view r : kReduceOps) m.emplace(r, ModelInfo{Model::kReduce, 1});
    for (std::string_view p : kPointwiseOps) m.emplace(p, ModelInfo{Model::kPointwise});
    for (std::string_view c : kCompareOps) m.emplace(c, ModelInfo{Model::kCompare});
    return m;
  }();
  return t;
}

const ModelInfo* find_model(std::string_view op) {
  const auto& t = model_table();
  auto it = t.find(strip_aten(op));
  return it == t.end() ? nullptr : &it->second;
}

double prod(const Shape& s, size_t from = 0, size_t to = SIZE_MAX) {
  double p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i) p *= static_cast<double>(s[i]);
  return p;
}

// Reads one call's arguments by position; missing positions read as empty.
struct Args {
  const OpCallArgs& a;
  const Shape& dim(size_t i) const {
    static const Shape kEmpty;
    return i < a.dims.size() ? a.dims[i] : kEmpty;
  }
  std::string_view type(size_t i) const {
    return i < a.types.size() ? std::string_view(a.types[i]) : std::string_view();
  }
  std::string_view concrete(size_t i) const {
    return i < a.concrete.size() ? std::string_view(a.concrete[i]) : std::string_view();
  }
  int bpe(size_t i) const { return bytes_per_element(type(i)); }
  bool is_tensor(size_t i) const { return bpe(i) > 0; }
  // Present as a tensor with a shape (an optional tensor that was passed).
  bool present(size_t i) const { return is_tensor(i) && !dim(i).empty(); }
  double elems(size_t i) const { return is_tensor(i) ? prod(dim(i)) : 0; }
  // Elements actually read: dimensions with stride 0 (expanded, broadcast) are read once.
  double elems_read(size_t i) const {
    if (!is_tensor(i)) return 0;
    const Shape& d = dim(i);
    if (i < a.strides.size() && a.strides[i].size() == d.size()) {
      double p = 1;
      for (size_t k = 0; k < d.size(); ++k)
        if (a.strides[i][k] != 0) p *= static_cast<double>(d[k]);
      return p;
    }
    return prod(d);
  }
  bool flag(int i) const {  // "True" / nonzero integer
    if (i < 0) return false;
    std::string_view c = concrete(static_cast<size_t>(i));
    if (c == "True" || c == "true") return true;
    int64_t v = 0;
    auto [p, ec] = std::from_chars(c.data(), c.data() + c.size(), v);
    return ec == std::errc() && v != 0;
  }
  std::optional<std::vector<int64_t>> ints(size_t i) const { return parse_int_list(concrete(i)); }
  // output_mask "[True, False, True]" (default all true).
  std::vector<bool> mask(size_t i, size_t n) const {
    std::vector<bool> m(n, true);
    std::string_view c = concrete(i);
    if (c.empty()) return m;
    size_t k = 0, pos = 0;
    while (k < n) {
      size_t t = c.find("True", pos), f = c.find("False", pos);
      if (t == std::string_view::npos && f == std::string_view::npos) break;
      if (t < f) {
        m[k++] = true;
        pos = t + 4;
      } else {
        m[k++] = false;
        pos = f + 5;
      }
    }
    return m;
  }
};

PerfEstimate est(PerfFamily f, double flops, double bytes, std::string_view type,
                 bool backward = false) {
  PerfEstimate e;
  e.family = f;
  e.flops = flops;
  e.bytes = bytes;
  e.dtype = std::string(dtype_short_name(type));
  e.backward = backward;
  return e;
}

// ---- GEMM ---------------------------------------------------------------------------------------

// TraceLens GEMM.flops_func / bytes_func: 2MNK (+ MN for a bias), A + B + C (+ N bias) elements.
double gemm_flops(double m, double n, double k, bool bias) {
  return 2 * m * n * k + (bias ? m * n : 0);
}
double gemm_elems(double m, double n, double k, bool bias) {
  return m * k + k * n + m * n + (bias ? n : 0);
}

std::optional<PerfEstimate> gemm(Model model, const Args& a) {
  switch (model) {
    case Model::kMm: {
      const Shape &x = a.dim(0), &y = a.dim(1);
      if (x.size() != 2 || y.size() != 2 || a.bpe(0) == 0) return std::nullopt;
      double m = x[0], k = x[1], n = y[1];
      return est(PerfFamily::kGemm, gemm_flops(m, n, k, false),
                 gemm_elems(m, n, k, false) * a.bpe(0), a.type(0));
    }
    case Model::kAddmm: {
      const Shape &x = a.dim(1), &y = a.dim(2);
      if (x.size() != 2 || y.size() != 2 || a.bpe(1) == 0) return std::nullopt;
      double m = x[0], k = x[1], n = y[1];
      return est(PerfFamily::kGemm, gemm_flops(m, n, k, true), gemm_elems(m, n, k, true) * a.bpe(1),
                 a.type(1));
    }
    case Model::kScaledMm: {
      // _scaled_mm(a, b, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum);
      // TraceLens: fp8 inputs write a 16-bit result.
      const Shape &x = a.dim(0), &y = a.dim(1);
      int bpe = a.bpe(0);
      if (x.size() != 2 || y.size() != 2 || bpe == 0) return std::nullopt;
      double m = x[0], k = x[1], n = y[1];
      bool bias = a.present(4);
      int out = bpe == 1 ? 2 : bpe;
      double bytes = (m * k + k * n) * bpe + m * n * out + (bias ? n * out : 0);
      return est(PerfFamily::kGemm, gemm_flops(m, n, k, bias), bytes, a.type(0));
    }
    case Model::kBmm:
    case Model::kBaddbmm: {
      bool bias = model == Model::kBaddbmm;
      size_t i = bias ? 1 : 0;
      const Shape &x = a.dim(i), &y = a.dim(i + 1);
      if (x.size() != 3 || y.size() != 3 || a.bpe(i) == 0) return std::nullopt;
      double b = x[0], m = x[1], k = x[2], n = y[2];
      return est(PerfFamily::kGemm, b * gemm_flops(m, n, k, bias),
                 b * gemm_elems(m, n, k, bias) * a.bpe(i), a.type(i));
    }
    case Model::kMatmul: {
      Shape x = a.dim(0), y = a.dim(1);
      if (x.empty() || y.empty() || a.bpe(0) == 0) return std::nullopt;
      if (x.size() == 1) x.insert(x.begin(), 1);
      if (y.size() == 1) y.push_back(1);
      double m = x[x.size() - 2], k = x.back(), n = y.back();
      size_t bx = x.size() - 2, by = y.size() - 2, nb = std::max(bx, by);
      double batch = 1;
      for (size_t i = 0; i < nb; ++i) {
        int64_t dx = i < nb - bx ? 1 : x[i - (nb - bx)];
        int64_t dy = i < nb - by ? 1 : y[i - (nb - by)];
        batch *= static_cast<double>(std::max(dx, dy));
      }
      double bytes = (prod(x) + prod(y) + batch * m * n) * a.bpe(0);
      return est(PerfFamily::kGemm, batch * gemm_flops(m, n, k, false), bytes, a.type(0));
    }
    case Model::kLinear: {
      // linear(input [..., K], weight [N, K], bias [N]): the addmm / mm it becomes.
      const Shape &x = a.dim(0), &w = a.dim(1);
      if (x.empty() || w.size() != 2 || a.bpe(0) == 0) return std::nullopt;
      double m = prod(x, 0, x.size() - 1), k = x.back(), n = w[0];
      bool bias = a.present(2);
      return est(PerfFamily::kGemm, gemm_flops(m, n, k, bias), gemm_elems(m, n, k, bias) * a.bpe(0),
                 a.type(0));
    }
    case Model::kGroupedMm: {
      // _grouped_mm(mat_a, mat_b, offs, bias, out_dtype): 2D x 3D is the MoE case (tokens of
      // all experts stacked, one weight per expert); 3D x 3D is a bmm.
      const Shape &x = a.dim(0), &y = a.dim(1);
      int bpe = a.bpe(0);
      if (bpe == 0) return std::nullopt;
      int out = bpe == 1 ? 2 : bpe;
      if (x.size() == 2 && y.size() == 3) {
        double m = x[0], k = x[1], g = y[0], n = y[2];
        return est(PerfFamily::kGemm, 2 * m * n * k, (m * k + g * k * n) * bpe + m * n * out,
                   a.type(0));
      }
      if (x.size() == 3 && y.size() == 3) {
        double g = x[0], m = x[1], k = x[2], n = y[2];
        return est(PerfFamily::kGemm, g * 2 * m * n * k, g * ((m * k + k * n) * bpe + m * n * out),
                   a.type(0));
      }
      if (x.size() == 2 && y.size() == 2 && a.dim(2).size() == 1) {
        double m = x[0], k = x[1], n = y[1], g = static_cast<double>(a.dim(2)[0]);
        return est(PerfFamily::kGemm, 2 * m * n * k, (m * k + k * n) * bpe + g * m * n * out,
                   a.type(0));
      }
      if (x.size() == 3 && y.size() == 2) {
        double g = x[0], m = x[1], k = x[2], n = y[1];
        return est(PerfFamily::kGemm, 2 * g * m * n * k,
                   (g * m * k + k * n) * bpe + g * m * n * out, a.type(0));
      }
      return std::nullopt;
    }
    default:
      break;
  }
  return std::nullopt;
}

// ---- attention ----------------------------------------------------------------------------------

struct AttnDims {
  double b, hq, hkv, lq, lk, d, dv;
};

std::optional<AttnDims> attn_dims(const Shape& q, const Shape& k, const Shape& v, bool blhd) {
  if (q.size() != k.size() || q.size() != v.size() || q.size() < 3 || q.size() > 4)
    return std::nullopt;
  AttnDims r{};
  if (q.size() == 3) {  // [B*H, L, d] (no separate head dimension)
    r = {1,
         static_cast<double>(q[0]),
         static_cast<double>(k[0]),
         static_cast<double>(q[1]),
         static_cast<double>(k[1]),
         static_cast<double>(q[2]),
         static_cast<double>(v[2])};
  } else if (blhd) {
    r = {static_cast<double>(q[0]), static_cast<double>(q[2]), static_cast<double>(k[2]),
         static_cast<double>(q[1]), static_cast<double>(k[1]), static_cast<double>(q[3]),
         static_cast<double>(v[3])};
  } else {
    r = {static_cast<double>(q[0]), static_cast<double>(q[1]), static_cast<double>(k[1]),
         static_cast<double>(q[2]), static_cast<double>(k[2]), static_cast<double>(q[3]),
         static_cast<double>(v[3])};
  }
  if (r.hkv <= 0 || r.lq <= 0 || r.lk <= 0) return std::nullopt;
  return r;
}

// The share of query-key pairs a causal mask keeps: 1/2 when Lq == Lk (TraceLens, the
// flash-attention benchmarks); otherwise the exact count of the top-left aligned mask
// torch.nn.functional.scaled_dot_product_attention(is_causal=True) applies.
double causal_share(double lq, double lk) {
  if (lq == lk) return 0.5;
  double pairs = lq <= lk ? lq * (lq + 1) / 2 : lk * (lk + 1) / 2 + (lq - lk) * lk;
  return pairs / (lq * lk);
}

std::optional<PerfEstimate> attention(Model model, const ModelInfo& info, const Args& a) {
  bool bwd = model == Model::kSdpaBwd || model == Model::kSdpaBwdBLHD;
  bool blhd = model == Model::kSdpaBLHD || model == Model::kSdpaBwdBLHD;
  size_t q = bwd ? 1 : 0;
  // Variable-length (packed) flash attention: the shapes are the concatenation of sequences
  // whose lengths the shapes do not give.
  if (model == Model::kSdpaBLHD && (a.present(3) || a.present(4))) return std::nullopt;
  if (model == Model::kSdpaBwdBLHD && (a.present(6) || a.present(7))) return std::nullopt;
  auto d = attn_dims(a.dim(q), a.dim(q + 1), a.dim(q + 2), blhd);
  int bpe = a.bpe(q);
  if (!d || bpe == 0) return std::nullopt;
  bool causal = a.flag(info.flag);
  double share = causal ? causal_share(d->lq, d->lk) : 1;
  double qk = 2 * d->b * d->hq * d->lq * d->lk * d->d;
  double pv = 2 * d->b * d->hq * d->lq * d->lk * d->dv;
  double q_el = d->b * d->lq * d->hq * d->d, k_el = d->b * d->lk * d->hkv * d->d;
  double v_el = d->b * d->lk * d->hkv * d->dv, o_el = d->b * d->lq * d->hq * d->dv;
  if (!bwd)
    return est(PerfFamily::kAttention, (qk + pv) * share, (q_el + k_el + v_el + o_el) * bpe,
               a.type(q));
  // TraceLens SDPA.flops_bwd_func with flash_impl (every fused backward recomputes S = QK^T):
  // recompute QK^T, dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q, plus the GQA reduction
  // of dK and dV from H_Q to H_KV heads.
  double gqa = d->hq / d->hkv - 1;
  double flops =
      qk + (pv + d->b * d->lk * d->dv * gqa) + pv + qk + (qk + d->b * d->lk * d->d * gqa);
  double bytes = (q_el + k_el + v_el + o_el + q_el + k_el + v_el) * bpe;
  return est(PerfFamily::kAttention, flops * share, bytes, a.type(q), true);
}

// ---- convolution --------------------------------------------------------------------------------

// One spatial parameter list (stride, padding, dilation): "" -> default, one value broadcast.
std::optional<std::vector<int64_t>> spatial(const Args& a, size_t i, size_t nd, int64_t dflt) {
  std::string_view c = a.concrete(i);
  if (c.empty()) return std::vector<int64_t>(nd, dflt);
  auto v = parse_int_list(c);
  if (!v) return std::nullopt;
  if (v->size() == 1) v->assign(nd, (*v)[0]);
  if (v->size() != nd) return std::nullopt;
  return v;
}

struct ConvCall {
  Shape x, w, out;
  bool bias = false, transposed = false;
  int bpe = 0;
  std::string_view type;
};

std::optional<ConvCall> conv_call(Model model, const Args& a) {
  ConvCall c;
  c.x = a.dim(0);
  c.w = a.dim(1);
  c.bpe = a.bpe(0);
  c.type = a.type(0);
  if (c.x.size() < 3 || c.w.size() != c.x.size() || c.bpe == 0) return std::nullopt;
  size_t nd = c.x.size() - 2;
  c.bias = a.present(2);
  if (a.a.concrete.empty()) {
    if (model == Model::kConvTransposeNd) return std::nullopt;  // output size unknown
    // PyTorch before 2.2 records no Concrete Inputs: stride and padding unknown. The output is
    // taken the input's size (stride 1, "same" padding: exact for the common 3x3 pad-1 conv),
    // as `mlprof flops` always did (docs/roofline.md).
    c.out = {c.x[0], c.w[0]};
    for (size_t i = 0; i < nd; ++i) c.out.push_back(c.x[i + 2]);
    return c;
  }
  size_t i_stride = 3, i_pad = 4, i_dil = 5, i_outpad = 0, i_groups = 6;
  if (model == Model::kConvolution) {
    c.transposed = a.flag(6);
    i_outpad = 7;
    i_groups = 8;
  } else if (model == Model::kConvTransposeNd) {
    c.transposed = true;
    i_outpad = 5;
    i_groups = 6;
    i_dil = 7;
  }
  auto stride = spatial(a, i_stride, nd, 1), dil = spatial(a, i_dil, nd, 1);
  std::vector<int64_t> outpad(nd, 0);
  if (c.transposed) {
    auto op = spatial(a, i_outpad, nd, 0);
    if (!op) return std::nullopt;
    outpad = *op;
  }
  std::string_view pad_text = a.concrete(i_pad);
  bool same = pad_text.find("same") != std::string_view::npos;
  bool valid = pad_text.find("valid") != std::string_view::npos;
  auto pad = (same || valid) ? std::optional<std::vector<int64_t>>(std::vector<int64_t>(nd, 0))
                             : spatial(a, i_pad, nd, 0);
  if (!stride || !dil || !pad) return std::nullopt;
  int64_t groups = 1;
  if (!a.concrete(i_groups).empty()) {
    auto g = parse_int_list(a.concrete(i_groups));
    if (!g || g->size() != 1 || (*g)[0] <= 0) return std::nullopt;
    groups = (*g)[0];
  }
  c.out = {c.x[0], c.transposed ? c.w[1] * groups : c.w[0]};
  for (size_t i = 0; i < nd; ++i) {
    int64_t in = c.x[i + 2], k = c.w[i + 2];
    int64_t o;
    if (same)
      o = in;
    else if (c.transposed)
      o = (in - 1) * (*stride)[i] - 2 * (*pad)[i] + (*dil)[i] * (k - 1) + outpad[i] + 1;
    else if ((*stride)[i] <= 0)
      return std::nullopt;
    else
      o = (in + 2 * (*pad)[i] - (*dil)[i] * (k - 1) - 1) / (*stride)[i] + 1;
    if (o <= 0) return std::nullopt;
    c.out.push_back(o);
  }
  return c;
}

// TraceLens CONV.flops_func: 2 * prod(w[1:]) per output element (per input element when
// transposed), plus one add per output element for a bias.
double conv_flops(const Shape& x, const Shape& w, const Shape& out, bool bias, bool transposed) {
  double per = 2 * prod(w, 1);
  return (transposed ? prod(x) : prod(out)) * per + (bias ? prod(out) : 0);
}

Shape swap01(const Shape& s) {
  Shape t = s;
  if (t.size() >= 2) std::swap(t[0], t[1]);
  return t;
}

std::optional<PerfEstimate> conv(Model model, const Args& a) {
  if (model != Model::kConvBwd) {
    auto c = conv_call(model, a);
    if (!c) return std::nullopt;
    double bytes = (prod(c->x) + prod(c->w) + (c->bias ? c->out[1] : 0) + prod(c->out)) * c->bpe;
    return est(PerfFamily::kConv, conv_flops(c->x, c->w, c->out, c->bias, c->transposed), bytes,
               c->type);
  }
  // convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
  // transposed, output_padding, groups, output_mask): grad_output has the output's shape.
  const Shape &out = a.dim(0), &x = a.dim(1), &w = a.dim(2);
  int bpe = a.bpe(1);
  if (x.size() < 3 || w.size() != x.size() || out.size() != x.size() || bpe == 0)
    return std::nullopt;
  bool transposed = a.flag(7);
  std::vector<bool> mask = a.mask(10, 3);
  double flops = 0, elems = 0;
  if (mask[0]) {  // grad input: the transposed convolution of grad_output
    flops += conv_flops(out, w, x, false, !transposed);
    elems += prod(out) + prod(w) + prod(x);
  }
  if (mask[1]) {  // grad weight: input (x) correlated with grad_output
    flops += transposed ? conv_flops(swap01(out), swap01(x), swap01(w), false, false)
                        : conv_flops(swap01(x), swap01(out), swap01(w), false, false);
    elems += prod(out) + prod(x) + prod(w);
  }
  if (mask[2]) {  // grad bias: sum of grad_output per channel
    flops += prod(out);
    elems += prod(out) + static_cast<double>(out[1]);
  }
  return est(PerfFamily::kConv, flops, elems * bpe, a.type(1), true);
}

// ---- normalization ------------------------------------------------------------------------------

// TraceLens Normalization.flops_func / bytes_func (N elements, C channels = the normalized size).
PerfEstimate norm_fwd(double n, double c, bool affine, bool bias, bool training, int bpe,
                      std::string_view type) {
  double flops = c * 3 + (training ? n * 3 : 0) + c * 3 + 2 * n;
  double weights = 2 + (affine ? 1 + (bias ? 1 : 0) : 0) + (training ? 2 : 0);
  return est(PerfFamily::kNorm, flops, 2 * n * bpe + weights * c * bpe, type);
}

// TraceLens Normalization.flops_func_bwd / bytes_func_bwd.
PerfEstimate norm_bwd(double n, double c, bool affine, bool bias, bool training,
                      const std::vector<bool>& mask, int bpe, std::string_view type) {
  double epc = c > 0 ? n / c : 0;
  double per = (training ? 0 : 3) + 4 * epc;
  if (mask[0]) {
    if (training) per += 5 * epc;
  } else {
    per += 2 * epc;
  }
  double bytes = n * bpe + n * bpe * (mask[0] && training ? 2 : 1);
  if (training) bytes += c * bpe;
  if (affine) {
    bytes += c * bpe;
    if (training) bytes += c * bpe * (bias ? 2 : 1);
  }
  return est(PerfFamily::kNorm, c * per, bytes, type, true);
}

double normalized_size(const Args& a, size_t i, const Shape& x) {
  auto v = a.ints(i);
  if (v && !v->empty()) {
    double p = 1;
    for (int64_t d : *v) p *= static_cast<double>(d);
    return p;
  }
  return x.empty() ? 0 : static_cast<double>(x.back());
}

std::optional<PerfEstimate> norm(Model model, const ModelInfo& info, const Args& a) {
  switch (model) {
    case Model::kLayerNorm: {
      const Shape& x = a.dim(0);
      if (x.empty() || a.bpe(0) == 0) return std::nullopt;
      return norm_fwd(prod(x), normalized_size(a, 1, x), a.present(2), a.present(3), true, a.bpe(0),
                      a.type(0));
    }
    case Model::kBatchNorm: {
      const Shape& x = a.dim(0);
      if (x.size() < 2 || a.bpe(0) == 0) return std::nullopt;
      // TraceLens reads `training` with bool("False") == True; mlprof reads the flag.
      return norm_fwd(prod(x), static_cast<double>(x[1]), a.present(1), true, a.flag(info.flag),
                      a.bpe(0), a.type(0));
    }
    case Model::kGroupNorm:
    case Model::kNativeGroupNorm: {
      const Shape& x = a.dim(0);
      if (x.size() < 2 || a.bpe(0) == 0) return std::nullopt;
      size_t w = model == Model::kGroupNorm ? 2 : 1;
      return norm_fwd(prod(x), static_cast<double>(x[1]), a.present(w), a.present(w + 1), true,
                      a.bpe(0), a.type(0));
    }
    case Model::kRmsNorm: {
      // TraceLens RMSNorm: rows * (2C + 2) for the rsqrt of the mean square, one multiply per
      // element (two with a weight); read x, write y, read the weight.
      const Shape& x = a.dim(0);
      int bpe = a.bpe(0);
      if (x.empty() || bpe == 0) return std::nullopt;
      double n = prod(x), c = normalized_size(a, 1, x);
      bool affine = a.present(2);
      double flops = n / c * (2 * c + 2) + n * (affine ? 2 : 1);
      return est(PerfFamily::kNorm, flops, 2 * n * bpe + (affine ? c * bpe : 0), a.type(0));
    }
    case Model::kLayerNormBwd: {
      // native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
      // output_mask)
      const Shape& x = a.dim(1);
      if (x.empty() || a.bpe(1) == 0) return std::nullopt;
      std::vector<bool> m = a.mask(7, 3);
      return norm_bwd(prod(x), normalized_size(a, 2, x), m[1], m[2], true, m, a.bpe(1), a.type(1));
    }
    case Model::kBatchNormBwd: {
      // native_batch_norm_backward(grad_out, input, weight, running_mean, running_var,
      // save_mean, save_invstd, train, eps, output_mask)
      const Shape& x = a.dim(1);
      if (x.size() < 2 || a.bpe(1) == 0) return std::nullopt;
      std::vector<bool> m = a.mask(9, 3);
      return norm_bwd(prod(x), static_cast<double>(x[1]), m[1], m[2], a.flag(7), m, a.bpe(1),
                      a.type(1));
    }
    case Model::kGroupNormBwd: {
      // native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group,
      // output_mask)
      const Shape& x = a.dim(1);
      if (x.size() < 2 || a.bpe(1) == 0) return std::nullopt;
      std::vector<bool> m = a.mask(9, 3);
      return norm_bwd(prod(x), static_cast<double>(x[1]), m[1], m[2], true, m, a.bpe(1), a.type(1));
    }
    case Model::kRmsNormBwd: {
      // _fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight, output_mask):
      // the normalization backward with no bias.
      const Shape& x = a.dim(1);
      if (x.empty() || a.bpe(1) == 0) return std::nullopt;
      std::vector<bool> m = a.mask(5, 2);
      m.push_back(false);
      return norm_bwd(prod(x), normalized_size(a, 2, x), m[1], false, true, m, a.bpe(1), a.type(1));
    }
    default:
      break;
  }
  return std::nullopt;
}

// ---- pointwise, reductions, softmax, embedding, copies ----------------------------------------

// Broadcast shape of every tensor input.
std::optional<Shape> broadcast(const Args& a, size_t n) {
  Shape out;
  for (size_t i = 0; i < n; ++i) {
    if (!a.is_tensor(i)) continue;
    const Shape& s = a.dim(i);
    if (s.size() > out.size()) out.insert(out.begin(), s.size() - out.size(), 1);
    for (size_t k = 0; k < s.size(); ++k) {
      int64_t& o = out[out.size() - s.size() + k];
      int64_t v = s[k];
      if (o == 1)
        o = v;
      else if (v != 1 && v != o)
        return std::nullopt;
    }
  }
  return out;
}

std::optional<PerfEstimate> pointwise(Model model, const Args& a) {
  size_t n = a.a.dims.size();
  int out_bpe = 0;
  double read = 0;
  std::string_view type;
  for (size_t i = 0; i < n; ++i) {
    int b = a.bpe(i);
    if (b == 0) continue;
    if (type.empty()) type = a.type(i);
    out_bpe = std::max(out_bpe, b);  // TraceLens: the wider of two tensor inputs
    read += a.elems_read(i) * b;
  }
  if (out_bpe == 0) return std::nullopt;
  if (model == Model::kCompare) out_bpe = 1;  // bool
  auto out = broadcast(a, n);
  if (!out) return std::nullopt;
  double elems = prod(*out);
  return est(PerfFamily::kElementwise, elems, read + elems * out_bpe, type);
}

std::optional<PerfEstimate> reduce(Model model, const ModelInfo& info, const Args& a) {
  const Shape& x = a.dim(0);
  int bpe = a.bpe(0);
  if (bpe == 0) return std::nullopt;
  double in = prod(x), out = in;
  if (model == Model::kReduce) {
    auto dims = a.ints(static_cast<size_t>(info.flag));
    out = 1;  // no dim: a full reduction
    if (dims && !dims->empty() && !x.empty()) {
      std::vector<bool> reduced(x.size(), false);
      for (int64_t d : *dims) {
        int64_t k = d < 0 ? d + static_cast<int64_t>(x.size()) : d;
        if (k < 0 || k >= static_cast<int64_t>(x.size())) return std::nullopt;
        reduced[static_cast<size_t>(k)] = true;
      }
      for (size_t k = 0; k < x.size(); ++k)
        if (!reduced[k]) out *= static_cast<double>(x[k]);
    }
  }
  return est(PerfFamily::kReduce, in, in * bpe + out * bpe, a.type(0));
}

std::optional<PerfEstimate> softmax(Model model, const ModelInfo& info, const Args& a) {
  // TraceLens Softmax: 3 FLOPs per element (exp, add, divide); read and write each element.
  // Backward: twice the forward (TraceLens's flops_bwd / bytes_bwd).
  bool bwd = model == Model::kSoftmaxBwd;
  const Shape& x = a.dim(0);
  int bpe = a.bpe(0);
  if (x.empty() || bpe == 0) return std::nullopt;
  double n = prod(x);
  int out = (!bwd && a.flag(info.flag)) ? 4 : bpe;  // half_to_float
  if (bwd) return est(PerfFamily::kSoftmax, 2 * 3 * n, 2 * 2 * n * bpe, a.type(0), true);
  return est(PerfFamily::kSoftmax, 3 * n, n * bpe + n * out, a.type(0));
}

std::optional<PerfEstimate> embedding(Model model, const Args& a) {
  if (model == Model::kEmbedding) {
    // embedding(weight [V, D], indices): gather one row per index, write it out.
    const Shape& w = a.dim(0);
    int bpe = a.bpe(0);
    if (w.size() != 2 || bpe == 0 || !a.is_tensor(1)) return std::nullopt;
    double n = a.elems(1), d = static_cast<double>(w[1]);
    return est(PerfFamily::kEmbedding, 0, 2 * n * d * bpe + n * a.bpe(1), a.type(0));
  }
  // embedding_dense_backward(grad_output [..., D], indices, num_weights, ...): accumulate one
  // row of grad per index into a [num_weights, D] gradient written once.
  const Shape& g = a.dim(0);
  int bpe = a.bpe(0);
  auto v = a.ints(2);
  if (g.empty() || bpe == 0 || !v || v->size() != 1 || !a.is_tensor(1)) return std::nullopt;
  double n = a.elems(1), d = static_cast<double>(g.back()), rows = static_cast<double>((*v)[0]);
  return est(PerfFamily::kEmbedding, n * d, n * d * bpe + n * a.bpe(1) + rows * d * bpe, a.type(0),
             true);
}

std::optional<PerfEstimate> copy(Model model, const Args& a) {
  if (model == Model::kFill) {
    if (a.bpe(0) == 0) return std::nullopt;
    return est(PerfFamily::kCopy, 0, a.elems(0) * a.bpe(0), a.type(0));
  }
  // copy_(self, src): read src (its own dtype; broadcast dimensions once), write self.
  if (a.bpe(0) == 0 || a.bpe(1) == 0) return std::nullopt;
  return est(PerfFamily::kCopy, 0, a.elems_read(1) * a.bpe(1) + a.elems(0) * a.bpe(0), a.type(0));
}

}  // namespace

std::string_view perf_family_name(PerfFamily f) {
  switch (f) {
    case PerfFamily::kGemm:
      return "gemm";
    case PerfFamily::kAttention:
      return "attention";
    case PerfFamily::kConv:
      return "conv";
    case PerfFamily::kNorm:
      return "norm";
    case PerfFamily::kSoftmax:
      return "softmax";
    case PerfFamily::kElementwise:
      return "elementwise";
    case PerfFamily::kReduce:
      return "reduce";
    case PerfFamily::kEmbedding:
      return "embedding";
    case PerfFamily::kCopy:
      return "copy";
    case PerfFamily::kKernelArgs:
      return "kernel args";
  }
  return "";
}

bool perf_family_uses_matrix_units(PerfFamily f) {
  return f == PerfFamily::kGemm || f == PerfFamily::kAttention || f == PerfFamily::kConv;
}

bool perf_estimate_uses_matrix_units(const PerfEstimate& e) {
  if (e.family == PerfFamily::kKernelArgs)
    return e.dtype == "bf16" || e.dtype == "fp16" || e.dtype == "fp8" || e.dtype == "int8";
  return perf_family_uses_matrix_units(e.family);
}

bool is_perf_modeled_op(std::string_view op) { return find_model(op) != nullptr; }

std::optional<PerfEstimate> op_perf(std::string_view op, const OpCallArgs& args) {
  const ModelInfo* info = find_model(op);
  if (info == nullptr) return std::nullopt;
  Args a{args};
  std::optional<PerfEstimate> r;
  switch (info->model) {
    case Model::kMm:
    case Model::kAddmm:
    case Model::kScaledMm:
    case Model::kBmm:
    case Model::kBaddbmm:
    case Model::kMatmul:
    case Model::kLinear:
    case Model::kGroupedMm:
      r = gemm(info->model, a);
      break;
    case Model::kSdpa:
    case Model::kSdpaBLHD:
    case Model::kSdpaBwd:
    case Model::kSdpaBwdBLHD:
      r = attention(info->model, *info, a);
      break;
    case Model::kConvolution:
    case Model::kConvNd:
    case Model::kConvTransposeNd:
    case Model::kConvBwd:
      r = conv(info->model, a);
      break;
    case Model::kLayerNorm:
    case Model::kBatchNorm:
    case Model::kGroupNorm:
    case Model::kNativeGroupNorm:
    case Model::kRmsNorm:
    case Model::kLayerNormBwd:
    case Model::kBatchNormBwd:
    case Model::kGroupNormBwd:
    case Model::kRmsNormBwd:
      r = norm(info->model, *info, a);
      break;
    case Model::kSoftmax:
    case Model::kSoftmaxBwd:
      r = softmax(info->model, *info, a);
      break;
    case Model::kPointwise:
    case Model::kCompare:
      r = pointwise(info->model, a);
      break;
    case Model::kReduce:
    case Model::kScan:
      r = reduce(info->model, *info, a);
      break;
    case Model::kEmbedding:
    case Model::kEmbeddingBwd:
      r = embedding(info->model, a);
      break;
    case Model::kCopy:
    case Model::kFill:
      r = copy(info->model, a);
      break;
  }
  if (r && (!std::isfinite(r->flops) || !std::isfinite(r->bytes) || r->flops < 0 || r->bytes <= 0))
    return std::nullopt;
  return r;
}

int bytes_per_element(std::string_view t) {
  if (t.starts_with("c10::")) t.remove_prefix(5);
  if (t == "float" || t == "int" || t == "unsigned int" || t == "qint32") return 4;
  if (t == "BFloat16" || t == "Half" || t == "short int" || t == "short") return 2;
  if (t == "double" || t == "long int" || t == "long" || t == "complex<float>") return 8;
  if (t == "signed char" || t == "unsigned char" || t == "bool" || t == "qint8" || t == "quint8" ||
      t.starts_with("Float8") || t.starts_with("Float4"))
    return 1;
  if (t == "complex<double>") return 16;
  return 0;
}

std::string_view dtype_short_name(std::string_view t) {
  if (t.starts_with("c10::")) t.remove_prefix(5);
  if (t == "BFloat16") return "bf16";
  if (t == "Half") return "fp16";
  if (t == "float") return "fp32";
  if (t == "double") return "fp64";
  if (t.starts_with("Float8")) return "fp8";
  if (t.starts_with("Float4")) return "fp4";
  if (t == "signed char" || t == "unsigned char" || t == "qint8" || t == "quint8") return "int8";
  return "";
}

std::optional<std::vector<std::string>> parse_string_list(std::string_view j) {
  std::vector<std::string> out;
  size_t i = 0, n = j.size();
  auto ws = [&] {
    while (i < n && (j[i] == ' ' || j[i] == '\n' || j[i] == '\t' || j[i] == '\r')) ++i;
  };
  ws();
  if (i >= n || j[i] != '[') return std::nullopt;
  ++i;
  while (true) {
    ws();
    if (i >= n) return std::nullopt;
    if (j[i] == ']') return out;
    if (j[i] == '"') {
      std::string s;
      ++i;
      while (i < n && j[i] != '"') {
        if (j[i] == '\\' && i + 1 < n) ++i;
        s.push_back(j[i++]);
      }
      if (i >= n) return std::nullopt;
      ++i;
      out.push_back(std::move(s));
    } else {  // a non-string element: keep its text
      size_t b = i;
      int depth = 0;
      while (i < n && (depth > 0 || (j[i] != ',' && j[i] != ']'))) {
        if (j[i] == '[' || j[i] == '{') ++depth;
        if (j[i] == ']' || j[i] == '}') --depth;
        ++i;
      }
      out.emplace_back(j.substr(b, i - b));
    }
    ws();
    if (i < n && j[i] == ',') ++i;
  }
}

std::optional<std::vector<int64_t>> parse_int_list(std::string_view t) {
  std::vector<int64_t> out;
  size_t i = 0, n = t.size();
  while (i < n && (t[i] == ' ' || t[i] == '[' || t[i] == '(')) ++i;
  while (i < n) {
    if (t[i] == ']' || t[i] == ')') break;
    int64_t v = 0;
    auto [p, ec] = std::from_chars(t.data() + i, t.data() + n, v);
    if (ec != std::errc()) return std::nullopt;
    out.push_back(v);
    i = static_cast<size_t>(p - t.data());
    while (i < n && (t[i] == ' ' || t[i] == ',')) ++i;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace mlprof
