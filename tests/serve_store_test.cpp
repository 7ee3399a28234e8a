// `mlprof serve`'s trace store, file opening and Host check without HTTP (tests/py/
// test_serve_attacks.py attacks a running serve).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "serve/host_check.h"
#include "serve/open_beneath.h"
#include "serve/rank_groups.h"
#include "serve/single_flight.h"
#include "serve/trace_store.h"

namespace fs = std::filesystem;
using namespace mlprof::serve;

namespace {

class TempDir {
 public:
  TempDir() {
    std::string t = (fs::temp_directory_path() / "mlprof-serve-test-XXXXXX").string();
    path_ = ::mkdtemp(t.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

std::string tiny_trace(const std::string& op) {
  std::string events;
  for (int i = 0; i < 20; ++i) {
    if (i) events += ",";
    events += R"({"ph":"X","cat":"cpu_op","pid":1,"tid":1,"name":")" + op + R"(","ts":)" +
              std::to_string(10 * i) + R"(,"dur":5})";
  }
  return R"({"traceEvents":[)" + events + "]}";
}

void set_mtime(const fs::path& p, int64_t seconds_from_now) {
  timespec times[2];
  ::clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec += seconds_from_now;
  times[1] = times[0];
  ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), times, 0), 0);
}

std::string read_fd(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

}  // namespace

class OpenBeneathTest : public ::testing::TestWithParam<bool> {};

TEST_P(OpenBeneathTest, StaysInsideTheDirectory) {
  bool openat2 = GetParam();
  TempDir outside, served;
  write(outside.path() / "secret.json", "SECRET");
  write(served.path() / "a" / "in.json", "INSIDE");
  fs::create_symlink(outside.path() / "secret.json", served.path() / "out.json");
  fs::create_directory_symlink(outside.path(), served.path() / "outdir");
  fs::create_symlink("a/in.json", served.path() / "alias.json");
  int dir = ::open(served.path().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir, 0);

  int fd = open_beneath(dir, "a/in.json", openat2);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(read_fd(fd), "INSIDE");
  ::close(fd);
  int out = open_beneath(dir, "out.json", openat2);
  EXPECT_TRUE(out == -EXDEV || out == -ELOOP) << out;
  int outdir = open_beneath(dir, "outdir/secret.json", openat2);
  EXPECT_TRUE(outdir == -EXDEV || outdir == -ELOOP) << outdir;
  EXPECT_EQ(open_beneath(dir, "missing.json", openat2), -ENOENT);
  // A symlink that stays inside: followed by openat2, refused by the component walk.
  int alias = open_beneath(dir, "alias.json", openat2);
  if (openat2 && alias != -ELOOP) {  // a kernel with openat2
    ASSERT_GE(alias, 0);
    EXPECT_EQ(read_fd(alias), "INSIDE");
    ::close(alias);
  } else {
    EXPECT_EQ(alias, -ELOOP);
  }
  ::close(dir);
}

TEST_P(OpenBeneathTest, ReadsTheOpenedFileAfterASwap) {
  TempDir outside, served;
  write(outside.path() / "secret.json", "SECRET");
  write(served.path() / "t.json", "INSIDE");
  int dir = ::open(served.path().c_str(), O_RDONLY | O_DIRECTORY);
  int fd = open_beneath(dir, "t.json", GetParam());
  ASSERT_GE(fd, 0);
  // The race of issue 11: the name becomes a symlink out after the open.
  fs::remove(served.path() / "t.json");
  fs::create_symlink(outside.path() / "secret.json", served.path() / "t.json");
  EXPECT_EQ(read_fd(fd), "INSIDE");
  ::close(fd);
  int again = open_beneath(dir, "t.json", GetParam());
  EXPECT_TRUE(again == -EXDEV || again == -ELOOP) << again;
  ::close(dir);
}

INSTANTIATE_TEST_SUITE_P(Openat2AndFallback, OpenBeneathTest, ::testing::Bool());

TEST(TraceStoreTest, SymlinkOutOfTheDirectoryIsRefused) {
  for (bool openat2 : {true, false}) {
    TempDir outside, served;
    write(outside.path() / "secret.json", tiny_trace("OUTSIDE_SECRET_OP"));
    fs::create_symlink(outside.path() / "secret.json", served.path() / "link.json");
    TraceStore store(served.path().string(), {.use_openat2 = openat2});
    Lookup l = store.get("link.json", "ops");
    EXPECT_EQ(l.error, LookupError::kOutside) << l.message;
    EXPECT_FALSE(l.body);
    EXPECT_TRUE(store.list().files.empty());
    EXPECT_EQ(store.loads(), 0u);
  }
}

TEST(TraceStoreTest, HiddenFilesAreNotServed) {
  TempDir served;
  write(served.path() / ".secret.json", tiny_trace("hidden_op"));
  write(served.path() / "sub" / ".h" / "x.json", tiny_trace("hidden_op"));
  write(served.path() / "sub" / "seen.json", tiny_trace("seen_op"));
  TraceStore store(served.path().string());
  for (const char* name : {".secret.json", "sub/.h/x.json", "./.secret.json", "sub//seen.json"})
    EXPECT_EQ(store.get(name, "summary").error, LookupError::kNotFound) << name;
  EXPECT_EQ(store.get("../x.json", "summary").error, LookupError::kOutside);
  EXPECT_EQ(store.get("/etc/passwd.json", "summary").error, LookupError::kOutside);
  auto files = store.list().files;
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].name, "sub/seen.json");
  EXPECT_EQ(store.get("sub/seen.json", "summary").error, LookupError::kNone);
}

