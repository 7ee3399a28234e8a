// libmlprof_preload.so: the host-memory tracker `mlprof run --memory` preloads into the child.
//
// Collect fast, think later (heaptrack's rule): each hook records (tsc, address, size, stack id)
// into a per-thread buffer with no lock; stacks come from libunwind's cached fast unwinder and
// are deduplicated by a 64-bit hash (a per-thread direct-mapped cache in front of one global
// table). Buffers go to one file per process with write(2). Symbolization happens in mlprof
// after the child exits. Nothing here calls malloc: buffers and tables come from mmap.
//
// The file's descriptor is the program's to close (closefrom, daemons): record/capture_fd.h
// checks it is still ours before each write and reopens it otherwise. When the file cannot be
// created or written (EMFILE, ENOSPC, EFBIG), events are counted instead of recorded and the
// cause and counts go to a status symlink beside it (raw_memory_format.h).
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <fcntl.h>
#include <libunwind.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "record/capture_fd.h"
#include "trace/formats/raw_memory_format.h"

namespace {

using namespace mlprof::rawmem;

using MallocFn = void* (*)(size_t);
using FreeFn = void (*)(void*);
using CallocFn = void* (*)(size_t, size_t);
using ReallocFn = void* (*)(void*, size_t);
using MemalignFn = void* (*)(size_t, size_t);
using PosixMemalignFn = int (*)(void**, size_t, size_t);
using VallocFn = void* (*)(size_t);

MallocFn real_malloc = nullptr;
FreeFn real_free = nullptr;
CallocFn real_calloc = nullptr;
ReallocFn real_realloc = nullptr;
MemalignFn real_memalign = nullptr;
MemalignFn real_aligned_alloc = nullptr;
PosixMemalignFn real_posix_memalign = nullptr;
VallocFn real_valloc = nullptr;

// dlsym itself calls calloc before real_calloc is known: serve it from a static arena whose
// blocks are never freed (free() recognises them by address).
alignas(64) char g_bootstrap_arena[64 * 1024];
size_t g_bootstrap_used = 0;
bool g_resolving = false;

bool in_bootstrap_arena(const void* p) {
  auto c = static_cast<const char*>(p);
  return c >= g_bootstrap_arena && c < g_bootstrap_arena + sizeof(g_bootstrap_arena);
}

void* bootstrap_alloc(size_t n, size_t align = 16) {
  size_t start = (g_bootstrap_used + align - 1) & ~(align - 1);
  if (start + n > sizeof(g_bootstrap_arena)) return nullptr;
  g_bootstrap_used = start + n;
  return g_bootstrap_arena + start;  // static storage: already zeroed
}

void resolve_real_functions() {
  if (g_resolving) return;
  g_resolving = true;
  real_calloc = reinterpret_cast<CallocFn>(dlsym(RTLD_NEXT, "calloc"));
  real_malloc = reinterpret_cast<MallocFn>(dlsym(RTLD_NEXT, "malloc"));
  real_free = reinterpret_cast<FreeFn>(dlsym(RTLD_NEXT, "free"));
  real_realloc = reinterpret_cast<ReallocFn>(dlsym(RTLD_NEXT, "realloc"));
  real_memalign = reinterpret_cast<MemalignFn>(dlsym(RTLD_NEXT, "memalign"));
  real_aligned_alloc = reinterpret_cast<MemalignFn>(dlsym(RTLD_NEXT, "aligned_alloc"));
  real_posix_memalign = reinterpret_cast<PosixMemalignFn>(dlsym(RTLD_NEXT, "posix_memalign"));
  real_valloc = reinterpret_cast<VallocFn>(dlsym(RTLD_NEXT, "valloc"));
  g_resolving = false;
}

// ---- recording state ------------------------------------------------------------------------

constexpr int kMaxFrames = 64;
constexpr uint32_t kBufferWords = 16384;  // 128 KiB of events per thread between writes
constexpr uint32_t kCacheSize = 1024;     // per-thread recent stacks (direct mapped)

struct StackCacheEntry {
  uint64_t hash;
  uint32_t id;
};

struct ThreadBuffer {
  uint64_t words[kBufferWords];
  uint32_t count;
  uint32_t events;  // in words[0, count)
  int64_t tid;
  ThreadBuffer* next;  // all live buffers, for the flush at exit
  StackCacheEntry cache[kCacheSize];
};

// Global table of stacks seen: open addressing, hash -> id. Under g_lock.
struct StackSlot {
  uint64_t hash;
  uint32_t id;
};

std::atomic<bool> g_active{false};
mlprof::capture::CaptureFd g_out;  // this process's file
uint64_t g_file_bytes = 0;         // whole chunks in the file: a failed write is cut back to it
// The first failure to create, write or reopen the file (0: none), under g_lock. After it nothing
// more is written (the file stays a consistent prefix) and events are counted instead.
int g_write_errno = 0;
char g_write_stage = 0;                  // 'o' create, 'w' write, 'r' reopen
std::atomic<bool> g_count_only{false};   // set with g_write_errno: the hooks only count
std::atomic<uint64_t> g_lost_allocs{0};  // counted, not recorded, after the failure
std::atomic<uint64_t> g_lost_frees{0};
uint32_t g_status_reopens = 0;  // reopens the status symlink already says, under g_lock
bool g_closed = false;          // closed at exit: late writes (detached threads) are dropped
char g_status_path[4096];       // mem.<pid>.<k>.status ("" until a file name is chosen)
char g_exe[4096];
int64_t g_exe_len = 0;
int g_max_depth = 48;
std::atomic_flag g_lock = ATOMIC_FLAG_INIT;
ThreadBuffer* g_buffers = nullptr;       // live, under g_lock
ThreadBuffer* g_free_buffers = nullptr;  // of exited threads, reused, under g_lock
StackSlot* g_stacks = nullptr;
size_t g_stacks_capacity = 0;
uint32_t g_next_stack_id = 1;  // 0 = unknown
std::atomic<uint64_t> g_dropped{0};
uint64_t g_max_raw_bytes = 0;  // MLPROF_MAX_RAW_BYTES; 0 = no limit
uint64_t g_raw_bytes = 0;      // events bytes written to this process's file, under g_lock
pthread_key_t g_thread_key;
// Stack definitions waiting to be written (flushed with the next events chunk), under g_lock.
uint64_t g_stack_out[8192];
uint32_t g_stack_out_words = 0;

__thread bool t_guard __attribute__((tls_model("initial-exec"))) = false;
__thread ThreadBuffer* t_buffer __attribute__((tls_model("initial-exec"))) = nullptr;
__thread bool t_thread_done __attribute__((tls_model("initial-exec"))) = false;

// A spinlock that gives the CPU away after a short spin: the holder may be inside write(2) or
// preempted (more threads than cores), and spinning on then burns the time slice it needs.
void lock() {
  for (int spins = 0; g_lock.test_and_set(std::memory_order_acquire); ++spins)
    if (spins >= 64) sched_yield();
}
void unlock() { g_lock.clear(std::memory_order_release); }

int64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// ---- the status symlink (no descriptor, no malloc) -------------------------------------------

char* put_text(char* out, char* end, const char* s) {
  while (*s && out < end) *out++ = *s++;
  return out;
}

char* put_uint(char* out, char* end, uint64_t v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  while (n > 0 && out < end) *out++ = digits[--n];
  return out;
}

// Writes (or replaces) mem.<pid>.<k>.status. `exited`: the counts are final.
bool write_status_locked(bool exited) {
  if (g_status_path[0] == 0) return false;
  char text[4096 + 128];
  char* end = text + sizeof(text) - 1;
  char* o = put_text(text, end, kStatusVersion);
  o = put_text(o, end, " e=");
  o = put_uint(o, end, static_cast<uint64_t>(g_write_errno));
  o = put_text(o, end, " s=");
  if (o < end) *o++ = g_write_stage ? g_write_stage : '-';
  o = put_text(o, end, " a=");
  o = put_uint(o, end, g_lost_allocs.load());
  o = put_text(o, end, " f=");
  o = put_uint(o, end, g_lost_frees.load());
  o = put_text(o, end, " r=");
  o = put_uint(o, end, g_out.reopened());
  o = put_text(o, end, exited ? " x=1" : " x=0");
  char* short_end = o;
  if (g_write_stage == 'o') {  // no file: say who this was
    o = put_text(o, end, " p=");
    o = put_uint(o, end, static_cast<uint64_t>(getppid()));
    if (o < end) *o++ = ' ';
    for (int64_t i = 0; i < g_exe_len && o < end; ++i) *o++ = g_exe[i];
  }
  *o = 0;
  char tmp[4096 + 8];
  char* t = put_text(tmp, tmp + sizeof(tmp) - 1, g_status_path);
  t = put_text(t, tmp + sizeof(tmp) - 1, ".new");
  *t = 0;
  ::unlink(tmp);
  if (::symlink(text, tmp) != 0) {
    // A long target needs a data block: on a full disk, the short form (no executable).
    *short_end = 0;
    if (::symlink(text, tmp) != 0) return false;
  }
  if (::rename(tmp, g_status_path) != 0) {
    ::unlink(tmp);
    return false;
  }
  g_status_reopens = g_out.reopened();
  return true;
}

// The file cannot be written from here on: the hooks count instead of recording.
void fail_locked(int e, char stage) {
  if (g_write_errno) return;
  g_write_errno = e ? e : EIO;
  g_write_stage = stage;
  g_count_only.store(true, std::memory_order_relaxed);
  write_status_locked(false);
}

// Events in a buffer that will not be written: counted by kind.
void count_lost(const uint64_t* words, uint32_t count) {
  uint64_t allocs = 0, frees = 0;
  for (uint32_t i = 0; i < count;) {
    uint64_t kind = words[i] >> kKindShift;
    if (kind == kAlloc) {
      ++allocs, i += 3;
    } else if (kind == kAllocWide) {
      ++allocs, i += 4;
    } else if (kind == kFree) {
      ++frees, i += 2;
    } else {
      break;
    }
  }
  g_lost_allocs += allocs;
  g_lost_frees += frees;
}

// ---- writing the file -------------------------------------------------------------------------

bool write_all(int fd, const void* data, size_t n) {
  auto p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (w == 0) {
      errno = EIO;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Appends up to three pieces (one or more whole chunks), under g_lock so that no other thread's
// chunk lands in between. Checks first that the descriptor is still ours (one fstat per call:
// per buffer flush, not per event). A failed write is cut back, so the file stays whole chunks.
bool write_locked(const void* a, size_t an, const void* b = nullptr, size_t bn = 0,
                  const void* c = nullptr, size_t cn = 0) {
  if (g_write_errno || g_closed) return false;
  if (!g_out.ensure()) {
    fail_locked(g_out.error(), 'r');
    return false;
  }
  if (g_out.reopened() != g_status_reopens) write_status_locked(false);
  int fd = g_out.fd();
  if (!write_all(fd, a, an) || (bn && !write_all(fd, b, bn)) || (cn && !write_all(fd, c, cn))) {
    int e = errno;
    if (::ftruncate(fd, static_cast<off_t>(g_file_bytes)) == 0)
      ::lseek(fd, static_cast<off_t>(g_file_bytes), SEEK_SET);
    fail_locked(e, 'w');
    return false;
  }
  g_file_bytes += an + bn + cn;
  return true;
}

bool write_chunk(uint32_t kind, const void* a, size_t an, const void* b = nullptr, size_t bn = 0) {
  ChunkHeader h{kind, static_cast<uint32_t>(an + bn)};
  lock();
  bool ok = write_locked(&h, sizeof(h), a, an, b, bn);
  unlock();
  return ok;
}

void flush_stack_definitions_locked() {
  if (g_stack_out_words == 0) return;
  // Stack chunks are self-delimited in the buffer. Lost with a failed write: the events that
  // name them are not written either.
  write_locked(g_stack_out, g_stack_out_words * sizeof(uint64_t));
  g_stack_out_words = 0;
}

void flush_buffer(ThreadBuffer* b) {
  if (b->count == 0) return;
  EventsHeader eh{b->tid, __rdtsc(), mono_ns(), b->count, b->events};
  ChunkHeader h{kEvents, static_cast<uint32_t>(sizeof(eh) + b->count * sizeof(uint64_t))};
  lock();
  flush_stack_definitions_locked();
  if (g_max_raw_bytes && g_raw_bytes + h.size > g_max_raw_bytes) {
    g_dropped += b->events ? b->events : b->count / 3;  // the limit: counted, not written
  } else if (write_locked(&h, sizeof(h), &eh, sizeof(eh), b->words, b->count * sizeof(uint64_t))) {
    g_raw_bytes += h.size;
  } else {
    count_lost(b->words, b->count);
  }
  unlock();
  b->count = 0;
  b->events = 0;
}

void* map_pages(size_t n) {
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

bool grow_stack_table_locked() {
  size_t cap = g_stacks_capacity ? g_stacks_capacity * 2 : (size_t{1} << 14);
  auto* table = static_cast<StackSlot*>(map_pages(cap * sizeof(StackSlot)));
  if (!table) return false;
  for (size_t i = 0; i < g_stacks_capacity; ++i) {
    if (g_stacks[i].id == 0) continue;
    size_t j = (g_stacks[i].hash >> 1) & (cap - 1);
    while (table[j].id != 0) j = (j + 1) & (cap - 1);
    table[j] = g_stacks[i];
  }
  if (g_stacks) munmap(g_stacks, g_stacks_capacity * sizeof(StackSlot));
  g_stacks = table;
  g_stacks_capacity = cap;
  return true;
}

// Global lookup/insert; new stacks are queued for writing. Returns 0 when out of memory.
uint32_t global_stack_id(uint64_t hash, void* const* pcs, int depth) {
  lock();
  if ((g_next_stack_id + 1) * 2 > g_stacks_capacity && !grow_stack_table_locked()) {
    unlock();
    return 0;
  }
  size_t mask = g_stacks_capacity - 1;
  size_t j = (hash >> 1) & mask;
  while (g_stacks[j].id != 0) {
    if (g_stacks[j].hash == hash) {
      uint32_t id = g_stacks[j].id;
      unlock();
      return id;
    }
    j = (j + 1) & mask;
  }
  uint32_t id = g_next_stack_id++;
  g_stacks[j] = StackSlot{hash, id};
  size_t need = (sizeof(ChunkHeader) + sizeof(StackHeader)) / 8 + depth;
  if (g_stack_out_words + need > sizeof(g_stack_out) / 8) flush_stack_definitions_locked();
  auto* out = reinterpret_cast<char*>(g_stack_out + g_stack_out_words);
  ChunkHeader ch{kStack, static_cast<uint32_t>(sizeof(StackHeader) + depth * sizeof(uint64_t))};
  StackHeader sh{id, static_cast<uint32_t>(depth)};
  std::memcpy(out, &ch, sizeof(ch));
  std::memcpy(out + sizeof(ch), &sh, sizeof(sh));
  std::memcpy(out + sizeof(ch) + sizeof(sh), pcs, depth * sizeof(uint64_t));
  g_stack_out_words += need;
  unlock();
  return id;
}

ThreadBuffer* acquire_thread_buffer() {
  if (t_thread_done) return nullptr;
  lock();
  ThreadBuffer* b = g_free_buffers;
  if (b) g_free_buffers = b->next;
  unlock();
  if (b) {
    std::memset(b->cache, 0, sizeof(b->cache));
  } else {
    b = static_cast<ThreadBuffer*>(map_pages(sizeof(ThreadBuffer)));
    if (!b) return nullptr;
  }
  b->count = 0;
  b->events = 0;
  b->tid = static_cast<int64_t>(syscall(SYS_gettid));
  lock();
  b->next = g_buffers;
  g_buffers = b;
  unlock();
  pthread_setspecific(g_thread_key, b);
  t_buffer = b;
  return b;
}

// Thread exit: flush, unlink, keep the memory for the next thread.
void release_thread_buffer(void* arg) {
  auto* b = static_cast<ThreadBuffer*>(arg);
  bool was_guarded = t_guard;
  t_guard = true;
  t_thread_done = true;
  t_buffer = nullptr;
  flush_buffer(b);
  lock();
  for (ThreadBuffer** p = &g_buffers; *p; p = &(*p)->next) {
    if (*p == b) {
      *p = b->next;
      break;
    }
  }
  b->next = g_free_buffers;
  g_free_buffers = b;
  unlock();
  t_guard = was_guarded;
}

// Events after this thread's buffer was released (late TLS destructors) are written one by one.
void write_late_event(const uint64_t* words, uint32_t n) {
  EventsHeader eh{static_cast<int64_t>(syscall(SYS_gettid)), __rdtsc(), mono_ns(), n, 1};
  if (!write_chunk(kEvents, &eh, sizeof(eh), words, n * sizeof(uint64_t))) count_lost(words, n);
}

inline uint64_t hash_stack(void* const* pcs, int depth) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(depth);
  for (int i = 0; i < depth; ++i) {
    h ^= reinterpret_cast<uint64_t>(pcs[i]);
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  return h | 1;  // never 0: 0 marks an empty cache slot
}

inline void push_words(ThreadBuffer* b, const uint64_t* w, uint32_t n) {
  if (b == nullptr) {
    write_late_event(w, n);
    return;
  }
  if (b->count + n > kBufferWords) flush_buffer(b);
  std::memcpy(b->words + b->count, w, n * sizeof(uint64_t));
  b->count += n;
  ++b->events;
}

__attribute__((noinline)) void record_alloc(void* p, size_t size) {
  if (g_count_only.load(std::memory_order_relaxed)) {  // no file to write: counted only
    g_lost_allocs.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  t_guard = true;
  ThreadBuffer* b = t_buffer ? t_buffer : acquire_thread_buffer();
  void* pcs[kMaxFrames];
  int depth = unw_backtrace(pcs, g_max_depth);
  if (depth < 0) depth = 0;
  uint64_t hash = hash_stack(pcs, depth);
  uint32_t id = 0;
  StackCacheEntry* slot = b ? &b->cache[(hash >> 24) & (kCacheSize - 1)] : nullptr;
  if (slot && slot->hash == hash) {
    id = slot->id;
  } else {
    id = global_stack_id(hash, pcs, depth);
    if (slot) *slot = StackCacheEntry{hash, id};
  }
  uint64_t tsc = __rdtsc() & kTscMask;
  auto addr = reinterpret_cast<uint64_t>(p);
  if (size <= kSizeMask && id <= kMaxPackedStack) {
    uint64_t w[3] = {tsc | (kAlloc << kKindShift), addr, size | (uint64_t{id} << kStackShift)};
    push_words(b, w, 3);
  } else {
    uint64_t w[4] = {tsc | (kAllocWide << kKindShift), addr, size, id};
    push_words(b, w, 4);
  }
  t_guard = false;
}

__attribute__((noinline)) void record_free(void* p) {
  if (g_count_only.load(std::memory_order_relaxed)) {
    g_lost_frees.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  t_guard = true;
  ThreadBuffer* b = t_buffer ? t_buffer : acquire_thread_buffer();
  uint64_t w[2] = {(__rdtsc() & kTscMask) | (kFree << kKindShift), reinterpret_cast<uint64_t>(p)};
  push_words(b, w, 2);
  t_guard = false;
}

inline bool should_record() { return !t_guard && g_active.load(std::memory_order_relaxed); }

// ---- process start, fork, exit --------------------------------------------------------------

int64_t read_maps(char* out, size_t cap) {
  int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t n = 0;
  while (n < cap) {
    ssize_t r = ::read(fd, out + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += static_cast<size_t>(r);
  }
  ::close(fd);
  return static_cast<int64_t>(n);
}

void write_maps() {
  size_t cap = 16 << 20;
  auto* buf = static_cast<char*>(map_pages(cap));
  if (!buf) return;
  int64_t n = read_maps(buf, cap);
  if (n > 0) write_chunk(kMaps, buf, static_cast<size_t>(n));
  munmap(buf, cap);
}

// A new file's state (a forked child starts its own).
void reset_output_state() {
  g_raw_bytes = 0;  // its own limit
  g_file_bytes = 0;
  g_write_errno = 0;
  g_write_stage = 0;
  g_count_only.store(false);
  g_lost_allocs.store(0);
  g_lost_frees.store(0);
  g_status_reopens = 0;
  g_status_path[0] = 0;
  g_closed = false;
}

// Opens mem.<pid>.<k>.bin: k grows when an exec'd image reuses the pid of the previous one (a
// k whose status symlink exists was taken by an image that could not create its file). When no
// file can be created, the process counts its events instead and says why in its status.
bool open_output(const char* dir) {
  reset_output_state();
  char path[4096];
  g_exe_len = readlink("/proc/self/exe", g_exe, sizeof(g_exe) - 1);
  if (g_exe_len < 0) g_exe_len = 0;
  g_exe[g_exe_len] = 0;
  long pid = static_cast<long>(getpid());
  int e = 0;
  for (int k = 0; k < 1000; ++k) {
    int len = snprintf(g_status_path, sizeof(g_status_path), "%s/mem.%ld.%d.status", dir, pid, k);
    if (len <= 0 || static_cast<size_t>(len) >= sizeof(g_status_path)) break;
    len = snprintf(path, sizeof(path), "%s/mem.%ld.%d.bin", dir, pid, k);
    if (len <= 0 || static_cast<size_t>(len) >= sizeof(path)) break;
    struct stat st;
    if (::lstat(g_status_path, &st) == 0) continue;
    if (g_out.create(path)) {
      FileHeader fh{kFileMagic,
                    kFileVersion,
                    pid,
                    static_cast<int64_t>(getppid()),
                    __rdtsc(),
                    mono_ns(),
                    static_cast<uint32_t>(g_exe_len),
                    0};
      return write_chunk(kFile, &fh, sizeof(fh), g_exe, static_cast<size_t>(g_exe_len));
    }
    e = errno;
    if (e == EEXIST) continue;
    // No file: a status symlink under a name no other image of this pid holds.
    if (::lstat(path, &st) == 0) continue;
    // Without a status either (the run directory is gone: a process outliving its run), the
    // tracker stays off.
    lock();
    fail_locked(e, 'o');
    if (::lstat(g_status_path, &st) != 0) g_status_path[0] = 0;
    unlock();
    return false;
  }
  g_status_path[0] = 0;  // no name at all (a path too long): nothing can be said
  return false;
}

char g_run_dir[4096];

void before_fork() {
  if (!g_active.load()) return;
  bool was = t_guard;
  t_guard = true;
  if (t_buffer) flush_buffer(t_buffer);
  t_guard = was;
  lock();  // the child must not inherit a lock held by another thread
}

void after_fork_parent() {
  if (!g_active.load()) return;
  unlock();
}

// The child gets its own file and starts its stack ids afresh; other threads' buffers do not
// exist in the child and are dropped from the list.
void after_fork_child() {
  if (!g_active.load()) return;
  bool was = t_guard;
  t_guard = true;
  g_out.close();  // the parent's file, if it is still ours (never the program's descriptor)
  g_buffers = nullptr;
  g_free_buffers = nullptr;
  if (g_stacks) std::memset(g_stacks, 0, g_stacks_capacity * sizeof(StackSlot));
  g_next_stack_id = 1;
  g_stack_out_words = 0;
  unlock();
  if (t_buffer) {
    t_buffer->count = 0;
    t_buffer->events = 0;
    t_buffer->tid = static_cast<int64_t>(syscall(SYS_gettid));
    std::memset(t_buffer->cache, 0, sizeof(t_buffer->cache));
    t_buffer->next = nullptr;
    g_buffers = t_buffer;
  }
  // Without a file the child counts its events (open_output says why in its status).
  if (open_output(g_run_dir)) write_maps();  // maps now, in case it execs (no exit handlers run)
  if (g_status_path[0] == 0) g_active.store(false);
  t_guard = was;
}

__attribute__((constructor(101))) void start_tracking() {
  if (!real_malloc) resolve_real_functions();
  const char* dir = getenv(kEnvRunDir);
  if (!dir || !*dir || strlen(dir) >= sizeof(g_run_dir)) return;
  strcpy(g_run_dir, dir);
  if (const char* d = getenv(kEnvMaxDepth)) {
    int v = atoi(d);
    if (v > 0) g_max_depth = v < kMaxFrames ? v : kMaxFrames;
  }
  if (const char* m = getenv(kEnvMaxRawBytes)) g_max_raw_bytes = strtoull(m, nullptr, 10);
  t_guard = true;
  if (pthread_key_create(&g_thread_key, release_thread_buffer) != 0) {
    t_guard = false;
    return;
  }
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  open_output(g_run_dir);
  t_guard = false;
  // Without a file (EMFILE, ENOSPC, ...): active all the same, counting (g_count_only).
  if (g_status_path[0]) g_active.store(true);
}

// Runs from _dl_fini, after the program's atexit handlers and static destructors.
__attribute__((destructor(101))) void stop_tracking() {
  if (!g_active.load()) return;
  t_guard = true;
  g_active.store(false);
  lock();
  ThreadBuffer* list = g_buffers;
  unlock();
  for (ThreadBuffer* b = list; b; b = b->next) flush_buffer(b);
  lock();
  flush_stack_definitions_locked();
  uint64_t stacks = g_next_stack_id - 1;
  // After a failed write no more events, but the maps and the exit record are worth a try (space
  // may have come back): the events kept get their symbols, the reader sees a normal exit.
  int first_errno = g_write_errno;
  bool had_file = g_write_stage != 'o';
  if (had_file) g_write_errno = 0;
  unlock();
  if (had_file) {
    write_maps();
    ExitRecord er{__rdtsc(), mono_ns(), g_dropped.load(), stacks};
    write_chunk(kExit, &er, sizeof(er));
  }
  lock();
  if (first_errno) g_write_errno = first_errno;  // the status names the first failure
  if (g_write_errno || g_out.reopened()) write_status_locked(true);
  g_out.close();
  g_closed = true;
  unlock();
}

}  // namespace

// ---- the interposed allocator ---------------------------------------------------------------

extern "C" {

__attribute__((visibility("default"))) void* malloc(size_t size) {
  if (__builtin_expect(real_malloc == nullptr, 0)) {
    resolve_real_functions();
    if (!real_malloc) return bootstrap_alloc(size);
  }
  void* p = real_malloc(size);
  if (p && should_record()) record_alloc(p, size);
  return p;
}

__attribute__((visibility("default"))) void free(void* p) {
  if (p == nullptr || in_bootstrap_arena(p)) return;
  if (should_record()) record_free(p);
  if (__builtin_expect(real_free == nullptr, 0)) resolve_real_functions();
  real_free(p);
}

__attribute__((visibility("default"))) void* calloc(size_t n, size_t size) {
  if (__builtin_expect(real_calloc == nullptr, 0)) {
    if (g_resolving) {  // dlsym asking for memory while we look up calloc
      size_t total;
      if (__builtin_mul_overflow(n, size, &total)) return nullptr;
      return bootstrap_alloc(total);
    }
    resolve_real_functions();
    if (!real_calloc) return nullptr;
  }
  void* p = real_calloc(n, size);
  if (p && should_record()) record_alloc(p, n * size);
  return p;
}

__attribute__((visibility("default"))) void* realloc(void* old, size_t size) {
  if (__builtin_expect(real_realloc == nullptr, 0)) resolve_real_functions();
  if (old && in_bootstrap_arena(old)) {
    void* p = malloc(size);
    if (p) {
      size_t avail = static_cast<size_t>(g_bootstrap_arena + sizeof(g_bootstrap_arena) -
                                         static_cast<char*>(old));
      std::memcpy(p, old, size < avail ? size : avail);
    }
    return p;
  }
  void* p = real_realloc(old, size);
  if (should_record()) {
    // realloc = free(old) + malloc(new); a failed realloc leaves `old` alive.
    if (old && (p || size == 0)) record_free(old);
    if (p) record_alloc(p, size);
  }
  return p;
}

__attribute__((visibility("default"))) int posix_memalign(void** out, size_t align, size_t size) {
  if (__builtin_expect(real_posix_memalign == nullptr, 0)) resolve_real_functions();
  int rc = real_posix_memalign(out, align, size);
  if (rc == 0 && *out && should_record()) record_alloc(*out, size);
  return rc;
}

__attribute__((visibility("default"))) void* aligned_alloc(size_t align, size_t size) {
  if (__builtin_expect(real_aligned_alloc == nullptr, 0)) resolve_real_functions();
  void* p = real_aligned_alloc(align, size);
  if (p && should_record()) record_alloc(p, size);
  return p;
}

__attribute__((visibility("default"))) void* memalign(size_t align, size_t size) {
  if (__builtin_expect(real_memalign == nullptr, 0)) resolve_real_functions();
  void* p = real_memalign(align, size);
  if (p && should_record()) record_alloc(p, size);
  return p;
}

__attribute__((visibility("default"))) void* valloc(size_t size) {
  if (__builtin_expect(real_valloc == nullptr, 0)) resolve_real_functions();
  void* p = real_valloc(size);
  if (p && should_record()) record_alloc(p, size);
  return p;
}

}  // extern "C"
