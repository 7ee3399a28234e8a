// The per-process file the LD_PRELOAD malloc tracker writes (mem.<pid>.<n>.bin in the run
// directory) and `mlprof run` reads after the child exits. Compact binary, native endianness:
// the writer and the reader are always the same machine. The writer is in record/ (preload), the
// reader in import/ (capture): the layout sits in trace/, the one stage both may use.
//
// The file is a sequence of chunks: ChunkHeader followed by `size` payload bytes.
//   kFile    FileHeader, then the executable path (header.path_len bytes)
//   kEvents  EventsHeader, then header.words uint64 words of events (encoding below)
//   kStack   StackHeader, then header.depth uint64 return addresses (innermost first)
//   kMaps    the text of /proc/self/maps (written at fork in the child and at exit)
//   kExit    ExitRecord (absent when the process was killed or exec'd)
//
// mem.<pid>.<k>.status, beside the file (or alone, when the process could not create its file):
// a symbolic link whose target text is the tracker's status. Written only when something went
// wrong, when it happens and again at exit: a symlink needs no descriptor (a process at its
// RLIMIT_NOFILE can make one) and, this short, no data block (nor a full disk stops it). Its
// text, fields separated by one space:
//   v1 e=ERRNO s=STAGE a=ALLOCS f=FREES r=REOPENS x=EXITED[ p=PPID EXE]
//   e  the errno of the first failure (0: none); s: where it happened: o = creating the file,
//      w = writing it (ENOSPC, EFBIG, ...), r = reopening it after the program closed it
//   a, f  allocations and frees counted but not recorded after that failure
//   r  times the program closed (or took the number of) the tracker's descriptor; each time the
//      file was reopened and appended to, nothing lost
//   x  1 once the process reached its exit handlers (the counts are final), else 0
//   p, EXE  only without a file (s=o): the parent's pid and the executable (the rest of the text)
//
// Event words: the top two bits of the first word give the kind, the low 62 bits the TSC.
//   kAlloc     [tsc][addr][size | stack << 40]          size < 2^40 and stack < 2^24
//   kAllocWide [tsc][addr][size][stack]
//   kFree      [tsc][addr]
#pragma once

#include <cstdint>

namespace mlprof::rawmem {

inline constexpr uint32_t kFileMagic = 0x4d4d4c4du;  // "MLMM"
inline constexpr uint32_t kFileVersion = 1;

enum ChunkKind : uint32_t { kFile = 1, kEvents = 2, kStack = 3, kMaps = 4, kExit = 5 };

struct ChunkHeader {
  uint32_t kind;
  uint32_t size;  // payload bytes after this header
};

struct FileHeader {
  uint32_t magic;
  uint32_t version;
  int64_t pid;
  int64_t ppid;
  uint64_t tsc;  // a (tsc, monotonic ns) pair for converting event times
  int64_t mono_ns;
  uint32_t path_len;
  uint32_t reserved;
};

struct EventsHeader {
  int64_t tid;
  uint64_t tsc;  // clock pair taken at flush time: more points for the tsc -> ns fit
  int64_t mono_ns;
  uint32_t words;
  uint32_t events;  // events in the chunk, so the reader can size its columns (0: not counted)
};

struct StackHeader {
  uint32_t id;
  uint32_t depth;
};

struct ExitRecord {
  uint64_t tsc;
  int64_t mono_ns;
  uint64_t dropped;  // events not recorded (no buffer memory, or past MLPROF_MAX_RAW_BYTES)
  uint64_t unique_stacks;
};

enum EventKind : uint64_t { kAlloc = 1, kFree = 2, kAllocWide = 3 };
inline constexpr int kKindShift = 62;
inline constexpr uint64_t kTscMask = (uint64_t{1} << kKindShift) - 1;
inline constexpr int kStackShift = 40;
inline constexpr uint64_t kSizeMask = (uint64_t{1} << kStackShift) - 1;
inline constexpr uint64_t kMaxPackedStack = (uint64_t{1} << (64 - kStackShift)) - 1;

inline constexpr const char* kStatusVersion = "v1";

// Environment variables `mlprof run` passes to the child.
inline constexpr const char* kEnvRunDir = "MLPROF_RUN_DIR";      // where files go; unset = off
inline constexpr const char* kEnvMaxDepth = "MLPROF_MAX_DEPTH";  // frames per stack (default 48)
// Bytes of events one process's file may hold (unset or 0: no limit); past it events are counted
// in ExitRecord::dropped instead of written, so a long run cannot fill the disk.
inline constexpr const char* kEnvMaxRawBytes = "MLPROF_MAX_RAW_BYTES";

}  // namespace mlprof::rawmem
