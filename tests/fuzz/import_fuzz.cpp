// libFuzzer target for the trace importer: any bytes (JSON, gzip, garbage) must give a Trace or
// a one-line error, never a crash, a hang or unbounded memory. Differential too: the fast path,
// simdjson alone, and parsers on alternate (tiny) chunks must agree on every input.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "mlprof/import.h"

namespace {
mlprof::Result<mlprof::Trace> load(std::string_view in, bool fast, unsigned parsers,
                                   size_t chunk_bytes) {
  mlprof::ImportOptions options;
  options.threads = parsers > 1 ? parsers + 1 : 1;
  options.parse_threads = parsers;
  options.fast_path = fast;
  options.chunk_bytes = chunk_bytes;
  return mlprof::import_chrome_json_buffer(in, "fuzz.json", options);
}

bool same_problems(const mlprof::ImportStats& a, const mlprof::ImportStats& b) {
  if (a.events_read != b.events_read) return false;
  for (size_t k = 0; k < a.kinds.size(); ++k)
    if (a.kinds[k].count != b.kinds[k].count || a.kinds[k].first_offset != b.kinds[k].first_offset)
      return false;
  return true;
}

bool same(const mlprof::Trace& a, const mlprof::Trace& b) {
  return a.slices.size() == b.slices.size() && a.instants.size() == b.instants.size() &&
         a.counters.size() == b.counters.size() && a.flows.size() == b.flows.size() &&
         a.memory.size() == b.memory.size() && a.args.size() == b.args.size() &&
         a.strings.size() == b.strings.size() && a.tracks.size() == b.tracks.size() &&
         a.slices.ts == b.slices.ts && a.slices.dur == b.slices.dur &&
         a.slices.name == b.slices.name && a.meta.skipped_events == b.meta.skipped_events &&
         same_problems(a.meta.import_stats, b.meta.import_stats);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto fast = load(in, true, 1, 0);
  if (!fast) {
    for (char c : fast.error())  // errors are one line
      if (c == '\n') __builtin_trap();
  }
  auto slow = load(in, false, 1, 0);
  // Which error comes first can depend on the buffer size (a corrupt gzip stream may fail on
  // the read that fills a big buffer before a small one reaches bad JSON): the split parse is
  // compared with one parser on the same small chunks.
  auto one_small = load(in, true, 1, 512);
  auto split = load(in, true, 2, 512);
  // A cut or corrupt gzip stream ends the text where the inflater stops, which depends on the
  // buffer size: paths with different chunk sizes are compared on plain text only.
  bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  if (fast.is_ok() != slow.is_ok() || split.is_ok() != one_small.is_ok()) __builtin_trap();
  if (!gzip && fast.is_ok() != split.is_ok()) __builtin_trap();
  if (fast.is_ok() && !same(*fast, *slow)) __builtin_trap();
  if (split.is_ok() && !same(*split, *one_small)) __builtin_trap();
  if (!gzip && fast.is_ok() && !same(*fast, *split)) __builtin_trap();
  if (!split.is_ok() && one_small.error() != split.error()) __builtin_trap();
  // A recovered import never reports more events than the input holds: each needs a '{'.
  if (fast.is_ok() && !gzip) {
    uint64_t objects = 0;
    for (char c : in) objects += c == '{';
    if (fast->meta.import_stats.events_read > objects) __builtin_trap();
  }
  return 0;
}
