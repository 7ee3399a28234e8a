#include "mlprof/analyze/kernel_class.h"

#include <array>

namespace mlprof {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}

}  // namespace

KernelType hta_kernel_type(std::string_view name) {
  if (starts_with(name, "nccl") || starts_with(name, "hip") || starts_with(name, "hccl") ||
      contains(name, "ncclKernel")) {
    return KernelType::kCommunication;
  }
  if (starts_with(name, "Memcpy") || starts_with(name, "Memset") || starts_with(name, "dma")) {
    return KernelType::kMemory;
  }
  return KernelType::kComputation;
}

std::string_view kernel_type_name(KernelType t) {
  switch (t) {
    case KernelType::kCommunication:
      return "COMMUNICATION";
    case KernelType::kMemory:
      return "MEMORY";
    case KernelType::kComputation:
      return "COMPUTATION";
    case KernelType::kSync:
      return "SYNC";
  }
  return "COMPUTATION";
}

std::string_view gpu_work_kind_name(GpuWorkKind k) {
  switch (k) {
    case GpuWorkKind::kKernel:
      return "kernel";
    case GpuWorkKind::kMemcpy:
      return "memcpy";
    case GpuWorkKind::kMemset:
      return "memset";
    case GpuWorkKind::kAnnotation:
      return "annotation";
    case GpuWorkKind::kSync:
      return "sync";
    case GpuWorkKind::kOther:
      break;
  }
  return "other";
}

GpuWorkKind gpu_work_kind(std::string_view category, std::string_view name) {
  if (category == "gpu_user_annotation") return GpuWorkKind::kAnnotation;
  if (category == "kernel" || category == "Kernel") return GpuWorkKind::kKernel;
  if (category == "mtia_ccp_events") {
    return starts_with(name, "dma") ? GpuWorkKind::kMemcpy : GpuWorkKind::kKernel;
  }
  if (category == "gpu_memcpy" || category == "Memcpy" || starts_with(name, "Memcpy")) {
    return GpuWorkKind::kMemcpy;
  }
  if (category == "gpu_memset" || category == "Memset" || starts_with(name, "Memset")) {
    return GpuWorkKind::kMemset;
  }
  return GpuWorkKind::kOther;
}

std::string_view memory_kernel_kind(std::string_view name) {
  if (starts_with(name, "Memset")) return "Memset";
  if (!starts_with(name, "Memcpy")) return "Memcpy Unknown";
  return name.substr(0, 11);  // "Memcpy DtoH"
}

bool is_pageable_memcpy(std::string_view name) {
  return starts_with(name, "Memcpy") && contains(name, "Pageable");
}

bool is_amd_device(const DeviceInfo& d) {
  return d.name.find("AMD") != std::string::npos || d.name.find("Instinct") != std::string::npos ||
         d.name.find("Radeon") != std::string::npos || d.warp_size == 64;
}

namespace {

std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// "conv" that is not part of "convert" (vLLM's _typeConvert<...> is an elementwise kernel).
bool has_conv(std::string_view l) {
  for (size_t p = l.find("conv"); p != std::string_view::npos; p = l.find("conv", p + 4))
    if (l.substr(p + 4, 3) != "ert") return true;
  return false;
}

// Tensile/hipBLASLt name an MFMA kernel by its instruction shape: "_MI32x32x8x1_", "_MI16x16x16_".
bool has_tensile_mfma(std::string_view l) {
  for (size_t p = l.find("_mi"); p != std::string_view::npos; p = l.find("_mi", p + 3))
    if (p + 3 < l.size() && l[p + 3] >= '0' && l[p + 3] <= '9') return true;
  return false;
}

std::string_view dtype_marker(std::string_view l) {
  // Lowest precision first: "bmm_Bfloat16_MxE2m1MxE4m3" multiplies bf16 by mxfp4 weights.
  for (std::string_view m : {"e2m1", "mxfp4", "nvfp4", "fp4"})
    if (contains(l, m)) return "fp4";
  for (std::string_view m : {"e4m3", "e5m2", "fp8", "float8", "_f8"})
    if (contains(l, m)) return "fp8";
  for (std::string_view m : {"bf16", "bfloat16", "_bbs_", "_bss_"})
    if (contains(l, m)) return "bf16";
  if (contains(l, "tf32") || contains(l, "s16816") || contains(l, "s1688gemm")) return "tf32";
  for (std::string_view m : {"h884", "h1688", "h16816", "fp16", "f16", "half", "_hhs_", "_hb_"})
    if (contains(l, m)) return "fp16";
  for (std::string_view m : {"sgemm", "scudnn", "_sb_", "f32f32", "fp32"})
    if (contains(l, m)) return "fp32";
  return "";
}

}  // namespace

