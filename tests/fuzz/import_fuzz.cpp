// libFuzzer target for the trace importer: any bytes (JSON, gzip, garbage) must give a Trace or
// a one-line error, never a crash, a hang or unbounded memory.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "mlprof/import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mlprof::ImportOptions options;
  options.threads = 1;  // deterministic for the fuzzer
  auto r = mlprof::import_chrome_json_buffer(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json", options);
  if (!r) {
    // Errors are one line.
    for (char c : r.error())
      if (c == '\n') __builtin_trap();
  }
  return 0;
}
