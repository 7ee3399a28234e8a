// Streaming input for importers: a plain file or a gzip stream (ISA-L igzip: 1-3 GB/s here,
// against ~350 MB/s for zlib, FIELD_NOTES.md), read in bounded pieces so a 5 GB trace never
// has to fit in memory at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "mlprof/status.h"

namespace mlprof::import {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to n bytes; returns 0 at the end of the data. On an error (check status()) it may
  // first return the bytes read before the error, then 0.
  virtual size_t read(char* dst, size_t n) = 0;
  const Status& status() const { return status_; }
  // Bytes of the underlying file consumed so far (compressed bytes for gzip).
  virtual uint64_t file_bytes_read() const = 0;
  // Expected total (decompressed) bytes, 0 if unknown: lets importers size tables once.
  uint64_t size_hint() const { return size_hint_; }
  void set_size_hint(uint64_t n) { size_hint_ = n; }

 protected:
  Status status_;
  uint64_t size_hint_ = 0;
};

// Opens `path`; gzip is detected by its magic bytes, not the file name.
// `first_bytes` receives up to 16 bytes of the (decompressed) start for format detection.
Result<std::unique_ptr<ByteSource>> open_byte_source(const std::string& path);

// A source over memory (tests, fuzzing); gzip detected the same way.
std::unique_ptr<ByteSource> memory_byte_source(const char* data, size_t size,
                                               const std::string& name);

}  // namespace mlprof::import
