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

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

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
        if (ends_with(a->out, ".mlprof")) {
          s = save_native(*trace, a->out);
        } else if (ends_with(a->out, ".json")) {
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
