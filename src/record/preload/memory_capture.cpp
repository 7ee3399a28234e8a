#include "record/preload/memory_capture.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "record/preload/raw_memory_reader.h"
#include "record/preload/symbolizer.h"

namespace mlprof {

namespace {

struct PendingEvent {
  int64_t ts;
  uint64_t addr;
  uint64_t size;
  uint32_t track;
  uint32_t stack;  // trace stack id
  bool is_free;
};

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Frames inside the tracker itself (malloc, record_alloc) are not the user's.
bool is_tracker_frame(const std::string& module) {
  return module.find("libmlprof_preload") != std::string::npos;
}

}  // namespace

Status add_memory_captures(const std::string& dir, TraceBuilder& b,
                           const std::unordered_map<int64_t, std::string>& maps_fallback,
                           MemoryCaptureStats& stats) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("mem.", 0) == 0 && name.size() > 8 && name.substr(name.size() - 4) == ".bin")
      paths.push_back(entry.path().string());
  }
  if (ec) return Status::error(dir + ": " + ec.message());
  std::sort(paths.begin(), paths.end());

  std::vector<RawMemoryFile> files;
  for (const auto& p : paths) {
    auto f = RawMemoryFile::open(p);
    if (!f) {
      stats.notes.push_back("skipped " + f.error());
      continue;
    }
    files.push_back(std::move(f.value()));
  }
  std::unordered_map<int64_t, const RawMemoryFile*> by_pid;
  for (const auto& f : files)
    if (!f.maps().empty()) by_pid[f.pid()] = &f;

  // Every event becomes a row: size the columns once instead of growing them by doubling
  // (fresh pages for copies dominated post-processing of big captures).
  {
    size_t words = 0;
    for (const auto& f : files) words += f.event_words();
    MemoryTable& m = b.trace().memory;
    size_t n = m.size() + words * 2 / 5;  // an alloc is 3 words, a free 2
    m.ts.reserve(n), m.track.reserve(n), m.addr.reserve(n), m.bytes.reserve(n);
    m.device_type.reserve(n), m.device_id.reserve(n), m.total_allocated.reserve(n);
    m.total_reserved.reserve(n), m.stack.reserve(n);
  }
  std::map<std::vector<StringId>, uint32_t> stack_ids;  // symbolized frames -> trace stack
  StringId cat = b.intern("mlprof.run");
  for (const RawMemoryFile& f : files) {
    ++stats.files;
    stats.truncated_bytes += f.truncated_bytes();
    stats.pids.push_back(f.pid());
    if (f.exited()) ++stats.processes_exited;
    // Maps: the process's own (at exit or fork), else sampled by mlprof, else its parent's.
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
    Symbolizer sym(maps);

    uint32_t proc = b.process(f.pid());
    Process& pr = b.trace().processes[proc];
    if (pr.name == 0 && !f.exe().empty()) pr.name = b.intern(base_name(f.exe()));

    // Raw stack ids -> trace stack ids.
    std::vector<uint32_t> stack_map(f.stacks().size(), 0);
    std::unordered_map<uint64_t, bool> tracker_pc;
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
      for (size_t i = first; i < pcs.size(); ++i)
        frames.push_back(b.intern(sym.frame_name(pcs[i], /*return_address=*/i > 0)));
      auto [it, fresh] = stack_ids.try_emplace(frames, 0);
      if (fresh) it->second = b.add_stack(frames);
      stack_map[id] = it->second;
    }
    stats.stacks = stack_ids.size();

    // Events of all threads in time order, then replayed to know each free's size and stack.
    std::vector<PendingEvent> events;
    events.reserve(f.event_words() * 2 / 5);
    std::unordered_map<int64_t, uint32_t> track_of_tid;
    int64_t first_ts = f.start_ns(), last_ts = f.exited() ? f.exit_ns() : f.start_ns();
    f.for_each_event([&](const RawMemoryEvent& e) {
      auto [it, fresh] = track_of_tid.try_emplace(e.tid, 0);
      if (fresh) it->second = b.thread_track(proc, e.tid);
      uint32_t stack = e.stack < stack_map.size() ? stack_map[e.stack] : 0;
      events.push_back(PendingEvent{e.ts_ns, e.addr, e.size, it->second, stack, e.is_free});
      last_ts = std::max(last_ts, e.ts_ns);
    });
    std::stable_sort(events.begin(), events.end(),
                     [](const PendingEvent& x, const PendingEvent& y) { return x.ts < y.ts; });
    struct Live {
      uint64_t size;
      uint32_t stack;
    };
    std::unordered_map<uint64_t, Live> live;
    live.reserve(1024);
    int64_t total = 0;
    for (const PendingEvent& e : events) {
      if (e.is_free) {
        auto it = live.find(e.addr);
        if (it == live.end()) {
          ++stats.unmatched_frees;
          continue;
        }
        total -= static_cast<int64_t>(it->second.size);
        b.add_memory(e.track, e.ts, e.addr, -static_cast<int64_t>(it->second.size),
                     DeviceType::kCpu, -1, total, -1, it->second.stack);
        live.erase(it);
        ++stats.frees;
      } else {
        auto [it, fresh] = live.try_emplace(e.addr, Live{e.size, e.stack});
        if (!fresh) {  // a free we did not see (raced with realloc): the old block is gone
          total -= static_cast<int64_t>(it->second.size);
          it->second = Live{e.size, e.stack};
        }
        total += static_cast<int64_t>(e.size);
        b.add_memory(e.track, e.ts, e.addr, static_cast<int64_t>(e.size), DeviceType::kCpu, -1,
                     total, -1, e.stack);
        ++stats.allocations;
      }
    }
    // The process's lifetime as a slice on its main thread, so every view has an anchor.
    uint32_t main_track = b.thread_track(proc, f.pid());
    std::string label = "process " + base_name(f.exe()) + (f.exited() ? "" : " (killed or exec'd)");
    b.add_slice(main_track, first_ts, std::max<int64_t>(0, last_ts - first_ts), b.intern(label),
                cat);
    if (!f.exited())
      stats.notes.push_back("pid " + std::to_string(f.pid()) +
                            " ended without running its exit handlers (killed, _exit or exec): "
                            "its last unflushed events are missing");
  }
  return Status::ok();
}

}  // namespace mlprof
