// Analysis options by name: the switches of each `mlprof NAME` subcommand as (key, value) pairs,
// for consumers that get options as data rather than flags (`mlprof mcp`'s tool arguments). One
// table says which keys each analysis takes, their type and meaning, and sets them.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "mlprof/analysis_set.h"

namespace mlprof {

// A JSON scalar: what an option's value can be.
struct OptionValue {
  enum Kind { kBool, kNumber, kString } kind = kNumber;
  bool boolean = false;
  double number = 0;
  std::string text;
};

struct OptionSpec {
  AnalysisId id;
  std::string_view key;
  std::string_view type;  // JSON Schema type: "boolean", "integer", "number" or "string"
  std::string_view help;  // as the subcommand's flag says it
};

// Every option of every analysis, by analysis in catalogue order.
std::span<const OptionSpec> analysis_option_specs();

// Sets option `key` of analysis `id` in `o`. nullopt on success, else why not ("ops: unknown
// option 'x'", "summary: top must be a whole number >= 0", ...).
std::optional<std::string> set_analysis_option(AnalysisOptions& o, AnalysisId id,
                                               std::string_view key, const OptionValue& v);

}  // namespace mlprof
