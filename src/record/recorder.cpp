// The recorder's core: per-thread chunks, the slow path, pausing, steps, thread exit and fork.
// The hot path itself is inline in include/mlprof/mlprof.h.
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "record/recorder_internal.h"
#include "record/recorder_state.h"

namespace mlprof {
namespace detail {

int g_mode = 0;
__thread ThreadWriter t_writer __attribute__((tls_model("initial-exec"))) = {nullptr, nullptr};

}  // namespace detail

namespace record {
namespace {

struct ThreadExitHook {
  bool armed = false;
  ~ThreadExitHook();
};

thread_local ThreadRecord* t_record = nullptr;
thread_local bool t_exited = false;
thread_local ThreadExitHook t_exit_hook;
struct OpenStep {
  bool open = false;
  uint64_t n = 0;
};
thread_local OpenStep t_step;

void store_limit(detail::ThreadWriter* w, detail::Event* limit) {
  __atomic_store_n(&w->limit, limit, __ATOMIC_SEQ_CST);
}
void store_cur(detail::ThreadWriter* w, detail::Event* cur) {
  __atomic_store_n(&w->cur, cur, __ATOMIC_RELEASE);
}

void fork_prepare() {
  Recorder& r = recorder();
  r.session_mu.lock();
  r.registry_mu.lock();
  r.pool_mu.lock();
}
void fork_parent() {
  Recorder& r = recorder();
  r.pool_mu.unlock();
  r.registry_mu.unlock();
  r.session_mu.unlock();
}
// The child starts clean and not recording: only the forking thread exists there, the parent's
// session (and its MLPROF_OUTPUT) stays the parent's. The child may start its own session.
void fork_child() {
  Recorder& r = recorder();
  // NVTX emission is the process's setting: the child keeps it.
  __atomic_store_n(&detail::g_mode, r.nvtx ? kModeNvtx : kModeOff, __ATOMIC_SEQ_CST);
  r.active = nullptr;
  r.running.store(false);
  r.accepting = false;
  r.sampler = nullptr;  // the thread does not exist here; its object is abandoned
  new (&r.sampler_mu) std::mutex();
  new (&r.sampler_cv) std::condition_variable();
  // Records of threads that do not exist in the child are abandoned (a few bytes each).
  r.threads.clear();
  if (t_record) r.threads.push_back(t_record);
  reset_after_fork();
  r.pool_mu.unlock();
  r.registry_mu.unlock();
  r.session_mu.unlock();
}

ThreadRecord* current_record() {
  if (t_record) return t_record;
  if (t_exited) return nullptr;
  auto* rec = new ThreadRecord;
  rec->tid = static_cast<int64_t>(::syscall(SYS_gettid));
  char buf[64] = {0};
  if (pthread_getname_np(pthread_self(), buf, sizeof(buf)) == 0) rec->name = buf;
  rec->writer = &detail::t_writer;
  Recorder& r = recorder();
  {
    std::lock_guard<std::mutex> lock(r.registry_mu);
    r.threads.push_back(rec);
  }
  t_exit_hook.armed = true;  // constructs the hook: its destructor runs at thread exit
  t_record = rec;
  return rec;
}

ChunkHeader* acquire_chunk(ThreadRecord* rec) {
  Recorder& r = recorder();
  if (r.exhausted.load(std::memory_order_relaxed)) return nullptr;
  std::lock_guard<std::mutex> lock(r.pool_mu);
  if (!r.accepting) return nullptr;
  if (r.acquired >= r.budget || r.free_chunks.empty()) {
    r.exhausted.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  ChunkHeader* c = r.free_chunks.back();
  r.free_chunks.pop_back();
  ++r.acquired;
  c->next = nullptr;
  c->owner = rec;
  c->seq = rec->next_seq++;
  c->count = 0;
  return c;
}

void count_drop(ThreadRecord* rec, uint64_t raw) {
  rec->dropped.fetch_add(1, std::memory_order_relaxed);
  uint64_t first = rec->first_drop_raw.load(std::memory_order_relaxed);
  while (raw < first &&
         !rec->first_drop_raw.compare_exchange_weak(first, raw, std::memory_order_relaxed)) {
  }
}

ThreadExitHook::~ThreadExitHook() {
  if (!armed) return;
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.registry_mu);
  ThreadRecord* rec = t_record;
  if (rec) {
    detail::ThreadWriter* w = &detail::t_writer;
    store_limit(w, nullptr);
    if (rec->chunk) {
      give_up_chunk(rec->chunk, static_cast<uint32_t>(w->cur - chunk_events(rec->chunk)));
      rec->chunk = nullptr;
    }
    store_cur(w, nullptr);
    rec->writer = nullptr;
    rec->dead = true;
  }
  t_record = nullptr;
  t_exited = true;
}

}  // namespace

Recorder& recorder() {
  static Recorder* r = [] {
    auto* rec = new Recorder();  // never destroyed: threads and atexit may outlive statics
    rec->owner_pid = ::getpid();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    return rec;
  }();
  return *r;
}

uint64_t now_raw(int mode) {
  return mode == kModeTsc ? detail::read_tsc() : static_cast<uint64_t>(monotonic_ns());
}

void give_up_chunk(ChunkHeader* c, uint32_t count) {
  Recorder& r = recorder();
  c->count = count;
  c->next = r.given_up.load(std::memory_order_relaxed);
  while (!r.given_up.compare_exchange_weak(c->next, c, std::memory_order_release,
                                           std::memory_order_relaxed)) {
  }
}

void write_slots(int mode, const Event* slots, uint32_t n) {
  ThreadRecord* rec = current_record();
  if (!rec) return;
  detail::ThreadWriter* w = &detail::t_writer;
  Event* p = w->cur;
  if (!rec->chunk || p + n > chunk_limit(rec->chunk)) {
    if (rec->chunk) {
      // Given up before the position moves, so a collector that reads the position first and
      // the list second never misses this chunk.
      give_up_chunk(rec->chunk, static_cast<uint32_t>(p - chunk_events(rec->chunk)));
      rec->chunk = nullptr;
      store_limit(w, nullptr);
      store_cur(w, nullptr);
    }
    rec->chunk = acquire_chunk(rec);
    if (!rec->chunk) {
      count_drop(rec, slots[0].ts);
      return;
    }
    p = chunk_events(rec->chunk);
  }
  std::memcpy(static_cast<void*>(p), slots, n * sizeof(Event));
  store_cur(w, p + n);
  // Resume the inline path (not while NVTX needs every event here); re-check the mode
  // afterwards so a pause or NVTX switch that raced with this store is not undone (the switching
  // thread stores the mode first, then the limits).
  auto inline_ok = [] {
    int g = __atomic_load_n(&detail::g_mode, __ATOMIC_SEQ_CST);
    return clock_of(g) != kModeOff && !(g & kModeNvtx);
  };
  if (mode == kModeTsc && __atomic_load_n(&w->limit, __ATOMIC_RELAXED) == nullptr && inline_ok()) {
    store_limit(w, chunk_limit(rec->chunk));
    if (!inline_ok()) store_limit(w, nullptr);
  }
}

void add_arena_locked(Recorder& r, size_t nchunks) {
  constexpr size_t kHugePage = 2u << 20;
  size_t bytes = nchunks * kChunkBytes;
  void* raw = ::mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return;  // the budget shrinks to what exists; drops are counted
  uintptr_t base = (reinterpret_cast<uintptr_t>(raw) + kHugePage - 1) & ~(kHugePage - 1);
  ::madvise(reinterpret_cast<void*>(base), bytes, MADV_HUGEPAGE);
  // Pre-fault now: a first touch costs ~10 us per 4 KiB page on these VMs, never on the hot path.
  for (size_t off = 0; off < bytes; off += 4096) reinterpret_cast<volatile char*>(base)[off] = 0;
  for (size_t i = 0; i < nchunks; ++i)
    r.free_chunks.push_back(reinterpret_cast<ChunkHeader*>(base + i * kChunkBytes));
  r.total_chunks += nchunks;
}

void apply_mode_locked(Recorder& r) {
  int clock = (r.active && r.user_enabled && r.sample_on) ? r.clock_mode : kModeOff;
  int want = clock | (r.nvtx ? kModeNvtx : 0);
  int current = __atomic_load_n(&detail::g_mode, __ATOMIC_SEQ_CST);
  if (want == current) return;
  if (clock == kModeOff && clock_of(current) != kModeOff) r.pauses.push_back(now_raw(r.clock_mode));
  __atomic_store_n(&detail::g_mode, want, __ATOMIC_SEQ_CST);
  if (clock == kModeOff || r.nvtx) {
    // Every thread to the slow path: paused, or every scope must reach emit_nvtx().
    std::lock_guard<std::mutex> lock(r.registry_mu);
    for (ThreadRecord* rec : r.threads)
      if (rec->writer) store_limit(rec->writer, nullptr);
  }
  // Otherwise threads pick the new mode up in the slow path (their limits are null).
}

void prepare_pool(Recorder& r, size_t budget_chunks) {
  std::lock_guard<std::mutex> lock(r.registry_mu);
  // Chunks given up between sessions hold only old events.
  ChunkHeader* old = r.given_up.exchange(nullptr, std::memory_order_acquire);
  std::vector<ChunkHeader*> old_chunks;
  for (ChunkHeader* c = old; c; c = c->next) old_chunks.push_back(c);
  auto dead_end = std::stable_partition(r.threads.begin(), r.threads.end(),
                                        [](ThreadRecord* t) { return !t->dead; });
  for (auto it = dead_end; it != r.threads.end(); ++it) delete *it;
  r.threads.erase(dead_end, r.threads.end());
  for (ThreadRecord* rec : r.threads) {
    rec->dropped.store(0);
    rec->first_drop_raw.store(UINT64_MAX);
  }
  std::lock_guard<std::mutex> pool_lock(r.pool_mu);
  r.free_chunks.insert(r.free_chunks.end(), old_chunks.begin(), old_chunks.end());
  if (r.total_chunks < budget_chunks) add_arena_locked(r, budget_chunks - r.total_chunks);
  r.budget = budget_chunks;
  r.acquired = 0;
  r.exhausted.store(false);
  r.accepting = true;
}

Collected collect(Recorder& r) {
  Collected out;
  std::lock_guard<std::mutex> lock(r.registry_mu);
  std::vector<std::pair<ChunkHeader*, uint32_t>> live(r.threads.size(), {nullptr, 0});
  // Positions first, then the list (see write_slots).
  for (size_t i = 0; i < r.threads.size(); ++i) {
    ThreadRecord* rec = r.threads[i];
    if (rec->dead || !rec->writer) continue;
    Event* cur = __atomic_load_n(&rec->writer->cur, __ATOMIC_ACQUIRE);
    if (!cur) continue;
    ChunkHeader* c = chunk_of(cur);
    live[i] = {c, static_cast<uint32_t>(cur - chunk_events(c))};
  }
  ChunkHeader* list = r.given_up.exchange(nullptr, std::memory_order_acquire);
  std::vector<ThreadRecord*> owners;
  out.threads.resize(r.threads.size());
  for (size_t i = 0; i < r.threads.size(); ++i) {
    ThreadRecord* rec = r.threads[i];
    ThreadEvents& te = out.threads[i];
    te.tid = rec->tid;
    te.name = rec->name;
    te.dropped = rec->dropped.load();
    te.first_drop_raw = rec->first_drop_raw.load();
  }
  for (ChunkHeader* c = list; c; c = c->next) {
    out.given_up.push_back(c);
    auto it = std::find(r.threads.begin(), r.threads.end(), c->owner);
    if (it == r.threads.end()) continue;  // not possible: records die only after a drain
    size_t i = static_cast<size_t>(it - r.threads.begin());
    out.threads[i].chunks.push_back(ChunkView{chunk_events(c), c->count, c->seq});
    if (live[i].first == c) live[i].first = nullptr;  // given up meanwhile: the list has it
  }
  for (size_t i = 0; i < r.threads.size(); ++i) {
    if (live[i].first)
      out.threads[i].chunks.push_back(
          ChunkView{chunk_events(live[i].first), live[i].second, live[i].first->seq});
    std::sort(out.threads[i].chunks.begin(), out.threads[i].chunks.end(),
              [](const ChunkView& a, const ChunkView& b) { return a.seq < b.seq; });
  }
  // Every chunk of a dead thread was in the list just drained: its record can go.
  auto dead_end = std::stable_partition(r.threads.begin(), r.threads.end(),
                                        [](ThreadRecord* t) { return !t->dead; });
  for (auto it = dead_end; it != r.threads.end(); ++it) delete *it;
  r.threads.erase(dead_end, r.threads.end());
  return out;
}

void release_chunks(Recorder& r, const std::vector<ChunkHeader*>& chunks) {
  std::lock_guard<std::mutex> lock(r.pool_mu);
  r.free_chunks.insert(r.free_chunks.end(), chunks.begin(), chunks.end());
}

void set_thread_name_impl(std::string_view name) {
  ThreadRecord* rec = current_record();
  if (!rec) return;
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.registry_mu);
  rec->name = std::string(name);
}

void step_begin_impl(const char* label) {
  Recorder& r = recorder();
  if (!r.running.load(std::memory_order_acquire)) return;
  uint64_t n = r.steps.fetch_add(1, std::memory_order_relaxed);
  uint32_t sample = r.sample_atomic.load(std::memory_order_relaxed);
  if (sample > 1) {
    bool on = n % sample == 0;
    if (on != r.sample_on_atomic.load(std::memory_order_relaxed)) {
      std::lock_guard<std::mutex> lock(r.session_mu);
      if (r.active) {
        r.sample_on = on;
        r.sample_on_atomic.store(on, std::memory_order_relaxed);
        apply_mode_locked(r);
      }
    }
  }
  int g = __atomic_load_n(&detail::g_mode, __ATOMIC_SEQ_CST);
  int mode = clock_of(g);
  if (mode == kModeOff) return;
  if (g & kModeNvtx) emit_nvtx_step(n);
  Event ev[2] = {{now_raw(mode), (n << 4) | detail::kStepBegin},
                 {reinterpret_cast<uintptr_t>(label), 0}};
  write_slots(mode, ev, 2);
  t_step.open = true;
  t_step.n = n;
}

void step_end_impl() {
  if (!t_step.open) return;
  t_step.open = false;
  detail::record((t_step.n << 4) | detail::kStepEnd);
}

}  // namespace record

