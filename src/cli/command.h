// Subcommands register themselves (one file per command), so adding a command edits no list.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>

#include "mlprof/trace.h"

namespace mlprof::cli {

// Exit codes shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;     // the command ran but could not finish
inline constexpr int kExitBadInput = 2;    // unreadable or invalid input, bad usage
inline constexpr int kExitRegression = 3;  // compare --fail-on-regression tripped

// A command adds its options to `sub` and returns the function that runs it.
using CommandSetup = std::function<std::function<int()>(CLI::App& sub)>;

struct CommandRegistration {
  CommandRegistration(const char* name, const char* help, CommandSetup setup);
};

#define MLPROF_CLI_CONCAT2(a, b) a##b
#define MLPROF_CLI_CONCAT(a, b) MLPROF_CLI_CONCAT2(a, b)
#define MLPROF_REGISTER_COMMAND(name, help, setup)                                   \
  static ::mlprof::cli::CommandRegistration MLPROF_CLI_CONCAT(mlprof_command_, \
                                                              __LINE__)(name, help, setup)

// Loads a trace (any format load_trace reads, or a directory's traces are the caller's job);
// on failure prints the one-line error to stderr and returns nullopt (exit with kExitBadInput).
// Import problems (a truncated file, skipped events) are printed as warnings, one line per kind.
std::optional<Trace> load_or_report(const std::string& path);
void print_import_warnings(const Trace& t);
// `--strict` (any subcommand): an import problem is an error (exit 2) instead of a warning.
void set_strict_import(bool on);
bool strict_import();

// Writes `text` to `path` atomically (temporary file + rename); prints an error on failure.
bool write_file_atomic(const std::string& path, const std::string& text);

}  // namespace mlprof::cli
