#include "import/capture/memory_capture.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>
#include <type_traits>

#include "import/capture/capture_status.h"
#include "import/capture/raw_memory_reader.h"
#include "import/capture/symbolizer.h"
#include "trace/addr_map.h"

namespace mlprof {

namespace {

struct PendingEvent {
  int64_t ts;
  uint64_t addr;
  uint64_t size;
  uint32_t chunk;  // position in the file, for ties
  size_t word;
  uint32_t track;
  uint32_t stack;  // trace stack id
  bool is_free;
};

// One thread's events: its chunks, in file (= time) order, and a cursor with the next event.
struct ThreadStream {
  std::vector<uint32_t> chunks;  // indices into RawMemoryFile::event_chunks()
  uint32_t track = 0;
  size_t next_chunk = 0;  // into chunks
  uint32_t chunk = 0;     // the head's chunk and word
  size_t word = 0, words = 0;
  RawMemoryEvent head;
};

uint32_t raw_stack(const std::vector<uint32_t>& stack_map, uint32_t raw) {
  return raw < stack_map.size() ? stack_map[raw] : 0;
}

// Faults the memory columns' pages in on the other core while the merge fills them: on the VMs
// this runs on, the kernel zeroing a fresh page costs more than the merge's work for the rows on
// it, and the merge is one thread. It works from the end of the reserved rows backwards and stops
// where the writer has got to (populating keeps what is already written, so overlap is harmless).
class Prefaulter {
 public:
  struct Column {
    const void* data;  // the column's reserved storage (capacity >= rows)
    size_t elem;       // bytes per row
  };
  Prefaulter(std::vector<Column> columns, size_t begin_row, size_t end_row,
             const std::atomic<size_t>& written)
      : columns_(std::move(columns)), begin_(begin_row), end_(end_row), written_(written) {
    size_t bytes = 0;
    for (const Column& c : columns_) bytes += (end_ - begin_) * c.elem;
    if (bytes >= kMinBytes && std::thread::hardware_concurrency() > 1)
      thread_ = std::thread([this] { run(); });
  }
  ~Prefaulter() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }

 private:
  static constexpr size_t kMinBytes = 64u << 20;
  static constexpr size_t kStepRows = 256 * 1024;  // 2 MiB of an 8-byte column

  void run() {
#ifdef MADV_POPULATE_WRITE
    const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    for (size_t hi = end_; hi > begin_ && !stop_.load(std::memory_order_relaxed);) {
      size_t lo = hi - std::min(kStepRows, hi - begin_);
      if (lo < written_.load(std::memory_order_relaxed) + kStepRows) return;  // caught up
      for (const Column& c : columns_) {
        uintptr_t a = reinterpret_cast<uintptr_t>(c.data) + lo * c.elem;
        uintptr_t b = reinterpret_cast<uintptr_t>(c.data) + hi * c.elem;
        a &= ~(page - 1);
        if (::madvise(reinterpret_cast<void*>(a), b - a, MADV_POPULATE_WRITE) != 0) return;
      }
      hi = lo;
    }
#endif
  }

  std::vector<Column> columns_;
  size_t begin_, end_;
  const std::atomic<size_t>& written_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Allocations and frees in time order -> memory rows: a free gets its block's size and stack,
// the running total is the process's live heap.
class Replay {
 public:
  Replay(TraceBuilder& b, MemoryCaptureStats& stats, std::atomic<size_t>& rows_written)
      : b_(b),
        stats_(stats),
        start_rows_(b.trace().memory.size()),
        saved_(stats),
        rows_written_(rows_written) {}
  ~Replay() { rows_written_.store(b_.trace().memory.size(), std::memory_order_relaxed); }