namespace detail {

void record_slow(uint64_t data) noexcept {
  int g = __atomic_load_n(&g_mode, __ATOMIC_SEQ_CST);
  if (g & record::kModeNvtx) record::emit_nvtx(data);
  int mode = record::clock_of(g);
  if (mode == record::kModeOff) return;
  Event e{record::now_raw(mode), data};
  record::write_slots(mode, &e, 1);
}

void record_counter(NameId series, double value) noexcept {
  int mode = record::clock_of(__atomic_load_n(&g_mode, __ATOMIC_RELAXED));
  if (mode == record::kModeOff) return;
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  Event ev[2] = {{record::now_raw(mode), (uint64_t{series} << 4) | kCounter}, {bits, 0}};
  record::write_slots(mode, ev, 2);
}

void record_instant(NameId name) noexcept {
  if (__atomic_load_n(&g_mode, __ATOMIC_RELAXED) == record::kModeOff) return;  // NVTX: a mark
  record((uint64_t{name} << 4) | kInstantName);
}

void step_begin(const char* label) noexcept { record::step_begin_impl(label); }
void step_end() noexcept { record::step_end_impl(); }
void step_advance(const char* label) noexcept {
  record::step_end_impl();
  record::step_begin_impl(label);
}
void set_thread_name(std::string_view name) {
  // Not on the main thread: its OS name is the process name (/proc/self/comm).
  if (::syscall(SYS_gettid) != ::getpid())
    pthread_setname_np(pthread_self(), std::string(name.substr(0, 15)).c_str());
  record::set_thread_name_impl(name);
}

}  // namespace detail

void set_enabled(bool on) {
  record::Recorder& r = record::recorder();
  std::lock_guard<std::mutex> lock(r.session_mu);
  r.user_enabled = on;
  record::apply_mode_locked(r);
}

bool enabled() {
  return record::clock_of(__atomic_load_n(&detail::g_mode, __ATOMIC_RELAXED)) != record::kModeOff;
}

bool set_nvtx(bool on) {
  record::Recorder& r = record::recorder();
  std::lock_guard<std::mutex> lock(r.session_mu);
  if (on && !record::nvtx_init()) return false;
  r.nvtx = on;
  record::apply_mode_locked(r);
  return true;
}

bool nvtx_enabled() {
  return (__atomic_load_n(&detail::g_mode, __ATOMIC_RELAXED) & record::kModeNvtx) != 0;
}

}  // namespace mlprof

namespace {
// MLPROF_ENABLED / MLPROF_OUTPUT: this file is linked into every instrumented program (it
// defines the hot path's globals), so its static initializer is the place for the auto-start.
const bool g_env_started = (mlprof::record::env_autostart(), true);
}  // namespace
