#include "cli/graph_captures.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cli/command.h"

namespace mlprof::cli {
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
  static const std::regex bs(R"re("batch_size"\s*:\s*(-?[0-9]+))re");
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

bool add(const fs::path& file, const std::vector<Detail>& details, GraphsOptions& o) {
  auto t = load_or_report(file.string());
  if (!t) return false;
  GraphCaptureInput in;
  in.source = file.filename().string();
  for (const Detail& d : details)
    if (d.file == in.source) {
      in.batch_size = d.batch_size;
      in.mode = d.mode;
    }
  in.trace = std::make_shared<const Trace>(std::move(*t));
  o.captures.push_back(std::move(in));
  return true;
}

bool add_dir(const fs::path& dir, GraphsOptions& o) {
  std::vector<Detail> details = read_details(dir / "execution_details.json");
  std::vector<fs::path> files;
  std::error_code ec;
  if (!details.empty()) {
    for (const Detail& d : details) files.push_back(dir / d.file);
  } else {
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.is_regular_file() && is_trace_file(e.path())) files.push_back(e.path());
    std::sort(files.begin(), files.end());
  }
  for (const fs::path& f : files)
    if (!add(f, details, o)) return false;
  return true;
}

}  // namespace

bool load_graph_captures(const std::string& trace_path, const std::vector<std::string>& given,
                         GraphsOptions& o) {
  std::error_code ec;
  if (given.empty()) {
    fs::path dir = fs::path(trace_path).parent_path() / "capture_traces";
    if (fs::is_regular_file(dir / "execution_details.json", ec))
      std::fprintf(stderr,
                   "mlprof: note: %s is a graph capture pass beside the trace: add --capture %s "
                   "to charge graph replays to the captured ops\n",
                   dir.string().c_str(), dir.string().c_str());
    return true;
  }
  for (const std::string& g : given) {
    fs::path p(g);
    if (fs::is_directory(p, ec)) {
      if (!add_dir(p, o)) return false;
    } else if (!add(p, read_details(p.parent_path() / "execution_details.json"), o)) {
      return false;
    }
  }
  return true;
}

}  // namespace mlprof::cli
