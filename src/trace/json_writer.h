// A small streaming JSON writer for Result structs (--json, REST, reports). Writing JSON is
// escaping plus commas; parsing is what simdjson is for.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlprof {

class JsonWriter {
 public:
  explicit JsonWriter(bool pretty = false) : pretty_(pretty) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view v);
  JsonWriter& value(const char* v) { return value(std::string_view(v)); }
  JsonWriter& value(const std::string& v) { return value(std::string_view(v)); }
  JsonWriter& value(int64_t v);
  JsonWriter& value(uint64_t v);
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(unsigned v) { return value(static_cast<uint64_t>(v)); }
  JsonWriter& value(long long v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(unsigned long long v) { return value(static_cast<uint64_t>(v)); }
  JsonWriter& value(double v);  // NaN and infinities are written as null
  JsonWriter& value(bool v);
  JsonWriter& null();
  JsonWriter& raw(std::string_view json);  // an already-encoded JSON value (made valid UTF-8)
  template <typename T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

  // The next begin_object() writes `"k": "v"` as its first field: how a caller stamps a document
  // ("schema": "mlprof.NAME/1") that a writer it does not own opens.
  JsonWriter& lead_next_object(std::string_view k, std::string_view v) {
    lead_key_ = k;
    lead_value_ = v;
    return *this;
  }

  const std::string& str() const { return out_; }
  std::string take() { return std::move(out_); }

  // Appends `s` as a JSON string. Bytes that are not well-formed UTF-8 (a Latin-1 file name, a
  // non-UTF-8 command-line argument) become U+FFFD, one per byte: everything mlprof writes as
  // JSON is valid UTF-8, so it reads back in mlprof and in every strict parser.
  static void escape(std::string& out, std::string_view s);
  // Appends `s` with the bytes that are not well-formed UTF-8 replaced by U+FFFD (raw JSON).
  static void append_utf8(std::string& out, std::string_view s);
  static bool valid_utf8(std::string_view s);

 private:
  void before_value();
  void newline();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
  std::string lead_key_, lead_value_;  // lead_next_object's field, until written
  bool pretty_;
};

}  // namespace mlprof
