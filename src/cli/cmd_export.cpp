#include <cstdio>
#include <filesystem>

#include "cli/command.h"
#include "cli/merged_export.h"
#include "cli/sql_source.h"
#include "mlprof/chrome_export.h"
#include "mlprof/native_format.h"
#include "mlprof/perfetto_export.h"

namespace mlprof::cli {
namespace {

struct ExportArgs {
  std::string path;
  std::string out;
  std::string table;
  MergedExportArgs merged;
};

MLPROF_REGISTER_COMMAND(
    "export",
    "Write a trace as Chrome trace JSON (.json, Perfetto-loadable), Perfetto protobuf (.pftrace), "
    ".mlprof, SQLite "
    "(.sqlite/.db) or one table as CSV (.csv --table NAME); a rank directory as one merged "
    "Chrome trace (one process per rank, clocks aligned, --steps A:B)",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<ExportArgs>();
      sub.add_option("path", a->path, "trace file to read, or a directory of rank traces")
          ->required();
      sub.add_option("-o,--output", a->out,
                     "output file: .json, .pftrace, .mlprof, .sqlite, .db or .csv")
          ->required();
      sub.add_option("--table", a->table, "with .csv: the table or analysis to write (slice)");
      sub.add_option("--steps", a->merged.steps,
                     "rank directory: only ProfilerStep#A to #B of each rank (A:B, or N)");
      sub.add_option("--max-events", a->merged.max_events,
                     "rank directory: refuse to write more events than this (0: no limit)")
          ->capture_default_str();
      sub.add_option("--threads", a->merged.threads,
                     "rank directory: rank traces read at once (0 = all cores)");
      return [a]() {
        std::error_code ec;
        if (std::filesystem::is_directory(a->path, ec)) {
          a->merged.dir = a->path;
          a->merged.out = a->out;
          return export_rank_dir(a->merged);
        }
        if (!a->merged.steps.empty()) {
          std::fprintf(stderr, "mlprof export: --steps applies to a directory of rank traces\n");
          return kExitBadInput;
        }
        if (a->out.ends_with(".sqlite") || a->out.ends_with(".db") || a->out.ends_with(".csv") ||
            !a->table.empty())
          return export_sql_tables(a->path, a->out, a->table);
        Result<Trace> trace = load_or_report(a->path);
        if (!trace) return exit_code_of(trace.code());
        Status s;
        if (a->out.ends_with(".mlprof")) {
          s = save_native(*trace, a->out);
        } else if (a->out.ends_with(".json")) {
          s = save_chrome_json(*trace, a->out);
        } else if (a->out.ends_with(".pftrace") || a->out.ends_with(".perfetto-trace")) {
          PerfettoExportStats st;
          s = save_perfetto(*trace, a->out, &st);
          if (s && st.flows_unbound)
            std::fprintf(stderr,
                         "mlprof export: %llu flows without a slice at an end not written\n",
                         static_cast<unsigned long long>(st.flows_unbound));
        } else {
          std::fprintf(stderr,
                       "mlprof export: %s: unknown output format (use .json, .pftrace, .mlprof, "
                       ".sqlite, .db or .csv)\n",
                       a->out.c_str());
          return kExitBadInput;
        }
        if (!s) {
          std::fprintf(stderr, "mlprof export: %s\n", s.message().c_str());
          return kExitFailure;
        }
        std::fprintf(stderr, "wrote %s\n", a->out.c_str());
        return kExitOk;
      };
    });

}  // namespace
}  // namespace mlprof::cli
