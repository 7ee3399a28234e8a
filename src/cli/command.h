// Subcommands register themselves (one file per command), so adding a command edits no list.
#pragma once

#include <CLI/CLI.hpp>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/progress.h"
#include "mlprof/analysis_set.h"
#include "mlprof/import.h"
#include "mlprof/status.h"
#include "mlprof/trace.h"
#include "render/analysis_output.h"

namespace mlprof::cli {

// Exit codes shared by every command; those of a failed Status come from status.h's one mapping.
inline constexpr int kExitOk = 0;
// The command ran but could not finish (a write failed).
inline constexpr int kExitFailure = error_mapping(StatusCode::kIo).exit_code;
// Unreadable or invalid input, bad usage.
inline constexpr int kExitBadInput = error_mapping(StatusCode::kBadInput).exit_code;
inline constexpr int kExitRegression = 3;     // compare --fail-on-regression tripped
inline constexpr int kExitNotComparable = 4;  // compare --against: the runs cannot be compared

// The exit code of a failure's code: status.h's one mapping (an input that cannot be read is the
// same exit whichever command opened it).
int exit_code_of(StatusCode code);
// Prints "PREFIX: message" of a failed status on stderr; returns its exit code.
int report_failure(const char* prefix, const Status& s);

// A command adds its options to `sub` and returns the function that runs it.
using CommandSetup = std::function<std::function<int()>(CLI::App& sub)>;

struct CommandRegistration {
  CommandRegistration(const char* name, const char* help, CommandSetup setup);
};

#define MLPROF_CLI_CONCAT2(a, b) a##b
#define MLPROF_CLI_CONCAT(a, b) MLPROF_CLI_CONCAT2(a, b)
// Variadic so that a setup lambda may contain top-level commas (capture lists).
#define MLPROF_REGISTER_COMMAND(name, help, ...)                                          \
  static ::mlprof::cli::CommandRegistration MLPROF_CLI_CONCAT(mlprof_command_, __LINE__)( \
      name, help, __VA_ARGS__)

// Loads a trace (any format load_trace reads, or a directory's traces are the caller's job);
// on failure prints the one-line error to stderr and returns it (exit with exit_code_of its code).
// Import problems (a truncated file, skipped events) are printed as warnings, one line per kind.
Result<Trace> load_or_report(const std::string& path);
void print_import_warnings(const Trace& t);
// `--strict` (any subcommand): an import problem is an error (exit 2) instead of a warning.
void set_strict_import(bool on);
bool strict_import();

// open_input (mlprof/import.h) with the CLI's settings: --strict, a progress bar and import
// warnings for a file. On failure prints the one-line error and returns it (exit with
// exit_code_of its code).
Result<Input> open_input_or_report(const std::string& path, InputAccept accept = InputAccept::kAny);

// open_analysis's answer: the set, or null with the exit code of why not (error_mapping of the
// failure's code), its one-line error already printed.
struct OpenedAnalysis {
  std::unique_ptr<AnalysisSet> set;
  int exit_code = kExitOk;
  explicit operator bool() const { return set != nullptr; }
  AnalysisSet* operator->() const { return set.get(); }
  AnalysisSet& operator*() const { return *set; }
  AnalysisSet* get() const { return set.get(); }
};

// Loads PATH (a trace file, or a directory of per-rank traces: the slowest rank in depth plus the
// cross-rank results) into the analysis stage. On failure prints the one-line error and returns
// no set (exit with its exit_code); files of a directory that fail are reported and skipped.
OpenedAnalysis open_analysis(const std::string& path, AnalysisOptions options = {},
                             unsigned threads = 0);

// A rank directory's pieces, for commands that reduce the ranks themselves (ranks under MPI):
// the loader of one rank (import warnings printed when asked), and the set over summaries
// (null, with the one-line error printed, when none loaded; skipped files printed).
RankLoader rank_loader(bool print_warnings, std::atomic<uint64_t>* progress_bytes = nullptr);
// After a reduction: false, with the one-line error printed, when no rank loaded (`loaded` 0);
// else true, each skipped file printed.
bool report_rank_errors(const std::string& dir, size_t loaded,
                        const std::vector<std::string>& errors);
std::unique_ptr<AnalysisSet> set_of_summaries(const std::string& dir,
                                              std::vector<RankSummary> summaries,
                                              std::vector<std::string> errors,
                                              AnalysisOptions options);

// What every analysis subcommand takes: the input, --json, --threads (rank directories).
struct AnalysisArgs {
  std::string path;
  bool json = false;
  bool csv = false;  // the analysis's main table as CSV (render/analysis_csv.h)
  unsigned threads = 0;
  std::string step_annotation;        // --step-annotation REGEX: the iteration marker (steps model)
  std::vector<std::string> captures;  // --capture DIR|FILE: graph capture passes (graphs.h)
};
void add_analysis_args(CLI::App& sub, AnalysisArgs& a);

// Prints one analysis the way its subcommand does: pretty JSON with --json, else text.
int print_analysis(AnalysisSet& set, AnalysisId id, bool json, const TextOptions& text = {});

// Prints one analysis as its subcommand's switches ask: the main table as CSV with --csv, else
// as print_analysis does.
int output_analysis(AnalysisSet& set, AnalysisId id, const AnalysisArgs& a,
                    const TextOptions& text = {});

// `mlprof NAME PATH`: load, analyze, print; the body of most analysis subcommands.
int run_analysis_command(const AnalysisArgs& a, AnalysisId id, const AnalysisOptions& options,
                         const TextOptions& text = {});

// Writes `text` to `path` atomically (temporary file + rename); prints an error on failure.
bool write_file_atomic(const std::string& path, const std::string& text);

}  // namespace mlprof::cli