  void event(uint32_t track, int64_t ts, uint64_t addr, uint64_t size, uint32_t stack,
             bool is_free) {
    if ((++events_ & 0xffff) == 0)  // tells the prefaulter where the writes are
      rows_written_.store(b_.trace().memory.size(), std::memory_order_relaxed);
    if (is_free) {
      Live gone;
      if (!live_.erase(addr, &gone)) {
        ++stats_.unmatched_frees;
        return;
      }
      total_ -= static_cast<int64_t>(gone.size);
      b_.add_memory(track, ts, addr, -static_cast<int64_t>(gone.size), DeviceType::kCpu, -1, total_,
                    -1, gone.stack);
      ++stats_.frees;
    } else {
      auto [v, fresh] = live_.try_emplace(addr, Live{size, stack});
      if (!fresh) {  // a free we did not see (raced with realloc): the old block is gone
        total_ -= static_cast<int64_t>(v->size);
        *v = Live{size, stack};
      }
      total_ += static_cast<int64_t>(size);
      b_.add_memory(track, ts, addr, static_cast<int64_t>(size), DeviceType::kCpu, -1, total_, -1,
                    stack);
      ++stats_.allocations;
    }
  }

  // Forgets every row and count since construction.
  void rollback() {
    schema::truncate_rows(b_.trace().memory, start_rows_);
    stats_.allocations = saved_.allocations;
    stats_.frees = saved_.frees;
    stats_.unmatched_frees = saved_.unmatched_frees;
    live_.clear();
    total_ = 0;
  }

