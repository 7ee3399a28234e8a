#include "serve/trace_store.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "mlprof/analyze/timeline.h"
#include "mlprof/import.h"
#include "mlprof/render/report.h"
#include "mlprof/render/timeline_render.h"

namespace fs = std::filesystem;

namespace mlprof::serve {
namespace {

constexpr size_t kKeptTraces = 2;  // parsed traces kept in memory
constexpr int kMaxDepth = 4;       // directory levels scanned
constexpr size_t kMaxFiles = 10000;
constexpr int64_t kRecentWriteNs = 30'000'000'000;  // a failing file this fresh may be mid-write

bool is_trace_name(const std::string& f) {
  auto ends = [&](std::string_view s) {
    return f.size() >= s.size() && f.compare(f.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".json") || ends(".json.gz") || ends(".mlprof") || ends(".pt.trace.json");
}

int64_t mtime_ns_of(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

TraceStore::TraceStore(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  canonical_dir_ = fs::canonical(dir_, ec).string();
  if (ec) canonical_dir_ = dir_;
}

std::vector<TraceFileInfo> TraceStore::list() const {
  std::vector<TraceFileInfo> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(canonical_dir_, fs::directory_options::skip_permission_denied,
                                      ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() >= kMaxDepth) it.disable_recursion_pending();
    const fs::directory_entry& de = *it;
    std::string fname = de.path().filename().string();
    if (!fname.empty() && fname[0] == '.') {  // hidden files and folders (.git, editor temp files)
      if (de.is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!de.is_regular_file(ec) || !is_trace_name(fname)) continue;
    TraceFileInfo info;
    info.name = de.path().lexically_relative(canonical_dir_).generic_string();
    std::string message;
    if (resolve(info.name, info, message) != LookupError::kNone) continue;  // e.g. symlink out
    out.push_back(std::move(info));
    if (out.size() >= kMaxFiles) break;
  }
  std::sort(out.begin(), out.end(),
            [](const TraceFileInfo& a, const TraceFileInfo& b) { return a.name < b.name; });
  return out;
}

LookupError TraceStore::resolve(const std::string& name, TraceFileInfo& info,
                                std::string& message) const {
  if (name.empty() || name.size() > 1024 || name.find('\0') != std::string::npos) {
    message = "missing or invalid trace name";
    return LookupError::kBadName;
  }
  fs::path rel(name);
  if (rel.is_absolute()) {
    message = "trace names are relative to the served directory";
    return LookupError::kOutside;
  }
  for (const fs::path& part : rel)
    if (part == "..") {
      message = "'..' is not allowed in trace names";
      return LookupError::kOutside;
    }
  std::error_code ec;
  fs::path full = fs::canonical(fs::path(canonical_dir_) / rel, ec);
  if (ec) {
    message = "no trace named '" + name + "'";
    return LookupError::kNotFound;
  }
  // Symlinks may point anywhere: the resolved file must still be inside the directory.
  std::string f = full.string();
  if (f.size() <= canonical_dir_.size() ||
      f.compare(0, canonical_dir_.size(), canonical_dir_) != 0 || f[canonical_dir_.size()] != '/') {
    message = "'" + name + "' is outside the served directory";
    return LookupError::kOutside;
  }
  struct stat st {};
  if (::stat(f.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || !is_trace_name(f)) {
    message = "no trace named '" + name + "'";
    return LookupError::kNotFound;
  }
  info.name = name;
  info.size = static_cast<uint64_t>(st.st_size);
  info.mtime_ns = mtime_ns_of(st);
  return LookupError::kNone;
}

TraceStore::Entry& TraceStore::entry_locked(const TraceFileInfo& info) {
  Entry& e = entries_[info.name];
  if (e.size != info.size || e.mtime_ns != info.mtime_ns) {  // new or changed: start over
    e = Entry{};
    e.size = info.size;
    e.mtime_ns = info.mtime_ns;
  }
  return e;
}

Result<std::shared_ptr<const Trace>> TraceStore::trace_locked(const TraceFileInfo& info, Entry& e) {
  recent_.remove(info.name);
  recent_.push_front(info.name);
  if (!e.trace) {
    Result<Trace> r = load_trace((fs::path(canonical_dir_) / info.name).string());
    ++loads_;
    if (!r) return Status::error(r.error());
    e.trace = std::make_shared<const Trace>(std::move(r.value()));
  }
  while (recent_.size() > kKeptTraces) {
    auto it = entries_.find(recent_.back());
    if (it != entries_.end()) it->second.trace.reset();
    recent_.pop_back();
  }
  return e.trace;
}

Lookup TraceStore::get(const std::string& name, const std::string& analysis) {
  Lookup out;
  TraceFileInfo info;
  out.error = resolve(name, info, out.message);
  if (out.error != LookupError::kNone) return out;
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = entry_locked(info);
  auto cached = e.results.find(analysis);
  if (cached != e.results.end()) {
    out.body = cached->second;
    return out;
  }
  auto trace = trace_locked(info, e);
  if (!trace) {
    bool fresh = now_ns() - info.mtime_ns < kRecentWriteNs;
    out.error = fresh ? LookupError::kIncomplete : LookupError::kLoadFailed;
    out.message = trace.error();
    return out;
  }
  const Trace& t = **trace;
  if (analysis == "events") {
    out.body = encode_timeline_events(t, analyze_timeline(t));
  } else {
    out.body = analysis_json(t, analysis);
  }
  e.results[analysis] = out.body;
  return out;
}

Lookup TraceStore::compare(const std::string& base, const std::string& next) {
  Lookup out;
  TraceFileInfo bi, ni;
  out.error = resolve(base, bi, out.message);
  if (out.error == LookupError::kNone) out.error = resolve(next, ni, out.message);
  if (out.error != LookupError::kNone) return out;
  std::lock_guard<std::mutex> lock(mu_);
  Entry& ne = entry_locked(ni);
  std::string key =
      "compare:" + base + ":" + std::to_string(bi.size) + ":" + std::to_string(bi.mtime_ns);
  auto cached = ne.results.find(key);
  if (cached != ne.results.end()) {
    out.body = cached->second;
    return out;
  }
  auto bt = trace_locked(bi, entry_locked(bi));
  auto nt = trace_locked(ni, entry_locked(ni));
  if (!bt || !nt) {
    out.error = LookupError::kLoadFailed;
    out.message = !bt ? bt.error() : nt.error();
    return out;
  }
  out.body = compare_json(**bt, **nt);
  entry_locked(ni).results[key] = out.body;
  return out;
}

Lookup TraceStore::ranks() {
  Lookup out;
  std::vector<TraceFileInfo> files = list();
  std::vector<Trace> traces;
  std::lock_guard<std::mutex> lock(mu_);
  for (const TraceFileInfo& f : files) {
    Result<Trace> r = load_trace((fs::path(canonical_dir_) / f.name).string());
    ++loads_;
    if (r) traces.push_back(std::move(r.value()));
  }
  std::vector<const Trace*> ptrs;
  for (const Trace& t : traces) ptrs.push_back(&t);
  out.body = ranks_json(ptrs);
  return out;
}

}  // namespace mlprof::serve
