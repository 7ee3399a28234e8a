// The importer registry and open_input (issue 24 item 3): one table of formats decides what a
// file is (by content) and which names a directory holds as traces; one door opens a path.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "import/importer_registry.h"
#include "mlprof/compile_log.h"
#include "mlprof/import.h"
#include "mlprof/memory_snapshot.h"
#include "mlprof/native_format.h"

namespace mlprof {
namespace {

namespace fs = std::filesystem;

std::string data(const char* name) { return std::string(MLPROF_TEST_DATA) + "/" + name; }

// A small torch.compile structured log (glog line + JSON envelope) and a CUDA memory snapshot.
constexpr const char* kCompileLog =
    "V1206 15:20:13.926000 1543231 torch/_dynamo/utils.py:1288] {\"str\": [\"a.py\", 0]}\n";
constexpr const char* kSnapshot = R"({"segments": [], "device_traces": []})";

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/mlprof-registry-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name, const std::string& contents) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p, std::ios::binary) << contents;
    return p;
  }
  std::string copy(const std::string& from, const std::string& name) const {
    std::string p = path_ + "/" + name;
    fs::copy_file(from, p);
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(ImporterRegistry, OneFallbackLastAndEveryRowComplete) {
  auto rows = import::importers();
  ASSERT_GE(rows.size(), 5u);
  std::set<std::string_view> names;
  for (size_t i = 0; i < rows.size(); ++i) {
    const import::Importer& r = rows[i];
    EXPECT_TRUE(names.insert(r.name).second) << r.name;
    EXPECT_TRUE(r.extensions.starts_with('.')) << r.name;
    EXPECT_NE(r.load, nullptr) << r.name;
    // Only the last row (Chrome JSON) takes what no other row claimed.
    EXPECT_EQ(r.sniff == nullptr, i + 1 == rows.size()) << r.name;
  }
  EXPECT_EQ(rows.back().name, "chrome-json");
}

// The names the four copies of the rule used to accept (serve's list, the rank directory's, the
// CLI's progress total), now asked of the registry.
TEST(ImporterRegistry, WhichNamesAreTraces) {
  for (const char* n : {"a.json", "a.json.gz", "a.mlprof", "s.pickle", "s.pickle.gz",
                        "dedicated_log_torch_trace_rank_0.log", "x.log.gz"})
    EXPECT_TRUE(is_trace_name(n)) << n;
  for (const char* n : {"a.txt", "a.gz", "a.json.bak", "a.mlprof.gz", "README", "a.pickle.bak"})
    EXPECT_FALSE(is_trace_name(n)) << n;
  for (const char* n :
       {"a.json", "a.json.gz", "a.mlprof", "n.sqlite", "r.rpd", "h.xplane.pb", "p.pftrace"})
    EXPECT_TRUE(is_rank_trace_name(n)) << n;
  // A snapshot or a compile log is an input of its own, not one rank of a directory.
  for (const char* n : {"s.pickle", "s.pickle.gz", "r.log", "r.log.gz", "a.txt"})
    EXPECT_FALSE(is_rank_trace_name(n)) << n;
  EXPECT_EQ(
      import::rank_trace_patterns(),
      "*.json, *.json.gz, *.mlprof, *.perfetto-trace, *.pftrace, *.rpd, *.sqlite, *.xplane.pb");
}

// Content decides, not the name: each format under a name that belongs to another.
TEST(ImporterRegistry, ChosenByContent) {
  TempDir d;
  Result<Trace> json = load_trace(data("tiny_linear.json"));
  ASSERT_TRUE(json) << json.error();
  std::string native = d.path() + "/real.mlprof";
  ASSERT_TRUE(save_native(*json, native));
  std::string as_json = d.file("native.json", slurp(native));
  Result<Trace> n = load_trace(as_json);
  ASSERT_TRUE(n) << n.error();
  EXPECT_EQ(n->slices.size(), json->slices.size());

  Result<Trace> snap = load_trace(d.file("snapshot.json", kSnapshot));
  ASSERT_TRUE(snap) << snap.error();
  EXPECT_NE(snap->memory_snapshot, nullptr);

  Result<Trace> log = load_trace(d.file("log.json", kCompileLog));
  ASSERT_TRUE(log) << log.error();
  ASSERT_NE(log->compile_logs, nullptr);
  EXPECT_EQ(log->compile_logs->size(), 1u);

  // "MLPROF" with an unknown marker: the native row's own error, not the JSON reader's.
  Result<Trace> bad = load_trace(d.file("x.mlprof", "MLPROF\x02\nxxxx"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(),
            d.path() + "/x.mlprof: not a .mlprof file this mlprof reads (unknown header)");
  // Nothing claimed and empty: the one-line error before the fallback.
  Result<Trace> empty = load_trace(d.file("e.json", ""));
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error(), d.path() + "/e.json: empty file, expected a JSON trace");
}

TEST(OpenInput, FileIsOneTrace) {
  Result<Input> in = open_input(data("tiny_linear.json"));
  ASSERT_TRUE(in) << in.error();
  EXPECT_FALSE(in->rank_dir());
  EXPECT_GT(in->trace->slices.size(), 0u);
}

TEST(OpenInput, RankDirectoryListsRankTracesOnly) {
  TempDir d;
  d.copy(data("tiny_linear.json"), "rank1.json");
  d.copy(data("mlp_bs64.json.gz"), "rank0.json.gz");
  d.file("snapshot.pickle", kSnapshot);
  d.file("dedicated_log_torch_trace_rank_0.log", kCompileLog);
  d.file("notes.txt", "not a trace");
  Result<Input> in = open_input(d.path());
  ASSERT_TRUE(in) << in.error();
  ASSERT_TRUE(in->rank_dir());  // listed, not loaded
  EXPECT_EQ(in->rank_files,
            (std::vector<std::string>{d.path() + "/rank0.json.gz", d.path() + "/rank1.json"}));
  Result<Input> same = open_input(d.path(), {}, InputAccept::kRankDir);
  ASSERT_TRUE(same) << same.error();
  EXPECT_EQ(same->rank_files, in->rank_files);
}

// The message every consumer gives for a directory without traces.
std::string no_traces(const std::string& dir) {
  return dir + ": no trace files (" + import::rank_trace_patterns() +
         ") (a directory of rank traces)";
}

TEST(OpenInput, TorchTraceDirectoryIsOneInput) {
  TempDir d;
  d.file("dedicated_log_torch_trace_rank_0.log", kCompileLog);
  d.file("dedicated_log_torch_trace_rank_1.log", kCompileLog);
  Result<Input> in = open_input(d.path());
  ASSERT_TRUE(in) << in.error();
  ASSERT_FALSE(in->rank_dir());
  ASSERT_NE(in->trace->compile_logs, nullptr);
  EXPECT_EQ(in->trace->compile_logs->size(), 2u);
  // Where only a rank directory will do (MPI, merged export): refused, nothing loaded.
  Result<Input> ranks = open_input(d.path(), {}, InputAccept::kRankDir);
  ASSERT_FALSE(ranks);
  EXPECT_EQ(ranks.error(), no_traces(d.path()));
}

TEST(OpenInput, OneLineErrors) {
  TempDir d;
  Result<Input> empty = open_input(d.path());
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error(), no_traces(d.path()));
  std::string f = d.file("t.json", slurp(data("tiny_linear.json")));
  Result<Input> file = open_input(f, {}, InputAccept::kRankDir);
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error(), f + ": not a directory (a directory of rank traces)");
  Result<Input> missing = open_input(d.path() + "/nope.json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().find('\n'), std::string::npos);
}

}  // namespace
}  // namespace mlprof
