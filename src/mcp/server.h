// `mlprof mcp PATH...`: a Model Context Protocol server on stdin/stdout (JSON-RPC 2.0, one
// message per line, as MCP's stdio transport specifies). It exposes mlprof's analyses as tools
// over the traces named on the command line and nothing else (roots.h), and each trace's summary
// as a resource. Tool results are the JSON `mlprof NAME --json` prints, compact; docs/mcp.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mlprof::mcp {

struct McpOptions {
  std::vector<std::string> paths;  // the files and directories that may be read
  // A message longer than this is answered with an error and skipped (the largest argument a
  // tool takes is an SQL query or a peaks table: a few KiB).
  size_t max_message_bytes = 4u << 20;
  size_t max_depth = 64;                // JSON nesting of a message
  size_t kept_traces = 4;               // parsed traces kept between calls
  uint64_t max_input_bytes = 0;         // decompressed bytes of one trace (0: load_trace's default)
  double sql_timeout_s = 30;            // one SQL call stops after this long
  size_t sql_max_rows = 10000;          // rows one SQL call returns at most
  size_t max_result_bytes = 64u << 20;  // a tool's answer larger than this is an error
};

// Serves requests from `in_fd` with replies on `out_fd` until the end of input. Returns the exit
// code (0: the client closed stdin). Errors in a message never end the session.
int run_server(const McpOptions& options, int in_fd, int out_fd);

}  // namespace mlprof::mcp
