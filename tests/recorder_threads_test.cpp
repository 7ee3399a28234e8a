// The recorder under many threads (also run under ThreadSanitizer: `make test-tsan`): every
// event is recorded or counted as dropped, threads that exit keep their data, and stop() while
// threads are still recording is safe.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "mlprof/mlprof.h"

namespace {

struct Counts {
  uint64_t finished = 0;
  uint64_t unfinished = 0;
};

std::map<int64_t, Counts> count_by_thread(const mlprof::Trace& t, std::string_view name) {
  std::map<int64_t, Counts> out;
  for (size_t i = 0; i < t.slices.size(); ++i) {
    if (t.str(t.slices.name[i]) != name) continue;
    Counts& c = out[t.tracks[t.slices.track[i]].tid];
    if (t.slice_arg(i, "unfinished"))
      ++c.unfinished;
    else
      ++c.finished;
  }
  return out;
}

void run_threads(int threads, int scopes_per_thread) {
  std::vector<std::thread> pool;
  for (int k = 0; k < threads; ++k)
    pool.emplace_back([scopes_per_thread] {
      for (int i = 0; i < scopes_per_thread; ++i) {
        MLPROF_SCOPE("work");
      }
    });
  for (auto& th : pool) th.join();
}

// 8 threads x 1M scopes = 16M events into a 32 MiB bound (2M events): most are dropped, and
// recorded + dropped must still add up to exactly what the threads wrote.
TEST(recorder_threads, EightThreadsMillionScopesEveryEventAccountedFor) {
  constexpr int kThreads = 8, kScopes = 1'000'000;
  mlprof::SessionOptions o;
  o.buffer_mb = 32;
  o.rss_interval_ms = 0;
  mlprof::Session s(o);
  ASSERT_TRUE(s.start().is_ok());
  run_threads(kThreads, kScopes);
  mlprof::Trace t = s.stop();

  auto by_thread = count_by_thread(t, "work");
  uint64_t finished = 0, unfinished = 0;
  for (auto& [tid, c] : by_thread) {
    EXPECT_LE(c.finished, static_cast<uint64_t>(kScopes));
    EXPECT_LE(c.unfinished, 1u);  // at most the scope open when this thread's drops began
    finished += c.finished;
    unfinished += c.unfinished;
  }
  // An unfinished slice is a recorded begin whose end was dropped.
  EXPECT_EQ(2 * finished + unfinished + t.meta.dropped_events, 2ull * kThreads * kScopes);
  EXPECT_GT(t.meta.dropped_events, 0u);
  EXPECT_GT(finished, 0u);
  // The bound holds: no more events than the budget's chunks can hold.
  EXPECT_LE(2 * finished + unfinished, (32ull << 20) / 16);
}

TEST(recorder_threads, AmpleBufferRecordsEverythingFromExitedThreads) {
  constexpr int kThreads = 8, kScopes = 100'000;
  mlprof::SessionOptions o;
  o.buffer_mb = 64;
  o.rss_interval_ms = 0;
  mlprof::Session s(o);
  ASSERT_TRUE(s.start().is_ok());
  run_threads(kThreads, kScopes);  // every thread has exited before stop()
  mlprof::Trace t = s.stop();
  auto by_thread = count_by_thread(t, "work");
  ASSERT_EQ(by_thread.size(), static_cast<size_t>(kThreads));
  for (auto& [tid, c] : by_thread) {
    EXPECT_EQ(c.finished, static_cast<uint64_t>(kScopes));
    EXPECT_EQ(c.unfinished, 0u);
  }
  EXPECT_EQ(t.meta.dropped_events, 0u);
  EXPECT_EQ(t.tracks.size(), static_cast<size_t>(kThreads));
}

TEST(recorder_threads, StopWhileThreadsRecordIsSafeAndConsistent) {
  mlprof::SessionOptions o;
  o.buffer_mb = 16;
  o.rss_interval_ms = 1;
  std::atomic<bool> quit{false};
  std::atomic<int> started{0};
  std::atomic<uint64_t> loops{0};
  std::vector<std::thread> pool;
  for (int k = 0; k < 4; ++k)
    pool.emplace_back([&] {
      mlprof::set_thread_name("busy");
      started.fetch_add(1);
      while (!quit.load(std::memory_order_relaxed)) {
        MLPROF_SCOPE("outer");
        for (int i = 0; i < 10; ++i) {
          MLPROF_SCOPE("inner");
        }
        mlprof::counter("progress", 1.0);
        loops.fetch_add(1, std::memory_order_relaxed);
      }
    });
  while (started.load() < 4) std::this_thread::yield();
  for (int round = 0; round < 3; ++round) {
    mlprof::Session s(o);
    ASSERT_TRUE(s.start().is_ok());
    // Wait for progress rather than a fixed time: on a loaded machine the workers may not run.
    uint64_t at_start = loops.load();
    for (int i = 0; i < 5000 && loops.load() < at_start + 200; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    mlprof::Trace t = s.stop();
    EXPECT_GT(t.slices.size(), 0u) << "round " << round;
    // Nesting is intact: every "inner" sits inside an "outer" on its own thread.
    for (size_t i = 0; i < t.slices.size(); ++i) {
      if (t.str(t.slices.name[i]) != "inner") continue;
      int32_t p = t.slices.parent[i];
      if (p < 0) continue;  // its outer began before the session started
      EXPECT_EQ(t.str(t.slices.name[p]), "outer")
          << "round " << round << " inner at " << t.slices.ts[i] << " dur " << t.slices.dur[i]
          << " parent at " << t.slices.ts[p] << " dur " << t.slices.dur[p];
    }
  }
  quit = true;
  for (auto& th : pool) th.join();
}

}  // namespace
