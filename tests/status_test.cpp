// Status and Result (include/mlprof/status.h): the one mapping from a code to the CLI's exit
// code, serve's HTTP status and Python's exception class; a Result refuses an OK status; the
// propagation macros return the error and nothing else.
#include "mlprof/status.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "mlprof/chrome_export.h"
#include "mlprof/import.h"
#include "mlprof/mlprof.h"
#include "mlprof/native_format.h"
#include "serve/trace_store.h"
#include "trace/output_file.h"

namespace mlprof {
namespace {

// The table as the docs and the tests before the codes existed fixed it (DEVELOPERS.md: exit 2
// for bad input, 1 for a command that could not finish; serve's statuses as they were chosen
// per case in src/serve/server.cpp), written out again here rather than read from status.h.
struct Expected {
  StatusCode code;
  int exit_code;
  int http;
  const char* python;
};
constexpr Expected kTable[] = {
    {StatusCode::kOk, 0, 200, ""},
    {StatusCode::kBadInput, 2, 422, "LoadError"},
    {StatusCode::kInvalidArgument, 2, 400, "AnalysisError"},
    {StatusCode::kNotFound, 2, 404, "LoadError"},
    {StatusCode::kPermissionDenied, 2, 403, "LoadError"},
    {StatusCode::kTooLarge, 2, 413, "LoadError"},
    {StatusCode::kUnavailable, 1, 503, "Error"},
    {StatusCode::kFailedPrecondition, 1, 409, "SessionError"},
    {StatusCode::kIo, 1, 500, "Error"},
    {StatusCode::kInternal, 1, 500, "Error"},
};

TEST(StatusMapping, EveryCodeHasItsExitCodeHttpStatusAndPythonClass) {
  ASSERT_EQ(std::size(kTable), static_cast<size_t>(kStatusCodeCount));
  for (const Expected& e : kTable) {
    ErrorMapping m = error_mapping(e.code);
    SCOPED_TRACE(static_cast<int>(e.code));
    EXPECT_EQ(m.exit_code, e.exit_code);
    EXPECT_EQ(m.http_status, e.http);
    EXPECT_EQ(m.python_exception, e.python);
  }
}

TEST(StatusMapping, ServeLookupErrorsKeepTheirHttpStatus) {
  using serve::LookupError;
  const std::pair<LookupError, int> kHttp[] = {
      {LookupError::kNone, 200},       {LookupError::kBadName, 400},
      {LookupError::kOutside, 403},    {LookupError::kNotFound, 404},
      {LookupError::kLoadFailed, 422}, {LookupError::kIncomplete, 503},
      {LookupError::kAbandoned, 503},  {LookupError::kTooLarge, 413},
      {LookupError::kInternal, 500},
  };
  for (auto [e, http] : kHttp)
    EXPECT_EQ(error_mapping(serve::status_code(e)).http_status, http) << static_cast<int>(e);
}

TEST(StatusCodes, ErrorWithoutACodeIsBadInputAndAnOkCodeIsNotAnError) {
  Status s = Status::error("t.json: truncated");
  EXPECT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kBadInput);
  EXPECT_EQ(s.message(), "t.json: truncated");
  Status bogus = Status::error(StatusCode::kOk, "claims success");
  EXPECT_FALSE(bogus.is_ok());
  EXPECT_EQ(bogus.code(), StatusCode::kInternal);
  EXPECT_TRUE(Status::ok().is_ok());
  EXPECT_EQ(Status::ok().code(), StatusCode::kOk);
}

TEST(StatusResult, KeepsTheErrorsCodeAndMessage) {
  Result<int> r = Status::error(StatusCode::kNotFound, "x.json: cannot open");
  EXPECT_FALSE(r.is_ok());
  EXPECT_EQ(r.code(), StatusCode::kNotFound);
  EXPECT_EQ(r.error(), "x.json: cannot open");
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  Result<int> v = 7;
  EXPECT_TRUE(v.is_ok());
  EXPECT_EQ(v.code(), StatusCode::kOk);
  EXPECT_EQ(*v, 7);
}

Result<int> from_ok_status() { return Status::ok(); }

TEST(StatusResult, RefusesAnOkStatus) {
#ifdef NDEBUG
  // Release: an internal error, never a Result that claims a value it does not have.
  Result<int> r = from_ok_status();
  EXPECT_FALSE(r.is_ok());
  EXPECT_EQ(r.code(), StatusCode::kInternal);
  EXPECT_EQ(error_mapping(r.code()).exit_code, 1);
#else
  // Debug: the programming error stops the program where it is made.
  EXPECT_DEATH((void)from_ok_status(), "OK status");
#endif
}

Status fails_with(StatusCode code) { return Status::error(code, "why"); }
Result<std::string> named(bool ok) {
  if (!ok) return Status::error(StatusCode::kIo, "cannot write");
  return std::string("value");
}

Status forward(StatusCode code, int& reached) {
  MLPROF_RETURN_IF_ERROR(fails_with(code));
  reached = 1;
  MLPROF_RETURN_IF_ERROR(named(true));
  reached = 2;
  return Status::ok();
}

Result<size_t> length(bool ok) {
  MLPROF_ASSIGN_OR_RETURN(std::string s, named(ok));
  return s.size();
}

TEST(StatusMacros, ReturnTheErrorAndContinueOnSuccess) {
  int reached = 0;
  Status s = forward(StatusCode::kTooLarge, reached);
  EXPECT_EQ(s.code(), StatusCode::kTooLarge);
  EXPECT_EQ(s.message(), "why");
  EXPECT_EQ(reached, 0);
  // An OK status is not an error: the macro falls through.
  Status passed = [&]() -> Status {
    MLPROF_RETURN_IF_ERROR(Status::ok());
    return Status::error(StatusCode::kInternal, "after");
  }();
  EXPECT_EQ(passed.message(), "after");

  Result<size_t> n = length(true);
  ASSERT_TRUE(n.is_ok());
  EXPECT_EQ(*n, 5u);
  Result<size_t> failed = length(false);
  EXPECT_EQ(failed.code(), StatusCode::kIo);
  EXPECT_EQ(failed.error(), "cannot write");
}

// Codes tagged where the error is made (issue 24 item 5): each failure below gets its kind from
// the code that saw it, so the one mapping gives the CLI's exit code, serve's status and
// Python's class without anyone reading the message.
class StatusSources : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("mlprof_status_sources_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string file(const std::string& name, const std::string& bytes) {
    std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  std::filesystem::path dir_;
};

TEST_F(StatusSources, AMissingInputIsNotFound) {
  std::string missing = (dir_ / "missing.json").string();
  Result<Trace> t = load_trace(missing);
  ASSERT_FALSE(t.is_ok());
  EXPECT_EQ(t.code(), StatusCode::kNotFound);
  EXPECT_EQ(t.error(), missing + ": cannot open: No such file or directory");
  EXPECT_EQ(error_mapping(t.code()).exit_code, 2);
  EXPECT_EQ(error_mapping(t.code()).http_status, 404);
  EXPECT_EQ(error_mapping(t.code()).python_exception, "LoadError");
  // A path under a file (ENOTDIR) is as missing; through open_input as through load_trace.
  std::string under = file("a.json", "[]") + "/b.json";
  EXPECT_EQ(open_input(under).code(), StatusCode::kNotFound);
  // A .mlprof name says what it is not, and keeps the code of why it could not be read.
  EXPECT_EQ(load_trace((dir_ / "missing.mlprof").string()).code(), StatusCode::kNotFound);
}

TEST_F(StatusSources, ADirectoryWithoutTracesIsNotFoundAndADamagedTraceIsBadInput) {
  std::filesystem::create_directories(dir_ / "empty");
  Result<Input> in = open_input((dir_ / "empty").string(), {}, InputAccept::kRankDir);
  ASSERT_FALSE(in.is_ok());
  EXPECT_EQ(in.code(), StatusCode::kNotFound);
  EXPECT_NE(in.error().find("no trace files"), std::string::npos) << in.error();
  Result<Trace> bad = load_trace(file("truncated.json", R"({"traceEvents": [ {"ph": "X", )"));
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.code(), StatusCode::kBadInput);
  EXPECT_EQ(error_mapping(bad.code()).http_status, 422);
}

