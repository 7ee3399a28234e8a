// libFuzzer target for the CUDA memory-snapshot readers: the pickle VM (src/import/
// pickle_reader.cpp) and its JSON twin (json_value_reader.cpp) behind memory_snapshot_importer.cpp.
// Any bytes must give a snapshot or a one-line error naming the input, never a crash, a hang, a
// stack overflow (nesting: issue 32 item 2) or a leak (a pickle cycle would never be freed:
// LeakSanitizer). The reader only: the snapshot's Trace and analysis are not fuzzed here.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mlprof/memory_snapshot.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto snap = mlprof::load_memory_snapshot_buffer(in, "fuzz.pickle");
  if (!snap) {
    const std::string& e = snap.error();
    if (e.rfind("fuzz.pickle", 0) != 0 || e.find('\n') != std::string::npos) __builtin_trap();
    return 0;
  }
  return 0;
}
