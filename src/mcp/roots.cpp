#include "mcp/roots.h"

#include <sys/stat.h>

#include <filesystem>

#include "mlprof/import.h"

namespace fs = std::filesystem;

namespace mlprof::mcp {
namespace {

constexpr size_t kMaxPathBytes = 4096;

std::string absolute_normal(const std::string& path) {
  fs::path p(path);
  std::error_code ec;
  if (p.is_relative()) p = fs::current_path(ec) / p;
  std::string s = p.lexically_normal().generic_string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// `path` under `dir` (both absolute and normal): the rest, "" for the directory itself.
bool under(const std::string& path, const std::string& dir, std::string& rest) {
  if (path == dir) {
    rest.clear();
    return true;
  }
  std::string prefix = dir == "/" ? dir : dir + "/";
  if (!path.starts_with(prefix)) return false;
  rest = path.substr(prefix.size());
  return true;
}

}  // namespace

bool Roots::add(const std::string& path, const serve::TraceStoreOptions& options,
                std::string& error) {
  auto r = std::make_unique<Root>();
  r->given = path;
  r->absolute = absolute_normal(path);
  std::error_code ec;
  fs::path canonical = fs::canonical(path, ec);
  struct stat st {};
  if (ec || ::stat(canonical.c_str(), &st) != 0) {
    error = path + ": no such file or directory";
    return false;
  }
  r->canonical = canonical.generic_string();
  r->directory = S_ISDIR(st.st_mode);
  if (!r->directory && !S_ISREG(st.st_mode)) {
    error = path + ": not a file or directory";
    return false;
  }
  std::string dir = r->directory ? r->canonical : canonical.parent_path().generic_string();
  if (!r->directory) r->file = canonical.filename().generic_string();
  r->store = std::make_unique<serve::TraceStore>(dir, options);
  roots_.push_back(std::move(r));
  return true;
}

bool Roots::resolve(const std::string& named, Target& out, std::string& error) const {
  // resources/list's URIs name the same files.
  std::string path = named.starts_with("file://") ? named.substr(7) : named;
  if (path.empty() || path.size() > kMaxPathBytes || path.find('\0') != std::string::npos) {
    error = "missing or invalid path";
    return false;
  }
  auto match = [&](const std::string& abs) {
    for (const auto& r : roots_) {
      for (const std::string* base : {&r->absolute, &r->canonical}) {
        std::string rest;
        if (!r->directory) {
          if (abs != *base) continue;
          out = Target{r.get(), r->file, r->canonical, false};
          return true;
        }
        if (!under(abs, *base, rest)) continue;
        out = Target{r.get(), rest, rest.empty() ? r->canonical : r->canonical + "/" + rest,
                     rest.empty() || !is_trace_name(rest)};
        return true;
      }
    }
    return false;
  };
  if (match(absolute_normal(path))) return true;
  if (!fs::path(path).is_absolute())  // a name relative to a directory given
    for (const auto& r : roots_)
      if (r->directory && match(absolute_normal(r->canonical + "/" + path))) return true;
  std::string allowed;
  for (const auto& r : roots_) allowed += (allowed.empty() ? "" : ", ") + r->given;
  error = path + ": outside the paths mlprof mcp was given (" + allowed + ")";
  return false;
}

std::vector<std::string> Roots::traces(bool& truncated) const {
  std::vector<std::string> out;
  truncated = false;
  for (const auto& r : roots_) {
    if (!r->directory) {
      out.push_back(r->canonical);
      continue;
    }
    serve::Listing l = r->store->list();
    truncated = truncated || l.truncated;
    for (const serve::TraceFileInfo& f : l.files) out.push_back(r->canonical + "/" + f.name);
  }
  return out;
}

}  // namespace mlprof::mcp
