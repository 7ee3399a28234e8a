// Turns Chrome trace events (as PyTorch's Kineto profiler, the legacy autograd profiler and
// other tools write them) into Trace rows through TraceBuilder.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof::import {

// Parses "123", "123.456", "-1.5e3" (microseconds, as Chrome traces write them) into integer
// nanoseconds without going through double: float-ns Kineto timestamps (1.7e15 us with three
// decimals) need 19 significant digits, more than a double holds.
bool parse_us_to_ns(std::string_view text, int64_t* ns);

class ChromeEventParser {
 public:
  explicit ChromeEventParser(std::string name);
  ~ChromeEventParser();

  // `json` is an array of events; it must be followed by simdjson::SIMDJSON_PADDING readable
  // bytes (`allocated` counts them). `offset` is json's byte offset in the file (for errors).
  Status parse_events(const char* json, size_t len, size_t allocated, uint64_t offset);
  // A top-level key other than traceEvents, with its value as JSON text.
  Status parse_top_level(const std::string& key, const std::string& raw);

  Trace finish(bool bare_array) &&;
  // After the first chunk: sizes the tables for `total_bytes` of JSON at the density seen so far.
  void reserve_for(uint64_t parsed_bytes, uint64_t total_bytes);

 private:
  struct Pending;
  Status parse_event(void* object, uint64_t offset);
  void emit(const Pending& e);
  void emit_metadata(const Pending& e);
  void emit_counter(const Pending& e);
  void emit_memory(const Pending& e);
  void emit_flow(const Pending& e);
  void emit_begin_end(const Pending& e);
  uint32_t track_for(const Pending& e);
  StringId key_id(std::string_view key);

  std::string name_;
  TraceBuilder b_;
  struct JsonParser;  // simdjson's parser, kept out of this header
  std::unique_ptr<JsonParser> parser_;

  // Interned ids of strings the parser compares against.
  StringId memory_name_, oom_name_, process_name_, thread_name_, process_sort_index_,
      thread_sort_index_, process_labels_, name_key_, sort_index_key_, labels_key_;
  std::vector<bool> gpu_category_;  // indexed by StringId (grown on demand)
  StringId last_cat_text_id_ = 0;
  std::string last_cat_text_;

  // Open B (and async b) events per track: (ts, name, cat, args).
  struct Open {
    int64_t ts;
    StringId name, cat;
    ArgRange args;
  };
  std::unordered_map<uint32_t, std::vector<Open>> open_;
  // Flow endpoints waiting for their partner, by (cat, id).
  struct FlowEnd {
    uint32_t track;
    int64_t ts;
  };
  struct FlowKeyHash {
    size_t operator()(const std::pair<StringId, uint64_t>& k) const {
      return std::hash<uint64_t>()(k.second * 0x9e3779b97f4a7c15ull ^ k.first);
    }
  };
  std::unordered_map<std::pair<StringId, uint64_t>, FlowEnd, FlowKeyHash> flow_starts_, flow_ends_;

  std::string last_pid_text_;
  uint32_t last_text_process_ = UINT32_MAX;
  bool saw_string_pid_ = false;
  bool saw_category_ = false;
  bool kineto_keys_ = false;
  uint64_t events_ = 0;
};

}  // namespace mlprof::import
