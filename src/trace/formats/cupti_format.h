// The file the CUPTI injection library writes (gpu.<pid>.<n>.bin in the run directory) and
// `mlprof run` reads (writer in record/cupti, reader in import/capture; the layout sits in trace/,
// the one stage both may use): a FileHeader, then records, each a RecordHeader followed by `size`
// bytes. Times are CLOCK_MONOTONIC ns (CUPTI is given our clock), like the host-memory capture.
#pragma once

#include <cstdint>

namespace mlprof::rawgpu {

inline constexpr uint32_t kFileMagic = 0x474c4d4du;  // "MLMG"
inline constexpr uint32_t kFileVersion = 1;

struct FileHeader {
  uint32_t magic;
  uint32_t version;
  int64_t pid;
};

enum RecordKind : uint32_t {
  kKernel = 1,
  kMemcpy = 2,
  kMemset = 3,
  kApi = 4,
  kDropped = 5,
  kEnd = 6,
  kSync = 7,
  kExternalCorrelation = 8,
  kDescriptor =
      9,         // DescriptorRecord, at the end: the file's descriptor was taken or a write failed
  kBuffers = 10  // BuffersRecord, at the end: activity buffers handed to CUPTI and returned
};

struct RecordHeader {
  uint32_t kind;
  uint32_t size;
};

struct KernelRecord {  // followed by name_len bytes of the (mangled) kernel name
  uint64_t start, end;
  uint32_t device, context, stream, correlation;
  int32_t grid[3], block[3];
  int32_t static_shared, dynamic_shared;
  uint16_t registers;
  uint16_t name_len;
  uint32_t graph_id;  // CUDA graph the kernel was launched from, 0 if none
};

struct MemcpyRecord {
  uint64_t start, end;
  uint32_t device, context, stream, correlation;
  uint64_t bytes;
  uint8_t copy_kind, src_kind, dst_kind, reserved[5];  // CUpti_ActivityMemcpyKind, MemoryKind
};

struct MemsetRecord {
  uint64_t start, end;
  uint32_t device, context, stream, correlation;
  uint64_t bytes;
  uint32_t memory_kind, value;
};

struct ApiRecord {  // followed by name_len bytes ("cudaLaunchKernel")
  uint64_t start, end;
  uint32_t pid, tid, correlation, cbid;
  uint8_t domain;  // 1 runtime, 2 driver
  uint8_t reserved;
  uint16_t name_len;
  uint32_t reserved2;
};

struct SyncRecord {  // CUpti_ActivitySynchronization2
  uint64_t start, end;
  uint32_t type;             // CUpti_ActivitySynchronizationType
  uint32_t context, stream;  // stream kNoStream for context and event syncs
  uint32_t correlation, event, reserved;
};
inline constexpr uint32_t kNoStream = 0xffffffffu;  // CUPTI_SYNCHRONIZATION_INVALID_VALUE

struct ExternalCorrelationRecord {  // CUpti_ActivityExternalCorrelation
  uint64_t external_id;
  uint32_t correlation, external_kind;
};

struct DroppedRecord {
  uint64_t count;
};

// The program closed (or took the number of) the tracer's descriptor `reopened` times: each time
// the file was reopened and appended to (record/capture_fd.h). `write_errno`: the first failed
// write or reopen, after which `lost_bytes` of records were not written.
struct DescriptorRecord {
  uint64_t reopened;
  int64_t write_errno;
  uint64_t lost_bytes;
};

// Activity buffers CUPTI asked the tracer for and gave back. Fewer back than handed out after the
// final flush: another CUPTI client in the process (torch.profiler's Kineto, Nsight) registered
// its own buffer callbacks, CUPTI serving one per process, and was given the tracer's buffers.
struct BuffersRecord {
  uint64_t requested;
  uint64_t completed;
};

}  // namespace mlprof::rawgpu
