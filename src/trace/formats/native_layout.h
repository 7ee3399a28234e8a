// The .mlprof file layout, shared by the writer (src/export/native_writer.cpp) and the reader
// (src/import/native_reader.cpp).
//
//   bytes 0..7    kNativeMagic "MLPROF\x01\n"
//   bytes 8..11   u32 format version (kNativeVersion)
//   bytes 12..15  u32 reserved (0)
//   bytes 16..23  u64 payload size before compression
//   bytes 24..    one zstd frame (with its content checksum) holding the payload
//
// The payload is a sequence of sections, each opened by a 4-byte tag. Little-endian; a string
// is a u32 length followed by its bytes.
//
// Version 2 (written): STRS, PROC, TRAK, ARGS, CSER, then one TABL section per event table
// (Trace::for_each_table), then META and END!. A TABL section names its table and columns, so a
// column added to the schema (mlprof/trace.h) needs no change here, and files written before it
// existed still load (the column gets its declared default):
//   str table name, u64 rows, u32 columns, then per column:
//   str column name, u8 type code ('i' signed, 'u' unsigned, 'f' float), u8 value bytes,
//   rows x value bytes of raw values.
// Only input columns are stored; computed ones (depth, parent, self, bound flow/memory slices)
// are recomputed by TraceBuilder::finish() on load.
//
// Version 1 (still read): the same records, then each table's columns in the fixed order of
// kV1Columns below, each a u64 count followed by the raw values, tables in the order SLIC, INST,
// CSER (counter series), CNTR, FLOW, MEMO, STAK (stack rows, then their frames).
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "mlprof/trace.h"

namespace mlprof::native {

// The first bytes of every .mlprof file (kNativeMagic in mlprof/native_format.h, the public name).
inline constexpr std::string_view kMagic = "MLPROF\x01\n";
inline constexpr uint32_t kNativeVersion = 2;
inline constexpr uint32_t kNativeVersionV1 = 1;
inline constexpr uint64_t kHeaderBytes = 24;

constexpr uint32_t tag(const char (&s)[5]) {
  return uint32_t(uint8_t(s[0])) | uint32_t(uint8_t(s[1])) << 8 | uint32_t(uint8_t(s[2])) << 16 |
         uint32_t(uint8_t(s[3])) << 24;
}

inline constexpr uint32_t kTagStrings = tag("STRS");
inline constexpr uint32_t kTagProcesses = tag("PROC");
inline constexpr uint32_t kTagTracks = tag("TRAK");
inline constexpr uint32_t kTagArgs = tag("ARGS");
inline constexpr uint32_t kTagCounterSeries = tag("CSER");
inline constexpr uint32_t kTagTable = tag("TABL");
inline constexpr uint32_t kTagMeta = tag("META");
inline constexpr uint32_t kTagEnd = tag("END!");
// Version 1 only: one tag per table.
inline constexpr uint32_t kTagSlices = tag("SLIC");
inline constexpr uint32_t kTagInstants = tag("INST");
inline constexpr uint32_t kTagCounters = tag("CNTR");
inline constexpr uint32_t kTagFlows = tag("FLOW");
inline constexpr uint32_t kTagMemory = tag("MEMO");
inline constexpr uint32_t kTagStacks = tag("STAK");

template <typename T>
constexpr uint8_t type_code() {
  static_assert(std::is_arithmetic_v<T>, "columns hold numbers");
  if constexpr (std::is_floating_point_v<T>) return 'f';
  if constexpr (std::is_signed_v<T>) return 'i';
  return 'u';
}

// Version 1's columns, in file order: frozen (version 1 files never change). Columns added to
// the schema since are absent from these files and get their defaults.
struct V1Table {
  uint32_t tag;
  std::string_view table;
  std::string_view columns[9];  // empty entries end the list
};
inline constexpr V1Table kV1Columns[] = {
    {kTagSlices, "slices", {"ts", "dur", "track", "name", "cat", "args_begin", "args_count"}},
    {kTagInstants, "instants", {"ts", "track", "name", "cat", "args_begin", "args_count", "scope"}},
    {kTagCounters, "counters", {"ts", "series", "value"}},
    {kTagFlows, "flows", {"id", "cat", "src_ts", "dst_ts", "src_track", "dst_track"}},
    {kTagMemory,
     "memory",
     {"ts", "track", "addr", "bytes", "device_type", "device_id", "total_allocated",
      "total_reserved", "stack"}},
    {kTagStacks, "stacks", {"frames_begin", "frames_count"}},
    {0, "stack_frames", {"name"}},  // inside STAK, after the stack rows
};

}  // namespace mlprof::native