TEST(TraceStoreTest, BrokenFileIsIncompleteOnlyWhileRecent) {
  TempDir served;
  const std::string broken = R"({"traceEvents": [ {"ph": "X", "name": )";
  write(served.path() / "fresh.json", broken);
  write(served.path() / "future.json", broken);
  write(served.path() / "old.json", broken);
  set_mtime(served.path() / "future.json", 365 * 86400);
  set_mtime(served.path() / "old.json", -3600);
  TraceStore store(served.path().string());
  EXPECT_EQ(store.get("fresh.json", "summary").error, LookupError::kIncomplete);
  EXPECT_EQ(store.get("future.json", "summary").error, LookupError::kLoadFailed);
  EXPECT_EQ(store.get("old.json", "summary").error, LookupError::kLoadFailed);
  // A broken version is parsed once, not on every request.
  uint64_t loads = store.loads();
  EXPECT_EQ(store.get("old.json", "ops").error, LookupError::kLoadFailed);
  EXPECT_EQ(store.loads(), loads);
}

TEST(TraceStoreTest, ConcurrentRequestsShareOneParse) {
  TempDir served;
  write(served.path() / "t.json", tiny_trace("op"));
  TraceStore store(served.path().string());
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] { ok += store.get("t.json", "summary").error == LookupError::kNone; });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 8);
  EXPECT_EQ(store.loads(), 1u);
}

// Issue 11 item 8: compare results grow with pairs of files (n^2); the one result cache bounds
// them by bytes, like every other result.
TEST(TraceStoreTest, CompareResultsOfManyPairsStayWithinTheCacheBound) {
  TempDir served;
  const int n = 8;
  for (int i = 0; i < n; ++i)
    write(served.path() / ("t" + std::to_string(i) + ".json"),
          tiny_trace("op" + std::to_string(i)));
  const size_t bound = 8 << 10;
  TraceStore store(served.path().string(), TraceStoreOptions{.cache_bytes = bound});
  size_t largest = 0, total = 0;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      Lookup r =
          store.compare("t" + std::to_string(a) + ".json", "t" + std::to_string(b) + ".json");
      ASSERT_EQ(r.error, LookupError::kNone) << r.message;
      largest = std::max(largest, r.body->size());
      total += r.body->size();
      EXPECT_LE(store.cached_bytes(), bound + largest + 256);
    }
  EXPECT_GT(total, 4 * bound);  // the pairs' results would not have fit
  EXPECT_LE(store.cached_bytes(), bound + largest + 256);
}

std::string stepped_trace(int steps) {  // ProfilerStep#0..#steps-1, one op each
  std::string events;
  for (int i = 0; i < steps; ++i) {
    if (i) events += ",";
    std::string ts = std::to_string(100 * i);
    events += R"({"ph":"X","cat":"user_annotation","pid":1,"tid":1,"name":"ProfilerStep#)" +
              std::to_string(i) + R"(","ts":)" + ts + R"(,"dur":90},)";
    events += R"({"ph":"X","cat":"cpu_op","pid":1,"tid":1,"name":"op","ts":)" + ts + R"(,"dur":)" +
              std::to_string(10 + i) + "}";
  }
  return R"({"traceEvents":[)" + events + "]}";
}