MatrixKernel classify_matrix_kernel(std::string_view n) {
  std::string ls = lower_ascii(n);
  std::string_view l = ls;
  MatrixKernel k;
  k.dtype = dtype_marker(l);
  k.gemm_like = contains(l, "gemm") || has_conv(l) || contains(l, "matmul") ||
                starts_with(l, "bmm_") || contains(l, "_bmm") || contains(l, "fmha") ||
                contains(l, "flash_fwd") || contains(l, "flash_bwd") || starts_with(l, "cijk_") ||
                starts_with(l, "nvjet");
  auto yes = [&](std::string_view family) {
    k.matrix = true;
    k.gemm_like = true;
    k.family = family;
    return k;
  };
  // AMD libraries.
  if (contains(l, "mfma")) return yes("MFMA");
  if (starts_with(l, "cijk_")) {
    if (has_tensile_mfma(l)) return yes("Tensile/hipBLASLt MFMA");
    k.family = "Tensile/hipBLASLt without MFMA";
    return k;
  }
  if (contains(l, "xdlops") || contains(l, "_xdl_") || contains(l, "_xdl")) {
    return yes("Composable Kernel / MIOpen xdlops (MFMA)");
  }
  if (starts_with(l, "igemm_") && contains(l, "gtcx")) return yes("MIOpen igemm xdlops (MFMA)");
  if (contains(l, "wmma")) return yes("WMMA");
  // NVIDIA libraries.
  // cuBLAS/cuDNN name the math of an xmma kernel too: "..._ffma_..." (fp32 fused multiply-add)
  // runs on the CUDA cores, as CUTLASS's "simt" kernels do. Measured on an H100
  // (tests/data/h100/advice/tf32_*): sm80_xmma_gemm_f32f32_f32f32_f32_..._ffma_... ran at
  // 51.7 TFLOP/s, the fp32 vector rate (66.9 peak); with TF32 allowed, sm90_xmma_gemm_f32f32_
  // tf32f32 ran 6.97x faster (21.29 -> 3.05 ms per 8192^3 GEMM). The TensorBoard plugin's "xmma"
  // entry predates these names.
  if (contains(l, "_ffma") || contains(l, "ffma_") || contains(l, "_simt") ||
      contains(l, "simt_")) {
    if (k.gemm_like) k.family = "GEMM/conv on CUDA cores (FFMA/SIMT)";
    return k;
  }
  if (starts_with(l, "nvjet")) return yes("nvjet (cuBLAS 12)");
  if (contains(l, "xmma")) return yes("xmma (cuBLASLt/cuDNN)");
  if (contains(l, "tensorop")) return yes("CUTLASS tensorop");
  if (contains(l, "gmma") || contains(l, "umma") || contains(l, "tcgen05")) {
    return yes("Hopper/Blackwell warpgroup MMA");
  }
  if (contains(l, "fmha") || contains(l, "flash_fwd") || contains(l, "flash_bwd") ||
      contains(l, "flash::")) {
    return yes("FlashAttention/FMHA");
  }
  if (k.gemm_like && (k.dtype == "fp8" || k.dtype == "fp4")) {
    return yes("block-scaled fp8/fp4 GEMM");
  }
  // The TensorBoard profiler plugin's list (tb_plugin/torch_tb_profiler/profiler/tensor_core.py)
  // for cuBLAS/cuDNN of Volta to Ampere: MMA shapes (h884, s1688, 16816) and hmma.
  static constexpr std::array<std::string_view, 17> kPlugin = {"h884",
                                                               "s884",
                                                               "h1688",
                                                               "s1688",
                                                               "hmma",
                                                               "i8816",
                                                               "16816",
                                                               "c1688",
                                                               "dgrad_1x1_stride_2x2",
                                                               "first_layer_wgrad_kernel",
                                                               "conv1x1",
                                                               "conv2d_c1_k1",
                                                               "direct_group",
                                                               "_tensor16x8x",
                                                               "tensor16x8x",
                                                               "i1688",
                                                               "xmma"};
  for (std::string_view p : kPlugin) {
    if (contains(n, p) || contains(l, p)) return yes("cuBLAS/cuDNN tensor-op (MMA shape)");
  }
  if (k.gemm_like) {
    k.family = starts_with(l, "igemm_") ? std::string_view("MIOpen igemm without xdlops")
                                        : std::string_view("GEMM/conv on CUDA/SIMD cores");
  }
  return k;
}

