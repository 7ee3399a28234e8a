// Session start/stop, the global session, configuration from the environment, and the
// at-exit writer of MLPROF_OUTPUT.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "mlprof/chrome_export.h"
#include "mlprof/mlprof.h"
#include "mlprof/native_format.h"
#include "record/recorder_internal.h"

namespace mlprof {
namespace record {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

bool env_is(const char* value, std::initializer_list<const char*> words) {
  for (const char* w : words)
    if (strcasecmp(value, w) == 0) return true;
  return false;
}

// MLPROF_ENABLED=0 (false/no/off): every start() fails.
bool killed_by_env() {
  const char* v = env("MLPROF_ENABLED");
  return v && env_is(v, {"0", "false", "no", "off"});
}

void write_output_at_exit() {
  const char* out = env("MLPROF_OUTPUT");
  if (!out) return;
  if (::getpid() != recorder().owner_pid) return;  // a forked child never overwrites it
  Session& g = global();
  if (!g.running()) return;
  Trace t = g.stop();
  Status s = save_trace_by_extension(t, out);
  if (!s)
    std::fprintf(stderr, "mlprof: %s\n", s.message().c_str());
  else
    std::fprintf(stderr, "mlprof: wrote %zu events to %s\n", t.event_count(), out);
}

uint64_t parse_u64(const char* name, uint64_t fallback) {
  const char* v = env(name);
  if (!v) return fallback;
  char* end = nullptr;
  unsigned long long x = std::strtoull(v, &end, 10);
  if (end == v || *end != '\0') {
    std::fprintf(stderr, "mlprof: ignoring %s=%s (not a number)\n", name, v);
    return fallback;
  }
  return x;
}

}  // namespace

void reset_after_fork() {
  reset_names_after_fork();
  reset_memory_after_fork();
}

Status save_trace_by_extension(const Trace& trace, const std::string& path) {
  auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".json")) return save_chrome_json(trace, path);
  return save_native(trace, path);
}

void env_autostart() {
  recorder();  // registers the fork handlers early
  if (killed_by_env()) return;
  if (const char* nvtx = env("MLPROF_NVTX"); nvtx && env_is(nvtx, {"1", "true", "yes", "on"})) {
    if (!set_nvtx(true))
      std::fprintf(stderr, "mlprof: MLPROF_NVTX ignored: built without the NVTX headers\n");
  }
  const char* enabled = env("MLPROF_ENABLED");
  bool on = (enabled && env_is(enabled, {"1", "true", "yes", "on"})) || env("MLPROF_OUTPUT");
  if (!on) return;
  Status s = global().start();
  if (!s) {
    std::fprintf(stderr, "mlprof: %s\n", s.message().c_str());
    return;
  }
  std::atexit(write_output_at_exit);
}

}  // namespace record

SessionOptions SessionOptions::from_env() {
  SessionOptions o;
  o.buffer_mb = static_cast<size_t>(record::parse_u64("MLPROF_BUFFER_MB", o.buffer_mb));
  o.sample = static_cast<uint32_t>(std::max<uint64_t>(1, record::parse_u64("MLPROF_SAMPLE", 1)));
  o.rss_interval_ms =
      static_cast<uint32_t>(record::parse_u64("MLPROF_RSS_INTERVAL_MS", o.rss_interval_ms));
  return o;
}

Session::Session(SessionOptions options) : options_(std::move(options)) {}

Session::~Session() {
  if (running()) stop();
}

bool Session::running() const {
  record::Recorder& r = record::recorder();
  std::lock_guard<std::mutex> lock(r.session_mu);
  return r.active == this;
}

Status Session::start() {
  using namespace record;
  if (killed_by_env())
    return Status::error(StatusCode::kFailedPrecondition,
                         "recording is disabled by MLPROF_ENABLED=0");
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.session_mu);
  if (r.active == this)
    return Status::error(StatusCode::kFailedPrecondition, "this session is already recording");
  if (r.active)
    return Status::error(StatusCode::kFailedPrecondition,
                         "another mlprof session is recording in this process");
  size_t budget = std::max<size_t>(1, options_.buffer_mb * (size_t{1} << 20) / kChunkBytes);
  prepare_pool(r, budget);
  r.clock_mode = tsc_is_invariant() ? kModeTsc : kModeSteady;
  r.sample = std::max<uint32_t>(1, options_.sample);
  r.sample_atomic.store(r.sample);
  r.sample_on = true;
  r.sample_on_atomic.store(true);
  r.user_enabled = true;
  r.pauses.clear();
  r.steps.store(0);
  reset_memory_tracking();
  r.start_pair = read_clock_pair();
  r.start_raw =
      r.clock_mode == kModeTsc ? r.start_pair.tsc : static_cast<uint64_t>(r.start_pair.mono_ns);
  r.active = this;
  r.running.store(true, std::memory_order_release);
  running_ = true;
  apply_mode_locked(r);
  if (options_.rss_interval_ms > 0) start_rss_sampler(options_.rss_interval_ms);
  return Status::ok();
}

Trace Session::stop() {
  using namespace record;
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.session_mu);
  if (r.active != this) {
    running_ = false;
    return TraceBuilder().finish() /* empty */;
  }
  stop_rss_sampler();  // its last sample lands before the pause
  r.running.store(false, std::memory_order_release);
  r.active = nullptr;
  apply_mode_locked(r);  // pauses: every thread's limit is null from here on
  {
    std::lock_guard<std::mutex> pool_lock(r.pool_mu);
    r.accepting = false;
  }
  SessionClock clock;
  clock.mode = r.clock_mode;
  clock.start = r.start_pair;
  clock.stop = read_clock_pair();
  clock.start_raw = r.start_raw;
  clock.stop_raw =
      r.clock_mode == kModeTsc ? clock.stop.tsc : static_cast<uint64_t>(clock.stop.mono_ns);
  clock.ns_per_tick = r.clock_mode == kModeTsc ? ns_per_tick(clock.start, clock.stop) : 1.0;
  clock.pauses = r.pauses;
  clock.sample = r.sample;
  Collected collected = collect(r);
  Trace trace = convert_to_trace(collected, clock);
  release_chunks(r, collected.given_up);
  running_ = false;
  return trace;
}

Session& global() {
  static Session* s = new Session(SessionOptions::from_env());  // lives until exit
  return *s;
}

}  // namespace mlprof
