// What `mlprof mcp PATH...` may read: the files and directories named on its command line, and
// nothing else. Each is served by a serve::TraceStore (a file's through its directory, limited
// to that one name), so the containment rules are serve's: names are resolved beneath the
// directory by openat2(RESOLVE_BENEATH) (no "..", no symlink that leaves it, no hidden names).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "serve/trace_store.h"

namespace mlprof::mcp {

struct Root {
  std::string given;      // as on the command line
  std::string absolute;   // made absolute, lexically normal
  std::string canonical;  // symlinks resolved
  bool directory = false;
  std::string file;  // a file: its name in the store's directory (canonical)
  std::unique_ptr<serve::TraceStore> store;
};

// A path a tool named, matched to a root: `name` is relative to the root's store ("" = the
// directory root itself); `shown` is the absolute path tools answer with.
struct Target {
  Root* root = nullptr;
  std::string name;
  std::string shown;
  bool directory = false;  // a directory root or a folder under one
};

class Roots {
 public:
  // False, with `error` naming the path, when a path does not exist.
  bool add(const std::string& path, const serve::TraceStoreOptions& options, std::string& error);
  const std::vector<std::unique_ptr<Root>>& all() const { return roots_; }

  // Matches `path` (absolute, or relative to the working directory, else to a directory root;
  // a file:// URI) to a root. False, with `error` the one-line message, when it is outside every
  // root. Whether a file under a directory root may be read is the store's decision when it opens
  // it.
  bool resolve(const std::string& path, Target& out, std::string& error) const;

  // Every trace the roots hold, as absolute paths (resources/list), and whether a directory's
  // listing was cut at its limit.
  std::vector<std::string> traces(bool& truncated) const;

 private:
  std::vector<std::unique_ptr<Root>> roots_;
};

}  // namespace mlprof::mcp
