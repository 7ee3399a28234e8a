// `mlprof analyze PATH`: every analysis of one trace (or of one rank of a directory of rank
// traces, the straggler else the slowest, plus the ranks view), rendered as one text report or
// one JSON object. The JSON of each analysis is the one its own subcommand prints.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/command.h"
#include "cli/graph_captures.h"
#include "render/report.h"

namespace mlprof::cli {
namespace {

struct AnalyzeArgs {
  AnalysisArgs in;
  size_t top = 0;  // 0: each table's default
  double peak = 0;
  std::string html;
};

std::string section(const std::string& title) {
  return "\n== " + title + " " + std::string(title.size() < 90 ? 90 - title.size() : 0, '=') + "\n";
}

std::string render_text(AnalysisSet& set, const TextOptions& text) {
  using A = AnalysisId;
  std::string out;
  if (set.is_rank_set() && !set.unavailable(A::kRanks)) {
    out += section(std::string(analysis_info(A::kRanks).title)) +
           render_analysis_text(set, A::kRanks, text);
    out += "\nIn depth: " + set.focus_reason() + ", " + set.trace().meta.source + "\n";
  }
  for (AnalysisId id : analyze_sections()) {
    // Sections for content this input does not have (GPU streams, module events, a critical
    // path window, compiled regions, a snapshot; a compile log has only its compile analysis)
    // are left out of the text; the JSON says why.
    if (set.unavailable(id)) continue;
    out += section(std::string(analysis_info(id).title)) + render_analysis_text(set, id, text);
  }
  return out;
}

MLPROF_REGISTER_COMMAND(
    "analyze",
    "Every analysis of a trace (or a directory of rank traces): steps, GPU, kernels, memory, "
    "leaks, FLOPs, ranked bottlenecks",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<AnalyzeArgs>();
      add_analysis_args(sub, a->in);
      sub.add_option("--top", a->top, "rows per table (default: each table's own)");
      sub.add_option("--peak-tflops", a->peak, "device peak TFLOP/s for MFU (default: table)");
      sub.add_option("--html", a->html, "also write the HTML report to this file");
      return [a]() {
        if (a->in.csv) {  // many tables: each subcommand's --csv writes one
          std::fprintf(stderr,
                       "mlprof analyze: --csv: use one analysis' subcommand (mlprof ops "
                       "PATH --csv) or mlprof export PATH -o out.sqlite\n");
          return kExitBadInput;
        }
        AnalysisOptions o;
        TextOptions text;
        if (a->top) {
          o.summary.top = a->top;
          o.flops.top = a->top;
          text.rows = a->top;
        }
        o.flops.peak_tflops = a->peak;
        o.steps.step_annotation = a->in.step_annotation;
        if (!a->in.captures.empty() && !load_graph_captures(a->in.path, a->in.captures, o.graphs))
          return kExitBadInput;
        auto set = open_analysis(a->in.path, o, a->in.threads);
        if (!set) return set.exit_code;
        const std::vector<AnalysisId>& ids = analyze_analyses();
        auto t0 = std::chrono::steady_clock::now();
        std::string json;
        {
          Progress progress("analyzing");
          json = a->in.json ? analyses_json(*set, ids) : std::string();
          if (!a->in.json) set->compute(ids);
        }
        if (std::getenv("MLPROF_TIMING"))
          std::fprintf(
              stderr, "analyze: %.1f ms\n",
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                  .count());
        if (a->in.json) {
          JsonWriter w;
          w.begin_object();
          w.field("schema", json_schema_id("analyze", 1));
          w.field("source", set->trace().meta.source);
          w.field("format", set->trace().meta.format);
          // The analyses' object without its braces: one flat object, as before.
          w.raw(std::string_view(json).substr(1, json.size() - 2));
          w.end_object();
          std::cout << pretty_json(w.str()) << "\n";
        } else {
          std::cout << render_text(*set, text);
        }
        if (!a->html.empty()) {
          ReportInput in;
          in.set = set.get();
          in.name = std::filesystem::path(set->trace().meta.source).filename().string();
          Result<std::string> html = render_report_html(in);
          if (!html) return report_failure("mlprof analyze", html.status());
          if (!write_file_atomic(a->html, *html)) return kExitFailure;
        }
        return kExitOk;
      };
    });

}  // namespace
}  // namespace mlprof::cli
