// Test data that comes from other projects' repositories (Holistic Trace Analysis's Kineto GPU
// traces, peers' test files) is not committed here: tests read it from the shared data folder.
// ONE setting: env MLPROF_SHARED_DIR, default <repository root>/../shared (CMake passes it in as
// MLPROF_SHARED_DIR_DEFAULT). A test whose data is absent skips and names the missing path.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace mlprof::test {

// The shared data folder: $MLPROF_SHARED_DIR, else the default CMake passed in.
inline std::string shared_dir() {
  const char* env = std::getenv("MLPROF_SHARED_DIR");
  if (env != nullptr && *env != '\0') return env;
#ifdef MLPROF_SHARED_DIR_DEFAULT
  return MLPROF_SHARED_DIR_DEFAULT;
#else
  return "../shared";
#endif
}

// `rel` (e.g. "traces/kineto-gpu/trace_filter/sampled_rank-0.json.gz") under the shared folder,
// or nullopt when it is not there.
inline std::optional<std::string> shared_path(const std::string& rel) {
  std::string p = shared_dir() + "/" + rel;
  std::error_code ec;
  if (!std::filesystem::exists(p, ec)) return std::nullopt;
  return p;
}

// The message a skipped test prints.
inline std::string missing_shared(const std::string& rel) {
  return "shared test data " + shared_dir() + "/" + rel +
         " is absent (set MLPROF_SHARED_DIR to the shared data folder; default "
         "<repository root>/../shared)";
}

}  // namespace mlprof::test

// Declares `std::string var` = the shared file `rel`, or skips the current test (GTEST_SKIP
// returns from the enclosing void function: a TEST body, SetUp or SetUpTestSuite).
#define MLPROF_SHARED_OR_SKIP(var, rel)                                   \
  std::string var;                                                        \
  if (auto var##_found = ::mlprof::test::shared_path(rel); var##_found) { \
    var = *var##_found;                                                   \
  } else {                                                                \
    GTEST_SKIP() << ::mlprof::test::missing_shared(rel);                  \
  }
