// `mlprof mcp PATH...`: the Model Context Protocol server on stdin/stdout (docs/mcp.md).
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include "cli/command.h"
#include "mcp/server.h"

namespace mlprof::cli {
namespace {

MLPROF_REGISTER_COMMAND(
    "mcp",
    "Model Context Protocol server on stdio for AI agents: mlprof's analyses as tools over the "
    "traces in PATH... (nothing else is readable; docs/mcp.md)",
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<mcp::McpOptions>();
      sub.add_option("paths", o->paths, "trace files and directories the tools may read")
          ->required();
      sub.add_option_function<size_t>(
             "--max-message-mb", [o](size_t mb) { o->max_message_bytes = mb << 20; },
             "longest message read, MiB (default 4); a longer one is answered with an error")
          ->check(CLI::Range(size_t{1}, size_t{1024}));
      sub.add_option("--kept-traces", o->kept_traces, "parsed traces kept in memory (default 4)")
          ->check(CLI::Range(size_t{1}, size_t{1000}));
      sub.add_option_function<uint64_t>(
             "--max-input-mb", [o](uint64_t mb) { o->max_input_bytes = mb << 20; },
             "decompressed MiB of one trace file read at most (default: MLPROF_MAX_INPUT_MB, "
             "else the machine's memory)")
          ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 30));
      sub.add_option("--sql-timeout", o->sql_timeout_s, "seconds one sql call may run (default 30)")
          ->check(CLI::Range(0.1, 86400.0));
      sub.add_option("--sql-max-rows", o->sql_max_rows, "rows one sql call returns (default 10000)")
          ->check(CLI::Range(size_t{1}, size_t{100'000'000}));
      return [o]() {
        // A client that has gone is a failed write (EPIPE), not a signal that kills the server.
        std::signal(SIGPIPE, SIG_IGN);
        // stdout carries the protocol alone: anything else written there (a library's stray
        // line) goes to stderr instead of corrupting a message.
        int protocol = ::dup(STDOUT_FILENO);
        if (protocol < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
          std::fprintf(stderr, "mlprof mcp: cannot set up stdout\n");
          return kExitFailure;
        }
        if (::isatty(STDIN_FILENO))  // a person, not a client: say what this is waiting for
          std::fprintf(stderr,
                       "mlprof mcp: a Model Context Protocol server: an MCP client starts it and "
                       "talks JSON-RPC on stdin/stdout (docs/mcp.md). Ctrl-D ends it.\n");
        int rc = mcp::run_server(*o, STDIN_FILENO, protocol);
        ::close(protocol);
        return rc;
      };
    });

}  // namespace
}  // namespace mlprof::cli
