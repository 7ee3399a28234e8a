#include <cstdio>
#include <iostream>

#include "cli/command.h"
#include "render/timeline_render.h"

namespace mlprof::cli {
namespace {

struct TimelineArgs {
  std::string path;
  std::string out;
  bool json = false;
};

MLPROF_REGISTER_COMMAND(
    "timeline", "CPU/GPU timeline: lanes, flows, overlap; -o timeline.html to draw it",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<TimelineArgs>();
      sub.add_option("path", a->path, "trace file (.json, .json.gz, .mlprof)")->required();
      sub.add_option("-o,--output", a->out, "write an interactive HTML timeline here");
      sub.add_flag("--json", a->json, "machine-readable output");
      return [a]() {
        AnalysisArgs in;
        in.path = a->path;
        in.json = a->json;
        auto set = open_analysis(in.path);
        if (!set) return set.exit_code;
        const TimelineResult& r = set->timeline();
        if (!a->out.empty()) {
          size_t slash = a->path.find_last_of('/');
          std::string title = slash == std::string::npos ? a->path : a->path.substr(slash + 1);
          Result<std::string> html = render_timeline_html(set->trace(), r, title);
          if (!html) return report_failure("mlprof timeline", html.status());
          if (!write_file_atomic(a->out, *html)) return kExitFailure;
          std::fprintf(stderr, "mlprof timeline: wrote %s (%zu lanes, %llu slices)\n",
                       a->out.c_str(), r.lanes.size(), static_cast<unsigned long long>(r.slices));
          if (!a->json) return kExitOk;
        }
        return print_analysis(*set, AnalysisId::kTimeline, a->json);
      };
    });

}  // namespace
}  // namespace mlprof::cli