 private:
  struct Live {
    uint64_t size;
    uint32_t stack;
  };
  TraceBuilder& b_;
  MemoryCaptureStats& stats_;
  size_t start_rows_;
  MemoryCaptureStats saved_;
  std::atomic<size_t>& rows_written_;
  uint64_t events_ = 0;
  AddrMap<Live> live_;
  int64_t total_ = 0;
};

// Loads the stream's next event into head; false at its end.
bool advance(const RawMemoryFile& f, ThreadStream& s) {
  const auto& chunks = f.event_chunks();
  for (;;) {
    if (s.words != 0) {
      s.word += s.words;
      s.words = f.decode(chunks[s.chunk], s.word, s.head);
      if (s.words != 0) return true;
    }
    if (s.next_chunk >= s.chunks.size()) return false;
    s.chunk = s.chunks[s.next_chunk++];
    s.word = 0;
    s.words = f.decode(chunks[s.chunk], 0, s.head);
    if (s.words != 0) return true;
  }
}

// One thread's stream in a merge, with the file it reads.
struct Cursor {
  const RawMemoryFile* file;
  ThreadStream* stream;
  uint32_t file_index;
};

// Drops the pages of a chunk the merge has finished from this process's memory (they are the
// raw file's, still in the page cache): mapped pages count in the resident set.
void release_chunk(const RawEventChunk& c) {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  uintptr_t a = (reinterpret_cast<uintptr_t>(c.words) + page - 1) & ~(page - 1);
  uintptr_t b = (reinterpret_cast<uintptr_t>(c.words) + size_t{c.count} * 8) & ~(page - 1);
  if (b > a) ::madvise(reinterpret_cast<void*>(a), b - a, MADV_DONTNEED);
}

// K-way merge of the threads' streams by (time, file, position in the file): fn(cursor, event)
// for each event. A stream going back in time stops the merge (false, a prefix done) unless
// `tolerate_disorder`, which counts such events in `disorder` and goes on.
template <typename Fn>
bool merge_streams(std::vector<Cursor>& cursors, bool tolerate_disorder, bool release,
                   uint64_t& disorder, Fn&& fn) {
  auto before = [&](uint32_t a, uint32_t b) {  // cursor a's head comes first
    const Cursor &ca = cursors[a], &cb = cursors[b];
    const ThreadStream &x = *ca.stream, &y = *cb.stream;
    if (x.head.ts_ns != y.head.ts_ns) return x.head.ts_ns < y.head.ts_ns;
    if (ca.file_index != cb.file_index) return ca.file_index < cb.file_index;
    return x.chunk != y.chunk ? x.chunk < y.chunk : x.word < y.word;
  };
  std::vector<uint32_t> heap;  // a min-heap of cursor indices by head
  auto sift_down = [&](size_t i) {
    for (;;) {
      size_t l = 2 * i + 1, m = i;
      if (l < heap.size() && before(heap[l], heap[m])) m = l;
      if (l + 1 < heap.size() && before(heap[l + 1], heap[m])) m = l + 1;
      if (m == i) return;
      std::swap(heap[i], heap[m]);
      i = m;
    }
  };
  for (uint32_t c = 0; c < cursors.size(); ++c)
    if (advance(*cursors[c].file, *cursors[c].stream)) heap.push_back(c);
  for (size_t i = heap.size() / 2; i-- > 0;) sift_down(i);
  // Each file's prefix before every stream's current chunk is read for good: released now and
  // then as a whole, which also drops pages mapped in again (a fault maps a page-cache folio
  // whole) after their own chunk was released.
  std::vector<size_t> released;
  auto release_prefixes = [&] {
    std::vector<size_t> low;
    for (const Cursor& c : cursors) {
      if (released.size() <= c.file_index) released.resize(c.file_index + 1, 0);
      if (low.size() <= c.file_index) low.resize(c.file_index + 1, SIZE_MAX);
    }
    for (uint32_t h : heap) {
      const Cursor& c = cursors[h];
      size_t at = c.file->offset_of(c.file->event_chunks()[c.stream->chunk].words);
      low[c.file_index] = std::min(low[c.file_index], at);
    }
    for (const Cursor& c : cursors) {
      size_t upto = std::min(low[c.file_index], c.file->size());
      if (upto > released[c.file_index] + (size_t{4} << 20)) {
        c.file->release_pages(released[c.file_index], upto);
        released[c.file_index] = upto;
      }
    }
  };
  uint64_t merged = 0;
  while (!heap.empty()) {
    if (release && (++merged & 0xffff) == 0) release_prefixes();
    Cursor& c = cursors[heap[0]];
    ThreadStream& s = *c.stream;
    int64_t ts = s.head.ts_ns;
    fn(c, s.head);
    uint32_t chunk = s.chunk;
    bool more = advance(*c.file, s);
    if (release && (!more || s.chunk != chunk)) release_chunk(c.file->event_chunks()[chunk]);
    if (!more) {
      heap[0] = heap.back();
      heap.pop_back();
    } else if (s.head.ts_ns < ts) {
      if (!tolerate_disorder) return false;
      ++disorder;
    }
    if (!heap.empty()) sift_down(0);
  }
  return true;
}

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Frames inside the tracker itself (malloc, record_alloc) are not the user's.
bool is_tracker_frame(const std::string& module) {
  return module.find("libmlprof_preload") != std::string::npos;
}

// "mem.<pid>.<k>" of a capture file's path.
std::string stem_of(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  return name.substr(0, name.size() - 4);  // less ".bin"
}

int64_t pid_of_stem(const std::string& stem) {
  return std::strtoll(stem.c_str() + 4, nullptr, 10);  // after "mem."
}

void count_status(const CaptureStatus& st, MemoryCaptureStats& stats) {
  stats.lost_allocations += st.lost_allocations;
  stats.lost_frees += st.lost_frees;
  stats.reopened += st.reopened;
}

// Per file: its process, stacks and threads' streams.
struct FileState {
  uint32_t proc = 0;
  std::vector<uint32_t> stack_map;  // raw stack id -> trace stack id
  std::vector<ThreadStream> streams;
  int64_t first_ts = 0, last_ts = 0;
  uint64_t allocations = 0;  // events read (raw allocations)
};

// The mem.*.bin files of `dir`, sorted.
Status memory_capture_paths(const std::string& dir, std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("mem.", 0) == 0 && name.size() > 8 && name.substr(name.size() - 4) == ".bin")
      paths.push_back(entry.path().string());
  }
  if (ec) return Status::error(StatusCode::kIo, dir + ": " + ec.message());
  std::sort(paths.begin(), paths.end());
  return Status::ok();
}

