#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <system_error>

#include "cli/command.h"
#include "cli/graph_captures.h"
#include "mlprof/import.h"
#include "render/analysis_csv.h"
#include "trace/output_file.h"

namespace mlprof::cli {

namespace {
bool g_strict_import = false;
}

void set_strict_import(bool on) { g_strict_import = on; }
bool strict_import() { return g_strict_import; }

void print_import_warnings(const Trace& t) {
  for (const std::string& w : import_warnings(t)) std::fprintf(stderr, "mlprof: %s\n", w.c_str());
}

namespace {
std::string file_name(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// Bytes of the trace files a rank directory load will read (its progress bar's total).
uint64_t files_bytes(const std::vector<std::string>& files) {
  uint64_t total = 0;
  for (const std::string& f : files) {
    std::error_code ec;
    uint64_t n = std::filesystem::file_size(f, ec);
    if (!ec) total += n;
  }
  return total;
}
}  // namespace

Result<Trace> load_or_report(const std::string& path) {
  ImportOptions options;
  options.strict = g_strict_import;
  std::error_code ec;
  uint64_t size = std::filesystem::file_size(path, ec);
  Progress progress("loading " + file_name(path), ec ? 0 : size);
  options.progress_bytes = progress.counter();
  Result<Trace> r = load_trace(path, options);
  progress.done();
  if (!r) {
    std::fprintf(stderr, "mlprof: %s\n", r.error().c_str());
    return r;
  }
  print_import_warnings(*r);
  return r;
}

RankLoader rank_loader(bool print_warnings, std::atomic<uint64_t>* progress_bytes) {
  ImportOptions io;
  io.strict = strict_import();
  io.threads = 1;  // one rank per core instead
  io.progress_bytes = progress_bytes;
  return [io, print_warnings](const std::string& path) -> Result<Trace> {
    Result<Trace> t = load_trace(path, io);
    if (t && print_warnings) print_import_warnings(*t);
    return t;
  };
}

bool report_rank_errors(const std::string& dir, size_t loaded,
                        const std::vector<std::string>& errors) {
  if (loaded == 0) {  // one line: the directory, and the first file's problem
    std::string why = dir + ": no trace could be loaded (a directory of rank traces";
    if (!errors.empty())
      why += "; " + std::to_string(errors.size()) + " failed, the first: " + errors.front();
    std::fprintf(stderr, "mlprof: %s)\n", why.c_str());
    return false;
  }
  // --strict (for CI, as `export DIR --strict`): a rank that failed fails the directory.
  if (strict_import() && !errors.empty()) {
    for (const std::string& e : errors) std::fprintf(stderr, "mlprof: %s\n", e.c_str());
    std::fprintf(stderr, "mlprof: %s: --strict: %zu of %zu rank files failed\n", dir.c_str(),
                 errors.size(), loaded + errors.size());
    return false;
  }
  for (const std::string& e : errors) std::fprintf(stderr, "mlprof: skipped %s\n", e.c_str());
  return true;
}

std::unique_ptr<AnalysisSet> set_of_summaries(const std::string& dir,
                                              std::vector<RankSummary> summaries,
                                              std::vector<std::string> errors,
                                              AnalysisOptions options) {
  if (!report_rank_errors(dir, summaries.size(), errors)) return nullptr;
  return std::make_unique<AnalysisSet>(std::move(summaries), rank_loader(false), std::move(options),
                                       std::move(errors));
}

Result<Input> open_input_or_report(const std::string& path, InputAccept accept) {
  ImportOptions io;
  io.strict = g_strict_import;
  std::error_code ec;
  const bool file = accept == InputAccept::kAny && !std::filesystem::is_directory(path, ec);
  std::optional<Progress> progress;
  if (file) {  // a directory's ranks are loaded (with their own bar) by the caller
    uint64_t size = std::filesystem::file_size(path, ec);
    progress.emplace("loading " + file_name(path), ec ? 0 : size);
    io.progress_bytes = progress->counter();
  }
  Result<Input> in = open_input(path, io, accept);
  if (progress) progress->done();
  if (!in) {
    std::fprintf(stderr, "mlprof: %s\n", in.error().c_str());
    return in;
  }
  if (file) print_import_warnings(*in->trace);
  return in;
}

int exit_code_of(StatusCode code) { return error_mapping(code).exit_code; }

OpenedAnalysis open_analysis(const std::string& path, AnalysisOptions options, unsigned threads) {
  auto failed = [](StatusCode code) { return OpenedAnalysis{nullptr, exit_code_of(code)}; };
  if (!options.steps.step_annotation.empty()) {
    try {
      std::regex check(options.steps.step_annotation, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      std::fprintf(stderr, "mlprof: --step-annotation '%s': not a valid regular expression (%s)\n",
                   options.steps.step_annotation.c_str(), e.what());
      return failed(StatusCode::kInvalidArgument);
    }
  }
  if (options.ranks.step_annotation.empty())
    options.ranks.step_annotation = options.steps.step_annotation;  // each rank's steps too
  Result<Input> in = open_input_or_report(path, InputAccept::kAny);
  if (!in) return failed(in.code());
  if (!in->rank_dir())  // a trace file, or a TORCH_TRACE directory's logs
    return {std::make_unique<AnalysisSet>(std::move(*in->trace), std::move(options))};
  // Streaming: each worker loads one rank, reduces it to its summary and frees it.
  std::vector<std::string> errors;
  Progress ranks("loading rank directory " + file_name(path), files_bytes(in->rank_files));
  std::vector<RankSummary> summaries = reduce_rank_files(
      in->rank_files, rank_loader(true, ranks.counter()), threads, options.ranks, errors);
  ranks.done();
  auto set = set_of_summaries(path, std::move(summaries), std::move(errors), std::move(options));
  if (!set) return failed(StatusCode::kBadInput);  // no rank loaded, or --strict and one failed
  return {std::move(set)};
}

void add_analysis_args(CLI::App& sub, AnalysisArgs& a) {
  sub.add_option("path", a.path, "trace file (.json, .json.gz, .mlprof) or rank directory")
      ->required();
  sub.add_flag("--json", a.json, "machine-readable output");
  sub.add_flag("--csv", a.csv, "the main table as CSV")->excludes("--json");
  sub.add_option("--threads", a.threads, "rank traces loaded at once (0 = all cores)");
  sub.add_option("--capture", a.captures,
                 "CUDA/HIP graph capture pass: a trace file or a directory of them "
                 "(execution_details.json names batch size and mode; a capture_traces/ beside "
                 "the trace is named in a note, not loaded unasked) (docs/serving.md)");
  sub.add_option("--step-annotation", a.step_annotation,
                 "REGEX naming the slice that is one iteration (default: ProfilerStep#N, else "
                 "vLLM execute_*, else SGLang step[...]; docs/serving.md)");
}

int print_analysis(AnalysisSet& set, AnalysisId id, bool json, const TextOptions& text) {
  std::string out;
  {
    Progress progress("analyzing (" + std::string(analysis_info(id).name) + ")");
    out = json ? analysis_json(set, id) : render_analysis_text(set, id, text);
  }
  if (!json) {
    std::cout << out;
    return kExitOk;
  }
  // Indented on the way out: the JSON of a thousand-rank directory is megabytes, not held twice.
  pretty_json(out, [](std::string_view part) { std::cout.write(part.data(), part.size()); });
  std::cout << "\n";
  return kExitOk;
}

int output_analysis(AnalysisSet& set, AnalysisId id, const AnalysisArgs& a,
                    const TextOptions& text) {
  if (!a.csv) return print_analysis(set, id, a.json, text);
  Result<std::string> csv = analysis_csv(set, id);
  if (!csv) {
    std::fprintf(stderr, "mlprof: %s\n", csv.error().c_str());
    return kExitBadInput;
  }
  std::cout << csv.value();
  return kExitOk;
}

int run_analysis_command(const AnalysisArgs& a, AnalysisId id, const AnalysisOptions& options,
                         const TextOptions& text) {
  AnalysisOptions o = options;
  if (!a.step_annotation.empty()) o.steps.step_annotation = a.step_annotation;
  if (!a.captures.empty() && !load_graph_captures(a.path, a.captures, o.graphs))
    return kExitBadInput;
  auto set = open_analysis(a.path, std::move(o), a.threads);
  if (!set) return set.exit_code;
  return output_analysis(*set, id, a, text);
}

int report_failure(const char* prefix, const Status& s) {
  std::fprintf(stderr, "%s: %s\n", prefix, s.message().c_str());
  return exit_code_of(s.code());
}

bool write_file_atomic(const std::string& path, const std::string& text) {
  if (Status s = write_output_file(path, text); !s) {
    std::fprintf(stderr, "mlprof: %s\n", s.message().c_str());
    return false;
  }
  return true;
}

}  // namespace mlprof::cli
