// mlprof run's post-processing of the malloc tracker's raw files (add_memory_captures): the
// k-way merge of the threads' event streams must give exactly what a stable sort of the file's
// events by time and a replay give (ties, frees never seen, blocks replaced without a free, wide
// events, a thread out of time order), and the .mlprof written from a big capture must load back
// with the same rows and the exact leaked bytes.
#include "import/capture/memory_capture.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "mlprof/analyze/heap.h"
#include "mlprof/analyze/heap_stream.h"
#include "mlprof/import.h"
#include "mlprof/native_format.h"
#include "trace/addr_map.h"
#include "trace/formats/raw_memory_format.h"

namespace {

using namespace mlprof;
namespace raw = mlprof::rawmem;

struct Ev {
  int64_t tid;
  uint64_t tsc;
  uint64_t addr;
  uint64_t size;  // 0: free
  uint32_t stack;
  bool wide = false;
};

// One raw file: chunks of events in the order given (each chunk one thread's run of events).
class RawFile {
 public:
  explicit RawFile(int64_t pid) : pid_(pid) {
    std::string exe = "/bin/fake_app";
    raw::FileHeader fh{
        raw::kFileMagic, raw::kFileVersion, pid, 1, 0, 0, static_cast<uint32_t>(exe.size()), 0};
    chunk(raw::kFile, &fh, sizeof(fh), exe.data(), exe.size());
  }
  void stack(uint32_t id, std::vector<uint64_t> pcs) {
    raw::StackHeader sh{id, static_cast<uint32_t>(pcs.size())};
    chunk(raw::kStack, &sh, sizeof(sh), pcs.data(), pcs.size() * 8);
  }
  void events(const std::vector<Ev>& evs, bool count_events = true) {
    std::vector<uint64_t> w;
    for (const Ev& e : evs) {
      if (e.size == 0) {
        w.insert(w.end(), {e.tsc | (uint64_t{raw::kFree} << raw::kKindShift), e.addr});
      } else if (e.wide) {
        w.insert(w.end(),
                 {e.tsc | (uint64_t{raw::kAllocWide} << raw::kKindShift), e.addr, e.size, e.stack});
      } else {
        w.insert(w.end(), {e.tsc | (uint64_t{raw::kAlloc} << raw::kKindShift), e.addr,
                           e.size | (uint64_t{e.stack} << raw::kStackShift)});
      }
    }
    raw::EventsHeader eh{evs.front().tid, 0, 0, static_cast<uint32_t>(w.size()),
                         count_events ? static_cast<uint32_t>(evs.size()) : 0u};
    chunk(raw::kEvents, &eh, sizeof(eh), w.data(), w.size() * 8);
    for (const Ev& e : evs) all_.push_back(e);
  }
  // TSC = ns: the clock pairs (0, 0) and (1e9, 1e9).
  void exit() {
    raw::ExitRecord er{1000000000, 1000000000, 0, 0};
    chunk(raw::kExit, &er, sizeof(er), nullptr, 0);
  }
  void write(const std::string& dir, int n) const {
    std::string path = dir + "/mem." + std::to_string(pid_) + "." + std::to_string(n) + ".bin";
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(bytes_.data(), 1, bytes_.size(), f);
    std::fclose(f);
  }
  const std::vector<Ev>& all() const { return all_; }  // file order