// The files that open; an empty one whose status says its first write failed is noted as such.
std::vector<RawMemoryFile> open_raw_files(const std::vector<std::string>& paths,
                                          std::map<std::string, CaptureStatus>& statuses,
                                          MemoryCaptureStats& stats, MemoryEventSink* sink) {
  std::vector<RawMemoryFile> files;
  for (const auto& p : paths) {
    // A sink reads each page once and releases it: no need to map them all up front.
    auto f = RawMemoryFile::open(p, /*populate=*/sink == nullptr);
    if (!f) {
      auto st = statuses.find(stem_of(p));
      if (st != statuses.end() && st->second.error) {  // empty: its first write failed
        count_status(st->second, stats);
        stats.notes.push_back(capture_status_note(pid_of_stem(st->first), st->second, 0));
        statuses.erase(st);
        continue;
      }
      stats.notes.push_back("skipped " + f.error());
      continue;
    }
    if (sink) f.value().release_pages();
    files.push_back(std::move(f.value()));
  }
  return files;
}

// Maps: the process's own (at exit or fork), else sampled by mlprof, else its parent's.
std::string maps_of(const RawMemoryFile& f,
                    const std::unordered_map<int64_t, std::string>& maps_fallback,
                    const std::unordered_map<int64_t, const RawMemoryFile*>& by_pid,
                    MemoryCaptureStats& stats) {
  std::string maps = f.maps();
  if (maps.empty()) {
    auto it = maps_fallback.find(f.pid());
    if (it != maps_fallback.end()) maps = it->second;
  }
  if (maps.empty()) {
    auto it = by_pid.find(f.ppid());
    if (it != by_pid.end()) maps = it->second->maps();
  }
  if (maps.empty())
    stats.notes.push_back("pid " + std::to_string(f.pid()) +
                          ": no memory map recorded; stacks stay unsymbolized");
  return maps;
}

// Raw stack ids -> trace stack ids (`stack_ids`: symbolized frames -> trace stack, across files).
void map_stacks(TraceBuilder& b, const RawMemoryFile& f, Symbolizer& sym,
                std::map<std::vector<StringId>, uint32_t>& stack_ids, FileState& fs_,
                MemoryCaptureStats& stats) {
  fs_.stack_map.assign(f.stacks().size(), 0);
  std::unordered_map<uint64_t, bool> tracker_pc;
  // One symbolization per distinct PC, not per frame of every stack: a PyTorch process has
  // hundreds of thousands of distinct 48-frame stacks over a few tens of thousands of PCs, and
  // symbolizing (libdw lookup, line table, demangling) each frame took the H100 run's
  // post-processing past 40 s after a 4 s program.
  std::unordered_map<uint64_t, StringId> frame_of_pc;  // pc * 2 + (is a return address)
  for (size_t id = 1; id < f.stacks().size(); ++id) {
    const auto& pcs = f.stacks()[id];
    size_t first = 0;
    while (first < pcs.size()) {
      auto [it, fresh] = tracker_pc.try_emplace(pcs[first], false);
      if (fresh) it->second = is_tracker_frame(sym.module_path(pcs[first]));
      if (!it->second) break;
      ++first;
    }
    std::vector<StringId> frames;
    for (size_t i = first; i < pcs.size(); ++i) {
      auto [fr, fresh_pc] = frame_of_pc.try_emplace(pcs[i] * 2 + (i > 0), 0);
      if (fresh_pc) fr->second = b.intern(sym.frame_name(pcs[i], /*return_address=*/i > 0));
      frames.push_back(fr->second);
    }
    auto [it, fresh] = stack_ids.try_emplace(frames, 0);
    if (fresh) it->second = b.add_stack(frames);
    fs_.stack_map[id] = it->second;
  }
  stats.stacks = stack_ids.size();
  if (std::vector<std::string> slow = sym.slow_modules(2.0); !slow.empty()) {
    std::string list;
    for (const std::string& m : slow) list += (list.empty() ? "" : ", ") + m;
    stats.notes.push_back("pid " + std::to_string(f.pid()) + ": symbolizing stacks was slow in " +
                          list + " (symbol and line tables read by libdw)");
  }
}

