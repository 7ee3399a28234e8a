// libFuzzer target for the trace importer: any bytes (JSON, gzip, garbage) must give a Trace or
// a one-line error, never a crash, a hang or unbounded memory. Differential too: every way of
// parsing must give the same Trace, the same warnings and the same error, damaged input included:
//   - the fast path and simdjson alone;
//   - one parser on one chunk and two or three parsers splitting tiny chunks (neither the chunk
//     boundaries nor the merge may change what is read), taking turns on this thread, and (one
//     input in 16) in the threaded pipeline;
// and a recovered import never reports more events than a clean prefix of the input holds: for
// an input that imports cleanly with N events, every cut of it imports (or fails as not a trace)
// with at most N events, and a longer cut never with fewer events than a shorter one.
//
// Inputs are small (run_fuzz.sh: -max_len=4096), so each is parsed every way on every run.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "fuzz_compare.h"
#include "import/json_chunker.h"
#include "mlprof/import.h"

namespace {

using mlprof::Result;
using mlprof::Trace;

// `threads`: 1 = everything on this thread (several parsers then take turns); more = the
// threaded pipeline (a producer and the parsers).
// Chunks of 8 KiB hold a whole input (-max_len=4096): the production default (2 MiB, huge
// pages) would cost more to map and fault in than the parse itself.
constexpr size_t kWhole = 8 << 10;

mlprof::Result<Trace> load(std::string_view in, bool fast, unsigned parsers, size_t chunk_bytes,
                           unsigned threads = 1) {
  mlprof::ImportOptions options;
  options.threads = threads;
  options.parse_threads = parsers;
  options.fast_path = fast;
  options.chunk_bytes = chunk_bytes;
  return mlprof::import_chrome_json_buffer(in, "fuzz.json", options);
}

// Whether `same` would pass (without aborting).
bool same_result(const Result<Trace>& a, const Result<Trace>& b) {
  if (a.is_ok() != b.is_ok()) return false;
  if (!a.is_ok()) return a.error() == b.error();
  try {
    mlprof::fuzz::Compare{a.value(), b.value(), "", true, true}.all();
  } catch (const mlprof::fuzz::Difference&) {
    return false;
  }
  return true;
}

void same(const Result<Trace>& a, const Result<Trace>& b, const char* ways) {
  if (a.is_ok() != b.is_ok())
    mlprof::fuzz::differ(ways, std::string("one failed: ") + (a.is_ok() ? b.error() : a.error()));
  if (!a.is_ok()) {
    if (a.error() != b.error())
      mlprof::fuzz::differ(ways, "errors: " + a.error() + " | " + b.error());
    return;
  }
  mlprof::fuzz::Compare{a.value(), b.value(), ways}.all();
}

uint64_t hash(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Read without damage (events that do not pair up, such as a flow end alone, are not damage).
bool clean(const Result<Trace>& t) { return t.is_ok() && !t->meta.import_stats.damaged(); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  uint64_t h = hash(in);
  auto fast = load(in, true, 1, kWhole);
  if (!fast) {
    for (char c : fast.error())  // errors are one line
      if (c == '\n') __builtin_trap();
  }
  same(fast, load(in, false, 1, kWhole), "fast path / simdjson only");
  // The chunker's 64-byte scan and the one-value scan must agree on where events end.
  if (size && data[0] == '{') {
    const char* p = in.data();
    if (mlprof::import::scan_events(p, p + size) != mlprof::import::scan_events_scalar(p, p + size))
      mlprof::fuzz::differ("scan_events / scan_events_scalar", "event ends");
  }
  // Tiny chunks, so that a small input still spans many of them, split among two or three
  // parsers: neither the chunk boundaries (a gzip stream's text included: its inflater works in
  // fixed units) nor the split and its merge may change what is read. One comparison checks
  // both; on a difference, one parser on the same tiny chunks says which.
  static constexpr size_t kChunks[] = {16, 37, 64, 150, 600};
  size_t chunk = kChunks[h % 5];
  unsigned parsers = (h >> 8) % 4 == 0 ? 3 : 2;
  auto split = load(in, true, parsers, chunk);
  if (!same_result(fast, split)) {
    auto one_small = load(in, true, 1, chunk);
    same(fast, one_small, "one chunk / tiny chunks (one parser)");
    same(one_small, split, "one parser / split parse (tiny chunks)");
  }
  // The threaded pipeline (thread starts and hand-offs cost far more than a small parse) on
  // one input in 16; the parsers above take turns on this thread.
  if ((h >> 12) % 16 == 0)
    same(fast, load(in, true, parsers, chunk, parsers + 1), "one parser / threaded split");

  // Recovered imports: never more events than the input holds (each needs a '{'); for a clean
  // input, every cut holds at most its events, and more of the input never fewer (checked on
  // one clean input in 8: three more imports).
  bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  if (fast.is_ok() && !gzip) {
    uint64_t objects = 0;
    for (char c : in) objects += c == '{';
    if (fast->meta.import_stats.events_read > objects) __builtin_trap();
  }
  if (clean(fast) && size > 1 && (h >> 4) % 8 == 0) {  // one clean input in 8
    uint64_t all = fast->meta.import_stats.events_read;
    size_t cut1 = 1 + (h >> 16) % (size - 1), cut2 = 1 + (h >> 40) % (size - 1);
    if (cut1 > cut2) std::swap(cut1, cut2);
    auto a = load(in.substr(0, cut1), true, 1, kWhole);
    auto b = load(in.substr(0, cut2), true, 1, kWhole);
    uint64_t ea = a ? a->meta.import_stats.events_read : 0;
    uint64_t eb = b ? b->meta.import_stats.events_read : 0;
    if (ea > all || eb > all || ea > eb) {
      std::fprintf(stderr,
                   "import_fuzz: cuts at %zu and %zu of %zu read %llu and %llu of %llu events\n",
                   cut1, cut2, size, static_cast<unsigned long long>(ea),
                   static_cast<unsigned long long>(eb), static_cast<unsigned long long>(all));
      __builtin_trap();
    }
    // A cut is damaged input: the split parse reads it as one parser does.
    same(a, load(in.substr(0, cut1), true, parsers, chunk), "cut: one parser / split parse");
  }
  return 0;
}
