#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "cli/command.h"

namespace mlprof::cli {
namespace {

MLPROF_REGISTER_COMMAND(
    "ranks",
    "A directory of per-rank traces: step time, compute/communication, stragglers, imbalance, "
    "collectives",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<AnalysisArgs>();
      auto hta = std::make_shared<bool>(false);
      auto straggler_pct = std::make_shared<double>(5);
      add_analysis_args(sub, *a);
      sub.add_flag("--hta-compatible", *hta, "Holistic Trace Analysis' event window");
      sub.add_option("--straggler-pct", *straggler_pct,
                     "a rank slower than the median by this percentage is a straggler");
      return [a, hta, straggler_pct]() {
        const char* world = std::getenv("OMPI_COMM_WORLD_SIZE");
        if (world != nullptr && std::atoi(world) > 1) {
          std::fprintf(stderr, "mlprof: built without MPI: run `mlprof ranks` without mpirun\n");
          return kExitBadInput;
        }
        std::error_code ec;
        if (!std::filesystem::is_directory(a->path, ec)) {
          std::fprintf(stderr, "mlprof: %s: not a directory\n", a->path.c_str());
          return kExitBadInput;
        }
        AnalysisOptions o;
        o.set_hta_compatible(*hta);
        o.ranks.straggler_threshold = *straggler_pct / 100.0;
        return run_analysis_command(*a, AnalysisId::kRanks, o);
      };
    });

}  // namespace
}  // namespace mlprof::cli
