// Loading a directory of per-rank traces: one Trace per file, loaded on several threads.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <optional>
#include <thread>

#include "mlprof/import.h"

namespace mlprof {

namespace {

bool is_trace_file(const std::filesystem::path& p) {
  std::string name = p.filename().string();
  auto ends = [&](std::string_view suffix) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends(".json") || ends(".json.gz") || ends(".mlprof");
}

}  // namespace

Result<std::vector<std::string>> list_rank_files(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::error(dir + ": not a directory");
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && is_trace_file(entry.path())) {
      files.push_back(entry.path().string());
    }
  }
  if (ec) return Status::error(dir + ": " + ec.message());
  if (files.empty()) return Status::error(dir + ": no trace files (*.json, *.json.gz, *.mlprof)");
  std::sort(files.begin(), files.end());
  return files;
}

Result<std::vector<Trace>> load_rank_dir(const std::string& dir, unsigned threads,
                                         std::vector<std::string>& errors,
                                         const ImportOptions& options) {
  auto listed = list_rank_files(dir);
  if (!listed) return listed.status();
  const std::vector<std::string>& files = listed.value();
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(files.size()));
  std::vector<std::optional<Trace>> loaded(files.size());
  std::vector<std::string> failure(files.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    ImportOptions io = options;
    io.threads = 1;  // parallel across files instead
    for (size_t i = next++; i < files.size(); i = next++) {
      Result<Trace> t = load_trace(files[i], io);
      if (t.is_ok()) {
        t->meta.source = files[i];
        loaded[i] = std::move(t.value());
      } else {
        failure[i] = t.error();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();

  std::vector<Trace> out;
  for (size_t i = 0; i < files.size(); ++i) {
    if (loaded[i]) {
      out.push_back(std::move(*loaded[i]));
    } else {
      errors.push_back(failure[i].find(files[i]) == std::string::npos ? files[i] + ": " + failure[i]
                                                                      : failure[i]);
    }
  }
  if (out.empty()) return Status::error(dir + ": no trace could be loaded");
  return out;
}

}  // namespace mlprof
