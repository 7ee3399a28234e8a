// Runs `mlprof run` on a program with the fake CUPTI and NVML libraries (tests/gpu_fakes/) and
// loads the capture, for the cupti_* and nvml_* tests. Paths come from the build
// (tests/CMakeLists.txt); a test binary built without them skips.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "mlprof/import.h"
#include "mlprof/native_format.h"
#include "mlprof/trace.h"

namespace mlprof::testing {

struct FakeGpuRun {
  int exit_code = -1;
  std::string out, err;  // mlprof's stdout and stderr
  std::optional<Trace> trace;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `env` is prepended to the command line ("A=1 B=2 "); mlprof_args go between `run` and `--`.
inline FakeGpuRun run_mlprof(const std::string& env, const std::string& mlprof_args,
                             const std::string& command) {
  namespace fs = std::filesystem;
  static int runs = 0;
  fs::path dir = fs::temp_directory_path() /
                 ("mlprof-fake-gpu-" + std::to_string(getpid()) + "-" + std::to_string(runs++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string trace_path = (dir / "capture.mlprof").string();
  std::string cmd = env + " '" MLPROF_BINARY_DIR "/mlprof' run " + mlprof_args + " -o '" +
                    trace_path + "' -- " + command + " >'" + (dir / "out").string() + "' 2>'" +
                    (dir / "err").string() + "'";
  int st = std::system(cmd.c_str());
  FakeGpuRun r;
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = read_file((dir / "out").string());
  r.err = read_file((dir / "err").string());
  if (fs::exists(trace_path)) {
    auto t = load_native(trace_path);
    if (t) r.trace = std::move(t.value());
  }
  fs::remove_all(dir);
  return r;
}

// Slices named `name` (exact), in time order.
inline std::vector<size_t> slices_named(const Trace& t, std::string_view name) {
  std::vector<size_t> out;
  for (size_t i = 0; i < t.slices.size(); ++i)
    if (t.str(t.slices.name[i]) == name) out.push_back(i);
  std::sort(out.begin(), out.end(),
            [&](size_t a, size_t b) { return t.slices.ts[a] < t.slices.ts[b]; });
  return out;
}

inline std::string arg(const Trace& t, size_t slice, std::string_view key) {
  const Arg* a = t.slice_arg(slice, key);
  return a ? t.arg_text(*a) : "<none>";
}

inline std::string meta_extra(const Trace& t, std::string_view key) {
  for (const auto& [k, v] : t.meta.extra)
    if (k == key) return v;
  return "<none>";
}

}  // namespace mlprof::testing
