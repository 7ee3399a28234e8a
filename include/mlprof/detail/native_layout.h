// The .mlprof file layout, shared by the writer (src/render/native_writer.cpp) and the reader
// (src/import/native_reader.cpp).
//
//   bytes 0..7    kNativeMagic "MLPROF\x01\n"
//   bytes 8..11   u32 format version (kNativeVersion)
//   bytes 12..15  u32 reserved (0)
//   bytes 16..23  u64 payload size before compression
//   bytes 24..    one zstd frame (with its content checksum) holding the payload
//
// The payload is the Trace's tables in a fixed order, each section opened by a 4-byte tag.
// Little-endian. A column is a u64 count followed by the raw values; a string is a u32 length
// followed by its bytes. Computed columns (depth, parent, self, bound flow/memory slices) are
// not stored: TraceBuilder::finish() recomputes them on load.
#pragma once

#include <cstdint>

namespace mlprof::native {

inline constexpr uint32_t kNativeVersion = 1;
inline constexpr uint64_t kHeaderBytes = 24;

constexpr uint32_t tag(const char (&s)[5]) {
  return uint32_t(uint8_t(s[0])) | uint32_t(uint8_t(s[1])) << 8 | uint32_t(uint8_t(s[2])) << 16 |
         uint32_t(uint8_t(s[3])) << 24;
}

inline constexpr uint32_t kTagStrings = tag("STRS");
inline constexpr uint32_t kTagProcesses = tag("PROC");
inline constexpr uint32_t kTagTracks = tag("TRAK");
inline constexpr uint32_t kTagArgs = tag("ARGS");
inline constexpr uint32_t kTagSlices = tag("SLIC");
inline constexpr uint32_t kTagInstants = tag("INST");
inline constexpr uint32_t kTagCounterSeries = tag("CSER");
inline constexpr uint32_t kTagCounters = tag("CNTR");
inline constexpr uint32_t kTagFlows = tag("FLOW");
inline constexpr uint32_t kTagMemory = tag("MEMO");
inline constexpr uint32_t kTagStacks = tag("STAK");
inline constexpr uint32_t kTagMeta = tag("META");
inline constexpr uint32_t kTagEnd = tag("END!");

}  // namespace mlprof::native
