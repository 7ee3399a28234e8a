// Errors are values: functions at module boundaries return Status or Result<T>, both
// [[nodiscard]], so an error cannot be dropped by accident. Exceptions never cross the public API.
//
//   MLPROF_RETURN_IF_ERROR(save(trace, path));      // returns the error if it failed
//   MLPROF_ASSIGN_OR_RETURN(Trace t, load(path));  // t = the value, or returns the error
//
// An error has a code (what kind of failure) and a one-line message ("PATH: what is wrong").
// error_mapping() is the one place a code becomes the CLI's exit code, `mlprof serve`'s HTTP
// status and the Python module's exception class.
#pragma once

#include <cassert>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace mlprof {

enum class StatusCode : uint8_t {
  kOk,
  kBadInput,          // the data is unreadable or invalid: a truncated or corrupt trace
  kInvalidArgument,   // a request or option that makes no sense: an unknown analysis, a bad ?name=
  kNotFound,          // a file, trace or endpoint that does not exist
  kPermissionDenied,  // a path outside what may be read (serve's directory), a refused Host
  kTooLarge,          // the input is past a configured limit (--max-input-mb)
  kUnavailable,       // not now, retry: a file still being written, a server stopping
  kFailedPrecondition,  // the state refuses it: another session is recording
  kIo,                  // the system refused: a write failed, a disk is full
  kInternal,            // mlprof's own fault: a Result made from an OK status, a bug
};
inline constexpr int kStatusCodeCount = static_cast<int>(StatusCode::kInternal) + 1;

// What a failed status becomes at each door out of the library.
struct ErrorMapping {
  int exit_code;                      // the CLI's: 1 the command could not finish, 2 bad input
  int http_status;                    // `mlprof serve`'s
  std::string_view python_exception;  // the mlprof.Error subclass the Python module raises
};
constexpr ErrorMapping error_mapping(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return {0, 200, ""};
    case StatusCode::kBadInput:
      return {2, 422, "LoadError"};  // 422: the file is there but is not a valid trace
    case StatusCode::kInvalidArgument:
      return {2, 400, "AnalysisError"};
    case StatusCode::kNotFound:
      return {2, 404, "LoadError"};
    case StatusCode::kPermissionDenied:
      return {2, 403, "LoadError"};
    case StatusCode::kTooLarge:
      return {2, 413, "LoadError"};
    case StatusCode::kUnavailable:
      return {1, 503, "Error"};
    case StatusCode::kFailedPrecondition:
      return {1, 409, "SessionError"};
    case StatusCode::kIo:
      return {1, 500, "Error"};
    case StatusCode::kInternal:
      return {1, 500, "Error"};
  }
  return {1, 500, "Error"};
}

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status ok() { return Status(); }
  // A failure; without a code, bad input (most errors name a file and what is wrong with it).
  static Status error(std::string message) {
    return error(StatusCode::kBadInput, std::move(message));
  }
  static Status error(StatusCode code, std::string message) {
    Status s;
    s.code_ = code == StatusCode::kOk ? StatusCode::kInternal : code;
    s.message_ = std::move(message);
    return s;
  }
  bool is_ok() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
  StatusCode code_ = StatusCode::kOk;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  // An error. An OK status has no value to give: a programming error, caught in debug builds and
  // an internal error in release (never a Result that claims success with nothing in it).
  Result(Status error) : v_(refuse_ok(std::move(error))) {}  // NOLINT
  bool is_ok() const { return v_.index() == 0; }
  explicit operator bool() const { return is_ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const std::string& error() const { return std::get<1>(v_).message(); }
  StatusCode code() const { return is_ok() ? StatusCode::kOk : std::get<1>(v_).code(); }
  Status status() const { return is_ok() ? Status::ok() : std::get<1>(v_); }

 private:
  static Status refuse_ok(Status s) {
    assert(!s.is_ok() && "a Result made from an OK status: return the value");
    if (s.is_ok()) return Status::error(StatusCode::kInternal, "a result made from an OK status");
    return s;
  }
  std::variant<T, Status> v_;
};

namespace detail_status {
inline const Status& status_of(const Status& s) { return s; }
template <typename T>
Status status_of(const Result<T>& r) {
  return r.status();
}
}  // namespace detail_status

}  // namespace mlprof

// Returns the error of `expr` (a Status, or a Result: looked at by reference, not copied) from
// the enclosing function if it failed.
#define MLPROF_RETURN_IF_ERROR(expr)                             \
  do {                                                           \
    if (const auto& mlprof_status_ = (expr); !mlprof_status_)    \
      return ::mlprof::detail_status::status_of(mlprof_status_); \
  } while (0)

// `lhs` = the value of the Result `expr` (moved out), or returns its error from the enclosing
// function. `lhs` may declare: MLPROF_ASSIGN_OR_RETURN(Trace t, load(path));
#define MLPROF_ASSIGN_OR_RETURN(lhs, expr) \
  MLPROF_ASSIGN_OR_RETURN_(MLPROF_STATUS_CONCAT_(mlprof_result_, __LINE__), lhs, expr)
#define MLPROF_ASSIGN_OR_RETURN_(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp) return tmp.status();                 \
  lhs = std::move(tmp.value())
#define MLPROF_STATUS_CONCAT_(a, b) MLPROF_STATUS_CONCAT2_(a, b)
#define MLPROF_STATUS_CONCAT2_(a, b) a##b
