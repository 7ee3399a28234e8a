// native_fuzz's input format, shared with its regression test: the first byte says what the
// rest is. 0: a whole .mlprof file; 1: a version-2 payload, 2: a version-1 payload (a header and
// a zstd frame are added, so that mutations reach the sections behind the checksum); 3 and
// above: Chrome JSON (the round trip through the writer).
#pragma once

#include <zstd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "trace/formats/native_layout.h"
#include "mlprof/native_format.h"

namespace mlprof::fuzz {

inline std::string native_file_of_payload(std::string_view payload, uint32_t version) {
  std::string f(kNativeMagic);
  uint32_t reserved = 0;
  uint64_t size = payload.size();
  f.append(reinterpret_cast<const char*>(&version), 4);
  f.append(reinterpret_cast<const char*>(&reserved), 4);
  f.append(reinterpret_cast<const char*>(&size), 8);
  size_t bound = ZSTD_compressBound(payload.size());
  size_t at = f.size();
  f.resize(at + bound);
  size_t n = ZSTD_compress(f.data() + at, bound, payload.data(), payload.size(), 1);
  if (ZSTD_isError(n)) std::abort();
  f.resize(at + n);
  return f;
}

// The .mlprof bytes of a mode 0-2 input (input non-empty, its first byte below 3).
inline std::string native_file(std::string_view input) {
  std::string_view rest = input.substr(1);
  if (input[0] == 0) return std::string(rest);
  return native_file_of_payload(rest,
                                input[0] == 1 ? native::kNativeVersion : native::kNativeVersionV1);
}

}  // namespace mlprof::fuzz