 private:
  void chunk(uint32_t kind, const void* head, size_t head_size, const void* body,
             size_t body_size) {
    raw::ChunkHeader ch{kind, static_cast<uint32_t>(head_size + body_size)};
    bytes_.append(reinterpret_cast<const char*>(&ch), sizeof(ch));
    bytes_.append(static_cast<const char*>(head), head_size);
    if (body_size) bytes_.append(static_cast<const char*>(body), body_size);
  }
  int64_t pid_;
  std::string bytes_;
  std::vector<Ev> all_;
};

struct Row {
  int64_t ts;
  int64_t tid;
  uint64_t addr;
  int64_t bytes;
  int64_t total;
  bool has_stack;
  bool operator==(const Row&) const = default;
};

// What the rows must be: the file's events stably sorted by time, replayed.
std::vector<Row> reference(const std::vector<Ev>& file_order) {
  std::vector<Ev> evs = file_order;
  std::stable_sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) { return a.tsc < b.tsc; });
  std::map<uint64_t, std::pair<uint64_t, uint32_t>> live;
  int64_t total = 0;
  std::vector<Row> rows;
  for (const Ev& e : evs) {
    if (e.size == 0) {
      auto it = live.find(e.addr);
      if (it == live.end()) continue;
      total -= static_cast<int64_t>(it->second.first);
      rows.push_back({static_cast<int64_t>(e.tsc), e.tid, e.addr,
                      -static_cast<int64_t>(it->second.first), total, it->second.second != 0});
      live.erase(it);
    } else {
      auto it = live.find(e.addr);
      if (it != live.end()) total -= static_cast<int64_t>(it->second.first);
      live[e.addr] = {e.size, e.stack};
      total += static_cast<int64_t>(e.size);
      rows.push_back({static_cast<int64_t>(e.tsc), e.tid, e.addr, static_cast<int64_t>(e.size),
                      total, e.stack != 0});
    }
  }
  return rows;
}

std::vector<Row> rows_of(const Trace& t) {
  std::vector<Row> rows;
  const MemoryTable& m = t.memory;
  for (size_t i = 0; i < m.size(); ++i)
    rows.push_back({m.ts[i], t.tracks[m.track[i]].tid, m.addr[i], m.bytes[i], m.total_allocated[i],
                    m.stack[i] != 0});
  return rows;
}

class MemoryCaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/memory_capture_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Trace capture(MemoryCaptureStats& stats) {
    TraceBuilder b;
    Status s = add_memory_captures(dir_, b, {}, stats);
    EXPECT_TRUE(s.is_ok()) << s.message();
    return std::move(b).finish();
  }
  std::string dir_;
};

// Two threads, chunks interleaved in the file, equal times across threads, a block replaced
// without its free, a free of a block never seen, a wide event, a chunk the writer did not count.
RawFile tricky_file() {
  RawFile f(4242);
  f.stack(1, {0x1000, 0x2000});
  f.stack(2, {0x3000});
  f.events({{11, 100, 0xa0, 16, 1}, {11, 105, 0xa0, 0, 0}, {11, 110, 0xb0, 32, 2}});
  f.events({{12, 100, 0xc0, 64, 2}, {12, 105, 0xd0, 0, 0}, {12, 110, 0xb0, 48, 1}});
  f.events({{11, 110, 0xe0, 1ull << 41, 1, true}, {11, 120, 0xb0, 0, 0}}, false);
  f.events({{12, 120, 0xc0, 0, 0}, {12, 130, 0xf0, 8, 0}});
  f.exit();
  return f;
}

TEST_F(MemoryCaptureTest, MergeEqualsStableSortAndReplay) {
  RawFile f = tricky_file();
  f.write(dir_, 0);
  MemoryCaptureStats stats;
  Trace t = capture(stats);
  EXPECT_EQ(rows_of(t), reference(f.all()));
  EXPECT_EQ(stats.unmatched_frees, 1u);  // 0xd0
  EXPECT_EQ(stats.allocations, 6u);
  EXPECT_EQ(stats.frees, 3u);
  ASSERT_TRUE(std::is_sorted(t.memory.ts.begin(), t.memory.ts.end()));
}

TEST_F(MemoryCaptureTest, ThreadOutOfTimeOrderFallsBackToSorting) {
  RawFile f(77);
  f.events({{1, 500, 0x10, 8, 0}, {1, 600, 0x10, 0, 0}});
  f.events({{2, 550, 0x20, 8, 0}});
  f.events({{1, 300, 0x30, 24, 0}, {1, 700, 0x20, 0, 0}});  // thread 1 goes back in time
  f.exit();
  f.write(dir_, 0);
  MemoryCaptureStats stats;
  Trace t = capture(stats);
  EXPECT_EQ(rows_of(t), reference(f.all()));
  EXPECT_EQ(stats.allocations, 3u);
  EXPECT_EQ(stats.frees, 2u);
}

