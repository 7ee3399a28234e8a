// torch.compile structured logs as a Trace: no events, the parsed logs kept for the compile
// analysis (`mlprof analyze LOG`, `report LOG`, serve), as a memory snapshot keeps its segments.
#include <algorithm>
#include <filesystem>
#include <memory>

#include "import/compile_log_importer.h"
#include "mlprof/import.h"
#include "trace/formats/compile_log_format.h"

namespace mlprof {

namespace import {

Trace compile_logs_trace(std::vector<CompileLog> logs, const std::string& source) {
  // The order `mlprof compile` gives the ranks: by rank, then file.
  std::sort(logs.begin(), logs.end(), [](const CompileLog& x, const CompileLog& y) {
    return x.rank != y.rank ? x.rank < y.rank : x.source < y.source;
  });
  Trace t;
  t.meta.source = source;
  t.meta.format = kCompileLogFormat;
  t.compile_logs = std::make_shared<const std::vector<CompileLog>>(std::move(logs));
  return t;
}

}  // namespace import

std::vector<std::string> compile_log_files(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::error_code ec2;
    if (e.is_regular_file(ec2) && is_compile_log_file(e.path().string()))
      found.push_back(e.path().string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

Result<Trace> load_compile_logs(const std::vector<std::string>& paths, const std::string& source) {
  std::vector<CompileLog> logs;
  for (const std::string& p : paths) {
    Result<CompileLog> log = load_compile_log(p);
    MLPROF_RETURN_IF_ERROR(log);
    logs.push_back(std::move(log.value()));
  }
  return import::compile_logs_trace(std::move(logs), source);
}

}  // namespace mlprof
