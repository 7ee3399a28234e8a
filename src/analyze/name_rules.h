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

inline bool is_data_loading_name(std::string_view l) {
  return contains(l, "dataloader") || contains(l, "data_load") || contains(l, "dataset");
}

}  // namespace mlprof::analyze_detail