// The trackers' status symlinks (issue 32 items 1 and 14): a process whose file write failed
// (ENOSPC) and that exited without its exit record is neither "killed" nor silent: the cause and
// the counted-but-lost events are noted and summed; a process that could not create its file at
// all (EMFILE) is reported from its status alone; a reopened descriptor is noted as lossless.
TEST_F(MemoryCaptureTest, StatusSymlinksNameTheCauseAndCountTheLoss) {
  RawFile written(500);  // two allocations kept, then the disk filled: no exit record
  written.events({{1, 100, 0x10, 8, 0}, {1, 110, 0x20, 8, 0}});
  written.write(dir_, 0);
  ASSERT_EQ(::symlink("v1 e=28 s=w a=3000 f=2990 r=0 x=1", (dir_ + "/mem.500.0.status").c_str()),
            0);
  ASSERT_EQ(::symlink("v1 e=24 s=o a=1012 f=1008 r=0 x=1 p=500 /opt/my app/worker",
                      (dir_ + "/mem.501.0.status").c_str()),
            0);
  RawFile reopened(502);
  reopened.events({{1, 100, 0x30, 8, 0}});
  reopened.exit();
  reopened.write(dir_, 0);
  ASSERT_EQ(::symlink("v1 e=0 s=- a=0 f=0 r=2 x=1", (dir_ + "/mem.502.0.status").c_str()), 0);
  MemoryCaptureStats stats;
  Trace t = capture(stats);
  EXPECT_EQ(stats.allocations, 3u);
  EXPECT_EQ(stats.lost_allocations, 3000u + 1012u);
  EXPECT_EQ(stats.lost_frees, 2990u + 1008u);
  EXPECT_EQ(stats.processes_without_file, 1u);
  EXPECT_EQ(stats.reopened, 2u);
  std::string all;
  for (const std::string& n : stats.notes) all += n + "\n";
  EXPECT_NE(all.find("pid 500: writing its capture file failed (No space left on device) after 2 "
                     "allocations: the 3000 allocations and 2990 frees after that were counted"),
            std::string::npos)
      << all;
  EXPECT_EQ(all.find("killed"), std::string::npos) << all;
  EXPECT_NE(all.find("pid 501 (worker) could not create its capture file (Too many open files): "
                     "its 1012 allocations and 1008 frees were counted"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("pid 502 closed the memory tracker's capture file 2 times"), std::string::npos)
      << all;
  EXPECT_NE(all.find("nothing was lost"), std::string::npos) << all;
}

// A capture big enough for the threaded compressor and the column prefaulter: the .mlprof loads
// back with the same rows, and the leak report gives the exact bytes left.
TEST_F(MemoryCaptureTest, BigCaptureSavesAndLoadsExactly) {
  RawFile f(900);
  f.stack(1, {0x1000});
  constexpr int kThreads = 3, kChunks = 40, kPairs = 6000;
  uint64_t leaked = 0;
  for (int c = 0; c < kChunks; ++c) {
    for (int th = 0; th < kThreads; ++th) {
      std::vector<Ev> evs;
      for (int k = 0; k < kPairs; ++k) {
        uint64_t tsc = 1000 + (uint64_t(c) * kPairs + k) * 4;
        uint64_t addr = (uint64_t(th) << 32) + (uint64_t(c) * kPairs + k) * 64;
        uint64_t size = 16 + (k % 97);
        evs.push_back({100 + th, tsc, addr, size, 1});
        if (k % 1000 == 7) {
          leaked += size;  // never freed
        } else {
          evs.push_back({100 + th, tsc + 2, addr, 0, 0});
        }
      }
      f.events(evs);
    }
  }
  f.exit();
  f.write(dir_, 0);
  MemoryCaptureStats stats;
  Trace t = capture(stats);
  std::vector<Row> rows = rows_of(t);
  EXPECT_EQ(rows, reference(f.all()));

  std::string path = dir_ + "/big.mlprof";
  ASSERT_TRUE(save_native(t, path).is_ok());
  auto loaded = load_native(path);
  ASSERT_TRUE(loaded.is_ok()) << loaded.error();
  EXPECT_EQ(rows_of(*loaded), rows);
  HeapResult h = analyze_heap(*loaded);
  EXPECT_EQ(h.leaked_bytes, leaked);
  EXPECT_EQ(h.leaked_blocks, uint64_t{kThreads} * kChunks * (kPairs / 1000));
  EXPECT_EQ(h.unmatched_frees, 0u);
}

// mlprof run's bounded post-processing: the heap report computed from the event stream must be
// exactly analyze_heap() over the trace holding every event (two processes overlapping in time,
// threads, ties, blocks replaced without their free, frees never matched, temporaries), and the
// rows it keeps must give the same peak and leaks when the saved trace is analyzed again.
class StreamSink : public MemoryEventSink {
 public:
  explicit StreamSink(const HeapOptions& o) : o_(o) {}
  void begin(int64_t first, int64_t last, size_t stacks) override {
    stream = std::make_unique<HeapStream>(o_, first, last, stacks);
  }
  void alloc(uint32_t p, uint32_t t, int64_t ts, uint64_t a, uint64_t b, uint32_t s) override {
    stream->alloc(p, t, ts, a, b, s);
  }
  void free(uint32_t p, uint32_t t, int64_t ts, uint64_t a) override { stream->free(p, t, ts, a); }
  std::unique_ptr<HeapStream> stream;

 private:
  HeapOptions o_;
};

void expect_same_stacks(const std::vector<HeapStack>& a, const std::vector<HeapStack>& b,
                        const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].stack, b[i].stack) << what << " " << i;
    EXPECT_EQ(a[i].bytes, b[i].bytes) << what << " " << i;
    EXPECT_EQ(a[i].count, b[i].count) << what << " " << i;
    EXPECT_EQ(a[i].pids, b[i].pids) << what << " " << i;
    EXPECT_EQ(a[i].frames, b[i].frames) << what << " " << i;
  }
}

