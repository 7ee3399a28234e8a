// The traces of one directory for `mlprof serve`: listing (names are paths relative to the
// directory), opening (nothing outside the directory is ever read: see open_beneath.h; names
// with a component starting with '.' are hidden), and analysis results cached by file name, size
// and mtime. There is no global lock: analyses of different files run in parallel, concurrent
// requests for the same result share one computation, and every step first asks `wanted` whether
// the client is still there.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlprof/analysis_set.h"
#include "mlprof/status.h"
#include "mlprof/trace.h"
#include "serve/rank_groups.h"
#include "serve/result_cache.h"
#include "serve/single_flight.h"

namespace mlprof::serve {

struct TraceFileInfo {
  std::string name;  // relative to the directory, '/'-separated
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  bool compile_log = false;  // a torch.compile structured log (.log): not a rank trace
};

enum class LookupError {
  kNone,
  kBadName,
  kOutside,
  kNotFound,
  kLoadFailed,
  kIncomplete,
  kAbandoned,  // the client went away before the result was ready
  kTooLarge,   // the file inflates past the input limit (TraceStoreOptions::max_input_bytes)
  kInternal,   // mlprof's own fault (an encoder that failed)
};
// What each becomes at the door (status.h's one mapping gives the HTTP status).
StatusCode status_code(LookupError e);

// The trace files of the directory, and whether the scan stopped at TraceStoreOptions::max_files
// (the files past it are not listed: which ones depends on the directory's order).
struct Listing {
  std::vector<TraceFileInfo> files;
  bool truncated = false;
};

struct Lookup {
  LookupError error = LookupError::kNone;
  std::string message;
  Body body;  // the JSON (or bytes) when error == kNone, shared with the cache
};

// The window of a critical path other than the default (the first ProfilerStep): serve's
// /api/profiler/critical_path?step=N, or ?annotation=NAME[&instance=K].
struct CriticalPathWindow {
  int64_t step = -1;       // >= 0: ProfilerStep#step
  std::string annotation;  // when step < 0: substring of an annotation's name ("" = whole trace)
  size_t instance = 0;
};
constexpr int64_t kMaxStepNumber = 999'999'999'999;  // 12 digits: larger is a client error
constexpr size_t kMaxAnnotationBytes = 512;
constexpr size_t kMaxInstance = 1'000'000;
// Reads the query parameters (null: absent). False, with `error` saying why, when they are not a
// valid window; `window` is unset (nullopt) when no parameter was given: the default window.
bool parse_critical_path_window(const char* step, const char* annotation, const char* instance,
                                std::optional<CriticalPathWindow>& window, std::string& error);

// False once nobody waits for the result (the client closed its connection); empty = always.
using StillWanted = std::function<bool()>;

struct TraceStoreOptions {
  size_t cache_bytes = 256u << 20;  // analysis results kept, in bytes of JSON
  size_t kept_traces = 2;           // parsed traces kept for the next analysis of the same file
  bool use_openat2 = true;          // false: the openat(O_NOFOLLOW) walk (tests)
  size_t max_files = 10000;         // files listed at most (Listing::truncated past it)
  // Decompressed bytes of one file read at most (0 = load_trace's default: MLPROF_MAX_INPUT_MB,
  // else the machine's memory); a bigger file is kTooLarge.
  uint64_t max_input_bytes = 0;
  // The options of a kept trace's analysis stage; unset: the report's (ops cut to kReportOpRows).
  // `mlprof mcp` keeps the CLI's defaults, so its JSON is `mlprof NAME --json`'s.
  std::optional<AnalysisOptions> analysis = std::nullopt;
  // Graph capture passes joined to every trace's replays (serve --capture; GraphsOptions).
  std::vector<GraphCaptureInput> graph_captures = {};
};

// A trace of the directory opened and parsed (or kept from an earlier request), with its
// analysis stage; `set` is null when `error` is not kNone.
struct OpenedTrace {
  LookupError error = LookupError::kNone;
  std::string message;
  std::shared_ptr<AnalysisSet> set;
};

class TraceStore {
 public:
  explicit TraceStore(std::string dir, TraceStoreOptions options = {});
  ~TraceStore();
  TraceStore(const TraceStore&) = delete;
  TraceStore& operator=(const TraceStore&) = delete;

  const std::string& dir() const { return dir_; }
  // Trace files (.json, .json.gz, .mlprof), memory snapshots (.pickle[.gz]) and torch.compile
  // structured logs (.log[.gz] whose first line is a log record) under the directory, 4 levels
  // deep at most, by name; hidden files and folders are left out.
  Listing list() const;

