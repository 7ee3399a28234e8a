#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/command.h"
#include "mlprof/analysis_set.h"
#include "mlprof/compile_log.h"
#include "render/compile_render.h"
#include "trace/formats/compile_log_format.h"

namespace mlprof::cli {
namespace {

struct CompileArgs {
  std::vector<std::string> paths;
  bool json = false;
  size_t top = 20;
  int32_t rank = -1;
};

MLPROF_REGISTER_COMMAND(
    "compile",
    "torch.compile: compile ids, time by phase, graph breaks, recompiles, failures, cache, ranks "
    "(TORCH_TRACE logs); compiled regions' GPU time (Kineto trace); both joined",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<CompileArgs>();
      sub.add_option("paths", a->paths,
                     "TORCH_TRACE directories or dedicated_log_torch_trace_*.log files (one per "
                     "rank), and/or one Kineto trace of the compiled model")
          ->required();
      sub.add_flag("--json", a->json, "machine-readable output");
      sub.add_option("--top", a->top, "graph break and recompile rows shown");
      sub.add_option("--rank", a->rank,
                     "compile-id rows and failures of this rank only (default: every rank's)");
      return [a]() {
        std::vector<std::string> log_paths;
        std::string trace_path;
        for (const std::string& p : a->paths) {
          std::error_code ec;
          if (std::filesystem::is_directory(p, ec)) {
            std::vector<std::string> found = compile_log_files(p);  // open_input's rule
            if (found.empty()) {
              std::fprintf(stderr,
                           "mlprof: %s: no torch.compile structured logs in this directory\n",
                           p.c_str());
              return kExitBadInput;
            }
            log_paths.insert(log_paths.end(), found.begin(), found.end());
          } else if (is_compile_log_file(p)) {
            log_paths.push_back(p);
          } else if (trace_path.empty()) {
            trace_path = p;
          } else {
            std::fprintf(stderr,
                         "mlprof: %s: a second Kineto trace (give one trace and any logs)\n",
                         p.c_str());
            return kExitBadInput;
          }
        }
        if (log_paths.empty()) {
          // A Kineto trace alone: the compiled-regions analysis of the stage (the same JSON as
          // `analyze`, the report and serve show).
          AnalysisArgs in;
          in.path = trace_path;
          in.json = a->json;
          AnalysisOptions o;
          o.compile.top = a->top;
          return run_analysis_command(in, AnalysisId::kCompile, o);
        }
        std::vector<CompileLog> logs;
        for (const std::string& p : log_paths) {
          Result<CompileLog> log = load_compile_log(p);
          if (!log) {
            std::fprintf(stderr, "mlprof: %s\n", log.error().c_str());
            return kExitBadInput;
          }
          logs.push_back(std::move(log.value()));
        }
        std::sort(logs.begin(), logs.end(), [](const CompileLog& x, const CompileLog& y) {
          return x.rank != y.rank ? x.rank < y.rank : x.source < y.source;
        });
        std::optional<Trace> trace;
        if (!trace_path.empty()) {
          Result<Trace> loaded = load_or_report(trace_path);
          if (!loaded) return exit_code_of(loaded.code());
          trace = std::move(loaded.value());
        }
        if (a->rank >= 0 && std::none_of(logs.begin(), logs.end(), [&](const CompileLog& l) {
              return (l.rank >= 0 ? l.rank : static_cast<int32_t>(&l - logs.data())) == a->rank;
            })) {
          std::fprintf(stderr, "mlprof: --rank %d: no log of that rank (ranks:", a->rank);
          for (const CompileLog& l : logs)
            std::fprintf(stderr, " %d",
                         l.rank >= 0 ? l.rank : static_cast<int32_t>(&l - logs.data()));
          std::fprintf(stderr, ")\n");
          return kExitBadInput;
        }
        // The logs (and the Kineto trace they ran in) through the analysis stage: the trace
        // carries the logs, as a TORCH_TRACE directory's trace does for `mlprof analyze`.
        Trace input = trace ? std::move(*trace) : Trace{};
        if (!trace) input.meta.format = kCompileLogFormat;
        input.compile_logs = std::make_shared<const std::vector<CompileLog>>(std::move(logs));
        AnalysisOptions o;
        o.compile.top = a->top;
        o.compile.rank = a->rank;
        AnalysisSet set(std::move(input), std::move(o));
        const CompileResult& r = set.compile();
        if (a->json) {
          JsonWriter w(true);
          w.lead_next_object("schema", analysis_schema_id(AnalysisId::kCompile));
          write_compile_json(w, r);
          std::cout << w.str() << "\n";
        } else {
          std::cout << render_compile_text(r);
        }
        return kExitOk;
      };
    });

}  // namespace
}  // namespace mlprof::cli