// Each thread's chunks are already in time order: merge the threads' streams (no copy of the
// events, no sort). Ties go to the earlier event in the file, as a stable sort would.
// (Chunks are told apart by their headers, not by decoding their first event: touching
// every chunk's data would map its neighbourhood in too, a fault maps 64 KiB around it.)
void split_streams(TraceBuilder& b, const RawMemoryFile& f, FileState& fs_) {
  std::unordered_map<int64_t, size_t> stream_of_tid;
  const auto& chunks = f.event_chunks();
  for (uint32_t c = 0; c < chunks.size(); ++c) {
    if (chunks[c].count < 2) continue;  // no event fits
    auto [it, fresh] = stream_of_tid.try_emplace(chunks[c].tid, fs_.streams.size());
    if (fresh) {  // tracks in order of each thread's first event
      fs_.streams.emplace_back();
      fs_.streams.back().track = b.thread_track(fs_.proc, chunks[c].tid);
    }
    fs_.streams[it->second].chunks.push_back(c);
  }
}

// One file's counts and notes, process, stacks and threads' streams.
void prepare_file(TraceBuilder& b, const RawMemoryFile& f, FileState& fs_,
                  const std::map<std::string, CaptureStatus>& statuses,
                  const std::unordered_map<int64_t, std::string>& maps_fallback,
                  const std::unordered_map<int64_t, const RawMemoryFile*>& by_pid,
                  std::map<std::vector<StringId>, uint32_t>& stack_ids, MemoryCaptureStats& stats) {
  ++stats.files;
  stats.truncated_bytes += f.truncated_bytes();
  std::error_code size_ec;
  stats.raw_bytes += std::filesystem::file_size(f.path(), size_ec);
  stats.pids.push_back(f.pid());
  auto status = statuses.find(stem_of(f.path()));
  if (f.exited() || (status != statuses.end() && status->second.exited)) ++stats.processes_exited;
  if (f.dropped()) {
    stats.dropped += f.dropped();
    stats.notes.push_back("pid " + std::to_string(f.pid()) + ": " + std::to_string(f.dropped()) +
                          " allocation events not recorded (raw capture limit --max-raw "
                          "reached, or no buffer memory): the heap figures undercount");
  }
  Symbolizer sym(maps_of(f, maps_fallback, by_pid, stats));

  fs_.proc = b.process(f.pid());
  Process& pr = b.trace().processes[fs_.proc];
  if (pr.name == 0 && !f.exe().empty()) pr.name = b.intern(base_name(f.exe()));

  map_stacks(b, f, sym, stack_ids, fs_, stats);
  split_streams(b, f, fs_);
  fs_.first_ts = f.start_ns();
  fs_.last_ts = f.exited() ? f.exit_ns() : f.start_ns();
}

