// Directories of per-rank traces: which files they hold (the importer registry's rank-trace
// names), each loaded on its own thread.
#include <algorithm>
#include <filesystem>
#include <optional>

#include "import/importer_registry.h"
#include "mlprof/import.h"
#include "trace/file_error.h"
#include "trace/parallel_for.h"

namespace mlprof {

bool is_trace_name(std::string_view file_name) {
  return import::has_trace_extension(file_name, false);
}

bool is_rank_trace_name(std::string_view file_name) {
  return import::has_trace_extension(file_name, true);
}

Result<std::vector<std::string>> list_rank_files(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Status::error(fs::exists(dir, ec) ? StatusCode::kBadInput : StatusCode::kNotFound,
                         dir + ": not a directory");
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && is_rank_trace_name(entry.path().filename().string())) {
      files.push_back(entry.path().string());
    }
  }
  if (ec) return Status::error(StatusCode::kIo, dir + ": " + ec.message());
  if (files.empty())
    return Status::error(StatusCode::kNotFound,
                         dir + ": no trace files (" + import::rank_trace_patterns() + ")");
  std::sort(files.begin(), files.end());
  return files;
}

Result<std::vector<Trace>> load_rank_dir(const std::string& dir, unsigned threads,
                                         std::vector<std::string>& errors,
                                         const ImportOptions& options) {
  auto listed = list_rank_files(dir);
  MLPROF_RETURN_IF_ERROR(listed);
  return load_rank_files(listed.value(), dir, threads, errors, options);
}

Result<std::vector<Trace>> load_rank_files(const std::vector<std::string>& files,
                                           const std::string& dir, unsigned threads,
                                           std::vector<std::string>& errors,
                                           const ImportOptions& options) {
  std::vector<std::optional<Trace>> loaded(files.size());
  std::vector<std::string> failure(files.size());
  ImportOptions io = options;
  io.threads = 1;  // parallel across files instead
  parallel_for(files.size(), threads, [&](size_t i) {
    Result<Trace> t = load_trace(files[i], io);
    if (t.is_ok()) {
      t->meta.source = files[i];
      loaded[i] = std::move(t.value());
    } else {
      failure[i] = t.error();
    }
  });

  std::vector<Trace> out;
  for (size_t i = 0; i < files.size(); ++i) {
    if (loaded[i]) {
      out.push_back(std::move(*loaded[i]));
    } else {
      errors.push_back(file_error(files[i], failure[i]));
    }
  }
  if (out.empty()) return Status::error(dir + ": no trace could be loaded");
  return out;
}

}  // namespace mlprof
