// open_input: the one door from a path to what is analyzed. A file is read by the importer
// registry (load_trace); a directory is a rank directory when it holds rank traces, else a
// TORCH_TRACE directory when it holds torch.compile logs (one per rank: one input).
#include <filesystem>

#include "mlprof/compile_log.h"
#include "mlprof/import.h"

namespace mlprof {

Result<Input> open_input(const std::string& path, const ImportOptions& options,
                         InputAccept accept) {
  Input in;
  in.path = path;
  std::error_code ec;
  if (accept == InputAccept::kRankDir || std::filesystem::is_directory(path, ec)) {
    Result<std::vector<std::string>> files = list_rank_files(path);
    if (files) {
      in.rank_files = std::move(files.value());
      return in;
    }
    // One message wherever a rank directory was expected.
    Status none = Status::error(files.code(), files.error() + " (a directory of rank traces)");
    if (accept == InputAccept::kRankDir) return none;
    std::vector<std::string> logs = compile_log_files(path);
    if (logs.empty()) return none;
    Result<Trace> t = load_compile_logs(logs, path);
    MLPROF_RETURN_IF_ERROR(t);
    in.trace = std::move(t.value());
    return in;
  }
  Result<Trace> t = load_trace(path, options);
  MLPROF_RETURN_IF_ERROR(t);
  in.trace = std::move(t.value());
  return in;
}

}  // namespace mlprof
