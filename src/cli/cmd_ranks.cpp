#include <cstdio>
#include <iostream>

#include "cli/command.h"
#include "mlprof/analyze/ranks.h"
#include "mlprof/render/ranks_render.h"

namespace mlprof::cli {
namespace {

struct RanksArgs {
  std::string dir;
  bool json = false;
  bool hta = false;
  unsigned threads = 0;
  double straggler_pct = 5;
};

MLPROF_REGISTER_COMMAND(
    "ranks",
    "A directory of per-rank traces: step time, compute/communication, stragglers, imbalance, "
    "collectives",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<RanksArgs>();
      sub.add_option("dir", a->dir, "directory with one trace per rank")->required();
      sub.add_flag("--json", a->json, "machine-readable output");
      sub.add_flag("--hta-compatible", a->hta, "Holistic Trace Analysis' event window");
      sub.add_option("--threads", a->threads, "traces loaded at once (0 = all cores)");
      sub.add_option("--straggler-pct", a->straggler_pct,
                     "a rank slower than the median by this percentage is a straggler");
      return [a]() {
        std::vector<std::string> errors;
        auto traces = load_rank_dir(a->dir, a->threads, errors);
        if (!traces) {
          std::fprintf(stderr, "mlprof: %s\n", traces.error().c_str());
          for (const std::string& e : errors) std::fprintf(stderr, "mlprof: %s\n", e.c_str());
          return kExitBadInput;
        }
        for (const std::string& e : errors) std::fprintf(stderr, "mlprof: skipped %s\n", e.c_str());
        std::vector<const Trace*> ptrs;
        for (const Trace& t : *traces) ptrs.push_back(&t);
        RanksOptions o;
        o.hta_compatible = a->hta;
        o.straggler_threshold = a->straggler_pct / 100.0;
        RanksResult r = analyze_ranks(ptrs, o);
        r.errors = errors;
        if (a->json) {
          JsonWriter w(true);
          write_ranks_json(w, r);
          std::cout << w.str() << "\n";
        } else {
          std::cout << render_ranks_text(r);
        }
        return kExitOk;
      };
    });

}  // namespace
}  // namespace mlprof::cli
