#include "serve/trace_store.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "mlprof/compile_log.h"
#include "mlprof/import.h"
#include "render/analysis_output.h"
#include "render/critical_path_render.h"
#include "render/report.h"
#include "render/timeline_render.h"
#include "render/timeline_tiles.h"
#include "serve/open_beneath.h"
#include "trace/cancel.h"
#include "trace/json_writer.h"

namespace fs = std::filesystem;

namespace mlprof::serve {
namespace {

constexpr int kMaxDepth = 4;  // directory levels scanned
constexpr size_t kMaxNameBytes = 1024;
// A file that does not parse may still be being written when its mtime is this recent. A future
// mtime (clock skew, a copied file) counts as recent only within kClockSlackNs: beyond that the
// file is simply broken, or a broken file would be "being written" until its mtime passes.
constexpr int64_t kRecentWriteNs = 30'000'000'000;
constexpr int64_t kClockSlackNs = 5'000'000'000;

bool is_log_name(std::string_view f) { return f.ends_with(".log") || f.ends_with(".log.gz"); }

int64_t mtime_ns_of(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool maybe_being_written(int64_t mtime_ns) {
  int64_t age = now_ns() - mtime_ns;
  return age > -kClockSlackNs && age < kRecentWriteNs;
}

// load_trace's message for a file past the input limit ("PATH: ... exceeds the input limit of N
// MiB (MLPROF_MAX_INPUT_MB=N raises it ...)"), whose hint serve rewrites to its own option.
constexpr std::string_view kOverLimit = "exceeds the input limit of ";

bool still(const StillWanted& wanted) { return !wanted || wanted(); }

Lookup abandoned() { return Lookup{LookupError::kAbandoned, "the client went away", nullptr}; }

Lookup found(Body body) { return Lookup{LookupError::kNone, "", std::move(body)}; }

Body shared(std::string s) { return std::make_shared<const std::string>(std::move(s)); }

// A failed load as the results cache keeps it: its code (one byte: past the input limit is a
// client-visible 413, never "being written"), then its message.
Body failed_load(const Status& s) { return shared(char(s.code()) + s.message()); }
Status failed_load(const Body& b) {
  return Status::error(static_cast<StatusCode>(b->front()), b->substr(1));
}

// MLPROF_SERVE_DELAY_MS: every analysis computed (not answered from the cache) first waits this
// long. For tests only: it makes "two slow endpoints" slow enough to see that they overlap.
int64_t test_delay_ms() {
  static const int64_t ms = [] {
    const char* v = std::getenv("MLPROF_SERVE_DELAY_MS");
    return v != nullptr ? std::max<int64_t>(0, std::atoll(v)) : int64_t{0};
  }();
  return ms;
}

// The one place serve computes a single-trace analysis: from the trace's analysis stage, so
// results one analysis needs from another are computed once per trace (concurrent requests
// for the same trace wait for each other's shared inputs).
Result<std::string> compute_analysis(AnalysisSet& set, const std::string& analysis) {
  if (analysis == "events") return encode_timeline_events(set.trace(), set.timeline());
  if (auto id = analysis_id(analysis)) return analysis_json(set, *id);
  JsonWriter w;
  w.begin_object().field("unavailable", "unknown analysis '" + analysis + "'").end_object();
  return w.take();
}

}  // namespace

StatusCode status_code(LookupError e) {
  switch (e) {
    case LookupError::kNone:
      return StatusCode::kOk;
    case LookupError::kBadName:
      return StatusCode::kInvalidArgument;
    case LookupError::kOutside:
      return StatusCode::kPermissionDenied;
    case LookupError::kNotFound:
      return StatusCode::kNotFound;
    case LookupError::kLoadFailed:
      return StatusCode::kBadInput;  // the file is there but is not a valid trace
    case LookupError::kIncomplete:
      return StatusCode::kUnavailable;  // probably still being written: retry
    case LookupError::kAbandoned:
      return StatusCode::kUnavailable;  // the client has gone, or the server is stopping
    case LookupError::kTooLarge:
      return StatusCode::kTooLarge;  // past --max-input-mb: the message names the limit
    case LookupError::kInternal:
      return StatusCode::kInternal;
  }
  return StatusCode::kInternal;
}

bool parse_critical_path_window(const char* step, const char* annotation, const char* instance,
                                std::optional<CriticalPathWindow>& window, std::string& error) {
  window.reset();
  // Digits only, at most 12 (no sign, no spaces, no "1e3"): the value cannot overflow.
  auto number = [&](const char* text, const char* what, int64_t max, int64_t& out) {
    std::string_view v(text);
    bool digits = !v.empty() && v.size() <= 12 &&
                  std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
    out = 0;
    if (digits)
      for (char c : v) out = out * 10 + (c - '0');
    if (!digits || out > max) {
      error = std::string(what) + " must be a whole number from 0 to " + std::to_string(max);
      return false;
    }
    return true;
  };
  if (step != nullptr && (annotation != nullptr || instance != nullptr)) {
    error = "give either ?step=N or ?annotation=NAME[&instance=K], not both";
    return false;
  }
  if (step != nullptr) {
    CriticalPathWindow w;
    if (!number(step, "step", kMaxStepNumber, w.step)) return false;
    window = w;
    return true;
  }
  if (annotation == nullptr) {
    if (instance != nullptr) {
      error = "?instance=K needs ?annotation=NAME";
      return false;
    }
    return true;  // the default window
  }
  CriticalPathWindow w;
  std::string_view a(annotation);
  if (a.size() > kMaxAnnotationBytes) {
    error = "annotation is longer than " + std::to_string(kMaxAnnotationBytes) + " bytes";
    return false;
  }
  if (!JsonWriter::valid_utf8(a)) {
    error = "annotation is not valid UTF-8";
    return false;
  }
  w.annotation = std::string(a);
  if (instance != nullptr) {
    int64_t k = 0;
    if (!number(instance, "instance", static_cast<int64_t>(kMaxInstance), k)) return false;
    w.instance = static_cast<size_t>(k);
  }
  window = w;
  return true;
}

struct TraceStore::OpenFile {
  int fd = -1;
  TraceFileInfo info;
  OpenFile() = default;
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  ~OpenFile() {
    if (fd >= 0) ::close(fd);
  }
  // Cache keys name the file's version: a rewrite changes size or mtime.
  std::string key() const {
    return info.name + '\n' + std::to_string(info.size) + '\n' + std::to_string(info.mtime_ns);
  }
};

struct TraceStore::TileIndexes {
  std::mutex mu;  // held while an index is built: one at a time
  std::list<std::pair<std::string, std::shared_ptr<const TimelineTileIndex>>> kept;
};

struct TraceStore::DirHandle {
  int fd = -1;
  dev_t dev = 0;
  ino_t ino = 0;
  explicit DirHandle(const std::string& path) {
    fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st {};
    if (fd >= 0 && ::fstat(fd, &st) == 0) {
      dev = st.st_dev;
      ino = st.st_ino;
    }
  }
  DirHandle(const DirHandle&) = delete;
  DirHandle& operator=(const DirHandle&) = delete;
  ~DirHandle() {
    if (fd >= 0) ::close(fd);
  }
};

TraceStore::TraceStore(std::string dir, TraceStoreOptions options)
    : dir_(std::move(dir)),
      options_(options),
      results_(options.cache_bytes),
      tile_indexes_(std::make_unique<TileIndexes>()) {
  std::error_code ec;
  canonical_dir_ = fs::canonical(dir_, ec).string();
  if (ec) canonical_dir_ = dir_;
  dir_handle_ = std::make_shared<const DirHandle>(canonical_dir_);
}

TraceStore::~TraceStore() = default;

// One stat per request: cheap next to any answer, and a recreated directory is served at once.
std::shared_ptr<const TraceStore::DirHandle> TraceStore::dir_handle() const {
  struct stat st {};
  bool exists = ::stat(canonical_dir_.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  std::lock_guard<std::mutex> lock(dir_mu_);
  if (exists &&
      (dir_handle_->fd < 0 || st.st_dev != dir_handle_->dev || st.st_ino != dir_handle_->ino)) {
    auto reopened = std::make_shared<const DirHandle>(canonical_dir_);
    if (reopened->fd >= 0) dir_handle_ = std::move(reopened);  // requests in flight keep the old
  }
  return dir_handle_;
}

Listing TraceStore::list() const {
  Listing out;
  std::shared_ptr<const DirHandle> d = dir_handle();
  if (d->fd < 0) return out;
  // Walked through the descriptor, so the names listed are the ones open() finds.
  const fs::path root = "/proc/self/fd/" + std::to_string(d->fd);
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() >= kMaxDepth) it.disable_recursion_pending();
    const fs::directory_entry& de = *it;
    std::string fname = de.path().filename().string();
    if (!fname.empty() && fname[0] == '.') {  // hidden files and folders (.git, editor temp files)
      if (de.is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    // Every name of the importer registry: traces, CUDA memory snapshots (.pickle) and
    // torch.compile structured logs (.log, checked by content below).
    if (!de.is_regular_file(ec) || !is_trace_name(fname)) continue;
    if (out.files.size() >= options_.max_files) {  // one more trace file: say the list is cut
      out.truncated = true;
      break;
    }
    TraceFileInfo info;
    info.name = de.path().lexically_relative(root).generic_string();
    struct stat st {};
    if (de.is_symlink(ec)) {  // listed only if it stays inside the directory
      OpenFile f;
      std::string message;
      if (open_in(*d, info.name, f, message) != LookupError::kNone) continue;
      info = f.info;
    } else if (::fstatat(d->fd, info.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               S_ISREG(st.st_mode)) {  // a name and a size only: contents are read via open()
      info.size = static_cast<uint64_t>(st.st_size);
      info.mtime_ns = mtime_ns_of(st);
    } else {
      continue;
    }
    if (is_log_name(fname)) {  // other .log files (a server's own log) are not listed
      OpenFile f;
      std::string message;
      if (open_in(*d, info.name, f, message) != LookupError::kNone ||
          !is_compile_log_file("/proc/self/fd/" + std::to_string(f.fd)))
        continue;
      info.compile_log = true;
    }
    out.files.push_back(std::move(info));
  }
  std::sort(out.files.begin(), out.files.end(),
            [](const TraceFileInfo& a, const TraceFileInfo& b) { return a.name < b.name; });
  return out;
}

LookupError TraceStore::open(const std::string& name, OpenFile& f, std::string& message) const {
  return open_in(*dir_handle(), name, f, message);
}

LookupError TraceStore::open_in(const DirHandle& d, const std::string& name, OpenFile& f,
                                std::string& message) const {
  if (name.empty() || name.size() > kMaxNameBytes || name.find('\0') != std::string::npos) {
    message = "missing or invalid trace name";
    return LookupError::kBadName;
  }
  if (name[0] == '/') {
    message = "trace names are relative to the served directory";
    return LookupError::kOutside;
  }
  auto not_found = [&]() {
    message = "no trace named '" + name + "'";
    return LookupError::kNotFound;
  };
  for (size_t start = 0;;) {
    size_t slash = name.find('/', start);
    std::string_view part = std::string_view(name).substr(start, slash - start);
    if (part == "..") {
      message = "'..' is not allowed in trace names";
      return LookupError::kOutside;
    }
    if (part.empty() || part[0] == '.') return not_found();  // hidden (or "a//b", "./a")
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (!is_trace_name(name) || d.fd < 0) return not_found();
  int fd = open_beneath(d.fd, name, options_.use_openat2);
  if (fd == -EXDEV || fd == -ELOOP) {
    message = "'" + name + "' is outside the served directory";
    return LookupError::kOutside;
  }
  if (fd < 0) return not_found();
  f.fd = fd;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return not_found();
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  f.info.name = name;
  f.info.size = static_cast<uint64_t>(st.st_size);
  f.info.mtime_ns = mtime_ns_of(st);
  return LookupError::kNone;
}

// Loads the file behind the descriptor (not the name, which may point elsewhere by now) through
// its /proc/self/fd link; the trace and its errors name the file by its path in DIR.
Result<Trace> TraceStore::load(const OpenFile& f, LoadProgress* progress) {
  std::string via = "/proc/self/fd/" + std::to_string(f.fd);
  std::string path = (fs::path(canonical_dir_) / f.info.name).string();
  ImportOptions io;
  io.name = path;  // a compile log's rank_N is in its name
  io.max_input_bytes = options_.max_input_bytes;
  if (progress != nullptr) {
    io.progress_bytes = &progress->bytes;
    io.progress_events = &progress->events;
  }
  Result<Input> in = open_input(via, io);  // a regular file (open() checked): one Trace
  ++loads_;
  if (in) {
    in->trace->meta.source = path;
    return std::move(*in->trace);
  }
  const Status& r = in.status();
  // A failed load (a file past the input limit) freed everything it parsed; hand it back to the
  // system, or the server keeps the peak (a 600 MiB bomb: RSS stayed at 597 MiB).
  ::malloc_trim(0);
  std::string message = r.message();
  if (message.starts_with(via)) message.replace(0, via.size(), path);
  if (size_t at = message.find(kOverLimit); at != std::string::npos && options_.max_input_bytes) {
    size_t hint = message.find(" (", at);  // serve's limit is its option, not the variable
    if (hint != std::string::npos)
      message.replace(hint, std::string::npos, " (mlprof serve --max-input-mb N raises it)");
  }
  return Status::error(r.code(), message);
}

void TraceStore::keep(const std::string& key, SharedTrace t) {
  std::lock_guard<std::mutex> lock(kept_mu_);
  kept_.remove_if([&](const auto& k) { return k.first == key; });
  kept_.emplace_front(key, std::move(t));
  while (kept_.size() > options_.kept_traces) kept_.pop_back();
}

std::optional<Result<TraceStore::SharedTrace>> TraceStore::trace_of(const OpenFile& f,
                                                                    const StillWanted& wanted) {
  std::string key = f.key();
  {
    std::lock_guard<std::mutex> lock(kept_mu_);
    for (auto it = kept_.begin(); it != kept_.end(); ++it)
      if (it->first == key) {
        kept_.splice(kept_.begin(), kept_, it);
        return Result<SharedTrace>(kept_.front().second);
      }
  }
  return load_flights_.run(
      key,
      [&]() -> std::optional<Result<SharedTrace>> {
        if (!still(wanted)) return std::nullopt;
        auto progress = std::make_shared<LoadProgress>();
        progress->total = f.info.size;
        progress->start = std::chrono::steady_clock::now();
        {
          std::lock_guard<std::mutex> lock(progress_mu_);
          loading_[key] = progress;
        }
        Result<Trace> r = load(f, progress.get());
        {
          std::lock_guard<std::mutex> lock(progress_mu_);
          loading_.erase(key);
        }
        if (!r) return Result<SharedTrace>(r.status());
        AnalysisOptions options;
        options.ops.top = kReportOpRows;  // as the report
        if (options_.analysis) options = *options_.analysis;
        if (!options_.graph_captures.empty()) options.graphs.captures = options_.graph_captures;
        auto t = std::make_shared<AnalysisSet>(std::move(r.value()), options);
        keep(key, t);
        return Result<SharedTrace>(t);
      },
      wanted);
}

Lookup TraceStore::get(const std::string& name, const std::string& analysis,
                       const StillWanted& wanted) {
  return cached(
      name, analysis,
      [&](AnalysisSet& set) {
        Result<std::string> r = compute_analysis(set, analysis);
        if (!r) return Lookup{LookupError::kInternal, r.error(), nullptr};
        return found(shared(std::move(r.value())));
      },
      wanted);
}

Lookup TraceStore::hta(const std::string& name, const std::string& analysis,
                       const StillWanted& wanted) {
  return cached(
      name, analysis + "\nhta",
      [&](AnalysisSet& set) {
        return found(shared(hta_analysis_json(
            set, analysis == "kernels" ? AnalysisId::kKernels : AnalysisId::kGpu)));
      },
      wanted);
}

Lookup TraceStore::critical_path(const std::string& name, const CriticalPathWindow& window,
                                 const StillWanted& wanted) {
  // The key names the window unambiguously: "step N", or "annotation K NAME" (NAME last, so any
  // bytes it holds cannot be read as another window).
  std::string what = window.step >= 0
                         ? "critical_path\nstep " + std::to_string(window.step)
                         : "critical_path\nannotation " + std::to_string(window.instance) + ' ' +
                               window.annotation;
  return cached(
      name, what,
      [&](AnalysisSet& set) {
        CriticalPathOptions o = set.options().critical_path;
        o.step = window.step;
        if (window.step < 0) {
          o.annotation = window.annotation;
          o.instance = window.instance;
        }
        // This window's own check (the default one's absence makes the analysis unavailable,
        // not another window's).
        if (auto why = critical_path_unavailable(set.trace(), o))
          return Lookup{LookupError::kNotFound, *why, nullptr};
        CriticalPathResult r = set.critical_path_for(o);
        if (r.window_missing) return Lookup{LookupError::kNotFound, r.message, nullptr};
        JsonWriter w;
        w.lead_next_object("schema", analysis_schema_id(AnalysisId::kCriticalPath));
        write_critical_path_json(w, r);
        return found(shared(w.take()));
      },
      wanted);
}

Lookup TraceStore::cached(const std::string& name, const std::string& what,
                          const std::function<Lookup(AnalysisSet&)>& compute,
                          const StillWanted& wanted) {
  Lookup out;
  OpenFile f;
  out.error = open(name, f, out.message);
  if (out.error != LookupError::kNone) return out;
  std::string key = f.key() + '\n' + what;
  std::string failed_key = f.key() + "\n!load";
  auto failed = [&](const Status& s) {
    if (s.code() == StatusCode::kTooLarge)
      return Lookup{LookupError::kTooLarge, s.message(), nullptr};
    bool fresh = maybe_being_written(f.info.mtime_ns);
    return Lookup{fresh ? LookupError::kIncomplete : LookupError::kLoadFailed, s.message(),
                  nullptr};
  };
  if (Body body = results_.find(key)) {
    ++hits_;
    return found(body);
  }
  if (Body load = results_.find(failed_key)) return failed(failed_load(load));
  ++misses_;
  // The loops that can run long (the compile analysis, the compile-log reader) ask `wanted`
  // themselves and throw Cancelled once the client has gone (trace/cancel.h).
  CancelScope cancel_scope(wanted);
  std::optional<Lookup> r;
  try {
    r = result_flights_.run(
        key,
        [&]() -> std::optional<Lookup> {
          if (Body body = results_.find(key)) return found(body);
          auto trace = trace_of(f, wanted);
          if (!trace) return std::nullopt;
          if (!*trace) {
            results_.put(failed_key, failed_load(trace->status()));  // parsed once per version
            return failed(trace->status());
          }
          if (!still(wanted)) return std::nullopt;
          if (int64_t ms = test_delay_ms())
            std::this_thread::sleep_for(std::chrono::milliseconds(ms));
          Lookup done = compute(***trace);
          if (done.error == LookupError::kNone) results_.put(key, done.body);
          return done;
        },
        wanted);
  } catch (const Cancelled&) {
    return abandoned();
  }
  if (!r) return abandoned();
  return *r;
}

OpenedTrace TraceStore::trace(const std::string& name, const StillWanted& wanted) {
  OpenedTrace out;
  OpenFile f;
  out.error = open(name, f, out.message);
  if (out.error != LookupError::kNone) return out;
  std::string failed_key = f.key() + "\n!load";
  auto failed = [&](const Status& s) {
    out.error = s.code() == StatusCode::kTooLarge      ? LookupError::kTooLarge
                : maybe_being_written(f.info.mtime_ns) ? LookupError::kIncomplete
                                                       : LookupError::kLoadFailed;
    out.message = s.message();
    return out;
  };
  if (Body load = results_.find(failed_key)) return failed(failed_load(load));
  CancelScope cancel_scope(wanted);
  try {
    auto t = trace_of(f, wanted);
    if (!t) return OpenedTrace{LookupError::kAbandoned, "the client went away", nullptr};
    if (!*t) {
      results_.put(failed_key, failed_load(t->status()));  // parsed once per version
      return failed(t->status());
    }
    out.set = **t;
  } catch (const Cancelled&) {
    return OpenedTrace{LookupError::kAbandoned, "the client went away", nullptr};
  }
  return out;
}

Lookup TraceStore::tile(const std::string& name, int64_t t0, int64_t t1, uint32_t px,
                        const StillWanted& wanted) {
  std::string what =
      "tile\n" + std::to_string(t0) + ' ' + std::to_string(t1) + ' ' + std::to_string(px);
  std::string version;  // the file's version, as cached() opens it
  {
    OpenFile f;
    std::string message;
    if (open(name, f, message) == LookupError::kNone) version = f.key();
  }
  return cached(
      name, what,
      [&](AnalysisSet& set) {
        // The index is the trace's: by the file's version, the stage and its slice count (a file
        // rewritten between the two opens never gets another version's index).
        std::shared_ptr<const TimelineTileIndex> index;
        {
          std::lock_guard<std::mutex> lock(tile_indexes_->mu);
          auto& kept = tile_indexes_->kept;
          std::string key = version + '\n' + std::to_string(reinterpret_cast<uintptr_t>(&set)) +
                            ' ' + std::to_string(set.trace().slices.size());
          for (auto it = kept.begin(); it != kept.end(); ++it)
            if (it->first == key) {
              kept.splice(kept.begin(), kept, it);
              index = it->second;
              break;
            }
          if (!index) {
            index = std::make_shared<const TimelineTileIndex>(
                build_timeline_tile_index(set.trace(), set.timeline()));
            kept.emplace_front(key, index);
            while (kept.size() > options_.kept_traces) kept.pop_back();
          }
        }
        return found(shared(timeline_tile_json(set.trace(), set.timeline(), *index, t0, t1, px)));
      },
      wanted);
}

Lookup TraceStore::progress(const std::string& name) {
  Lookup out;
  OpenFile f;
  out.error = open(name, f, out.message);
  if (out.error != LookupError::kNone) return out;
  std::string key = f.key();
  JsonWriter w;
  w.begin_object().field("trace", name).field("total_bytes", f.info.size);
  std::shared_ptr<LoadProgress> p;
  {
    std::lock_guard<std::mutex> lock(progress_mu_);
    auto it = loading_.find(key);
    if (it != loading_.end()) p = it->second;
  }
  bool kept = false;
  {
    std::lock_guard<std::mutex> lock(kept_mu_);
    for (const auto& k : kept_) kept = kept || k.first == key;
  }
  if (p) {
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - p->start).count();
    uint64_t bytes = std::min(p->bytes.load(std::memory_order_relaxed), p->total);
    w.field("state", "loading")
        .field("bytes_read", bytes)
        .field("events_read", p->events.load(std::memory_order_relaxed))
        .field("elapsed_s", elapsed);
    if (bytes > 0 && elapsed > 0) {
      double rate = bytes / elapsed;  // bytes per second so far
      w.field("mb_per_s", rate / 1e6).field("eta_s", (p->total - bytes) / rate);
    }
  } else if (kept) {
    w.field("state", "ready");
  } else if (Body load = results_.find(key + "\n!load")) {
    w.field("state", "failed").field("error", failed_load(load).message());
  } else {
    w.field("state", "idle");  // not being parsed: not asked for yet, or answered from the cache
  }
  w.end_object();
  return found(shared(w.take()));
}

std::string TraceStore::cache_json() const {
  std::vector<std::string> kept;
  {
    std::lock_guard<std::mutex> lock(kept_mu_);
    for (const auto& k : kept_) kept.push_back(k.first.substr(0, k.first.find('\n')));
  }
  JsonWriter w;
  w.begin_object()
      .field("max_bytes", static_cast<uint64_t>(options_.cache_bytes))
      .field("cached_bytes", static_cast<uint64_t>(results_.bytes()))
      .field("entries", static_cast<uint64_t>(results_.size()))
      .field("hits", hits_.load())
      .field("misses", misses_.load())
      .field("loads", loads_.load());
  w.key("kept_traces").begin_array();
  for (const std::string& k : kept) w.value(k);
  w.end_array().end_object();
  return w.take();
}

namespace {
bool is_top_level_rank_trace(const TraceFileInfo& f) {
  return f.name.find('/') == std::string::npos && is_rank_trace_name(f.name);
}
}  // namespace

std::vector<std::string> TraceStore::rank_names() const {
  std::vector<std::string> names;
  for (const TraceFileInfo& f : list().files)
    if (is_top_level_rank_trace(f)) names.push_back(f.name);
  return names;
}

OpenedTrace TraceStore::rank_set(const StillWanted& wanted) {
  std::vector<std::string> names;
  std::string key;
  for (const TraceFileInfo& f : list().files)
    if (is_top_level_rank_trace(f)) {
      names.push_back(f.name);
      key += f.name + '\n' + std::to_string(f.size) + '\n' + std::to_string(f.mtime_ns) + '\n';
    }
  if (names.empty())
    return OpenedTrace{LookupError::kNotFound,
                       canonical_dir_ +
                           ": no trace files (*.json, *.json.gz, *.mlprof) (a "
                           "directory of rank traces)",
                       nullptr};
  std::lock_guard<std::mutex> lock(rank_set_mu_);
  if (rank_set_ && key == rank_set_key_) return OpenedTrace{LookupError::kNone, "", rank_set_};
  // Sources are the files' paths in the directory; the loader takes them back to names.
  RankLoader load_one = [this](const std::string& path) -> Result<Trace> {
    std::string name = path;
    if (name.starts_with(canonical_dir_ + "/")) name.erase(0, canonical_dir_.size() + 1);
    OpenFile f;
    std::string message;
    if (open(name, f, message) != LookupError::kNone) return Status::error(message);
    return load(f);
  };
  AnalysisOptions options;
  if (options_.analysis) options = *options_.analysis;
  if (!options_.graph_captures.empty()) options.graphs.captures = options_.graph_captures;
  std::vector<std::string> errors;
  std::vector<RankSummary> summaries =
      reduce_rank_files(names, load_one, 1, options.ranks, errors, [&] { return still(wanted); });
  if (!still(wanted)) return OpenedTrace{LookupError::kAbandoned, "the client went away", nullptr};
  if (summaries.empty())
    return OpenedTrace{LookupError::kLoadFailed,
                       canonical_dir_ + ": no trace could be loaded (a directory of rank traces" +
                           (errors.empty() ? "" : "; the first: " + errors.front()) + ")",
                       nullptr};
  rank_set_ = std::make_shared<AnalysisSet>(std::move(summaries), load_one, std::move(options),
                                            std::move(errors));
  rank_set_key_ = key;
  return OpenedTrace{LookupError::kNone, "", rank_set_};
}

Lookup TraceStore::compare(const std::string& base, const std::string& next,
                           const StillWanted& wanted) {
  Lookup out;
  OpenFile bf, nf;
  out.error = open(base, bf, out.message);
  if (out.error == LookupError::kNone) out.error = open(next, nf, out.message);
  if (out.error != LookupError::kNone) return out;
  std::string key = "compare\n" + bf.key() + '\n' + nf.key();
  if (Body body = results_.find(key)) return found(body);
  std::optional<Lookup> r = result_flights_.run(
      key,
      [&]() -> std::optional<Lookup> {
        auto bt = trace_of(bf, wanted);
        if (!bt) return std::nullopt;
        auto nt = trace_of(nf, wanted);
        if (!nt) return std::nullopt;
        if (!*bt || !*nt) {
          const Status& s = !*bt ? bt->status() : nt->status();
          return Lookup{
              s.code() == StatusCode::kTooLarge ? LookupError::kTooLarge : LookupError::kLoadFailed,
              s.message(), nullptr};
        }
        if (!still(wanted)) return std::nullopt;
        Lookup done;
        done.body = shared(compare_json((**bt)->trace(), (**nt)->trace()));
        results_.put(key, done.body);
        return done;
      },
      wanted);
  return r ? *r : abandoned();
}

struct TraceStore::DirSummaries {
  std::vector<std::string> names;                           // the traces that loaded
  std::vector<RankSummary> summaries;                       // parallel to names
  std::vector<std::pair<std::string, std::string>> failed;  // (name, why)
  RankGrouping grouping;                                    // over names
};

std::optional<std::shared_ptr<const TraceStore::DirSummaries>> TraceStore::dir_summaries(
    const std::vector<TraceFileInfo>& files, const std::string& key, const StillWanted& wanted) {
  std::lock_guard<std::mutex> lock(summaries_mu_);
  if (summaries_ && summaries_key_ == key) return summaries_;
  // Streaming, as `mlprof ranks DIR`: one trace in memory at a time, reduced to its summary.
  std::vector<std::string> names;
  for (const TraceFileInfo& info : files)
    if (!info.compile_log) names.push_back(info.name);
  auto load_one = [this](const std::string& name) -> Result<Trace> {
    OpenFile f;
    std::string message;
    if (open(name, f, message) != LookupError::kNone) return Status::error(message);
    return load(f);
  };
  std::vector<std::string> errors;
  std::vector<size_t> error_files;
  AnalysisOptions options;
  std::vector<RankSummary> summaries = reduce_rank_files(
      names, load_one, 1, options.ranks, errors, [&] { return still(wanted); }, &error_files);
  if (!still(wanted)) return std::nullopt;  // between files: the client may have gone
  auto d = std::make_shared<DirSummaries>();
  std::vector<bool> failed(names.size(), false);
  for (size_t k = 0; k < error_files.size(); ++k) {
    failed[error_files[k]] = true;
    d->failed.emplace_back(names[error_files[k]], k < errors.size() ? errors[k] : "");
  }
  for (size_t i = 0; i < names.size(); ++i)
    if (!failed[i]) d->names.push_back(names[i]);
  if (d->names.size() != summaries.size()) d->names.resize(summaries.size());  // defensive
  d->summaries = std::move(summaries);
  std::vector<RankTraceInfo> infos;
  for (const RankSummary& s : d->summaries)
    infos.push_back(RankTraceInfo{"", s.stats.rank, s.stats.world_size, s.begin_ns});
  d->grouping = group_rank_traces(infos);
  summaries_ = d;
  summaries_key_ = key;
  return summaries_;
}

namespace {
std::string listing_key(const std::vector<TraceFileInfo>& files) {
  std::string signature;
  for (const TraceFileInfo& f : files)
    signature += f.name + '\n' + std::to_string(f.size) + '\n' + std::to_string(f.mtime_ns) + '\n';
  return std::to_string(std::hash<std::string>{}(signature)) + '\n' + std::to_string(files.size());
}
}  // namespace

Lookup TraceStore::rank_groups(const StillWanted& wanted) {
  std::vector<TraceFileInfo> files = list().files;
  std::string sig = listing_key(files);
  std::string key = "rank_groups\n" + sig;
  if (Body body = results_.find(key)) return found(body);
  std::optional<Lookup> r = result_flights_.run(
      key,
      [&]() -> std::optional<Lookup> {
        auto d = dir_summaries(files, sig, wanted);
        if (!d) return std::nullopt;
        const DirSummaries& ds = **d;
        JsonWriter w;
        w.begin_object().field("window_s", kJobStartWindowNs / 1'000'000'000);
        w.key("groups").begin_array();
        for (size_t g = 0; g < ds.grouping.groups.size(); ++g) {
          const RankGroup& grp = ds.grouping.groups[g];
          w.begin_object().field("id", static_cast<int64_t>(g)).field("world_size", grp.world_size);
          w.field("begin_ns", grp.begin_ns)
              .field("traces_count", static_cast<uint64_t>(grp.traces.size()));
          w.field("complete",
                  grp.world_size > 0 && grp.traces.size() == static_cast<size_t>(grp.world_size));
          w.key("traces").begin_array();
          for (size_t k : grp.traces)
            w.begin_object()
                .field("name", ds.names[k])
                .field("rank", ds.summaries[k].stats.rank)
                .field("begin_ns", ds.summaries[k].begin_ns)
                .end_object();
          w.end_array().end_object();
        }
        w.end_array().key("unrelated").begin_array();
        for (const auto& [k, why] : ds.grouping.unrelated)
          w.begin_object().field("name", ds.names[k]).field("why", why).end_object();
        for (const auto& [name, why] : ds.failed)
          w.begin_object()
              .field("name", name)
              .field("why", "does not load (" + why + ")")
              .end_object();
        w.end_array().end_object();
        Lookup done;
        done.body = shared(w.take());
        results_.put(key, done.body);
        return done;
      },
      wanted);
  return r ? *r : abandoned();
}

Lookup TraceStore::ranks(const StillWanted& wanted, int64_t group) {
  std::vector<TraceFileInfo> files = list().files;
  std::string sig = listing_key(files);
  std::string key = "ranks\n" + sig + '\n' + std::to_string(group < 0 ? 0 : group);
  if (Body body = results_.find(key)) return found(body);
  std::optional<Lookup> r = result_flights_.run(
      key,
      [&]() -> std::optional<Lookup> {
        // No trace (or none of one job) is no rank at all, as `mlprof ranks DIR` says, not one
        // empty rank.
        auto no_ranks = [&](const std::string& why) {
          JsonWriter w;
          w.begin_object().field("unavailable", why).end_object();
          Lookup done;
          done.body = shared(w.take());
          results_.put(key, done.body);
          return done;
        };
        bool any = std::any_of(files.begin(), files.end(),
                               [](const TraceFileInfo& f) { return !f.compile_log; });
        if (!any)
          return no_ranks("no trace files in this directory (.json, .json.gz, .mlprof, .pickle)");
        auto d = dir_summaries(files, sig, wanted);
        if (!d) return std::nullopt;
        const DirSummaries& ds = **d;
        if (ds.summaries.empty() && !ds.failed.empty())
          return no_ranks("no trace file in this directory loads: " + ds.failed.front().second +
                          (ds.failed.size() > 1
                               ? " (and " + std::to_string(ds.failed.size() - 1) + " more)"
                               : ""));
        const auto& groups = ds.grouping.groups;
        if (groups.empty())
          return no_ranks(
              "no traces of a distributed job here: none has distributedInfo (rank and world "
              "size), so none is analysed as a rank");
        size_t g = group < 0 ? 0 : static_cast<size_t>(group);
        if (g >= groups.size())
          return Lookup{LookupError::kNotFound,
                        "no job group " + std::to_string(group) + " (there are " +
                            std::to_string(groups.size()) + ")",
                        nullptr};
        std::vector<RankSummary> chosen;
        for (size_t k : groups[g].traces) chosen.push_back(ds.summaries[k]);
        AnalysisOptions options;
        AnalysisSet set(std::move(chosen), nullptr, options, {});
        Lookup done;
        done.body = shared(analysis_json(set, AnalysisId::kRanks));
        results_.put(key, done.body);
        return done;
      },
      wanted);
  return r ? *r : abandoned();
}

}  // namespace mlprof::serve
