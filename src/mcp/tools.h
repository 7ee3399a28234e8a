// The tools `mlprof mcp` offers: each one's name, description and JSON Schema of its arguments,
// and what a call does. Every analysis goes through the trace's analysis stage and its JSON
// writer (render/analysis_output.h), so a tool's text is what `mlprof NAME --json` prints.
#pragma once

#include <simdjson.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcp/roots.h"
#include "mcp/server.h"
#include "mlprof/analysis_set.h"
#include "trace/json_writer.h"

namespace mlprof::mcp {

// A tool's answer: JSON text, or (error) the one-line message the CLI would print.
struct ToolReply {
  bool error = false;
  std::string text;
};

class Tools {
 public:
  Tools(Roots& roots, const McpOptions& options) : roots_(roots), options_(options) {}

  // Asked between steps of the calls that follow: false once the client cancelled the call.
  void set_wanted(serve::StillWanted wanted) { wanted_ = std::move(wanted); }
  // The tools/list array.
  void write_list(JsonWriter& w) const;
  // nullopt: there is no tool `name`.
  std::optional<ToolReply> call(std::string_view name, simdjson::dom::object args);
  // The summary of the trace at `path` (resources/read), or the directory's listing.
  ToolReply open(const std::string& path);

 private:
  ToolReply analysis(const std::string& path, AnalysisId id,
                     const std::vector<std::pair<std::string, simdjson::dom::element>>& options);
  ToolReply compare(const std::string& base, const std::string& next);
  ToolReply sql(const std::string& path, const std::string& query);

  Roots& roots_;
  const McpOptions& options_;
  serve::StillWanted wanted_;
};

}  // namespace mlprof::mcp
