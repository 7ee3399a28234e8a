// libFuzzer target for the rocprofv3 JSON reader (src/import/rocprof_importer.cpp): any bytes
// give a Trace or a one-line error naming the file, never a crash, a hang or a leak.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "format_fuzz_check.h"
#include "import/rocprof_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  (void)mlprof::import::looks_like_rocprofv3(in);
  mlprof::fuzz::check_result(mlprof::import::import_rocprofv3(std::string(in), "fuzz.json"),
                             "fuzz.json");
  return 0;
}
