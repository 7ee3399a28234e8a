#include <cstdio>

#include "cli/command.h"
#include "mlprof/chrome_export.h"
#include "mlprof/native_format.h"

namespace mlprof::cli {
namespace {

struct ExportArgs {
  std::string path;
  std::string out;
};

MLPROF_REGISTER_COMMAND(
    "export", "Write a trace as Chrome trace JSON (.json, Perfetto-loadable) or .mlprof",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<ExportArgs>();
      sub.add_option("path", a->path, "trace file to read")->required();
      sub.add_option("-o,--output", a->out, "output file: .json or .mlprof")->required();
      return [a]() {
        auto trace = load_or_report(a->path);
        if (!trace) return kExitBadInput;
        Status s;
        if (a->out.ends_with(".mlprof")) {
          s = save_native(*trace, a->out);
        } else if (a->out.ends_with(".json")) {
          s = save_chrome_json(*trace, a->out);
        } else {
          std::fprintf(stderr, "mlprof export: %s: unknown output format (use .json or .mlprof)\n",
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
