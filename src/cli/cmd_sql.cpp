// `mlprof sql PATH|DIR "QUERY"`: SQL over a trace's tables (docs/sql.md). Without a query it
// reads one from -f FILE, else an interactive prompt on a terminal, else stdin.
#include <sqlite3.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "cli/sql_source.h"
#include "sql/result_sinks.h"

namespace mlprof::cli {
namespace {

constexpr int kExitInterrupted = 130;  // the shell's code for SIGINT

struct SqlArgs {
  std::string path;
  std::string query;
  std::string file;
  bool csv = false;
  bool json = false;
};

sql::TraceDatabase* g_running = nullptr;  // the database a SIGINT interrupts

extern "C" void on_sigint(int) {
  if (g_running) g_running->interrupt();
}

// Ctrl-C stops the running statement instead of the process while installed.
class InterruptGuard {
 public:
  explicit InterruptGuard(sql::TraceDatabase& db) {
    g_running = &db;
    struct sigaction sa = {};
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_);
  }
  ~InterruptGuard() {
    sigaction(SIGINT, &old_, nullptr);
    g_running = nullptr;
  }

 private:
  struct sigaction old_ = {};
};

// SQLite's message, then the query line it points into with a caret under the position.
void print_error(const std::string& query, const sql::QueryError& e) {
  if (e.interrupted) {
    std::fprintf(stderr, "mlprof sql: interrupted\n");
    return;
  }
  if (e.refused_write) {
    std::fprintf(stderr, "mlprof sql: %s: the trace tables are read-only (write refused)\n",
                 e.message.c_str());
    return;
  }
  if (e.offset < 0 || static_cast<size_t>(e.offset) > query.size()) {
    std::fprintf(stderr, "mlprof sql: %s\n", e.message.c_str());
    return;
  }
  size_t off = static_cast<size_t>(e.offset);
  size_t line_start = query.rfind('\n', off == 0 ? 0 : off - 1);
  line_start = line_start == std::string::npos || off == 0 ? 0 : line_start + 1;
  if (off > 0 && query[off - 1] == '\n') line_start = off;
  size_t line_end = query.find('\n', off);
  if (line_end == std::string::npos) line_end = query.size();
  size_t line_no = 1;
  for (size_t i = 0; i < line_start; ++i) line_no += query[i] == '\n';
  std::fprintf(stderr, "mlprof sql: %s (line %zu, column %zu, offset %zu)\n", e.message.c_str(),
               line_no, off - line_start + 1, off);
  std::string line = query.substr(line_start, line_end - line_start);
  for (char& c : line)
    if (c == '\t') c = ' ';
  std::fprintf(stderr, "  %s\n  %s^\n", line.c_str(), std::string(off - line_start, ' ').c_str());
}

// Tables on a terminal fit its width; piped output keeps every character.
size_t terminal_width() {
  struct winsize ws = {};
  if (!::isatty(STDOUT_FILENO) || ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0) return 0;
  return ws.ws_col > 40 ? ws.ws_col : 0;
}

int run_query(sql::TraceDatabase& db, const std::string& query, sql::OutputFormat format) {
  auto sink = sql::make_sink(format, stdout, terminal_width());
  sql::QueryError err;
  bool ok;
  {
    InterruptGuard guard(db);
    ok = db.run(query, *sink, err);
  }
  std::fflush(stdout);
  if (ok) return kExitOk;
  print_error(query, err);
  return err.interrupted ? kExitInterrupted : kExitBadInput;
}

int interactive(sql::TraceDatabase& db, sql::OutputFormat format) {
  std::fprintf(stderr,
               "mlprof sql: end statements with ';'. .tables lists the tables, .quit exits "
               "(docs/sql.md)\n");
  std::string buf, line;
  while (true) {
    std::fputs(buf.empty() ? "mlprof> " : "   ...> ", stdout);
    std::fflush(stdout);
    if (!std::getline(std::cin, line)) break;
    if (buf.empty() && !line.empty() && line[0] == '.') {
      if (line == ".quit" || line == ".exit") break;
      if (line == ".tables") {
        for (const std::string& n : db.table_names()) std::printf("%s\n", n.c_str());
      } else {
        std::printf("commands: .tables, .quit; anything else is SQL ending in ';'\n");
      }
      continue;
    }
    buf += line;
    buf += '\n';
    if (!sqlite3_complete(buf.c_str())) continue;
    run_query(db, buf, format);
    buf.clear();
  }
  std::fputs("\n", stdout);
  return kExitOk;
}

MLPROF_REGISTER_COMMAND(
    "sql", "SQL over a trace's tables (slice, track, args, ops, kernels, launches...; docs/sql.md)",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<SqlArgs>();
      sub.add_option("path", a->path, "trace file, or a directory of rank traces")->required();
      sub.add_option("query", a->query, "SQL (several statements run in order)");
      sub.add_option("-f,--file", a->file, "read the SQL from this file");
      sub.add_flag("--csv", a->csv, "CSV output (a header row)");
      sub.add_flag("--json", a->json, "JSON output (an array of objects per statement)");
      return [a]() {
        if (!a->query.empty() && !a->file.empty()) {
          std::fprintf(stderr, "mlprof sql: give a query or -f FILE, not both\n");
          return kExitBadInput;
        }
        std::string query = a->query;
        if (!a->file.empty()) {
          std::ifstream in(a->file, std::ios::binary);
          if (!in) {
            std::fprintf(stderr, "mlprof sql: %s: cannot read\n", a->file.c_str());
            return kExitBadInput;
          }
          std::ostringstream ss;
          ss << in.rdbuf();
          query = ss.str();
        }
        Result<std::unique_ptr<SqlSource>> opened = open_sql_source(a->path);
        if (!opened) return exit_code_of(opened.code());
        SqlSource* src = opened.value().get();
        sql::OutputFormat format = a->csv    ? sql::OutputFormat::kCsv
                                   : a->json ? sql::OutputFormat::kJson
                                             : sql::OutputFormat::kTable;
        if (query.empty() && a->file.empty()) {
          if (::isatty(STDIN_FILENO)) return interactive(*src->db, format);
          std::ostringstream ss;
          ss << std::cin.rdbuf();
          query = ss.str();
        }
        return run_query(*src->db, query, format);
      };
    });

}  // namespace
}  // namespace mlprof::cli
