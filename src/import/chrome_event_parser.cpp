#include "import/chrome_event_parser.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "import/chrome_event_fields.h"
#include "import/error_text.h"
#include "import/json_chunker.h"
#include "import/json_repair.h"

namespace mlprof::import {

namespace od = simdjson::ondemand;

namespace {

// Categories of events that run on a GPU (or other accelerator) timeline rather than a thread.
constexpr const char* kGpuCategories[] = {
    "kernel", "gpu_memcpy", "gpu_memset",      "gpu_user_annotation", "Kernel",
    "Memcpy", "Memset",     "mtia_ccp_events", "cuda_profiler_range"};

}  // namespace

struct ChromeEventParser::JsonParser {
  od::parser parser;
};

ChromeEventParser::ChromeEventParser(std::string name, Mode mode)
    : name_(std::move(name)), mode_(mode), parser_(std::make_unique<JsonParser>()) {
  memory_name_ = b_.intern("[memory]");
  oom_name_ = b_.intern("[OutOfMemory]");
  process_name_ = b_.intern("process_name");
  thread_name_ = b_.intern("thread_name");
  process_sort_index_ = b_.intern("process_sort_index");
  thread_sort_index_ = b_.intern("thread_sort_index");
  process_labels_ = b_.intern("process_labels");
  name_key_ = b_.intern("name");
  sort_index_key_ = b_.intern("sort_index");
  labels_key_ = b_.intern("labels");
  for (const char* c : kGpuCategories) {
    StringId id = b_.intern(c);
    if (gpu_category_.size() <= id) gpu_category_.resize(id + 1, false);
    gpu_category_[id] = true;
  }
}

ChromeEventParser::~ChromeEventParser() = default;

void ChromeEventParser::drop_json_parser() { parser_.reset(); }

StringId ChromeEventParser::cached_intern(std::string_view s) {
  const size_t n = s.size();
  if (n == 0 || n > UINT32_MAX) return b_.intern(s);
  uint64_t a = 0, z = 0;
  std::memcpy(&a, s.data(), std::min<size_t>(n, 8));
  if (n > 8) std::memcpy(&z, s.data() + n - 8, 8);
  uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (z + n) * 0xc2b2ae3d27d4eb4full;
  CachedString& c = intern_cache_[h >> 54];
  if (c.len == n && std::memcmp(c.text, s.data(), n) == 0) return c.id;
  StringId id = b_.intern(s);
  c = CachedString{b_.trace().strings.get(id).data(), static_cast<uint32_t>(n), id};
  return id;
}

StringId ChromeEventParser::category_id(std::string_view s) {
  // Consecutive events mostly share a category: skip hashing it again.
  if (s != last_cat_text_) {
    last_cat_text_id_ = b_.intern(s);
    last_cat_text_.assign(s);
  }
  return last_cat_text_id_;
}
ChromeEventParser::RowPos ChromeEventParser::row_pos() const {
  const Trace& t = const_cast<TraceBuilder&>(b_).trace();
  return RowPos{static_cast<uint32_t>(t.slices.size()), static_cast<uint32_t>(t.instants.size()),
                static_cast<uint32_t>(t.counters.size()), static_cast<uint32_t>(t.memory.size()),
                static_cast<uint32_t>(t.args.size())};
}

Status ChromeEventParser::parse_events(const char* json, size_t len, size_t allocated,
                                       uint64_t offset, uint64_t seq) {
  if (mode_ == Mode::kPart) {
    Trace& t = b_.trace();
    marks_.push_back(ChunkMark{
        seq, static_cast<uint32_t>(t.strings.size()), static_cast<uint32_t>(t.processes.size()),
        static_cast<uint32_t>(t.tracks.size()), static_cast<uint32_t>(t.counter_series.size()),
        static_cast<uint32_t>(ops_.size()), row_pos()});
  }
  // The chunker hands over whole events separated by single commas: walk them, taking each
  // through the fast path when it is plain JSON and through simdjson otherwise.
  const char* p = json + 1;
  const char* end = json + len - 1;  // the closing ']'
  auto ws = [](const char* q) {
    while (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t') ++q;
    return q;
  };
  for (bool first = true;; first = false) {
    p = ws(p);
    if (p >= end) break;
    if (!first) {
      if (*p != ',') break;  // not from the chunker
      p = ws(p + 1);
    }
    if (*p != '{') break;
    const char* start = p;
    event_at_ = offset + static_cast<uint64_t>(start - json) - 1;
    if (fast_path_ && fast_event(p)) continue;
    p = scan_value_end(start, end);
    if (!p) {  // not from the chunker (its scan and this one agree on whole events)
      p = start;
      break;
    }
    size_t at = static_cast<size_t>(start - json);
    parse_one_event(start, static_cast<size_t>(p - start), allocated - at, offset + at - 1);
  }
  if (p < end) {
    size_t at = static_cast<size_t>(p - json);
    return Status::error(name_ + ": byte " + std::to_string(offset + at - 1) +
                         ": invalid JSON between events");
  }
  return Status::ok();
}

void ChromeEventParser::note(ImportProblem kind, uint64_t at, std::string_view what) {
  b_.trace().meta.import_stats.note(kind, at, what);
}

bool ChromeEventParser::try_event(const char* json, size_t len, size_t allocated, uint64_t at,
                                  Problem* problem) {
  od::document doc;
  od::object obj;
  auto err = parser_->parser.iterate(simdjson::padded_string_view(json, len, allocated)).get(doc);
  if (!err) err = doc.get_object().get(obj);
  if (err) {
    *problem = {ImportProblem::kInvalidJson, at,
                std::string("invalid JSON: ") + simdjson::error_message(err)};
    return false;
  }
  event_text_ = json;
  event_len_ = len;
  // [json, json + len) is one balanced value (the chunker's scan): nothing follows it.
  try {
    return parse_event(&obj, at, problem);
  } catch (const simdjson::simdjson_error& e) {
    // Every access checks its error code; this is the net for a conversion that throws.
    *problem = {ImportProblem::kInvalidJson, at, std::string("invalid JSON: ") + e.what()};
    return false;
  }
}

void ChromeEventParser::parse_one_event(const char* json, size_t len, size_t allocated,
                                        uint64_t at) {
  uint32_t mark = b_.args_mark();
  Problem problem;
  if (try_event(json, len, allocated, at, &problem)) return;
  b_.trace().args.resize(mark);
  if (problem.kind == ImportProblem::kMissingField || problem.kind == ImportProblem::kEmptyEvent)
    return note(problem.kind, problem.at, problem.what);  // valid JSON, read to its end
  // Is it JSON at all? Trailing commas and raw control characters are repaired, as Perfetto
  // and Chrome's viewer read them; anything else is skipped, its first bad byte reported.
  JsonRepair r = repair_json_value(std::string_view(json, len));
  if (!r.valid)
    return note(ImportProblem::kInvalidJson, at + r.bad_at,
                std::string("invalid JSON: ") + r.what + ", event skipped");
  if (!r.repaired()) return note(problem.kind, problem.at, problem.what);
  simdjson::padded_string fixed(r.fixed);
  Problem again;
  if (!try_event(fixed.data(), fixed.size(), fixed.size() + simdjson::SIMDJSON_PADDING, at,
                 &again)) {
    b_.trace().args.resize(mark);
    return note(again.kind, at, again.what);
  }
  if (r.trailing_commas)
    note(ImportProblem::kTrailingComma, at + r.first_trailing_comma_at,
         "trailing ',' before a closing bracket (ignored)");
  if (r.control_characters)
    note(ImportProblem::kControlCharacter, at + r.first_control_character_at,
         "raw control character in a string (read as if escaped)");
}
void ChromeEventParser::parse_top_level(const std::string& key, const std::string& raw,
                                        uint64_t offset) {
  TraceMeta& m = b_.trace().meta;
  m.extra.emplace_back(key, raw);
  if (key == "schemaVersion" || key == "deviceProperties" || key == "distributedInfo" ||
      key == "baseTimeNanoseconds")
    kineto_keys_ = true;
  auto fail_at = [&](std::string_view what, uint64_t at) {
    note(ImportProblem::kBadTopLevel, at,
         "top-level key \"" + printable(key) + "\": " + std::string(what) + " (ignored)");
  };
  auto fail = [&](std::string_view what) { fail_at(what, offset); };
  // The repairs made inside events (a trailing comma, a raw control character in a string) are
  // made here too, so that one bad byte does not cost the devices or the rank.
  JsonRepair r = repair_json_value(raw);
  if (!r.valid) {
    m.extra.pop_back();  // not written back by export either
    return fail_at(std::string("invalid JSON: ") + r.what, offset + r.bad_at);
  }
  if (r.trailing_commas)
    note(ImportProblem::kTrailingComma, offset + r.first_trailing_comma_at,
         "top-level key \"" + printable(key) +
             "\": trailing ',' before a closing bracket (ignored)");
  if (r.control_characters)
    note(ImportProblem::kControlCharacter, offset + r.first_control_character_at,
         "top-level key \"" + printable(key) +
             "\": raw control character in a string (read as if escaped)");
  if (r.repaired()) m.extra.back().second = r.fixed;  // export writes the repaired value
  simdjson::padded_string ps(m.extra.back().second);
  od::parser p;
  od::document doc;
  if (p.iterate(ps).get(doc)) {
    m.extra.pop_back();
    return fail("invalid JSON");
  }
  if (key == "schemaVersion") {
    int64_t v;
    if (!doc.get_int64().get(v)) m.schema_version = static_cast<int32_t>(v);
  } else if (key == "displayTimeUnit") {
    std::string_view s;
    if (!doc.get_string().get(s)) m.display_time_unit.assign(s);
  } else if (key == "baseTimeNanoseconds") {
    int64_t v;
    uint64_t u;
    if (!doc.get_int64().get(v))
      m.base_time_ns = v;
    else if (!doc.get_uint64().get(u))
      m.base_time_ns = static_cast<int64_t>(u);
  } else if (key == "distributedInfo") {
    od::object o;
    if (doc.get_object().get(o)) return fail("expected an object");
    for (auto f : o) {
      std::string_view k;
      if (f.unescaped_key().get(k)) return fail("invalid JSON");
      int64_t v;
      if (k == "rank" && !f.value().get_int64().get(v))
        m.rank = static_cast<int32_t>(v);
      else if (k == "world_size" && !f.value().get_int64().get(v))
        m.world_size = static_cast<int32_t>(v);
    }
  } else if (key == "deviceProperties") {
    od::array a;
    if (doc.get_array().get(a)) return fail("expected an array");
    for (auto elem : a) {
      od::object o;
      if (elem.get_object().get(o)) return fail("expected an array of objects");
      DeviceInfo d;
      for (auto f : o) {
        std::string_view k;
        if (f.unescaped_key().get(k)) return fail("invalid JSON");
        od::value v = f.value();
        if (k == "name") {
          std::string_view s;
          if (!v.get_string().get(s)) d.name.assign(s);
          continue;
        }
        int64_t x = 0;
        if (v.get_int64().get(x)) continue;
        if (k == "id")
          d.id = static_cast<int32_t>(x);
        else if (k == "totalGlobalMem")
          d.total_global_mem = x;
        else if (k == "computeMajor")
          d.compute_major = static_cast<int32_t>(x);
        else if (k == "computeMinor")
          d.compute_minor = static_cast<int32_t>(x);
        else if (k == "numSms")
          d.num_sms = static_cast<int32_t>(x);
        else if (k == "maxThreadsPerBlock")
          d.max_threads_per_block = static_cast<int32_t>(x);
        else if (k == "maxThreadsPerMultiprocessor")
          d.max_threads_per_sm = static_cast<int32_t>(x);
        else if (k == "regsPerBlock")
          d.regs_per_block = static_cast<int32_t>(x);
        else if (k == "regsPerMultiprocessor")
          d.regs_per_sm = static_cast<int32_t>(x);
        else if (k == "warpSize")
          d.warp_size = static_cast<int32_t>(x);
        else if (k == "sharedMemPerBlock")
          d.shared_mem_per_block = x;
        else if (k == "sharedMemPerMultiprocessor")
          d.shared_mem_per_sm = x;
      }
      m.devices.push_back(std::move(d));
    }
  }
}

void ChromeEventParser::reserve_for(uint64_t parsed, uint64_t total) {
  if (parsed == 0 || total <= parsed) return;
  const Trace& t = b_.trace();
  double scale = static_cast<double>(total) / static_cast<double>(parsed) * 1.05;
  auto est = [&](size_t n) { return static_cast<size_t>(static_cast<double>(n) * scale) + 16; };
  b_.reserve(est(t.slices.size()), est(t.instants.size()), est(t.args.size()), est(t.flows.size()),
             est(t.memory.size()));
  // kPart logs every flow endpoint as an op (600k per 1M Kineto events): grown by doubling, the
  // copies cost 7% of an import.
  if (mode_ == Mode::kPart) ops_.reserve(est(ops_.size()));
}

Trace ChromeEventParser::finish(bool bare_array) && {
  Trace& t = b_.trace();
  // Begins without an end: close them at the last timestamp seen, marked unfinished.
  int64_t last = 0;
  for (int64_t x : t.slices.ts) last = std::max(last, x);
  for (size_t i = 0; i < t.slices.size(); ++i)
    last = std::max(last, t.slices.ts[i] + t.slices.dur[i]);
  for (int64_t x : t.instants.ts) last = std::max(last, x);
  StringId unfinished = b_.intern("unfinished");
  for (auto& [track, stack] : open_) {
    for (const Open& o : stack) {
      uint32_t mark = b_.args_mark();
      for (uint32_t i = 0; i < o.args.count; ++i) t.args.push_back(t.args[o.args.begin + i]);
      b_.arg_bool(unfinished, true);
      ArgRange args = b_.args_since(mark);
      b_.add_slice(SliceTable::Row{.ts = o.ts,
                                   .dur = std::max<int64_t>(0, last - o.ts),
                                   .track = track,
                                   .name = o.name,
                                   .cat = o.cat,
                                   .args_begin = args.begin,
                                   .args_count = args.count,
                                   .thread_ts = o.tts});
    }
  }
  size_t open_starts = 0;
  for (const auto& [key, start] : flow_starts_) open_starts += start.used ? 0 : 1;
  if (size_t n = open_starts + flow_ends_.size() + unmatched_flow_ends_) {
    t.meta.skipped_events += n;
    t.meta.import_stats.note(ImportProblem::kUnmatchedFlow, UINT64_MAX,
                             "flow endpoints without their partner (skipped)", n);
  }
  if (saw_string_pid_ && !saw_category_ && bare_array)
    t.meta.format = "pytorch-legacy";
  else
    t.meta.format = kineto_keys_ ? "kineto" : "chrome";
  // TraceBuilder::finish binds a v1 'f' without "bp": "e" (FlowTable::dst_next) to the next slice.
  return std::move(b_).finish();
}

}  // namespace mlprof::import
