#include <filesystem>
#include <iostream>

#include "cli/command.h"
#include "mlprof/analyze/bottlenecks.h"
#include "mlprof/analyze/ranks.h"
#include "mlprof/render/bottlenecks_render.h"

namespace mlprof::cli {
namespace {

struct BottlenecksArgs {
  std::string path;
  bool json = false;
  unsigned threads = 0;
};

MLPROF_REGISTER_COMMAND(
    "bottlenecks",
    "Ranked findings with evidence and recommendations (a directory: the slowest rank + balance)",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<BottlenecksArgs>();
      sub.add_option("path", a->path, "trace file (.json, .json.gz, .mlprof) or rank directory")
          ->required();
      sub.add_flag("--json", a->json, "machine-readable output");
      sub.add_option("--threads", a->threads, "rank traces loaded at once (0 = all cores)");
      return [a]() {
        std::error_code ec;
        BottleneckResult r;
        if (std::filesystem::is_directory(a->path, ec)) {
          std::vector<std::string> errors;
          auto loaded = load_rank_dir(a->path, a->threads, errors);
          if (!loaded) {
            std::fprintf(stderr, "mlprof: %s\n", loaded.error().c_str());
            return kExitBadInput;
          }
          for (const std::string& e : errors)
            std::fprintf(stderr, "mlprof: skipped %s\n", e.c_str());
          std::vector<const Trace*> ptrs;
          for (const Trace& t : *loaded) ptrs.push_back(&t);
          if (ptrs.empty()) return kExitBadInput;
          RanksResult ranks = analyze_ranks(ptrs);
          const Trace* slowest = ptrs.front();
          int64_t wall = -1;
          for (const RankStats& rs : ranks.ranks)
            for (const Trace* t : ptrs)
              if (t->meta.source == rs.source && rs.wall_ns > wall) {
                wall = rs.wall_ns;
                slowest = t;
              }
          BottleneckInputs in;
          in.ranks = &ranks;
          r = find_bottlenecks(*slowest, in);
        } else {
          auto trace = load_or_report(a->path);
          if (!trace) return kExitBadInput;
          r = find_bottlenecks(*trace);
        }
        if (a->json) {
          JsonWriter w(true);
          write_bottlenecks_json(w, r);
          std::cout << w.str() << "\n";
        } else {
          std::cout << render_bottlenecks_text(r);
        }
        return kExitOk;
      };
    });

}  // namespace
}  // namespace mlprof::cli