CriticalPathWindow step_window(int64_t step) {
  CriticalPathWindow w;
  w.step = step;
  return w;
}

CriticalPathWindow annotation_window(const std::string& name) {
  CriticalPathWindow w;
  w.annotation = name;
  return w;
}

// Issue 15: the critical path of each window is cached by trace and window, within the one
// result cache's bound; an unknown window is kNotFound and not cached.
TEST(TraceStoreTest, CriticalPathWindowsAreCachedWithinTheBound) {
  TempDir served;
  write(served.path() / "s.json", stepped_trace(40));
  const size_t bound = 16 << 10;
  TraceStore store(served.path().string(), TraceStoreOptions{.cache_bytes = bound});
  Lookup a = store.critical_path("s.json", step_window(7));
  ASSERT_EQ(a.error, LookupError::kNone) << a.message;
  EXPECT_NE(a.body->find("\"window_name\":\"ProfilerStep#7\""), std::string::npos);
  EXPECT_NE(a.body->find("\"path_ns\":17000"), std::string::npos);  // op of 10 + 7 us
  Lookup again = store.critical_path("s.json", step_window(7));
  EXPECT_EQ(again.body.get(), a.body.get());  // the cached bytes, not a new computation
  // The same window by annotation is another key, with its own JSON.
  Lookup by_name = store.critical_path("s.json", annotation_window("ProfilerStep#7"));
  ASSERT_EQ(by_name.error, LookupError::kNone);
  EXPECT_NE(by_name.body.get(), a.body.get());
  Lookup missing = store.critical_path("s.json", step_window(40));
  EXPECT_EQ(missing.error, LookupError::kNotFound);
  EXPECT_NE(missing.message.find("ProfilerStep#40"), std::string::npos) << missing.message;
  size_t largest = 0, total = 0;
  for (int i = 0; i < 40; ++i) {
    Lookup r = store.critical_path("s.json", step_window(i));
    ASSERT_EQ(r.error, LookupError::kNone) << r.message;
    largest = std::max(largest, r.body->size());
    total += r.body->size();
    EXPECT_LE(store.cached_bytes(), bound + largest + 256);
  }
  EXPECT_GT(total, 2 * bound);  // the windows' results would not have fit
  EXPECT_EQ(store.loads(), 1u);
}

TEST(CriticalPathWindowTest, ParsesQueryParameters) {
  std::optional<CriticalPathWindow> w;
  std::string error;
  EXPECT_TRUE(parse_critical_path_window(nullptr, nullptr, nullptr, w, error));
  EXPECT_FALSE(w.has_value());  // the default window
  ASSERT_TRUE(parse_critical_path_window("102", nullptr, nullptr, w, error));
  EXPECT_EQ(w->step, 102);
  ASSERT_TRUE(parse_critical_path_window(nullptr, "fwd", "3", w, error));
  EXPECT_EQ(w->step, -1);
  EXPECT_EQ(w->annotation, "fwd");
  EXPECT_EQ(w->instance, 3u);
  ASSERT_TRUE(parse_critical_path_window(nullptr, "", nullptr, w, error));  // the whole trace
  EXPECT_EQ(w->annotation, "");
  for (const char* bad : {"", "-1", "+1", "1e3", "0x1", " 1", "1 ", "abc", "9223372036854775808",
                          "99999999999999999999", "1000000000000"}) {
    EXPECT_FALSE(parse_critical_path_window(bad, nullptr, nullptr, w, error)) << bad;
    EXPECT_FALSE(error.empty());
  }
  EXPECT_FALSE(parse_critical_path_window("1", "a", nullptr, w, error));
  EXPECT_FALSE(parse_critical_path_window(nullptr, nullptr, "1", w, error));
  EXPECT_FALSE(parse_critical_path_window(nullptr, "a", "-1", w, error));
  EXPECT_FALSE(parse_critical_path_window(nullptr, "\xff\xfe", nullptr, w, error));
  EXPECT_FALSE(
      parse_critical_path_window(nullptr, std::string(600, 'a').c_str(), nullptr, w, error));
}

