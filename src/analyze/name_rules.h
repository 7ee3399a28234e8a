// Name-based rules shared by the analyses (steps, bottlenecks, flops): what a slice name says
// about the work it is. Private to src/analyze; the rules are documented in docs/analysis.md.
#pragma once

#include <string>
#include <string_view>

namespace mlprof::analyze_detail {

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

inline bool contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

// Collectives and point-to-point communication (NCCL kernels, c10d/gloo ops, PyTorch's
// record_param_comms). `l` is the lower-cased name.
inline bool is_communication_name(std::string_view l) {
  static constexpr std::string_view kMarks[] = {
      "nccl",          "gloo",       "c10d::",    "all_reduce",
      "allreduce",     "all_gather", "allgather", "reduce_scatter",
      "reducescatter", "all_to_all", "alltoall",  "record_param_comms",
      "rccl",          "hccl"};
  for (auto m : kMarks)
    if (contains(l, m)) return true;
  return false;
}

// A runtime call that blocks the host until device work is done: CUDA runtime and driver, HIP,
// and the MTIA runtime's synchronize / synchronizeStream. (critical_path.cpp keeps HTA's own
// list, which also counts cudaEventQuery and cudaMemcpyAsync, to match HTA's graph.)
inline bool is_host_sync_call_name(std::string_view n) {
  if (n.starts_with("cuda") || n.starts_with("hip") || n.starts_with("cu"))
    return n.ends_with("DeviceSynchronize") || n.ends_with("StreamSynchronize") ||
           n.ends_with("EventSynchronize") || n == "cuCtxSynchronize";
  return n == "synchronize" || n == "synchronizeStream" || n == "synchronizeDevice";
}

// The device-wide ones: they wait for every stream.
inline bool is_device_sync_call_name(std::string_view n) {
  return n.ends_with("DeviceSynchronize") || n == "cuCtxSynchronize" || n == "synchronize" ||
         n == "synchronizeDevice";
}

// Synchronous copy APIs: the host thread blocks until the copy is done.
inline bool is_blocking_copy_call_name(std::string_view n) {
  return n == "cudaMemcpy" || n == "hipMemcpy" || n == "hipMemcpyWithStream" ||
         n == "cudaMemcpy2D" || n == "cuMemcpyDtoH_v2" || n == "cuMemcpyHtoD_v2" ||
         n == "hipMemcpyDtoH" || n == "hipMemcpyHtoD";
}

// ATen ops that read a device value on the host (tensor.item()): a wait for the device.
inline bool is_device_read_op_name(std::string_view n) {
  return n == "aten::item" || n == "aten::_local_scalar_dense";
}

inline bool is_data_loading_name(std::string_view l) {
  return contains(l, "dataloader") || contains(l, "data_load") || contains(l, "dataset");
}

}  // namespace mlprof::analyze_detail
