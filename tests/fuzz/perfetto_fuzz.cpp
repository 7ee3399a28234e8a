// libFuzzer target for the Perfetto protobuf reader (src/import/perfetto_importer.cpp) and, by
// round trip, the writer (src/export/perfetto_export.cpp): any bytes give a Trace or a one-line
// error naming the file, never a crash, a hang or a leak; and a trace read from a fuzzed file,
// written out again, reads back with as many slices, bound flows and counters (the writer never
// writes what the reader refuses or loses).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>

#include "format_fuzz_check.h"
#include "import/perfetto_importer.h"
#include "mlprof/perfetto_export.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  (void)mlprof::import::looks_like_perfetto(in);
  auto t = mlprof::import::import_perfetto(in, "fuzz.pftrace");
  mlprof::fuzz::check_result(t, "fuzz.pftrace");
  if (!t) return 0;
  // Nothing the writer can write (an unbound flow alone): the file it writes holds no events.
  const mlprof::Trace& in_trace = t.value();
  if (in_trace.slices.size() + in_trace.instants.size() + in_trace.counters.size() +
          in_trace.memory.size() ==
      0)
    return 0;
  std::ostringstream out;
  mlprof::write_perfetto(t.value(), out);
  auto back = mlprof::import::import_perfetto(out.str(), "again.pftrace");
  mlprof::fuzz::check_result(back, "again.pftrace");
  if (!back) {
    std::fprintf(stderr, "perfetto_fuzz: the written file does not read back: %s\n",
                 back.error().c_str());
    __builtin_trap();
  }
  const mlprof::Trace &a = t.value(), &b = back.value();
  // Flows not bound to a slice at both ends are not written (export counts them).
  auto bound = [](const mlprof::Trace& tr) {
    size_t n = 0;
    for (size_t i = 0; i < tr.flows.size(); ++i)
      n += tr.flows.src_slice[i] >= 0 && tr.flows.dst_slice[i] >= 0;
    return n;
  };
  if (a.slices.size() != b.slices.size() || bound(a) != bound(b) ||
      a.counters.size() != b.counters.size()) {
    std::fprintf(stderr,
                 "perfetto_fuzz: round trip: slices %zu -> %zu, flows %zu -> %zu, "
                 "counters %zu -> %zu\n",
                 a.slices.size(), b.slices.size(), bound(a), bound(b), a.counters.size(),
                 b.counters.size());
    __builtin_trap();
  }
  return 0;
}
