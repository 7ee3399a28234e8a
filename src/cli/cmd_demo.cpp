// `mlprof demo`: trains a small MLP under the recorder, writes the trace and its analysis into
// a folder, and prints the summary and the bottlenecks found (two are planted: slow data
// loading and a per-step leak).
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/command.h"
#include "mlprof/chrome_export.h"
#include "mlprof/mlprof.h"
#include "mlprof/native_format.h"
#include "record/demo_workload.h"
#include "trace/json_writer.h"

namespace mlprof::cli {
namespace {

struct DemoArgs {
  std::string out = "mlprof-demo";
  int steps = 300;
  bool json = false;
};

int run_demo(const DemoArgs& a) {
  if (a.steps < 1) {
    std::fprintf(stderr, "mlprof demo: --steps must be at least 1\n");
    return kExitBadInput;
  }
  if (::mkdir(a.out.c_str(), 0755) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "mlprof demo: %s: cannot create folder: %s\n", a.out.c_str(),
                 std::strerror(errno));
    return kExitFailure;
  }
  SessionOptions options;
  options.rss_interval_ms = 10;
  Session session(options);
  if (Status s = session.start(); !s) {
    std::fprintf(stderr, "mlprof demo: %s\n", s.message().c_str());
    return kExitFailure;
  }
  record::DemoOptions demo;
  demo.steps = a.steps;
  std::fprintf(stderr, "mlprof demo: training a 3-layer MLP for %d steps...\n", a.steps);
  record::DemoOutcome outcome = record::run_demo_workload(demo);
  Trace trace = session.stop();

  const std::string native_path = a.out + "/trace.mlprof";
  const std::string json_path = a.out + "/trace.json";
  if (Status s = save_native(trace, native_path); !s) {
    std::fprintf(stderr, "mlprof demo: %s\n", s.message().c_str());
    return kExitFailure;
  }
  if (Status s = save_chrome_json(trace, json_path); !s) {
    std::fprintf(stderr, "mlprof demo: %s\n", s.message().c_str());
    return kExitFailure;
  }

  AnalysisSet set(trace);
  set.compute({AnalysisId::kSummary, AnalysisId::kBottlenecks});
  std::string summary_text = render_analysis_text(set, AnalysisId::kSummary);
  std::string bottleneck_text = render_analysis_text(set, AnalysisId::kBottlenecks);
  JsonWriter w;
  w.begin_object();
  w.field("schema", json_schema_id("demo", 1));
  w.key("workload").begin_object();
  w.field("steps", outcome.steps);
  w.field("first_loss", outcome.first_loss);
  w.field("last_loss", outcome.last_loss);
  w.field("leaked_bytes", outcome.leaked_bytes);
  w.end_object();
  w.key("summary");
  write_analysis_json(w, set, AnalysisId::kSummary);
  w.key("bottlenecks");
  write_analysis_json(w, set, AnalysisId::kBottlenecks);
  w.end_object();
  std::string json = pretty_json(w.str());
  if (!write_file_atomic(a.out + "/summary.txt", summary_text + "\n" + bottleneck_text) ||
      !write_file_atomic(a.out + "/analysis.json", json + "\n"))
    return kExitFailure;

  if (a.json) {
    std::printf("%s\n", json.c_str());
    return kExitOk;
  }
  std::printf("%s\n", summary_text.c_str());
  std::printf("%s\n", bottleneck_text.c_str());
  std::printf(
      "Trained %d steps: loss %.3f -> %.3f.\n"
      "Planted problems: data loading runs on the training thread (a slow read plus decoding "
      "every step), and log_metrics keeps %lld bytes it never frees.\n"
      "Wrote %s (native), %s (open in https://ui.perfetto.dev), %s/summary.txt, "
      "%s/analysis.json.\n"
      "Next: mlprof analyze %s\n",
      outcome.steps, outcome.first_loss, outcome.last_loss,
      static_cast<long long>(outcome.leaked_bytes), native_path.c_str(), json_path.c_str(),
      a.out.c_str(), a.out.c_str(), native_path.c_str());
  return kExitOk;
}

}  // namespace

MLPROF_REGISTER_COMMAND("demo", "Profile a built-in MLP training workload and analyze it",
                        [](CLI::App& sub) -> std::function<int()> {
                          auto args = std::make_shared<DemoArgs>();
                          sub.add_option("--out", args->out, "Output folder (default mlprof-demo)");
                          sub.add_option("--steps", args->steps, "Training steps (default 300)");
                          sub.add_flag("--json", args->json, "Print the analysis as JSON");
                          return [args] { return run_demo(*args); };
                        });

}  // namespace mlprof::cli
