// libFuzzer target for the JAX/XLA XSpace reader (src/import/xplane_importer.cpp): any bytes
// give a Trace or a one-line error naming the file, never a crash, a hang or a leak; the content
// sniff never throws either.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "format_fuzz_check.h"
#include "import/xplane_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  (void)mlprof::import::looks_like_xspace(in);
  mlprof::fuzz::check_result(mlprof::import::import_xspace(in, "fuzz.xplane.pb"), "fuzz.xplane.pb");
  return 0;
}
