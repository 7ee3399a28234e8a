// mlprof's instrumentation API: the one header a user includes.
//
//   #include "mlprof/mlprof.h"
//   mlprof::Session session;            // or mlprof::global(), or MLPROF_OUTPUT=trace.mlprof
//   session.start();
//   for (...) {
//     MLPROF_STEP("train");             // one slice "ProfilerStep#N" per iteration
//     { MLPROF_SCOPE("forward"); ... }
//     mlprof::counter("loss", loss);
//   }
//   mlprof::Trace trace = session.stop();
//
// The hot path (a scope's begin or end) is inline here: one bounds check against the thread's
// own pre-faulted chunk, two stores and one release store of the write position, about 11
// instructions per event. No lock, no allocation, no syscall. Everything else is out of line in
// src/record/. Build with -DMLPROF_DISABLE and every macro expands to nothing (the functions
// become empty inline stubs), so instrumentation can stay in release code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "mlprof/status.h"
#include "mlprof/trace.h"

#if !defined(MLPROF_DISABLE) && (defined(__x86_64__) || defined(__i386__))
#include <x86intrin.h>
#endif

namespace mlprof {

// Identifies an interned dynamic name (see intern()).
using NameId = uint32_t;

struct SessionOptions {
  size_t buffer_mb = 64;          // MLPROF_BUFFER_MB: bound on event memory; beyond it, drops
  uint32_t sample = 1;            // MLPROF_SAMPLE: record one step in N (1 = every step)
  uint32_t rss_interval_ms = 10;  // MLPROF_RSS_INTERVAL_MS: RSS counter period, 0 = off
  // Reads MLPROF_BUFFER_MB, MLPROF_SAMPLE, MLPROF_RSS_INTERVAL_MS over these defaults.
  static SessionOptions from_env();
};

// A recording session. One session records at a time per process (start() of a second one
// fails); stop() returns everything every thread recorded since start() as a Trace.
class Session {
 public:
  explicit Session(SessionOptions options = {});
  ~Session();  // stops (and discards) a running session
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  Status start();
  // Returns the recorded trace (an empty one when not running). Scopes still open are closed
  // at the stop time and carry the arg unfinished=true; meta.dropped_events counts what the
  // buffer bound (buffer_mb) made the recorder drop.
  Trace stop();
  bool running() const;
  const SessionOptions& options() const { return options_; }
  void set_options(const SessionOptions& o) { options_ = o; }

