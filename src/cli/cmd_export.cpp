#include <cstdio>

#include "cli/command.h"
#include "cli/sql_source.h"
#include "mlprof/chrome_export.h"
#include "mlprof/native_format.h"

namespace mlprof::cli {
namespace {

struct ExportArgs {
  std::string path;
  std::string out;
  std::string table;
};

MLPROF_REGISTER_COMMAND(
    "export",
    "Write a trace as Chrome trace JSON (.json, Perfetto-loadable), .mlprof, SQLite "
    "(.sqlite/.db) or one table as CSV (.csv --table NAME)",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<ExportArgs>();
      sub.add_option("path", a->path, "trace file to read")->required();
      sub.add_option("-o,--output", a->out, "output file: .json, .mlprof, .sqlite, .db or .csv")
          ->required();
      sub.add_option("--table", a->table, "with .csv: the table or analysis to write (slice)");
      return [a]() {
        if (a->out.ends_with(".sqlite") || a->out.ends_with(".db") || a->out.ends_with(".csv") ||
            !a->table.empty())
          return export_sql_tables(a->path, a->out, a->table);
        auto trace = load_or_report(a->path);
        if (!trace) return kExitBadInput;
        Status s;
        if (a->out.ends_with(".mlprof")) {
          s = save_native(*trace, a->out);
        } else if (a->out.ends_with(".json")) {
          s = save_chrome_json(*trace, a->out);
        } else {
          std::fprintf(stderr,
                       "mlprof export: %s: unknown output format (use .json, .mlprof, .sqlite, .db "
                       "or .csv)\n",
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
