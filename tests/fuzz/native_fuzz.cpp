// libFuzzer target for the .mlprof reader (src/import/native_reader.cpp): any bytes must give a
// Trace or a one-line error, never a crash, a hang or an allocation the bytes do not justify.
// The first byte of an input picks what the rest is (native_input.h):
//   0: a whole file, as read from disk (header, zstd frame);
//   1: a version-2 payload, 2: a version-1 payload: the harness adds the header and compresses
//      it, so that mutations reach the section and column parsing behind the checksum;
//   3 (and above): Chrome JSON: imported, saved as .mlprof and loaded back, which must give the
//      same Trace (the writer and reader agree). With MLPROF_FUZZ_SEED_DIR set, the payload of
//      each such file is written there as a mode-1 seed (run_fuzz.sh seeds this way).
#include <unistd.h>
#include <zstd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "fuzz_compare.h"
#include "mlprof/import.h"
#include "mlprof/native_format.h"
#include "native_input.h"
#include "trace/formats/native_layout.h"

namespace {

void one_line(const mlprof::Result<mlprof::Trace>& r) {
  if (r) return;
  for (char c : r.error())
    if (c == '\n') __builtin_trap();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Chrome JSON -> .mlprof -> Trace: the same Trace.
void round_trip(std::string_view json) {
  mlprof::ImportOptions o;
  o.threads = 1;
  auto a = mlprof::import_chrome_json_buffer(json, "fuzz.json", o);
  if (!a) return;
  static const std::string path =
      "/tmp/mlprof-native-fuzz-" + std::to_string(::getpid()) + ".mlprof";
  mlprof::Status s = mlprof::save_native(*a, path);
  if (!s) {
    std::fprintf(stderr, "native_fuzz: save: %s\n", s.message().c_str());
    __builtin_trap();
  }
  std::string file = slurp(path);
  std::remove(path.c_str());
  auto b = mlprof::load_native_buffer(file, "fuzz.mlprof");
  if (!b) {
    std::fprintf(stderr, "native_fuzz: a file mlprof wrote does not load: %s\n", b.error().c_str());
    __builtin_trap();
  }
  mlprof::fuzz::Compare{*a, *b, "import / .mlprof round trip", false}.all();
  if (const char* dir = std::getenv("MLPROF_FUZZ_SEED_DIR")) {
    std::string payload(ZSTD_getFrameContentSize(file.data() + 24, file.size() - 24), '\0');
    ZSTD_decompress(payload.data(), payload.size(), file.data() + 24, file.size() - 24);
    static int n = 0;
    std::ofstream(std::string(dir) + "/payload-" + std::to_string(::getpid()) + "-" +
                  std::to_string(n++))
        << '\x01' << payload;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0]) {
    case 0:
      one_line(mlprof::load_native_buffer(rest, "fuzz.mlprof"));
      break;
    case 1:
    case 2:
      one_line(mlprof::load_native_buffer(
          mlprof::fuzz::native_file(std::string_view(reinterpret_cast<const char*>(data), size)),
          "fuzz.mlprof"));
      break;
    default:
      round_trip(rest);
      break;
  }
  return 0;
}