TEST(TraceStoreTest, RanksAreCachedUntilAFileChanges) {
  TempDir served;
  write(served.path() / "r0.json", tiny_trace("a"));
  write(served.path() / "r1.json", tiny_trace("b"));
  TraceStore store(served.path().string());
  Lookup first = store.ranks();
  ASSERT_EQ(first.error, LookupError::kNone);
  EXPECT_EQ(store.loads(), 2u);
  EXPECT_EQ(*store.ranks().body, *first.body);
  EXPECT_EQ(store.loads(), 2u);  // cached
  set_mtime(served.path() / "r1.json", -10);
  EXPECT_EQ(store.ranks().error, LookupError::kNone);
  EXPECT_EQ(store.loads(), 4u);  // the list changed: parsed again
}

TEST(TraceStoreTest, WorkForAGoneClientIsAbandoned) {
  TempDir served;
  write(served.path() / "r0.json", tiny_trace("a"));
  write(served.path() / "r1.json", tiny_trace("b"));
  TraceStore store(served.path().string());
  auto gone = [] { return false; };
  EXPECT_EQ(store.get("r0.json", "summary", gone).error, LookupError::kAbandoned);
  EXPECT_EQ(store.ranks(gone).error, LookupError::kAbandoned);
  EXPECT_EQ(store.compare("r0.json", "r1.json", gone).error, LookupError::kAbandoned);
  EXPECT_EQ(store.loads(), 0u);
  // Gone after the first file of ranks: the second is never parsed.
  int asked = 0;
  EXPECT_EQ(store.ranks([&] { return ++asked < 2; }).error, LookupError::kAbandoned);
  EXPECT_EQ(store.loads(), 1u);
  EXPECT_EQ(store.get("r0.json", "summary").error, LookupError::kNone);  // a later client
}

// Issue 32 item 11: the served folder deleted and created again is served again at once, not an
// empty listing and 404s until a restart.
TEST(TraceStoreTest, ARecreatedDirectoryIsReopened) {
  TempDir parent;
  fs::path served = parent.path() / "served";
  write(served / "a.json", tiny_trace("a_op"));
  TraceStore store(served.string());
  ASSERT_EQ(store.list().files.size(), 1u);
  fs::remove_all(served);
  EXPECT_TRUE(store.list().files.empty());
  EXPECT_EQ(store.get("a.json", "summary").error, LookupError::kNotFound);
  write(served / "b.json", tiny_trace("b_op"));
  auto files = store.list().files;
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].name, "b.json");
  Lookup l = store.get("b.json", "ops");
  EXPECT_EQ(l.error, LookupError::kNone) << l.message;
  ASSERT_TRUE(l.body);
  EXPECT_NE(l.body->find("b_op"), std::string::npos);
}

// Issue 32 item 12: no trace files is no rank, not one empty rank.
TEST(TraceStoreTest, RanksOfAnEmptyDirectoryAreUnavailable) {
  TempDir served;
  write(served.path() / "notes.txt", "not a trace");
  TraceStore store(served.path().string());
  Lookup l = store.ranks();
  ASSERT_EQ(l.error, LookupError::kNone) << l.message;
  EXPECT_NE(l.body->find("\"unavailable\":\"no trace files"), std::string::npos) << *l.body;
  EXPECT_EQ(l.body->find("\"ranks\""), std::string::npos) << *l.body;
  // Only files that do not load: no rank either, and the error says why.
  write(served.path() / "broken.json", "{\"traceEvents\": [ {");
  set_mtime(served.path() / "broken.json", -3600);
  l = store.ranks();
  ASSERT_EQ(l.error, LookupError::kNone) << l.message;
  EXPECT_NE(l.body->find("no trace file in this directory loads: "), std::string::npos) << *l.body;
  EXPECT_NE(l.body->find("broken.json"), std::string::npos) << *l.body;
}

// Issue 32 item 15: a listing cut at max_files says so.
TEST(TraceStoreTest, ATruncatedListingSaysSo) {
  TempDir served;
  for (int i = 0; i < 5; ++i) write(served.path() / ("t" + std::to_string(i) + ".json"), "{}");
  write(served.path() / "readme.txt", "");
  Listing all = TraceStore(served.path().string(), {.max_files = 5}).list();
  EXPECT_EQ(all.files.size(), 5u);
  EXPECT_FALSE(all.truncated);
  Listing cut = TraceStore(served.path().string(), {.max_files = 3}).list();
  EXPECT_EQ(cut.files.size(), 3u);
  EXPECT_TRUE(cut.truncated);
}