TEST_F(MemoryCaptureTest, StreamedHeapEqualsHeapOfEveryEvent) {
  tricky_file().write(dir_, 0);
  RawFile g(4343);
  g.stack(1, {0x1000});
  g.stack(2, {0x5000, 0x6000});
  g.stack(3, {0x7000});
  uint64_t seed = 12345;
  auto rnd = [&](uint64_t n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % n;
  };
  for (int64_t tid : {21, 22, 23}) {
    uint64_t tsc = 90 + static_cast<uint64_t>(tid);
    std::vector<Ev> chunk;
    for (int i = 0; i < 3000; ++i) {
      tsc += rnd(3) == 0 ? 0 : 1 + rnd(150000);  // ties, temporaries (< 100 us) and not
      uint64_t addr = 0x100000 + 16 * rnd(300);
      if (rnd(5) < 2)
        chunk.push_back({tid, tsc, addr, 0, 0});
      else
        chunk.push_back({tid, tsc, addr, 1 + rnd(5000), static_cast<uint32_t>(rnd(4))});
      if (chunk.size() == 700) g.events(chunk), chunk.clear();
    }
    if (!chunk.empty()) g.events(chunk);
  }
  g.exit();
  g.write(dir_, 1);

  HeapOptions o;
  o.top = 1000;
  o.max_frames = 8;
  MemoryCaptureStats full_stats;
  Trace full = capture(full_stats);
  HeapResult want = analyze_heap(full, o);

  MemoryCaptureStats stats;
  StreamSink sink(o);
  TraceBuilder b;
  ASSERT_TRUE(add_memory_captures(dir_, b, {}, stats, &sink).is_ok());
  ASSERT_TRUE(sink.stream);
  sink.stream->add_rows(b);
  Trace kept = std::move(b).finish();
  HeapResult got = sink.stream->result(kept);

  EXPECT_EQ(got.memory_events, want.memory_events);
  EXPECT_EQ(got.allocations, want.allocations);
  EXPECT_EQ(got.frees, want.frees);
  EXPECT_EQ(stats.frees - got.frees, full_stats.unmatched_frees);
  EXPECT_EQ(got.bytes_allocated, want.bytes_allocated);
  EXPECT_EQ(got.processes, want.processes);
  EXPECT_EQ(got.span_ns, want.span_ns);
  EXPECT_DOUBLE_EQ(got.allocations_per_second, want.allocations_per_second);
  EXPECT_EQ(got.peak_bytes, want.peak_bytes);
  EXPECT_EQ(got.peak_ts_ns, want.peak_ts_ns);
  EXPECT_EQ(got.peak_offset_ns, want.peak_offset_ns);
  EXPECT_EQ(got.peak_blocks, want.peak_blocks);
  expect_same_stacks(got.peak_stacks, want.peak_stacks, "peak");
  EXPECT_EQ(got.leaked_bytes, want.leaked_bytes);
  EXPECT_EQ(got.leaked_blocks, want.leaked_blocks);
  EXPECT_EQ(got.leak_stacks, want.leak_stacks);
  expect_same_stacks(got.leaks, want.leaks, "leaks");
  EXPECT_EQ(got.temporary_blocks, want.temporary_blocks);
  EXPECT_EQ(got.temporary_bytes, want.temporary_bytes);
  expect_same_stacks(got.temporaries, want.temporaries, "temporaries");
  ASSERT_EQ(got.rate.size(), want.rate.size());
  for (size_t k = 0; k < got.rate.size(); ++k) {
    EXPECT_EQ(got.rate[k].begin_ns, want.rate[k].begin_ns) << k;
    EXPECT_EQ(got.rate[k].allocations, want.rate[k].allocations) << k;
    EXPECT_EQ(got.rate[k].frees, want.rate[k].frees) << k;
    EXPECT_EQ(got.rate[k].bytes_allocated, want.rate[k].bytes_allocated) << k;
    EXPECT_EQ(got.rate[k].heap_bytes_end, want.rate[k].heap_bytes_end) << k;
  }
  EXPECT_GT(want.peak_blocks, 10u);
  EXPECT_GT(want.temporary_blocks, 10u);

  // The rows kept: far fewer, and the same peak and leaks when analyzed as a saved trace.
  EXPECT_LT(kept.memory.size(), full.memory.size() / 4);
  HeapResult again = analyze_heap(kept, o);
  EXPECT_EQ(again.peak_bytes, want.peak_bytes);
  EXPECT_EQ(again.peak_ts_ns, want.peak_ts_ns);
  EXPECT_EQ(again.peak_blocks, want.peak_blocks);
  expect_same_stacks(again.peak_stacks, want.peak_stacks, "peak, saved");
  EXPECT_EQ(again.leaked_bytes, want.leaked_bytes);
  EXPECT_EQ(again.leaked_blocks, want.leaked_blocks);
  expect_same_stacks(again.leaks, want.leaks, "leaks, saved");
  // The heap curve: its highest point is the peak.
  double curve_max = 0;
  for (size_t i = 0; i < kept.counters.size(); ++i)
    curve_max = std::max(curve_max, kept.counters.value[i]);
  EXPECT_EQ(curve_max, static_cast<double>(want.peak_bytes));
}

