// `mlprof heap PATH`: the host-memory report (peak and who held it, leaks, temporaries,
// allocation rate) of a trace with memory events, e.g. one written by `mlprof run --memory`.
#include "cli/command.h"

namespace mlprof::cli {
namespace {

std::function<int()> setup_heap(CLI::App& sub) {
  auto a = std::make_shared<AnalysisArgs>();
  auto o = std::make_shared<AnalysisOptions>();
  auto temporary_us = std::make_shared<double>(100);
  auto device = std::make_shared<std::string>("cpu");
  add_analysis_args(sub, *a);
  sub.add_option("--top", o->heap.top, "stacks per table (default 10)");
  sub.add_option("--frames", o->heap.max_frames, "frames kept per stack (default 6)");
  sub.add_option("--temporary-us", *temporary_us,
                 "an allocation freed within this many microseconds is temporary (default 100)");
  sub.add_option("--device", *device, "cpu, cuda or all (default cpu)")
      ->check(CLI::IsMember({"cpu", "cuda", "all"}));
  return [a, o, temporary_us, device]() {
    o->heap.temporary_ns = static_cast<int64_t>(*temporary_us * 1000);
    o->heap.device_type = *device == "cpu" ? 0 : *device == "cuda" ? 1 : -1;
    return run_analysis_command(*a, AnalysisId::kHeap, *o);
  };
}

}  // namespace

MLPROF_REGISTER_COMMAND("heap", "Host memory: peak and its stacks, leaks, temporaries, rate",
                        setup_heap);

}  // namespace mlprof::cli