// Issue 32 item 5: a file that inflates past the store's input limit is kTooLarge (413), with a
// message naming the limit and serve's option, even while its mtime is recent.
TEST(TraceStoreTest, AFilePastTheInputLimitIsTooLarge) {
  TempDir served;
  std::string big = R"({"traceEvents":[)";
  for (int i = 0; i < 40000; ++i) {  // ~2.4 MB of JSON
    if (i) big += ',';
    big += R"({"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":)" + std::to_string(i) +
           R"(,"dur":1})";
  }
  big += "]}";
  write(served.path() / "big.json", big);
  TraceStore store(served.path().string(), {.max_input_bytes = 1 << 20});
  for (int i = 0; i < 2; ++i) {  // the second answer comes from the cached failure
    Lookup l = store.get("big.json", "summary");
    EXPECT_EQ(l.error, LookupError::kTooLarge) << l.message;
    EXPECT_NE(l.message.find("exceeds the input limit of 1 MiB"), std::string::npos) << l.message;
    EXPECT_NE(l.message.find("--max-input-mb"), std::string::npos) << l.message;
  }
  TraceStore roomy(served.path().string(), {.max_input_bytes = 4 << 20});
  EXPECT_EQ(roomy.get("big.json", "summary").error, LookupError::kNone);
}

// Issue 24: over the limit is the load's code (kTooLarge), not its words. A broken file whose
// name holds the limit's phrase is a failed load (422), first and from the cached failure.
TEST(TraceStoreTest, TooLargeIsTheCodeNotTheMessage) {
  TempDir served;
  const std::string name = "exceeds the input limit of 1 MiB.json";
  write(served.path() / name, R"({"traceEvents": [ {"ph": "X", "name": )");
  set_mtime(served.path() / name, -3600);
  TraceStore store(served.path().string());
  for (int i = 0; i < 2; ++i) {
    Lookup l = store.get(name, "summary");
    EXPECT_EQ(l.error, LookupError::kLoadFailed) << l.message;
    EXPECT_EQ(store.trace(name).error, LookupError::kLoadFailed);
    EXPECT_EQ(store.compare(name, name).error, LookupError::kLoadFailed);
  }
}

// Issue 32 item 4: a compile log's reader and analysis ask the client themselves (serve's own
// checks come only between steps, and a 300k-id log held a worker for minutes after its client
// hung up). Nothing half-done is kept: a later client gets the whole result.
TEST(TraceStoreTest, CompileWorkForAGoneClientIsCancelledInside) {
  TempDir served;
  std::string log;
  for (int i = 0; i < 5000; ++i)
    log +=
        "V1206 15:24:45.403000 1 f.py:1] {\"compilation_metrics\": {\"co_name\": \"f\"}, "
        "\"frame_id\": " +
        std::to_string(i) + ", \"frame_compile_id\": 0, \"attempt\": 0}\n";
  write(served.path() / "torch_trace.log", log);  // 600 KB: the reader reads 64 KiB at a time
  TraceStore store(served.path().string());
  ASSERT_EQ(store.list().files.size(), 1u);
  // The client is there for the store's checks before the load and before the analysis (two
  // questions), and gone from then on: only the reader's own checks can notice.
  int asked = 0;
  auto leaves = [&] { return ++asked <= 2; };
  EXPECT_EQ(store.get("torch_trace.log", "compile", leaves).error, LookupError::kAbandoned);
  EXPECT_GT(asked, 2);
  EXPECT_EQ(store.loads(), 0u);  // the load itself was given up
  // Loaded and kept for another analysis; then the compile analysis' own checks notice.
  ASSERT_EQ(store.get("torch_trace.log", "summary").error, LookupError::kNone);
  EXPECT_EQ(store.loads(), 1u);
  asked = 0;
  auto leaves_at_once = [&] { return ++asked <= 1; };
  EXPECT_EQ(store.get("torch_trace.log", "compile", leaves_at_once).error, LookupError::kAbandoned);
  EXPECT_GT(asked, 1);
  Lookup whole = store.get("torch_trace.log", "compile");
  ASSERT_EQ(whole.error, LookupError::kNone) << whole.message;
  EXPECT_NE(whole.body->find("\"compile_ids\":5000"), std::string::npos)
      << whole.body->substr(0, 300);
  EXPECT_EQ(store.loads(), 1u);
}