 private:
  SessionOptions options_;
  bool running_ = false;
};

// The process-wide session, configured from the environment: MLPROF_ENABLED=1 (or
// MLPROF_OUTPUT=path) starts it before main(); at exit it is stopped and written to
// MLPROF_OUTPUT (.json: Chrome trace JSON, anything else: .mlprof). MLPROF_ENABLED=0 makes every
// start() fail, a kill switch for production.
Session& global();

// Pauses / resumes recording of the running session at run time (all threads).
void set_enabled(bool on);
bool enabled();

// Also emits every scope (MLPROF_SCOPE, MLPROF_FUNCTION, named scopes, steps) as an NVTX range
// in the domain "mlprof", and instants as NVTX marks, so they show in Nsight Systems next to the
// CUDA work; with or without a session recording. MLPROF_NVTX=1 turns it on at start-up. Returns
// false (and stays off) when mlprof was built without the NVTX headers. Off, it costs nothing;
// on, scopes leave the inline path for the out-of-line one (NVTX needs a call per scope anyway).
bool set_nvtx(bool on);
bool nvtx_enabled();

// Interns a dynamic name once; scopes, counters and instants can then refer to it by id.
NameId intern(std::string_view name);

// Current and peak bytes tracked by track_alloc/track_free on one device since the session
// started.
int64_t current_bytes(DeviceType type = DeviceType::kCpu, int device_id = 0);
int64_t peak_bytes(DeviceType type = DeviceType::kCpu, int device_id = 0);

namespace detail {

// A static description of a scope, one per MLPROF_SCOPE site: the event records its address.
struct alignas(16) SourceLocation {
  const char* name;
  const char* category;
  const char* file;
  uint32_t line;
};

// Event kinds live in the low 4 bits of Event::data; the rest is a SourceLocation address
// (16-byte aligned) or an id shifted left by 4.
enum EventKind : uint64_t {
  kEmpty = 0,
  kBegin = 1,      // data = SourceLocation*
  kEnd = 2,        // data = SourceLocation*
  kBeginName = 3,  // data = NameId << 4 (+ category NameId in bits 36..63)
  kEndName = 4,
  kInstant = 5,      // data = SourceLocation*
  kInstantName = 6,  // data = NameId << 4
  kCounter = 7,      // 2 slots: {ts, series NameId << 4}, {double bits, 0}
  kMemory = 8,       // 3 slots: {ts, type << 4 | device << 8}, {addr, bytes}, {total, 0}
  kStepBegin = 9,    // 2 slots: {ts, step << 4}, {label char*, 0}
  kStepEnd = 10,     // data = step << 4
};

struct Event {
  uint64_t ts;    // raw TSC ticks, or steady-clock ns when the TSC is not invariant
  uint64_t data;  // kind | payload
};
static_assert(sizeof(Event) == 16);

// The calling thread's write position in its current chunk. `limit` is the last slot; other
// threads set it to null to pause recording (every event then takes the slow path).
struct ThreadWriter {
  Event* cur;
  Event* limit;
};

// 0 = not recording, 1 = TSC clock, 2 = steady clock.
extern int g_mode;
extern __thread ThreadWriter t_writer __attribute__((tls_model("initial-exec")));

void record_slow(uint64_t data) noexcept;  // pauses, chunk switches, the steady clock
NameId intern_name(std::string_view name);
NameId intern_cached(std::string_view name);  // a thread-local cache in front of intern_name
void record_counter(NameId series, double value) noexcept;
void record_instant(NameId name) noexcept;
void record_alloc(const void* ptr, size_t bytes, DeviceType type, int device_id) noexcept;
void record_free(const void* ptr) noexcept;
void step_begin(const char* label) noexcept;
void step_end() noexcept;
void step_advance(const char* label) noexcept;
void set_thread_name(std::string_view name);

#if !defined(MLPROF_DISABLE)
inline __attribute__((always_inline)) uint64_t read_tsc() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return 0;  // other architectures run in steady-clock mode (g_mode 2): never reached
#endif
}

inline __attribute__((always_inline)) void record(uint64_t data) noexcept {
  ThreadWriter& w = t_writer;
  Event* p = w.cur;
  if (__builtin_expect(reinterpret_cast<uintptr_t>(p) >=
                           reinterpret_cast<uintptr_t>(__atomic_load_n(&w.limit, __ATOMIC_RELAXED)),
                       0)) {
    if (__atomic_load_n(&g_mode, __ATOMIC_RELAXED) != 0) record_slow(data);
    return;
  }
  p->ts = read_tsc();
  p->data = data;
  __atomic_store_n(&w.cur, p + 1, __ATOMIC_RELEASE);
}
#else
inline void record(uint64_t) noexcept {}
#endif

inline uint64_t loc_data(const SourceLocation* loc, EventKind kind) noexcept {
  return reinterpret_cast<uintptr_t>(loc) | kind;
}

class ScopeGuard {
 public:
  explicit ScopeGuard(const SourceLocation* loc) noexcept : loc_(loc) {
    record(loc_data(loc, kBegin));
  }
  ~ScopeGuard() { record(loc_data(loc_, kEnd)); }
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;

 private:
  const SourceLocation* loc_;
};

}  // namespace detail

// A scope with a run-time name (interned on first use; pass a NameId to skip the lookup).
class NamedScope {
 public:
  explicit NamedScope(NameId name, NameId category = 0) noexcept
      : data_((uint64_t{name} << 4) | (uint64_t{category} << 36)) {
    detail::record(data_ | detail::kBeginName);
  }
  explicit NamedScope(std::string_view name, std::string_view category = {})
      : NamedScope(detail::intern_cached(name),
                   category.empty() ? 0 : detail::intern_cached(category)) {}
  ~NamedScope() { detail::record(data_ | detail::kEndName); }
  NamedScope(const NamedScope&) = delete;
  NamedScope& operator=(const NamedScope&) = delete;

 private:
  uint64_t data_;
};

// One training/inference iteration: a slice "ProfilerStep#N" (N counts from 0 across the
// process) with the label as its category. With sampling, only one step in N is recorded.
class StepScope {
 public:
#if !defined(MLPROF_DISABLE)
  explicit StepScope(const char* label = "step") noexcept { detail::step_begin(label); }
  ~StepScope() { detail::step_end(); }
#else
  explicit StepScope(const char* = "step") noexcept {}
#endif
  StepScope(const StepScope&) = delete;
  StepScope& operator=(const StepScope&) = delete;
};

#if !defined(MLPROF_DISABLE)
// Ends the calling thread's current step (if any) and begins the next: call at the top of a loop.
inline void step(const char* label = "step") noexcept { detail::step_advance(label); }
inline void counter(std::string_view name, double value) {
  detail::record_counter(detail::intern_cached(name), value);
}
inline void counter(NameId name, double value) noexcept { detail::record_counter(name, value); }
inline void instant(std::string_view name) { detail::record_instant(detail::intern_cached(name)); }
inline void set_thread_name(std::string_view name) { detail::set_thread_name(name); }
// Memory: one Trace memory event per call, with the device's running total.
inline void track_alloc(const void* ptr, size_t bytes, DeviceType type = DeviceType::kCpu,
                        int device_id = 0) noexcept {
  detail::record_alloc(ptr, bytes, type, device_id);
}
inline void track_free(const void* ptr) noexcept { detail::record_free(ptr); }
#else
inline void step(const char* = "step") noexcept {}
inline void counter(std::string_view, double) {}
inline void counter(NameId, double) noexcept {}
inline void instant(std::string_view) {}
inline void set_thread_name(std::string_view) {}
inline void track_alloc(const void*, size_t, DeviceType = DeviceType::kCpu, int = 0) noexcept {}
inline void track_free(const void*) noexcept {}
#endif

