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

// HTA's memory-kernel bucket: the name's first 11 characters for memcpys ("Memcpy HtoD"),
// "Memset" for memsets, "Memcpy Unknown" otherwise.
std::string_view memory_kernel_kind(std::string_view name);
// Kineto names host copies from pageable memory "Memcpy HtoD (Pageable -> Device)".
bool is_pageable_memcpy(std::string_view name);

// Name-based tensor-core heuristic: the TensorBoard plugin's substring list (h884, s884, h1688,
// s1688, hmma, i8816, 16816, c1688, xmma_gemm, ...) plus newer names (cutlass tensorop,
// sm90 gmma/wgmma, flash attention, cuBLASLt/triton tensor-core tiles).
bool uses_tensor_cores(std::string_view kernel_name);
// An AMD GPU (name "AMD"/"Instinct"/"Radeon", or a 64-wide wavefront): uses_tensor_cores() is
// NVIDIA's naming and its computeMajor is no CUDA compute capability.
bool is_amd_device(const DeviceInfo& device);

// CPU-side launch calls (cuda_runtime / cuda_driver / mtia_runtime): cudaLaunchKernel,
// cudaLaunchKernelExC, cuLaunchKernel, cudaMemcpyAsync, cudaMemsetAsync, cudaGraphLaunch,
// hipLaunchKernel, ..., MTIA's "runFunction - job_prep_and_submit_for_execution".
bool is_launch_call_name(std::string_view name);
// HTA v0.6.1 counts only cudaLaunchKernel, cudaLaunchKernelExC, cudaMemcpyAsync and
// cudaMemsetAsync in its launch statistics and queue length.
bool is_hta_launch_call_name(std::string_view name);
// cuda_runtime, cuda_driver, Runtime (old Kineto); cuda_sync is *not* a launch category.
bool is_runtime_category(std::string_view category);

}  // namespace mlprof
