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

bool uses_tensor_cores(std::string_view n) {
  // The TensorBoard profiler plugin's list (tb_plugin/torch_tb_profiler/profiler/
  // tensor_core.py), then names of newer tensor-core kernels: CUTLASS "tensorop", Hopper
  // gmma/wgmma, cuBLASLt/cuDNN "xmma" variants, FlashAttention, "16816"/"1688" MMA shapes.
  static constexpr std::array<std::string_view, 27> kPatterns = {
      "h884", "s884", "h1688", "s1688", "hmma", "i8816", "16816", "c1688", "xmma_gemm",
      "xmma_implicit_gemm", "xmma_sparse_conv", "xmma_sparse_gemm",
      "xmma_warp_specialized_implicit_gemm", "dgrad_1x1_stride_2x2", "first_layer_wgrad_kernel",
      "conv1x1", "conv2d_c1_k1", "direct_group",
      // newer names
      "tensorop", "gmma", "wgmma", "_tensor16x8x", "tensor16x8x", "flash_fwd", "flash_bwd", "fmha",
      "xmma_fprop"};
  for (std::string_view p : kPatterns) {
    if (contains(n, p)) return true;
  }
  return false;
}

bool is_hta_launch_call_name(std::string_view name) {
  return name == "cudaLaunchKernel" || name == "cudaLaunchKernelExC" || name == "cudaMemcpyAsync" ||
         name == "cudaMemsetAsync";
}

bool is_launch_call_name(std::string_view name) {
  if (is_hta_launch_call_name(name)) return true;
  // MTIA's runtime (category mtia_runtime) submits every kernel and copy through one call.
  static constexpr std::array<std::string_view, 12> kNames = {
      "cuLaunchKernel",  "cuLaunchKernelEx", "cudaLaunchCooperativeKernel",
      "cudaMemcpy",      "cudaMemset",       "cudaMemcpy2DAsync",
      "cudaGraphLaunch", "hipLaunchKernel",  "hipExtLaunchKernel",
      "hipMemcpyAsync",  "hipMemsetAsync",   "runFunction - job_prep_and_submit_for_execution"};
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