// Calls fn(args...) inside a scope named `name` and returns its result (category "function").
template <typename Fn, typename... Args>
decltype(auto) profile_function(std::string_view name, Fn&& fn, Args&&... args) {
#if !defined(MLPROF_DISABLE)
  NamedScope scope(name, "function");
#else
  (void)name;
#endif
  return std::forward<Fn>(fn)(std::forward<Args>(args)...);
}

// Same for one operation (category "op"): `auto y = mlprof::time_op("matmul", matmul, a, b);`
template <typename Fn, typename... Args>
decltype(auto) time_op(std::string_view name, Fn&& fn, Args&&... args) {
#if !defined(MLPROF_DISABLE)
  NamedScope scope(name, "op");
#else
  (void)name;
#endif
  return std::forward<Fn>(fn)(std::forward<Args>(args)...);
}

// Turns any callable into a profiled one (the decorator of Python profilers):
//   auto train_step = mlprof::profiled("train_step", [&](int i) { ... });
template <typename Fn>
class Profiled {
 public:
  Profiled(std::string_view name, Fn fn) : name_(intern(name)), fn_(std::move(fn)) {}
  template <typename... Args>
  decltype(auto) operator()(Args&&... args) {
#if !defined(MLPROF_DISABLE)
    NamedScope scope(name_, function_category());
#endif
    return fn_(std::forward<Args>(args)...);
  }

 private:
  static NameId function_category() {
    static const NameId id = intern("function");
    return id;
  }
  NameId name_;
  Fn fn_;
};

template <typename Fn>
Profiled<std::decay_t<Fn>> profiled(std::string_view name, Fn&& fn) {
  return Profiled<std::decay_t<Fn>>(name, std::forward<Fn>(fn));
}

}  // namespace mlprof

#define MLPROF_CONCAT2(a, b) a##b
#define MLPROF_CONCAT(a, b) MLPROF_CONCAT2(a, b)
#define MLPROF_UNIQUE(prefix) MLPROF_CONCAT(prefix, __LINE__)

#if !defined(MLPROF_DISABLE)
// A scope named by a string literal (recorded by address: no lookup, no copy).
#define MLPROF_SCOPE_CAT(name, category)                                        \
  static constexpr ::mlprof::detail::SourceLocation MLPROF_UNIQUE(mlprof_loc_){ \
      name, category, __FILE__, static_cast<uint32_t>(__LINE__)};               \
  ::mlprof::detail::ScopeGuard MLPROF_UNIQUE(mlprof_scope_)(&MLPROF_UNIQUE(mlprof_loc_))
#define MLPROF_SCOPE(name) MLPROF_SCOPE_CAT(name, nullptr)
// A scope named after the enclosing function.
#define MLPROF_FUNCTION()                                                       \
  static constexpr ::mlprof::detail::SourceLocation MLPROF_UNIQUE(mlprof_loc_){ \
      __func__, "function", __FILE__, static_cast<uint32_t>(__LINE__)};         \
  ::mlprof::detail::ScopeGuard MLPROF_UNIQUE(mlprof_scope_)(&MLPROF_UNIQUE(mlprof_loc_))
// A scope with a run-time name (std::string, string_view): interned once, then by id.
#define MLPROF_SCOPE_DYNAMIC(name) ::mlprof::NamedScope MLPROF_UNIQUE(mlprof_scope_)(name)
// An instant marker named by a string literal.
#define MLPROF_INSTANT(name)                                                   \
  do {                                                                         \
    static constexpr ::mlprof::detail::SourceLocation mlprof_loc_{             \
        name, nullptr, __FILE__, static_cast<uint32_t>(__LINE__)};             \
    ::mlprof::detail::record(                                                  \
        ::mlprof::detail::loc_data(&mlprof_loc_, ::mlprof::detail::kInstant)); \
  } while (0)
// One iteration: `MLPROF_STEP("train");` at the top of the loop body.
#define MLPROF_STEP(label) ::mlprof::StepScope MLPROF_UNIQUE(mlprof_step_)(label)
#define MLPROF_COUNTER(name, value) ::mlprof::counter(name, value)
#else
#define MLPROF_SCOPE_CAT(name, category)
#define MLPROF_SCOPE(name)
#define MLPROF_FUNCTION()
#define MLPROF_SCOPE_DYNAMIC(name)
#define MLPROF_INSTANT(name)
#define MLPROF_STEP(label)
#define MLPROF_COUNTER(name, value)
#endif
