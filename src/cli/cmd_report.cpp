#include <sys/stat.h>

#include <cstdio>
#include <iostream>

#include "cli/command.h"
#include "cli/graph_captures.h"
#include "render/report.h"

namespace mlprof::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> paths;
  std::string out = "report.html";
  bool no_events = false;
  bool data_json = false;
  std::string step_annotation;
  std::vector<std::string> captures;
};

std::string base_name(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

int run_report(const ReportArgs& a) {
  if (a.paths.size() > 2) {
    std::fprintf(stderr, "mlprof report: give one trace (or a directory of ranks), or BASE NEW\n");
    return kExitBadInput;
  }
  const std::string& main_path = a.paths.back();
  if (a.paths.size() == 2 && is_directory(main_path)) {
    std::fprintf(stderr, "mlprof report: %s: compare takes two trace files\n", main_path.c_str());
    return kExitBadInput;
  }
  AnalysisOptions options;
  options.ops.top = kReportOpRows;
  options.critical_path.max_listed = kReportCriticalPathRows;
  options.steps.step_annotation = a.step_annotation;
  if (!a.captures.empty() && !load_graph_captures(main_path, a.captures, options.graphs))
    return kExitBadInput;
  auto set = open_analysis(main_path, options);
  if (!set) return set.exit_code;
  std::optional<Trace> base;
  ReportInput in;
  in.set = set.get();
  if (a.paths.size() == 2) {
    Result<Trace> loaded = load_or_report(a.paths[0]);
    if (!loaded) return exit_code_of(loaded.code());
    base = std::move(loaded.value());
    in.base = &*base;
    in.base_name = base_name(a.paths[0]);
  }
  in.name = base_name(main_path);
  in.include_events = !a.no_events;
  in.load_rank = rank_loader(false);  // the Timeline of a rank directory reloads a few ranks
  if (a.data_json) {
    std::cout << report_data_json(in) << "\n";
    return kExitOk;
  }
  std::string html;
  {
    Progress progress("analyzing and writing the report");
    Result<std::string> page = render_report_html(in);
    if (!page) return report_failure("mlprof report", page.status());
    html = std::move(page.value());
  }
  if (!write_file_atomic(a.out, html)) return kExitFailure;
  std::fprintf(stderr, "mlprof report: wrote %s (%.1f MiB)\n", a.out.c_str(),
               static_cast<double>(html.size()) / (1 << 20));
  return kExitOk;
}

MLPROF_REGISTER_COMMAND(
    "report", "Self-contained HTML report (tabs for every analysis); two traces add a Compare tab",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<ReportArgs>();
      sub.add_option("paths", a->paths, "TRACE, a directory of rank traces, or BASE NEW")
          ->required()
          ->expected(1, 2);
      sub.add_option("-o,--output", a->out, "HTML file to write (default report.html)");
      sub.add_flag("--no-events", a->no_events, "leave the timeline's events out (smaller file)");
      sub.add_flag("--data-json", a->data_json, "print the report's data object instead");
      sub.add_option("--step-annotation", a->step_annotation,
                     "REGEX naming the slice that is one iteration (default: ProfilerStep#N, else "
                     "vLLM execute_*, else SGLang step[...]; docs/serving.md)");
      sub.add_option("--capture", a->captures,
                     "CUDA/HIP graph capture pass (a trace file or a directory of them): graph "
                     "replays charged to the captured ops and modules (docs/serving.md)");
      return [a]() { return run_report(*a); };
    });

}  // namespace
}  // namespace mlprof::cli
