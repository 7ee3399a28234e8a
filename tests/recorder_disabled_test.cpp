// Compile-time off switch: with MLPROF_DISABLE every macro expands to nothing and the inline
// functions are empty, so a running session records nothing from this file.
#define MLPROF_DISABLE 1
#include <gtest/gtest.h>

#include "mlprof/mlprof.h"

namespace {

int instrumented(int x) {
  MLPROF_FUNCTION();
  MLPROF_SCOPE("scope");
  MLPROF_SCOPE_CAT("scope", "cat");
  MLPROF_INSTANT("instant");
  MLPROF_COUNTER("counter", x);
  mlprof::counter("counter", 1.0);
  mlprof::instant("instant");
  mlprof::track_alloc(&x, 4);
  mlprof::track_free(&x);
  mlprof::step();
  MLPROF_STEP("train");
  return mlprof::profile_function(
             "f", [](int y) { return y * 2; }, x) +
         mlprof::time_op(
             "g", [](int y) { return y; }, x);
}

TEST(recorder_disabled, MacrosExpandToNothing) {
  mlprof::SessionOptions o;
  o.buffer_mb = 1;
  o.rss_interval_ms = 0;
  mlprof::Session s(o);
  ASSERT_TRUE(s.start().is_ok());
  int sum = 0;
  for (int i = 0; i < 1000; ++i) sum += instrumented(i);
  EXPECT_EQ(sum, 3 * 999 * 1000 / 2);
  mlprof::Trace t = s.stop();
  EXPECT_EQ(t.event_count(), 0u);
  EXPECT_EQ(t.slices.size(), 0u);
}

}  // namespace