// One merge across every process into the sink: the heap total is the sum of theirs at each
// moment.
void merge_into_sink(TraceBuilder& b, const std::vector<RawMemoryFile>& files,
                     std::vector<FileState>& states, MemoryCaptureStats& stats,
                     MemoryEventSink& sink) {
  std::vector<Cursor> cursors;
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (size_t fi = 0; fi < files.size(); ++fi)
    for (ThreadStream& st : states[fi].streams) {
      cursors.push_back(Cursor{&files[fi], &st, static_cast<uint32_t>(fi)});
      const auto& chunks = files[fi].event_chunks();
      RawMemoryEvent e;
      if (files[fi].decode(chunks[st.chunks.front()], 0, e)) first = std::min(first, e.ts_ns);
      const RawEventChunk& tail = chunks[st.chunks.back()];
      for (size_t i = 0, n; (n = files[fi].decode(tail, i, e)) != 0; i += n)
        last = std::max(last, e.ts_ns);
    }
  if (cursors.empty()) first = last = 0;
  sink.begin(first, last, b.trace().stacks.frames_begin.size());

  merge_streams(cursors, /*tolerate_disorder=*/true, /*release=*/true, stats.out_of_order,
                [&](const Cursor& c, const RawMemoryEvent& e) {
                  FileState& fs_ = states[c.file_index];
                  fs_.last_ts = std::max(fs_.last_ts, e.ts_ns);
                  if (e.is_free) {
                    ++stats.frees;
                    sink.free(fs_.proc, c.stream->track, e.ts_ns, e.addr);
                  } else {
                    ++stats.allocations;
                    ++fs_.allocations;
                    sink.alloc(fs_.proc, c.stream->track, e.ts_ns, e.addr, e.size,
                               raw_stack(fs_.stack_map, e.stack));
                  }
                });
  if (stats.out_of_order)
    stats.notes.push_back(std::to_string(stats.out_of_order) +
                          " events earlier than their thread's previous one (taken as they came)");
}

// A thread's events out of time order (not seen in practice): every event of the file sorted,
// then replayed.
void replay_sorted(const RawMemoryFile& f, FileState& fs_, Replay& replay) {
  std::vector<PendingEvent> events;
  events.reserve(f.event_words() / 3);
  for (const ThreadStream& st : fs_.streams) {
    RawMemoryEvent e;
    for (uint32_t c : st.chunks) {
      const RawEventChunk& ch = f.event_chunks()[c];
      for (size_t i = 0, n; (n = f.decode(ch, i, e)) != 0; i += n)
        events.push_back(PendingEvent{e.ts_ns, e.addr, e.size, c, i, st.track,
                                      raw_stack(fs_.stack_map, e.stack), e.is_free});
    }
  }
  std::stable_sort(events.begin(), events.end(), [](const PendingEvent& x, const PendingEvent& y) {
    if (x.ts != y.ts) return x.ts < y.ts;
    return x.chunk != y.chunk ? x.chunk < y.chunk : x.word < y.word;
  });
  for (const PendingEvent& e : events) {
    fs_.last_ts = std::max(fs_.last_ts, e.ts);
    replay.event(e.track, e.ts, e.addr, e.size, e.stack, e.is_free);
  }
}

// One file's events to memory rows, its threads' streams merged in time order.
void replay_file(TraceBuilder& b, const RawMemoryFile& f, FileState& fs_, MemoryCaptureStats& stats,
                 std::atomic<size_t>& rows_written) {
  std::vector<Cursor> cursors;
  for (ThreadStream& st : fs_.streams) cursors.push_back(Cursor{&f, &st, 0});
  Replay replay(b, stats, rows_written);
  uint64_t allocations_before = stats.allocations;
  uint64_t disorder = 0;
  auto to_replay = [&](const Cursor& c, const RawMemoryEvent& e) {
    fs_.last_ts = std::max(fs_.last_ts, e.ts_ns);
    replay.event(c.stream->track, e.ts_ns, e.addr, e.size, raw_stack(fs_.stack_map, e.stack),
                 e.is_free);
  };
  if (!merge_streams(cursors, false, false, disorder, to_replay)) {
    replay.rollback();
    replay_sorted(f, fs_, replay);
  }
  fs_.allocations = stats.allocations - allocations_before;
}

