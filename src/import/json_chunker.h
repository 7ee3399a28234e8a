// Splits a Chrome trace JSON stream into chunks of whole events without building a DOM.
//
// Perfetto's lesson (STYLE.md): stream, don't slurp. The chunker walks the top-level object (or
// bare array) itself, hands each run of complete `traceEvents` elements (~8 MiB) to the parser
// as one buffer, and hands every other top-level key over as raw JSON text. Peak memory is a few
// chunk buffers plus the Trace, whatever the file's size.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "import/byte_source.h"
#include "mlprof/import_stats.h"
#include "mlprof/status.h"

namespace mlprof::import {

// A chunk buffer: one byte of headroom before data() and simdjson's padding after capacity().
class ChunkBuffer {
 public:
  explicit ChunkBuffer(size_t capacity);
  ~ChunkBuffer();
  ChunkBuffer(const ChunkBuffer&) = delete;
  ChunkBuffer& operator=(const ChunkBuffer&) = delete;
  char* data() { return base_ + 1; }
  size_t capacity() const { return capacity_; }
  // Bytes allocated after data() (capacity + padding), for simdjson's padded views.
  size_t allocated_after_data() const { return allocated_ - 1; }
  void grow(size_t new_capacity, size_t keep_bytes);

 private:
  void allocate(size_t capacity);
  char* base_ = nullptr;
  bool mapped_ = false;  // mmap'd (big buffers) or new[] (small ones)
  size_t capacity_ = 0;
  size_t allocated_ = 0;
};

struct Chunk {
  enum class Kind { kEvents, kTopLevelValue, kEnd, kError };
  Kind kind = Kind::kEnd;
  ChunkBuffer* buffer = nullptr;  // kEvents: the events are data()[begin, end)
  size_t begin = 0, end = 0;
  uint64_t offset = 0;      // absolute byte offset of data()[begin] in the JSON stream
  uint64_t seq = 0;         // position among the chunks (set by the importer)
  std::string key;          // kTopLevelValue: the key ...
  std::string raw;          // ... and its value as JSON text
  Status error;             // kError
  bool bare_array = false;  // set on kEnd: the file was a bare array of events
  ImportStats problems;     // set on kEnd: what the chunker recovered from (truncation...)
};

// Fixed set of reusable buffers shared by the producer (chunker) and the consumer (parser).
class BufferPool {
 public:
  BufferPool(size_t count, size_t capacity);
  ChunkBuffer* acquire();  // blocks until one is free
  void release(ChunkBuffer* b);

 private:
  std::vector<std::unique_ptr<ChunkBuffer>> all_;
  std::vector<ChunkBuffer*> free_;
  std::mutex mu_;
  std::condition_variable cv_;
};

// Bounded single-producer single-consumer queue of chunks.
class ChunkQueue {
 public:
  explicit ChunkQueue(size_t capacity) : capacity_(capacity) {}
  void push(Chunk c);
  Chunk pop();
  void cancel();  // consumer gave up: unblocks the producer, which then stops
  bool cancelled();

 private:
  std::deque<Chunk> q_;
  size_t capacity_;
  bool cancelled_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
};

// Produces chunks from `source` until the end of the document (kEnd) or an error (kError).
// `sink` is called for each chunk; kEvents chunks own their buffer until the consumer releases it.
// Once a whole event has been seen, what cannot be followed (the input ends, or bytes that are
// not the events array's syntax) ends the events there instead of failing: the kEnd chunk then
// counts the problem. Trailing commas and data after the document are counted and skipped.
class JsonChunker {
 public:
  JsonChunker(ByteSource& source, BufferPool& pool, std::string name, uint64_t max_value_bytes);
  // Calls `sink` for each chunk, ending with kEnd or kError. `sink` returns false to stop early.
  void run(const std::function<bool(Chunk&&)>& sink);

 private:
  enum class State {
    kTop,
    kKeyOrEnd,
    kKey,
    kColon,
    kValue,
    kAfterValue,
    kEventsFirst,
    kEventsElement,
    kEventsAfter,
    kDone
  };
  // Makes room and reads more input; false at the end of the input (or on a read error).
  bool refill(const std::function<bool(Chunk&&)>& sink, Status* error);
  bool emit_events(const std::function<bool(Chunk&&)>& sink);
  Status fail(const std::string& what, uint64_t at) const;
  // Ends the document early after a problem (events already seen are kept).
  void end_early(const std::function<bool(Chunk&&)>& sink, ImportProblem kind, uint64_t at,
                 const std::string& what);
  void end_out(const std::function<bool(Chunk&&)>& sink);
  // run's phases. One step of the state machine at pos_: kNext, taken; kMore, it needs more
  // input than the buffer holds; kStop, run is over (the last chunk was sent, or the sink stopped).
  enum class Step { kNext, kMore, kStop };
  Step step(State& st, std::string& key, bool& saw_events,
            const std::function<bool(Chunk&&)>& sink);
  Step step_events(State& st, const std::function<bool(Chunk&&)>& sink);
  // The input ended (or failed to read, `err`) in state `st`: the last chunk.
  void input_ended(State st, bool saw_events, const Status& err,
                   const std::function<bool(Chunk&&)>& sink);
  void error_out(Status s, const std::function<bool(Chunk&&)>& sink);
  // A structural error: fatal before the first whole event, the end of the events after it.
  void stop(const std::string& what, uint64_t at, const std::function<bool(Chunk&&)>& sink);

  ByteSource& src_;
  BufferPool& pool_;
  std::string name_;
  uint64_t max_value_bytes_;
  ChunkBuffer* buf_ = nullptr;
  size_t len_ = 0, pos_ = 0;
  uint64_t buf_offset_ = 0;  // absolute offset of buf_->data()[0]
  size_t ev_begin_ = SIZE_MAX, ev_end_ = 0;
  bool sink_stopped_ = false;
  bool bare_ = false;
  bool saw_event_ = false;  // a whole event was found: from then on, problems are recoverable
  uint64_t comma_at_ = 0;   // the last ',' between events or top-level values
  ImportStats problems_;
};

// Finds the end of the JSON value starting at p (p < end, p at the value's first byte).
// Returns the pointer past it, nullptr if the value continues past `end`.
const char* scan_value_end(const char* p, const char* end);
// p at the '{' of an event in a traceEvents array: returns the end of the last whole event in
// [p, end) of a run of events separated by ',' (nullptr if the first is incomplete). Whatever
// stops the run (the closing ']', a malformed separator) is left to the caller.
const char* scan_events(const char* p, const char* end);
// The same, one value at a time (any CPU; tests compare the two).
const char* scan_events_scalar(const char* p, const char* end);

}  // namespace mlprof::import
