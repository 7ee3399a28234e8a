// Configuration from the environment (MLPROF_ENABLED, MLPROF_OUTPUT, MLPROF_SAMPLE,
// MLPROF_BUFFER_MB), data saved at exit without stop(), and fork().
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "mlprof/import.h"
#include "mlprof/mlprof.h"
#include "mlprof/native_format.h"

namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/recorder_env_" + std::to_string(::getpid()) + "_" + name;
}

size_t count_named(const mlprof::Trace& t, std::string_view name) {
  size_t n = 0;
  for (size_t i = 0; i < t.slices.size(); ++i) n += t.str(t.slices.name[i]) == name;
  return n;
}

TEST(recorder_env, OptionsFromEnvironment) {
  ::setenv("MLPROF_BUFFER_MB", "7", 1);
  ::setenv("MLPROF_SAMPLE", "3", 1);
  ::setenv("MLPROF_RSS_INTERVAL_MS", "0", 1);
  mlprof::SessionOptions o = mlprof::SessionOptions::from_env();
  EXPECT_EQ(o.buffer_mb, 7u);
  EXPECT_EQ(o.sample, 3u);
  EXPECT_EQ(o.rss_interval_ms, 0u);
  ::setenv("MLPROF_SAMPLE", "zero", 1);  // not a number: the default, with a warning
  ::setenv("MLPROF_BUFFER_MB", "", 1);
  o = mlprof::SessionOptions::from_env();
  EXPECT_EQ(o.sample, 1u);
  EXPECT_EQ(o.buffer_mb, mlprof::SessionOptions{}.buffer_mb);
  ::unsetenv("MLPROF_BUFFER_MB");
  ::unsetenv("MLPROF_SAMPLE");
  ::unsetenv("MLPROF_RSS_INTERVAL_MS");
}

TEST(recorder_env, KillSwitchMakesStartFail) {
  ::setenv("MLPROF_ENABLED", "0", 1);
  mlprof::Session s;
  mlprof::Status st = s.start();
  ::unsetenv("MLPROF_ENABLED");
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("MLPROF_ENABLED=0"), std::string::npos);
  EXPECT_FALSE(mlprof::enabled());
}

// Runs only as the child of the test below: the global session was started from the
// environment before main(); a thread exits, and the process exits without stop().
TEST(recorder_env_child, WorkThenExitWithoutStop) {
  if (!std::getenv("MLPROF_TEST_CHILD")) GTEST_SKIP() << "runs as a child process only";
  if (!mlprof::global().running()) std::_Exit(3);
  std::thread worker([] {
    mlprof::set_thread_name("worker");
    for (int i = 0; i < 50; ++i) {
      MLPROF_SCOPE("child_thread_work");
    }
  });
  worker.join();
  for (int i = 0; i < 100; ++i) {
    MLPROF_STEP("train");
    MLPROF_SCOPE("child_work");
  }
  std::exit(0);  // no stop(): the at-exit writer saves MLPROF_OUTPUT
}

int run_child(const std::string& output, const char* sample) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("MLPROF_TEST_CHILD", "1", 1);
    ::setenv("MLPROF_OUTPUT", output.c_str(), 1);
    ::setenv("MLPROF_RSS_INTERVAL_MS", "1", 1);
    if (sample) ::setenv("MLPROF_SAMPLE", sample, 1);
    ::execl("/proc/self/exe", "recorder_env_test", "--gtest_filter=recorder_env_child.*",
            static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(recorder_env, OutputWrittenAtExitWithoutStop) {
  std::string out = temp_path("exit.mlprof");
  ASSERT_EQ(run_child(out, nullptr), 0);
  auto t = mlprof::load_native(out);
  ASSERT_TRUE(t.is_ok()) << t.error();
  EXPECT_EQ(count_named(*t, "child_work"), 100u);
  EXPECT_EQ(count_named(*t, "child_thread_work"), 50u);
  EXPECT_EQ(count_named(*t, "ProfilerStep#99"), 1u);
  bool worker_track = false;
  for (const auto& tr : t->tracks) worker_track |= t->str(tr.name) == "worker";
  EXPECT_TRUE(worker_track);
  bool rss = false;
  for (const auto& cs : t->counter_series) rss |= t->str(cs.name) == "rss";
  EXPECT_TRUE(rss);
  std::remove(out.c_str());
}

TEST(recorder_env, OutputByExtensionAndSamplingFromEnvironment) {
  std::string out = temp_path("exit.json");
  ASSERT_EQ(run_child(out, "10"), 0);
  auto t = mlprof::load_trace(out);
  ASSERT_TRUE(t.is_ok()) << t.error();
  EXPECT_EQ(count_named(*t, "child_work"), 10u);  // steps 0, 10, ..., 90
  EXPECT_EQ(count_named(*t, "ProfilerStep#90"), 1u);
  EXPECT_EQ(count_named(*t, "ProfilerStep#91"), 0u);
  std::remove(out.c_str());
}

TEST(recorder_env, ForkedChildStartsCleanAndParentKeepsRecording) {
  mlprof::SessionOptions o;
  o.buffer_mb = 4;
  o.rss_interval_ms = 0;
  mlprof::Session s(o);
  ASSERT_TRUE(s.start().is_ok());
  { MLPROF_SCOPE("parent_before_fork"); }
  pid_t pid = ::fork();
  if (pid == 0) {
    // Child: not recording, no session running; it can start its own.
    int code = 0;
    if (mlprof::enabled()) code |= 1;
    if (s.running()) code |= 2;
    { MLPROF_SCOPE("child_while_disabled"); }
    mlprof::Session mine(o);
    if (!mine.start().is_ok()) code |= 4;
    { MLPROF_SCOPE("child_own_session"); }
    mlprof::Trace t = mine.stop();
    if (count_named(t, "child_own_session") != 1) code |= 8;
    if (count_named(t, "child_while_disabled") != 0) code |= 16;
    if (count_named(t, "parent_before_fork") != 0) code |= 32;
    std::_Exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  { MLPROF_SCOPE("parent_after_fork"); }
  mlprof::Trace t = s.stop();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(count_named(t, "parent_before_fork"), 1u);
  EXPECT_EQ(count_named(t, "parent_after_fork"), 1u);
  EXPECT_EQ(count_named(t, "child_own_session"), 0u);
}

}  // namespace
