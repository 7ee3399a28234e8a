// The other-profiler format fuzzers' findings (tests/fuzz/regressions/{sqlite,rocprofv3,xspace,
// perfetto}/, one input per bug: the file name says which) as a test: each reads into a Trace or
// fails with one line naming the file, as tests/fuzz/*_fuzz.cpp check, and a Perfetto trace read
// from such an input writes and reads back with its slices.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "import/perfetto_importer.h"
#include "import/rocprof_importer.h"
#include "import/xplane_importer.h"
#include "mlprof/import.h"
#include "mlprof/perfetto_export.h"

namespace mlprof {
namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <typename Fn>
void each(const char* target, Fn&& fn) {
  auto dir = std::filesystem::path(MLPROF_SOURCE_DIR) / "tests/fuzz/regressions" / target;
  if (!std::filesystem::exists(dir)) return;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    SCOPED_TRACE(e.path().string());
    fn(e.path());
  }
}

void one_line_or_trace(const Result<Trace>& t, const std::string& name) {
  if (t) return;
  EXPECT_EQ(t.error().find('\n'), std::string::npos) << t.error();
  EXPECT_EQ(t.error().rfind(name, 0), 0u) << t.error();
}

TEST(FormatFuzzRegressions, Rocprofv3) {
  each("rocprofv3", [](const std::filesystem::path& p) {
    one_line_or_trace(import::import_rocprofv3(read(p), "in.json"), "in.json");
  });
}

TEST(FormatFuzzRegressions, Xspace) {
  each("xspace", [](const std::filesystem::path& p) {
    one_line_or_trace(import::import_xspace(read(p), "in.xplane.pb"), "in.xplane.pb");
  });
}

TEST(FormatFuzzRegressions, SqliteFiles) {
  each("sqlite", [](const std::filesystem::path& p) {
    one_line_or_trace(load_trace(p.string()), p.string());
  });
}

TEST(FormatFuzzRegressions, PerfettoReadsAndRoundTrips) {
  each("perfetto", [](const std::filesystem::path& p) {
    auto t = import::import_perfetto(read(p), "in.pftrace");
    one_line_or_trace(t, "in.pftrace");
    if (!t || t->slices.size() + t->instants.size() + t->counters.size() + t->memory.size() == 0)
      return;  // nothing the writer can write (an unbound flow alone)
    std::ostringstream out;
    write_perfetto(*t, out);
    auto back = import::import_perfetto(out.str(), "again.pftrace");
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ(back->slices.size(), t->slices.size());
  });
}

}  // namespace
}  // namespace mlprof
