// The capture passes of CUDA/HIP graphs (import/graph_capture_files.h): one reader for
// the CLI's and serve's --capture and Python's load(capture=...), so each surface joins the same
// captures to the same replays.
#include "import/graph_capture_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace mlprof {
namespace {

namespace fs = std::filesystem;

struct Detail {
  std::string file, mode;
  int64_t batch_size = -1;
};

// execution_details.json: [{"file": ..., "batch_size": N, "mode": "..."}, ...]. Read field by
// field (a flat list of flat objects); anything else yields no details, not an error.
std::vector<Detail> read_details(const fs::path& p) {
  std::vector<Detail> out;
  std::ifstream f(p);
  if (!f) return out;
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  static const std::regex obj(R"(\{[^{}]*\})");
  static const std::regex file(R"re("file"\s*:\s*"([^"]*)")re");
  static const std::regex mode(R"re("mode"\s*:\s*"([^"]*)")re");
  static const std::regex bs(R"re("batch_size"\s*:\s*(-?[0-9]{1,18}))re");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), obj); it != std::sregex_iterator();
       ++it) {
    std::string o = it->str();
    std::smatch m;
    Detail d;
    if (!std::regex_search(o, m, file)) continue;
    d.file = m[1];
    if (std::regex_search(o, m, mode)) d.mode = m[1];
    if (std::regex_search(o, m, bs)) d.batch_size = std::stoll(m[1]);
    out.push_back(d);
  }
  return out;
}

bool is_trace_file(const fs::path& p) {
  std::string n = p.filename().string();
  return n != "execution_details.json" &&
         (n.ends_with(".json") || n.ends_with(".json.gz") || n.ends_with(".mlprof"));
}

Status add(const fs::path& file, const std::vector<Detail>& details, const ImportOptions& options,
           std::vector<CaptureTrace>& out) {
  Result<Trace> t = load_trace(file.string(), options);
  if (!t) return t.status();
  CaptureTrace c;
  c.source = file.filename().string();
  c.path = file.string();
  for (const Detail& d : details)
    if (d.file == c.source) {
      c.batch_size = d.batch_size;
      c.mode = d.mode;
    }
  c.trace = std::move(t.value());
  out.push_back(std::move(c));
  return Status::ok();
}

Status add_dir(const fs::path& dir, const ImportOptions& options, std::vector<CaptureTrace>& out) {
  std::vector<Detail> details = read_details(dir / "execution_details.json");
  std::vector<fs::path> files;
  std::error_code ec;
  if (!details.empty()) {
    for (const Detail& d : details) files.push_back(dir / d.file);
  } else {
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.is_regular_file() && is_trace_file(e.path())) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    if (files.empty())
      return Status::error(dir.string() + ": no capture traces (*.json, *.json.gz, *.mlprof)");
  }
  for (const fs::path& f : files) MLPROF_RETURN_IF_ERROR(add(f, details, options, out));
  return Status::ok();
}

}  // namespace

Result<std::vector<CaptureTrace>> load_capture_traces(const std::vector<std::string>& paths,
                                                      const ImportOptions& options) {
  std::vector<CaptureTrace> out;
  for (const std::string& g : paths) {
    fs::path p(g);
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      MLPROF_RETURN_IF_ERROR(add_dir(p, options, out));
    } else {
      MLPROF_RETURN_IF_ERROR(
          add(p, read_details(p.parent_path() / "execution_details.json"), options, out));
    }
  }
  return out;
}

std::string capture_dir_beside(const std::string& trace_path) {
  fs::path dir = fs::path(trace_path).parent_path() / "capture_traces";
  std::error_code ec;
  return fs::is_regular_file(dir / "execution_details.json", ec) ? dir.string() : "";
}

}  // namespace mlprof