TEST(AddrMap, MatchesStdMapUnderChurn) {
  AddrMap<uint32_t> m(4);
  std::map<uint64_t, uint32_t> ref;
  uint64_t x = 88172645463325252ull;
  for (uint32_t step = 0; step < 200000; ++step) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    // Few distinct keys (many collisions and deletions in probe runs), the empty-slot key too.
    uint64_t key = (x % 3000) * 16;
    if (x % 5000 == 0) key = ~uint64_t{0};
    if (x % 3 == 0) {
      uint32_t got = 0;
      bool had = m.erase(key, &got);
      auto it = ref.find(key);
      ASSERT_EQ(had, it != ref.end());
      if (had) {
        ASSERT_EQ(got, it->second);
        ref.erase(it);
      }
    } else {
      auto [v, fresh] = m.try_emplace(key, step);
      auto [it, ref_fresh] = ref.try_emplace(key, step);
      ASSERT_EQ(fresh, ref_fresh);
      ASSERT_EQ(*v, it->second);
    }
    ASSERT_EQ(m.size(), ref.size());
  }
  for (auto& [k, v] : ref) {
    ASSERT_NE(m.find(k), nullptr);
    EXPECT_EQ(*m.find(k), v);
  }
  size_t n = 0;
  m.for_each([&](uint64_t k, uint32_t v) {
    ++n;
    EXPECT_EQ(ref.at(k), v);
  });
  EXPECT_EQ(n, ref.size());
}

}  // namespace
