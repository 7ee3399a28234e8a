// Recorder scopes as NVTX ranges (mlprof::set_nvtx, MLPROF_NVTX=1), checked through a fake NVTX
// injection library (tests/nvtx/fake_nvtx_injection.cpp) loaded by NVTX3 from
// NVTX_INJECTION64_PATH, the way Nsight Systems attaches: no GPU or profiler needed.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "mlprof/mlprof.h"

namespace {

#ifdef MLPROF_FAKE_NVTX_LIB
constexpr const char* kFakeLib = MLPROF_FAKE_NVTX_LIB;
#else
constexpr const char* kFakeLib = nullptr;
#endif

// The fake tool must be named before NVTX's first call, which looks it up once.
bool attach_fake_tool() {
  if (!kFakeLib) return false;
  ::setenv("NVTX_INJECTION64_PATH", kFakeLib, 1);
  return true;
}

// The fake tool's log; null until NVTX has loaded it (at its first call).
std::vector<std::string>* nvtx_log() {
  void* h = ::dlopen(kFakeLib, RTLD_NOW | RTLD_NOLOAD);
  if (!h) return nullptr;
  auto fn = reinterpret_cast<std::vector<std::string>* (*)()>(::dlsym(h, "fake_nvtx_log"));
  return fn ? fn() : nullptr;
}

struct Calls {
  std::vector<std::string> pushes, marks;  // names, in order
  size_t pops = 0;
  bool balanced = true;  // per thread: never a pop without a push, nothing left open
};

// The log entries from `from` on ("THREAD push NAME", "THREAD pop", "THREAD mark NAME").
Calls calls_since(size_t from) {
  Calls c;
  const std::vector<std::string>* loaded = nvtx_log();
  EXPECT_NE(loaded, nullptr) << "the fake NVTX tool was not loaded";
  if (!loaded) return c;
  const std::vector<std::string>& log = *loaded;
  std::map<std::string, int> depth;
  for (size_t i = from; i < log.size(); ++i) {
    const std::string& line = log[i];
    size_t sp = line.find(' ');
    std::string thread = line.substr(0, sp), rest = line.substr(sp + 1);
    if (rest.rfind("push ", 0) == 0) {
      c.pushes.push_back(rest.substr(5));
      ++depth[thread];
    } else if (rest == "pop") {
      ++c.pops;
      if (--depth[thread] < 0) c.balanced = false;
    } else if (rest.rfind("mark ", 0) == 0) {
      c.marks.push_back(rest.substr(5));
    }
  }
  for (auto& [t, d] : depth)
    if (d != 0) c.balanced = false;
  return c;
}

size_t log_size() {
  const std::vector<std::string>* log = nvtx_log();
  return log ? log->size() : 0;
}

void nested_work() {
  MLPROF_SCOPE("outer");
  {
    MLPROF_SCOPE_CAT("inner", "op");
    MLPROF_INSTANT("checkpoint");
  }
  mlprof::NamedScope dynamic(std::string("dynamic_") + "name");
}

TEST(recorder_nvtx, ScopesBecomeBalancedRangesWithoutASession) {
  if (!attach_fake_tool()) GTEST_SKIP() << "built without the NVTX headers";
  ASSERT_TRUE(mlprof::set_nvtx(true));
  EXPECT_TRUE(mlprof::nvtx_enabled());
  EXPECT_FALSE(mlprof::enabled());  // NVTX is not recording
  ASSERT_NE(nvtx_log(), nullptr) << "the fake NVTX tool was not loaded";
  bool domain = false;
  for (const std::string& line : *nvtx_log())
    domain |= line.find("domain mlprof") != std::string::npos;
  EXPECT_TRUE(domain) << "the ranges go to the \"mlprof\" domain";

  size_t from = log_size();
  nested_work();
  Calls c = calls_since(from);
  EXPECT_EQ(c.pushes, (std::vector<std::string>{"outer", "inner", "dynamic_name"}));
  EXPECT_EQ(c.pops, 3u);
  EXPECT_TRUE(c.balanced);
  EXPECT_EQ(c.marks, std::vector<std::string>{"checkpoint"});

  // Off again: nothing more reaches NVTX.
  ASSERT_TRUE(mlprof::set_nvtx(false));
  EXPECT_FALSE(mlprof::nvtx_enabled());
  from = log_size();
  nested_work();
  EXPECT_EQ(log_size(), from);
}

TEST(recorder_nvtx, RecordingAndNvtxTogetherOnThreads) {
  if (!attach_fake_tool()) GTEST_SKIP() << "built without the NVTX headers";
  mlprof::SessionOptions o;
  o.rss_interval_ms = 0;
  mlprof::Session session(o);
  ASSERT_TRUE(session.start().is_ok());
  { MLPROF_SCOPE("before_nvtx"); }  // recorded, not an NVTX range
  size_t from = log_size();
  ASSERT_TRUE(mlprof::set_nvtx(true));
  constexpr int kThreads = 3, kSteps = 4;
  auto work = [] {
    for (int s = 0; s < kSteps; ++s) {
      MLPROF_STEP("train");
      nested_work();
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(work);
  for (auto& t : threads) t.join();
  ASSERT_TRUE(mlprof::set_nvtx(false));
  { MLPROF_SCOPE("after_nvtx"); }  // recorded on the inline path again
  mlprof::Trace trace = session.stop();

  Calls c = calls_since(from);
  EXPECT_TRUE(c.balanced);
  std::map<std::string, size_t> pushed;
  for (const std::string& n : c.pushes) ++pushed[n.rfind("ProfilerStep#", 0) == 0 ? "step" : n];
  EXPECT_EQ(pushed["outer"], size_t{kThreads * kSteps});
  EXPECT_EQ(pushed["inner"], size_t{kThreads * kSteps});
  EXPECT_EQ(pushed["dynamic_name"], size_t{kThreads * kSteps});
  EXPECT_EQ(pushed["step"], size_t{kThreads * kSteps});
  EXPECT_EQ(c.pops, c.pushes.size());
  EXPECT_EQ(pushed.count("before_nvtx") + pushed.count("after_nvtx"), 0u);

  // The trace holds the same scopes: NVTX emission does not change what is recorded.
  std::map<std::string, size_t> recorded;
  for (size_t i = 0; i < trace.slices.size(); ++i) {
    std::string n(trace.str(trace.slices.name[i]));
    ++recorded[n.rfind("ProfilerStep#", 0) == 0 ? "step" : n];
  }
  EXPECT_EQ(recorded["outer"], size_t{kThreads * kSteps});
  EXPECT_EQ(recorded["inner"], size_t{kThreads * kSteps});
  EXPECT_EQ(recorded["dynamic_name"], size_t{kThreads * kSteps});
  EXPECT_EQ(recorded["step"], size_t{kThreads * kSteps});
  EXPECT_EQ(recorded["before_nvtx"], 1u);
  EXPECT_EQ(recorded["after_nvtx"], 1u);
  EXPECT_EQ(trace.meta.dropped_events, 0u);
}

// Runs only as the child of the test below, started with MLPROF_NVTX=1.
TEST(recorder_nvtx_child, EnvironmentTurnsItOn) {
  if (!std::getenv("MLPROF_TEST_CHILD")) GTEST_SKIP() << "runs as a child process only";
  ASSERT_TRUE(mlprof::nvtx_enabled());
  size_t from = log_size();
  nested_work();
  Calls c = calls_since(from);
  EXPECT_EQ(c.pushes, (std::vector<std::string>{"outer", "inner", "dynamic_name"}));
  EXPECT_TRUE(c.balanced);
}

TEST(recorder_nvtx, EnvironmentVariable) {
  if (!attach_fake_tool()) GTEST_SKIP() << "built without the NVTX headers";
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv("MLPROF_TEST_CHILD", "1", 1);
    ::setenv("MLPROF_NVTX", "1", 1);
    ::execl("/proc/self/exe", "recorder_nvtx_test",
            "--gtest_filter=recorder_nvtx_child.EnvironmentTurnsItOn", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
