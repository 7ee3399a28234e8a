// Functions shared by the files of src/record/ (not a public header).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "record/recorder_state.h"

namespace mlprof::record {

// One chunk's events in write order.
struct ChunkView {
  const Event* events = nullptr;
  uint32_t count = 0;
  uint32_t seq = 0;
};

// What one thread recorded, as found by stop().
struct ThreadEvents {
  int64_t tid = 0;
  std::string name;
  uint64_t dropped = 0;
  uint64_t first_drop_raw = UINT64_MAX;
  std::vector<ChunkView> chunks;  // in write order
};

struct Collected {
  std::vector<ThreadEvents> threads;
  std::vector<ChunkHeader*> given_up;  // back to the pool once converted
};

// The clock and pause history of the session being converted.
struct SessionClock {
  int mode = kModeTsc;
  ClockPair start, stop;
  uint64_t start_raw = 0, stop_raw = 0;
  double ns_per_tick = 1.0;
  std::vector<uint64_t> pauses;  // raw times, ascending
  uint32_t sample = 1;
};

// Writes n slots (one event) into the calling thread's chunk, switching chunks or counting a
// drop as needed.
void write_slots(int mode, const Event* slots, uint32_t n);

// Session start: old chunks back to the pool, dead threads forgotten, the budget set.
void prepare_pool(Recorder& r, size_t budget_chunks);
// Session stop: every thread's events (live chunks read up to their published position).
Collected collect(Recorder& r);
void release_chunks(Recorder& r, const std::vector<ChunkHeader*>& chunks);

// Events -> Trace through TraceBuilder.
Trace convert_to_trace(const Collected& collected, const SessionClock& clock);

// Re-creates locks another thread may have held at fork (names, memory tracking).
void reset_after_fork();
void reset_names_after_fork();
void reset_memory_after_fork();

// Runs once at load time (from recorder.cpp's static initializer): MLPROF_ENABLED=1 or
// MLPROF_OUTPUT starts the global session and registers the at-exit writer.
void env_autostart();

// Writes a trace by extension: ".json" Chrome trace JSON, anything else .mlprof.
Status save_trace_by_extension(const Trace& trace, const std::string& path);

}  // namespace mlprof::record
