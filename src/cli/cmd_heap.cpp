// `mlprof heap PATH`: the host-memory report (peak and who held it, leaks, temporaries,
// allocation rate) of a trace with memory events, e.g. one written by `mlprof run --memory`.
#include <iostream>

#include "cli/command.h"
#include "mlprof/analyze/heap.h"
#include "mlprof/render/heap_render.h"

namespace mlprof::cli {
namespace {

struct HeapArgs {
  std::string path;
  size_t top = 10;
  size_t frames = 6;
  double temporary_us = 100;
  std::string device = "cpu";
  bool json = false;
};

std::function<int()> setup_heap(CLI::App& sub) {
  auto a = std::make_shared<HeapArgs>();
  sub.add_option("path", a->path, "trace file (.mlprof, .json, .json.gz)")->required();
  sub.add_option("--top", a->top, "stacks per table (default 10)");
  sub.add_option("--frames", a->frames, "frames kept per stack (default 6)");
  sub.add_option("--temporary-us", a->temporary_us,
                 "an allocation freed within this many microseconds is temporary (default 100)");
  sub.add_option("--device", a->device, "cpu, cuda or all (default cpu)")
      ->check(CLI::IsMember({"cpu", "cuda", "all"}));
  sub.add_flag("--json", a->json, "machine-readable output");
  return [a]() {
    auto trace = load_or_report(a->path);
    if (!trace) return kExitBadInput;
    HeapOptions o;
    o.top = a->top;
    o.max_frames = a->frames;
    o.temporary_ns = static_cast<int64_t>(a->temporary_us * 1000);
    o.device_type = a->device == "cpu" ? 0 : a->device == "cuda" ? 1 : -1;
    HeapResult r = analyze_heap(*trace, o);
    if (a->json) {
      JsonWriter w(true);
      write_heap_json(w, r);
      std::cout << w.str() << "\n";
    } else {
      std::cout << render_heap_text(r);
    }
    return kExitOk;
  };
}

}  // namespace

MLPROF_REGISTER_COMMAND("heap", "Host memory: peak and its stacks, leaks, temporaries, rate",
                        setup_heap);

}  // namespace mlprof::cli