TEST(SingleFlightTest, AWaiterTakesOverWhenTheLeaderGivesUp) {
  SingleFlight<int> flight;
  std::atomic<bool> leader_in{false};
  std::atomic<bool> release{false};
  std::optional<int> leader_result, waiter_result;
  std::thread leader([&] {
    leader_result = flight.run("k",
                               [&]() -> std::optional<int> {
                                 leader_in = true;
                                 while (!release)
                                   std::this_thread::sleep_for(std::chrono::milliseconds(1));
                                 return std::nullopt;  // its client went away
                               },
                               {});
  });
  while (!leader_in) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  int computed = 0;
  std::thread waiter([&] {
    waiter_result = flight.run("k",
                               [&]() -> std::optional<int> {
                                 ++computed;
                                 return 42;
                               },
                               {});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  release = true;
  leader.join();
  waiter.join();
  EXPECT_FALSE(leader_result);
  ASSERT_TRUE(waiter_result);
  EXPECT_EQ(*waiter_result, 42);
  EXPECT_EQ(computed, 1);
}

TEST(HostCheckTest, LoopbackBoundAndAllowedNames) {
  HostCheck loopback("127.0.0.1", {});
  for (const char* ok : {"localhost", "localhost:6970", "LOCALHOST.", "127.0.0.1:1", "127.1.2.3",
                         "[::1]:6970", "::1", "app.localhost", ""})
    EXPECT_TRUE(loopback.allows(ok)) << ok;
  for (const char* bad : {"evil.example", "evil.example:6970", "10.0.0.1", "[::2]:1",
                          "localhost.evil.example", "127.0.0.1.evil.example", "[::1"})
    EXPECT_FALSE(loopback.allows(bad)) << bad;

  HostCheck bound("10.1.2.3", {"box.example"});
  EXPECT_TRUE(bound.allows("10.1.2.3:6970"));
  EXPECT_TRUE(bound.allows("Box.Example:80"));
  EXPECT_FALSE(bound.allows("10.1.2.4"));
  EXPECT_FALSE(bound.allows("evil.example"));

  HostCheck wildcard("0.0.0.0", {});
  EXPECT_TRUE(wildcard.allows("192.168.1.5:6970"));  // an IP literal cannot be rebound
  EXPECT_TRUE(wildcard.allows("[fe80::1]:6970"));
  EXPECT_FALSE(wildcard.allows("myhost.example"));

  EXPECT_TRUE(HostCheck("127.0.0.1", {"*"}).allows("anything.example"));
}

// Issue 28 item 6: a folder's traces grouped by job for the Ranks view.
TEST(RankGroupsTest, JobsAreSplitByWorldSizeRankIdsAndStartTime) {
  const int64_t s = 1'000'000'000;
  std::vector<RankTraceInfo> t = {
      {"a0", 0, 2, 100 * s},     {"a1", 1, 2, 101 * s},   // job A
      {"b0", 0, 2, 102 * s},     {"b1", 1, 2, 103 * s},   // same world size, ranks taken: job B
      {"c0", 0, 4, 100 * s},                              // another world size: job C
      {"d1", 1, 2, 5000 * s},                             // rank 1 of A's size, an hour later: D
      {"lone", -1, -1, 100 * s}, {"odd", 3, 2, 100 * s},  // no rank; rank >= world
  };
  RankGrouping g = group_rank_traces(t);
  ASSERT_EQ(g.groups.size(), 4u);
  EXPECT_EQ(g.groups[0].traces, (std::vector<size_t>{0, 1}));  // 2 traces, earliest first
  EXPECT_EQ(g.groups[1].traces, (std::vector<size_t>{2, 3}));
  EXPECT_EQ(g.groups[2].traces, (std::vector<size_t>{4}));
  EXPECT_EQ(g.groups[2].world_size, 4);
  EXPECT_EQ(g.groups[3].traces, (std::vector<size_t>{5}));
  ASSERT_EQ(g.unrelated.size(), 2u);
  EXPECT_EQ(g.unrelated[0].first, 6u);
  EXPECT_EQ(g.unrelated[1].first, 7u);
  EXPECT_NE(g.unrelated[1].second.find("not below its world size"), std::string::npos);
}
