// The recorder's process-wide state, shared by the files of src/record/ (not a public header).
//
// Memory layout: chunks of kChunkBytes, aligned to their size, carved from pre-faulted arenas.
// A chunk belongs to one thread until the thread gives it up (full, or at thread exit); given-up
// chunks go onto a lock-free list that stop() drains. A collector finds a live thread's chunk
// from its write position alone (aligned down), so no lock is needed to publish it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mlprof/mlprof.h"
#include "record/clock.h"

namespace mlprof::record {

using detail::Event;

inline constexpr size_t kChunkBytes = 256 * 1024;
inline constexpr size_t kChunkHeaderBytes = 64;
inline constexpr size_t kChunkSlots = (kChunkBytes - kChunkHeaderBytes) / sizeof(Event);
// detail::g_mode: the clock of the running session in the low bits (kModeOff when not
// recording), plus kModeNvtx while scopes are also emitted as NVTX ranges. Any non-zero value
// sends paused threads to the slow path; NVTX keeps every thread there.
inline constexpr int kModeOff = 0, kModeTsc = 1, kModeSteady = 2;
inline constexpr int kClockMask = 3, kModeNvtx = 4;

struct ThreadRecord;

struct ChunkHeader {
  ChunkHeader* next = nullptr;  // link in the given-up list
  ThreadRecord* owner = nullptr;
  uint32_t seq = 0;    // order of the owner's chunks
  uint32_t count = 0;  // valid slots, written before the chunk is given up
};
static_assert(sizeof(ChunkHeader) <= kChunkHeaderBytes);

inline Event* chunk_events(ChunkHeader* c) {
  return reinterpret_cast<Event*>(reinterpret_cast<char*>(c) + kChunkHeaderBytes);
}
// The last slot is never written, so a write position never equals the chunk's end and
// aligning it down always finds its own chunk.
inline Event* chunk_limit(ChunkHeader* c) { return chunk_events(c) + kChunkSlots - 1; }
inline ChunkHeader* chunk_of(const Event* pos) {
  return reinterpret_cast<ChunkHeader*>(reinterpret_cast<uintptr_t>(pos) & ~(kChunkBytes - 1));
}

struct ThreadRecord {
  int64_t tid = 0;
  std::string name;                        // guarded by Recorder::registry_mu
  detail::ThreadWriter* writer = nullptr;  // null once the thread has exited
  bool dead = false;                       // guarded by registry_mu
  ChunkHeader* chunk = nullptr;            // owner thread only
  uint32_t next_seq = 0;                   // owner thread only
  std::atomic<uint64_t> dropped{0};
  std::atomic<uint64_t> first_drop_raw{UINT64_MAX};
};

// Lock order: session_mu, then registry_mu, then pool_mu.
struct Recorder {
  std::mutex session_mu;  // start, stop, pause/resume, sampling
  Session* active = nullptr;
  int clock_mode = kModeTsc;
  bool user_enabled = true;
  bool sample_on = true;
  uint32_t sample = 1;
  ClockPair start_pair, stop_pair;
  uint64_t start_raw = 0;
  std::vector<uint64_t> pauses;  // raw times at which recording was paused
  std::atomic<uint64_t> steps{0};
  std::atomic<bool> running{false};
  std::atomic<uint32_t> sample_atomic{1};
  std::atomic<bool> sample_on_atomic{true};
  bool nvtx = false;  // set_nvtx / MLPROF_NVTX

  std::mutex registry_mu;  // the thread list, names, thread exits, collection
  std::vector<ThreadRecord*> threads;
  std::atomic<ChunkHeader*> given_up{nullptr};

  std::mutex pool_mu;  // free chunks and the session's budget
  std::vector<ChunkHeader*> free_chunks;
  size_t total_chunks = 0;
  size_t budget = 0, acquired = 0;
  bool accepting = false;  // a session is running: chunks may be handed out
  std::atomic<bool> exhausted{false};

  // RSS sampler.
  std::mutex sampler_mu;
  std::condition_variable sampler_cv;
  bool sampler_stop = false;
  std::thread* sampler = nullptr;

  int64_t owner_pid = 0;  // the process that configured the recorder (fork detection)
};

Recorder& recorder();

// Raw timestamp in the session's clock (TSC ticks or steady ns).
uint64_t now_raw(int mode);

// Gives a chunk up (count = slots written) onto the lock-free list.
void give_up_chunk(ChunkHeader* c, uint32_t count);

// Pauses or resumes recording according to active/user_enabled/sample_on. session_mu held.
void apply_mode_locked(Recorder& r);

// Per-device memory totals (memory_tracking.cpp).
void reset_memory_tracking();

// RSS sampler thread (rss_sampler.cpp).
void start_rss_sampler(uint32_t interval_ms);
void stop_rss_sampler();

// Dynamic names (names.cpp): a snapshot of every interned name, indexed by NameId; one name.
std::vector<std::string> names_snapshot();
std::string name_of(NameId id);

// The recording clock of a g_mode value (kModeOff, kModeTsc, kModeSteady).
inline int clock_of(int mode) { return mode & kClockMask; }

// NVTX emission (nvtx.cpp). nvtx_init: false when mlprof was built without the NVTX headers.
bool nvtx_init();
void emit_nvtx(uint64_t event_data) noexcept;  // a scope begin/end, an instant, a step's end
void emit_nvtx_step(uint64_t step) noexcept;   // pushes "ProfilerStep#N"

}  // namespace mlprof::record
