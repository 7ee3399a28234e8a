#include "cli/run_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace mlprof::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOwnerFile = "owner";

std::string temp_dir() {
  const char* t = std::getenv("TMPDIR");
  return t && *t ? std::string(t) : std::string("/tmp");
}

// Field 22 of /proc/PID/stat (clock ticks after boot): with the pid, names a process uniquely.
std::string start_time(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = s.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos) return {};
  std::istringstream fields(s.substr(paren + 2));
  std::string f;
  for (int i = 3; i <= 22 && (fields >> f); ++i) {
  }
  return f;
}

}  // namespace

std::string fallback_output_path(const std::string& failed) {
  std::error_code ec;
  fs::path dir = temp_dir();
  std::string name = fs::path(failed).filename().string();
  if (name.empty() || name == "." || name == "..") name = "capture.mlprof";
  fs::path cand = dir / name;
  if (fs::weakly_canonical(cand, ec) == fs::weakly_canonical(failed, ec) || fs::exists(cand, ec))
    cand = dir / ("mlprof-run-" + std::to_string(getpid()) + "-" + name);
  return cand.string();
}

std::string make_run_dir(std::string& error) {
  std::string tmpl = temp_dir() + "/mlprof-run-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back(0);
  if (!mkdtemp(buf.data())) {
    error = "cannot create a directory from " + tmpl + ": " + std::strerror(errno);
    return {};
  }
  std::string dir = buf.data();
  long pid = static_cast<long>(getpid());
  std::ofstream owner(dir + "/" + kOwnerFile);
  owner << pid << " " << start_time(pid) << "\n";
  return dir;
}

size_t remove_stale_run_dirs() {
  std::error_code ec;
  size_t removed = 0;
  for (const auto& entry : fs::directory_iterator(temp_dir(), ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("mlprof-run-", 0) != 0) continue;
    struct stat st;
    if (lstat(entry.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
      continue;
    std::ifstream in(entry.path() / kOwnerFile);
    long pid = 0;
    std::string started;
    if (!(in >> pid >> started) || pid <= 0) continue;  // not ours to judge (or being created)
    if (start_time(pid) == started) continue;           // its run is still going
    std::error_code rm;
    fs::remove_all(entry.path(), rm);
    if (!rm) ++removed;
  }
  return removed;
}

}  // namespace mlprof::cli