  // `analysis` is a report_analyses() name or "events" (the timeline's encoded events).
  Lookup get(const std::string& name, const std::string& analysis, const StillWanted& wanted = {});
  // `gpu` or `kernels` under HTA's definitions (?hta_compatible=1: the GPU tab's toggle).
  Lookup hta(const std::string& name, const std::string& analysis, const StillWanted& wanted);
  // The critical path of `window` (kNotFound when the trace has no such step or annotation).
  Lookup critical_path(const std::string& name, const CriticalPathWindow& window,
                       const StillWanted& wanted = {});
  Lookup compare(const std::string& base, const std::string& next, const StillWanted& wanted = {});
  // A level-of-detail tile of the timeline (render/timeline_tiles.h): the window [t0, t1) in ns
  // from the timeline's start, drawn `px` pixels wide. Cached like any result.
  Lookup tile(const std::string& name, int64_t t0, int64_t t1, uint32_t px,
              const StillWanted& wanted = {});
  // Where the load of `name` stands (/api/profiler/progress): {"state": "idle" | "loading" |
  // "ready" | "failed", ...}; while loading, the bytes and events read so far, the file's size,
  // the elapsed time and an ETA from the bytes' rate. Never waits for the load.
  Lookup progress(const std::string& name);
  // The cache's figures (/api/cache): bytes kept and their bound, hits and misses, traces parsed.
  std::string cache_json() const;
  // The listed traces (not compile logs) grouped by job (rank_groups.h): each group's traces and
  // ranks, and the unrelated traces with why. Cached by the list of names, sizes and mtimes.
  Lookup rank_groups(const StillWanted& wanted = {});
  // The ranks analysis over one job: `group` indexes rank_groups()' list (-1: the first, the
  // job with the most traces); kNotFound past its end. Never over traces of different jobs.
  Lookup ranks(const StillWanted& wanted = {}, int64_t group = -1);
  // The trace `name` itself, opened as get() opens it, for a consumer that asks its analysis
  // stage for more than one cached JSON (mlprof mcp: options, SQL, compare across directories).
  OpenedTrace trace(const std::string& name, const StillWanted& wanted = {});
  // The directory's top-level rank traces as one rank set, as `mlprof NAME DIR` reads them: each
  // reduced to its summary, the rank analyzed in depth reloaded (through the directory's
  // descriptor) on first use. Kept until the listing changes.
  OpenedTrace rank_set(const StillWanted& wanted = {});
  // Those rank traces' names, in order (what `mlprof NAME DIR` reads).
  std::vector<std::string> rank_names() const;

  uint64_t loads() const { return loads_; }  // traces parsed so far (tests check the cache)
  uint64_t hits() const { return hits_; }    // results answered from the cache
  uint64_t misses() const { return misses_; }
  size_t cached_bytes() const { return results_.bytes(); }  // within cache_bytes (+ the newest)

 private:
  struct OpenFile;
  struct DirHandle;
  // The directory's descriptor; reopened when the path names another directory than the one
  // opened (deleted and created again: the old descriptor would list nothing forever).
  std::shared_ptr<const DirHandle> dir_handle() const;
  using SharedTrace = std::shared_ptr<AnalysisSet>;  // a trace and its analysis stage
  LookupError open(const std::string& name, OpenFile& f, std::string& message) const;
  LookupError open_in(const DirHandle& d, const std::string& name, OpenFile& f,
                      std::string& message) const;
  // The parsed trace of an opened file: kept, being parsed by another request, or parsed here.
  // nullopt: abandoned.
  std::optional<Result<SharedTrace>> trace_of(const OpenFile& f, const StillWanted& wanted);
  // The bytes and events of a load in progress (progress()), shared by the loader and readers.
  struct LoadProgress {
    std::atomic<uint64_t> bytes{0}, events{0};
    uint64_t total = 0;
    std::chrono::steady_clock::time_point start;
  };
  Result<Trace> load(const OpenFile& f, LoadProgress* progress = nullptr);
  void keep(const std::string& key, SharedTrace t);
  // A result of one opened file cached under `what`, computed by `compute` (which may answer an
  // error; only successful results are cached).
  Lookup cached(const std::string& name, const std::string& what,
                const std::function<Lookup(AnalysisSet&)>& compute, const StillWanted& wanted);

  std::string dir_;
  std::string canonical_dir_;
  mutable std::mutex dir_mu_;
  mutable std::shared_ptr<const DirHandle> dir_handle_;
  TraceStoreOptions options_;
  ResultCache results_;
  SingleFlight<Lookup> result_flights_;
  SingleFlight<Result<SharedTrace>> load_flights_;
  mutable std::mutex kept_mu_;
  std::list<std::pair<std::string, SharedTrace>> kept_;  // most recently used first
  std::atomic<uint64_t> loads_{0}, hits_{0}, misses_{0};
  std::mutex progress_mu_;
  std::map<std::string, std::shared_ptr<LoadProgress>> loading_;  // by OpenFile::key()
  // The tile index of each kept trace (built on its first tile), by the same key as kept_.
  struct TileIndexes;
  std::unique_ptr<TileIndexes> tile_indexes_;
  // Every listed trace reduced to its rank summary, and their grouping by job; kept until the
  // listing changes. nullopt: abandoned.
  struct DirSummaries;
  std::optional<std::shared_ptr<const DirSummaries>> dir_summaries(
      const std::vector<TraceFileInfo>& files, const std::string& key, const StillWanted& wanted);
  std::mutex summaries_mu_;  // held while the summaries are built: one at a time
  std::string summaries_key_;
  std::shared_ptr<const DirSummaries> summaries_;
  std::mutex rank_set_mu_;  // held while a rank set is built: one at a time
  std::string rank_set_key_;
  std::shared_ptr<AnalysisSet> rank_set_;
};

}  // namespace mlprof::serve
