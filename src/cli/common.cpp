#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "cli/command.h"
#include "mlprof/import.h"

namespace mlprof::cli {

namespace {
bool g_strict_import = false;
}

void set_strict_import(bool on) { g_strict_import = on; }
bool strict_import() { return g_strict_import; }

void print_import_warnings(const Trace& t) {
  for (const std::string& w : import_warnings(t)) std::fprintf(stderr, "mlprof: %s\n", w.c_str());
}

std::optional<Trace> load_or_report(const std::string& path) {
  ImportOptions options;
  options.strict = g_strict_import;
  Result<Trace> r = load_trace(path, options);
  if (!r) {
    std::fprintf(stderr, "mlprof: %s\n", r.error().c_str());
    return std::nullopt;
  }
  print_import_warnings(*r);
  return std::move(r.value());
}

bool write_file_atomic(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      std::fprintf(stderr, "mlprof: %s: cannot open for writing\n", path.c_str());
      return false;
    }
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) {
      std::fprintf(stderr, "mlprof: %s: write failed\n", path.c_str());
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "mlprof: %s: cannot rename into place\n", path.c_str());
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace mlprof::cli
