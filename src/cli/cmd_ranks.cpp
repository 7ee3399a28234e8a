#include <cstdio>
#include <filesystem>

#include "cli/command.h"
#include "cli/mpi_ranks.h"

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
      auto top = std::make_shared<size_t>(0);
      add_analysis_args(sub, *a);
      sub.add_option("--top", *top,
                     "text: one row per rank up to N ranks, else the worst N (default 10)");
      sub.add_flag("--hta-compatible", *hta, "Holistic Trace Analysis' event window");
      sub.add_option("--straggler-pct", *straggler_pct,
                     "a rank slower than the median by this percentage is a straggler");
      return [a, hta, straggler_pct, top]() {
        std::error_code ec;
        if (!std::filesystem::is_directory(a->path, ec)) {
          std::fprintf(stderr, "mlprof: %s: not a directory\n", a->path.c_str());
          return kExitBadInput;
        }
        AnalysisOptions o;
        o.set_hta_compatible(*hta);
        o.ranks.straggler_threshold = *straggler_pct / 100.0;
        // Under mpirun: the files sharded across the processes, the output from process 0.
        TextOptions text;
        text.rows = *top;
        if (launched_by_mpi()) return run_ranks_mpi(*a, o, text);
        return run_analysis_command(*a, AnalysisId::kRanks, o, text);
      };
    });

}  // namespace
}  // namespace mlprof::cli