TEST_F(StatusSources, AnInputPastTheLimitIsTooLarge) {
  std::string big = "[";
  for (int i = 0; i < 20000; ++i)
    big += std::string(i ? "," : "") + R"({"ph":"X","name":"op","ts":)" + std::to_string(i) +
           R"(,"dur":1,"pid":1,"tid":1})";
  big += "]";
  ImportOptions o;
  o.max_input_bytes = 64 * 1024;
  Result<Trace> t = load_trace(file("big.json", big), o);
  ASSERT_FALSE(t.is_ok());
  EXPECT_EQ(t.code(), StatusCode::kTooLarge);
  EXPECT_NE(t.error().find("exceeds the input limit of"), std::string::npos) << t.error();
  EXPECT_EQ(error_mapping(t.code()).exit_code, 2);
  EXPECT_EQ(error_mapping(t.code()).http_status, 413);
}

TEST_F(StatusSources, AnOutputThatCannotBeWrittenIsIo) {
  std::string out = (dir_ / "no_such_dir" / "x.json").string();
  Status s = write_output_file(out, "{}");
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kIo);
  EXPECT_EQ(s.message(), out + ": cannot write: directory " + (dir_ / "no_such_dir").string() +
                             " does not exist");
  EXPECT_EQ(error_mapping(s.code()).exit_code, 1);
  EXPECT_EQ(error_mapping(s.code()).http_status, 500);
  EXPECT_EQ(error_mapping(s.code()).python_exception, "Error");
  EXPECT_EQ(write_output_file(dir_.string(), "{}").code(), StatusCode::kIo);  // a directory
  EXPECT_EQ(write_output_file("", "{}").code(), StatusCode::kInvalidArgument);
  // Through the exporters, which write through OutputFile.
  Trace t;
  EXPECT_EQ(save_chrome_json(t, out).code(), StatusCode::kIo);
  EXPECT_EQ(save_native(t, out).code(), StatusCode::kIo);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "no_such_dir"));
}

TEST(StatusSourcesSession, ASecondSessionIsAFailedPrecondition) {
  Session a, b;
  Status first = a.start();
  if (!first.is_ok()) GTEST_SKIP() << "recording is off here: " << first.message();
  Status second = b.start();
  ASSERT_FALSE(second.is_ok());
  EXPECT_EQ(second.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(error_mapping(second.code()).python_exception, "SessionError");
  EXPECT_EQ(a.start().code(), StatusCode::kFailedPrecondition);  // already recording
  (void)a.stop();
}

}  // namespace
}  // namespace mlprof