bool uses_tensor_cores(std::string_view n) { return classify_matrix_kernel(n).matrix; }

bool is_collective_kernel_name(std::string_view n) {
  if (hta_kernel_type(n) == KernelType::kCommunication) return true;
  std::string ls = lower_ascii(n);
  std::string_view l = ls;
  // Warp- and block-level reductions inside ordinary kernels are not collectives.
  if (contains(l, "warpallreduce") || contains(l, "warp_allreduce") ||
      contains(l, "blockallreduce") || contains(l, "block_allreduce")) {
    return false;
  }
  for (std::string_view m :
       {"all_reduce", "allreduce", "all_gather", "allgather", "reduce_scatter", "reducescatter",
        "alltoall", "all_to_all", "cross_device_reduce", "multimem", "rccl", "quickreduce"}) {
    if (contains(l, m)) return true;
  }
  return false;
}

KernelType kernel_type(std::string_view name, bool hta_compatible) {
  if (hta_compatible) return hta_kernel_type(name);
  KernelType t = hta_kernel_type(name);
  if (t == KernelType::kComputation && is_collective_kernel_name(name)) {
    return KernelType::kCommunication;
  }
  return t;
}

namespace {
constexpr std::string_view kMtiaLaunch = "runFunction - job_prep_and_submit_for_execution";
}  // namespace

bool is_hta_launch_stats_call_name(std::string_view name) {
  return name == "cudaLaunchKernel" || name == "cudaLaunchKernelExC" || name == "cudaMemcpyAsync" ||
         name == "cudaMemsetAsync" || name == kMtiaLaunch;
}

bool is_hta_queue_call_name(std::string_view name) {
  if (is_hta_launch_stats_call_name(name)) return true;
  static constexpr std::array<std::string_view, 7> kNames = {
      "cuLaunchKernel", "cuLaunchKernelEx", "hipLaunchKernel",    "hipExtModuleLaunchKernel",
      "hipMemcpyAsync", "hipMemsetAsync",   "hipMemcpyWithStream"};
  for (std::string_view k : kNames) {
    if (name == k) return true;
  }
  return false;
}

bool is_graph_launch_call_name(std::string_view name) {
  return name.starts_with("cudaGraphLaunch") || name.starts_with("cuGraphLaunch") ||
         name.starts_with("hipGraphLaunch");
}

bool is_kernel_launch_call_name(std::string_view name) {
  return is_launch_call_name(name) && name.find("Launch") != name.npos &&
         !is_graph_launch_call_name(name);
}

bool is_launch_call_name(std::string_view name) {
  // HTA's names (with MTIA's submit call, category mtia_runtime, that launches every kernel and
  // copy there) and more.
  if (is_hta_queue_call_name(name)) return true;
  static constexpr std::array<std::string_view, 6> kNames = {
      "cudaLaunchCooperativeKernel", "cudaMemcpy",      "cudaMemset",
      "cudaMemcpy2DAsync",           "cudaGraphLaunch", "hipExtLaunchKernel"};
  for (std::string_view k : kNames) {
    if (name == k) return true;
  }
  return false;
}

bool is_runtime_category(std::string_view category) {
  return category == "cuda_runtime" || category == "cuda_driver" || category == "Runtime" ||
         category == "cuda_runtime_api" || category == "mtia_runtime";
}

}  // namespace mlprof
