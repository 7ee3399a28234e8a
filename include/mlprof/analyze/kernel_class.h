// Classifying GPU work by name and category: HTA's kernel types, memcpy kinds, tensor-core use.
// Pure string functions, shared by kernels, gpu, ranks and the bottleneck rules.
#pragma once

#include <cstdint>
#include <string_view>

#include "mlprof/trace.h"

namespace mlprof {

// Holistic Trace Analysis' three kernel types. Communication: names matching
// `^nccl|^hip|^hccl|ncclKernel`; memory: `^Memcpy|^Memset|^dma`; computation: the rest.
enum class KernelType : uint8_t {
  kCommunication = 0,
  kMemory = 1,
  kComputation = 2,
  kSync = 3,  // cuda_sync events (HTA mode only): in the span and idle time, in no type
};

KernelType hta_kernel_type(std::string_view name);
// mlprof's own kernel type (hta_compatible = false): HTA's, plus the collectives that do not
// come from NCCL/RCCL and so escape HTA's name pattern: PyTorch symmetric-memory
// (multimem_all_reduce_kernel, one_shot_all_reduce), vLLM/SGLang custom all-reduce
// (cross_device_reduce), TensorRT-LLM (oneShotAllReduceKernel), AMD quick reduce. A collective is
// communication, never compute. hta_compatible = true: hta_kernel_type.
KernelType kernel_type(std::string_view name, bool hta_compatible);
bool is_collective_kernel_name(std::string_view name);
// "COMMUNICATION", "MEMORY", "COMPUTATION" (HTA's spelling).
std::string_view kernel_type_name(KernelType t);

// What a GPU-track slice is, from its category (new and old Kineto spellings) and name.
enum class GpuWorkKind : uint8_t {
  kKernel,      // cat kernel / Kernel
  kMemcpy,      // cat gpu_memcpy / Memcpy, or a name starting "Memcpy"
  kMemset,      // cat gpu_memset / Memset, or a name starting "Memset"
  kAnnotation,  // gpu_user_annotation: a range, not work; excluded from every GPU analysis
  kOther,       // anything else on a GPU track (counted as GPU work)
  kSync,        // cuda_sync (stream/event/context waits): not work; HTA counts it in its span
};
GpuWorkKind gpu_work_kind(std::string_view category, std::string_view name);
// "kernel", "memcpy", "memset", "annotation", "sync", "other": the spelling every output uses.
std::string_view gpu_work_kind_name(GpuWorkKind k);

// HTA's memory-kernel bucket: the name's first 11 characters for memcpys ("Memcpy HtoD"),
// "Memset" for memsets, "Memcpy Unknown" otherwise.
std::string_view memory_kernel_kind(std::string_view name);
// Kineto names host copies from pageable memory "Memcpy HtoD (Pageable -> Device)".
bool is_pageable_memcpy(std::string_view name);

// What a kernel's name says about matrix-unit (NVIDIA tensor core, AMD matrix core) use. Judged by
// library family, each with its own naming: the TensorBoard plugin's list for cuBLAS/cuDNN
// (h884, s1688, hmma, 16816, xmma_gemm, ...), cuBLAS 12's nvjet kernels, CUTLASS tensorop /
// sm90 gmma / sm100 umma, cuBLASLt/cuDNN xmma, TensorRT-LLM block-scaled GEMMs (MxE4m3, E2m1),
// FlashAttention/FMHA; AMD: Tensile/hipBLASLt (Cijk_..._MI32x32x8), Composable Kernel (xdl,
// wmma), MIOpen implicit GEMM (gtcx = xdlops), any mfma. fp8/fp4 markers in a GEMM's name count
// as matrix-unit use: no GPU runs block-scaled fp8/fp4 matmuls anywhere else.
struct MatrixKernel {
  bool matrix = false;      // runs on tensor/matrix cores
  bool gemm_like = false;   // a GEMM/conv/matmul/attention kernel (eligible for them)
  std::string_view family;  // "nvjet (cuBLAS)", "Tensile/hipBLASLt MFMA", "fp32 SIMT GEMM", ...
  std::string_view dtype;   // marker in the name: "fp4", "fp8", "bf16", "fp16", "tf32", "fp32", ""
};
MatrixKernel classify_matrix_kernel(std::string_view kernel_name);
// classify_matrix_kernel(name).matrix.
bool uses_tensor_cores(std::string_view kernel_name);
// An AMD GPU (name "AMD"/"Instinct"/"Radeon", or a 64-wide wavefront): uses_tensor_cores() is
// NVIDIA's naming and its computeMajor is no CUDA compute capability.
bool is_amd_device(const DeviceInfo& device);

// CPU-side launch calls (cuda_runtime / cuda_driver / mtia_runtime): cudaLaunchKernel,
// cudaLaunchKernelExC, cuLaunchKernel, cudaMemcpyAsync, cudaMemsetAsync, cudaGraphLaunch,
// hipLaunchKernel, ..., MTIA's "runFunction - job_prep_and_submit_for_execution".
bool is_launch_call_name(std::string_view name);
// HTA v0.6.1's launch statistics (cuda_kernel_analysis.py get_cuda_kernel_launch_stats):
// cudaLaunchKernel, cudaLaunchKernelExC, MTIA's runFunction - job_prep_and_submit_for_execution,
// and the memory calls cudaMemcpyAsync, cudaMemsetAsync.
bool is_hta_launch_stats_call_name(std::string_view name);
// HTA v0.6.1's queue length (trace_symbol_table.py get_runtime_launch_events_mask): those plus
// cuLaunchKernel(Ex), hipLaunchKernel, hipExtModuleLaunchKernel, hipMemcpyAsync, hipMemsetAsync,
// hipMemcpyWithStream.
bool is_hta_queue_call_name(std::string_view name);
// A CUDA/HIP graph replay: cudaGraphLaunch (and its _ptsz/_v10000 forms), cuGraphLaunch,
// hipGraphLaunch. Its GPU events share its correlation and have no CPU op of their own.
bool is_graph_launch_call_name(std::string_view name);
// A launch call that starts one kernel (cudaLaunchKernel, cuLaunchKernelEx, hipExtLaunchKernel...):
// not a copy, memset or graph launch. What a capture pass's launches without args.kernel are.
bool is_kernel_launch_call_name(std::string_view name);
// cuda_runtime, cuda_driver, Runtime (old Kineto); cuda_sync is *not* a launch category.
bool is_runtime_category(std::string_view category);

}  // namespace mlprof
