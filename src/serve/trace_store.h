// The traces of one directory for `mlprof serve`: listing (names are paths relative to the
// directory), name validation (nothing outside the directory is ever opened), and a cache of
// analysis results per file that is dropped when the file's size or mtime changes.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof::serve {

struct TraceFileInfo {
  std::string name;  // relative to the directory, '/'-separated
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

enum class LookupError { kNone, kBadName, kOutside, kNotFound, kLoadFailed, kIncomplete };

struct Lookup {
  LookupError error = LookupError::kNone;
  std::string message;
  std::string body;  // the JSON (or bytes) when error == kNone
};

class TraceStore {
 public:
  explicit TraceStore(std::string dir);

  const std::string& dir() const { return dir_; }
  // Trace files (.json, .json.gz, .mlprof) under the directory, 4 levels deep at most, by name.
  std::vector<TraceFileInfo> list() const;

  // `analysis` is a report_analysis_names() entry or "events" (the timeline's encoded events).
  Lookup get(const std::string& name, const std::string& analysis);
  Lookup compare(const std::string& base, const std::string& next);
  Lookup ranks();

  uint64_t loads() const { return loads_; }  // traces parsed so far (tests check the cache)

 private:
  struct Entry {
    uint64_t size = 0;
    int64_t mtime_ns = 0;
    std::map<std::string, std::string> results;
    std::shared_ptr<const Trace> trace;  // kept for the most recently used files only
  };
  // Validates `name` and finds the file; fills `info`.
  LookupError resolve(const std::string& name, TraceFileInfo& info, std::string& message) const;
  // The trace of a validated file, loaded or from the cache. Caller holds mu_.
  Result<std::shared_ptr<const Trace>> trace_locked(const TraceFileInfo& info, Entry& e);
  Entry& entry_locked(const TraceFileInfo& info);

  std::string dir_;
  std::string canonical_dir_;
  std::mutex mu_;  // one analysis at a time: they are CPU-bound and the machine is small
  std::map<std::string, Entry> entries_;
  std::list<std::string> recent_;  // names whose Trace is kept, most recent first
  uint64_t loads_ = 0;
};

}  // namespace mlprof::serve