// The process's lifetime as a slice on its main thread, so every view has an anchor; its
// status's note.
void add_process_lifetime(TraceBuilder& b, const RawMemoryFile& f, const FileState& fs_,
                          std::map<std::string, CaptureStatus>& statuses, StringId cat,
                          MemoryCaptureStats& stats) {
  uint32_t main_track = b.thread_track(fs_.proc, f.pid());
  auto st = statuses.find(stem_of(f.path()));
  // A process whose exit record could not be written (disk full) did exit: its status says so.
  bool exited = f.exited() || (st != statuses.end() && st->second.exited);
  std::string label = "process " + base_name(f.exe()) + (exited ? "" : " (killed or exec'd)");
  b.add_slice(main_track, fs_.first_ts, std::max<int64_t>(0, fs_.last_ts - fs_.first_ts),
              b.intern(label), cat);
  if (st != statuses.end()) {
    count_status(st->second, stats);
    std::string note =
        capture_status_note(f.pid(), st->second, static_cast<int64_t>(fs_.allocations));
    if (!note.empty()) stats.notes.push_back(note);
    statuses.erase(st);
  }
  if (!exited)
    stats.notes.push_back("pid " + std::to_string(f.pid()) +
                          " ended without running its exit handlers (killed, _exit or exec): "
                          "its last unflushed events are missing");
}

}  // namespace

Status add_memory_captures(const std::string& dir, TraceBuilder& b,
                           const std::unordered_map<int64_t, std::string>& maps_fallback,
                           MemoryCaptureStats& stats, MemoryEventSink* sink) {
  std::vector<std::string> paths;
  MLPROF_RETURN_IF_ERROR(memory_capture_paths(dir, paths));
  // Why a capture is incomplete or missing, in the trackers' words: by "mem.<pid>.<k>".
  std::map<std::string, CaptureStatus> statuses = read_capture_statuses(dir);
  std::vector<RawMemoryFile> files = open_raw_files(paths, statuses, stats, sink);
  std::unordered_map<int64_t, const RawMemoryFile*> by_pid;
  for (const auto& f : files)
    if (!f.maps().empty()) by_pid[f.pid()] = &f;

  // Without a sink every event becomes a row (less the frees of blocks never seen): size the
  // columns once instead of growing them by doubling, and fault their pages in on the other
  // core meanwhile (fresh pages dominated post-processing of big captures).
  MemoryTable& m = b.trace().memory;
  size_t first_row = m.size(), rows = first_row;
  if (!sink) {
    for (const auto& f : files) rows += f.event_count();
    schema::reserve_rows(m, rows);
  }
  std::atomic<size_t> rows_written{first_row};
  std::vector<Prefaulter::Column> columns;
  schema::for_each_input_column<MemoryTable>([&](auto c) {
    columns.push_back({(m.*c.member).data(), sizeof(typename decltype(c)::Value)});
  });
  Prefaulter prefault(std::move(columns), first_row, rows, rows_written);
  std::map<std::vector<StringId>, uint32_t> stack_ids;  // symbolized frames -> trace stack
  StringId cat = b.intern("mlprof.run");

  std::vector<FileState> states(files.size());
  for (size_t fi = 0; fi < files.size(); ++fi)
    prepare_file(b, files[fi], states[fi], statuses, maps_fallback, by_pid, stack_ids, stats);

  if (sink) {
    merge_into_sink(b, files, states, stats, *sink);
  } else {
    for (size_t fi = 0; fi < files.size(); ++fi)
      replay_file(b, files[fi], states[fi], stats, rows_written);
  }

  for (size_t fi = 0; fi < files.size(); ++fi)
    add_process_lifetime(b, files[fi], states[fi], statuses, cat, stats);
  // Processes that had no file at all (EMFILE: the program lowered RLIMIT_NOFILE).
  for (const auto& [stem, st] : statuses) {
    if (st.stage != 'o') continue;
    ++stats.processes_without_file;
    count_status(st, stats);
    stats.notes.push_back(capture_status_note(pid_of_stem(stem), st, -1));
  }
  return Status::ok();
}

}  // namespace mlprof
