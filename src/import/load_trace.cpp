#include <fcntl.h>
#include <simdjson.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "import/byte_source.h"
#include "import/chrome_event_parser.h"
#include "import/compile_log_importer.h"
#include "import/importer_registry.h"
#include "import/json_chunker.h"
#include "mlprof/import.h"
#include "trace/formats/native_layout.h"

namespace mlprof {

namespace {

// Small: simdjson indexes a chunk with 4 bytes per byte. A little under 2 MiB, so that a buffer
// with its headroom and simdjson's padding is exactly one huge page.
constexpr size_t kChunkBytes = (2u << 20) - 4096;
constexpr size_t kPoolBuffers = 3;
// A single event (or top-level value) above this is treated as hostile input.
constexpr uint64_t kMaxValueBytes = 1ull << 30;

// Replays bytes already read for format detection, then continues with the source.
// Stops at `limit` bytes of (decompressed) input: past it the source ends, and load_trace
// reports the limit, not what the importer made of the cut.
class PeekedSource : public import::ByteSource {
 public:
  PeekedSource(std::unique_ptr<ByteSource> inner, std::string head, uint64_t limit,
               std::atomic<uint64_t>* progress = nullptr)
      : inner_(std::move(inner)), head_(std::move(head)), progress_(progress), limit_(limit) {}
  size_t read(char* dst, size_t n) override {
    if (over_limit_) return 0;
    size_t done = 0;
    if (pos_ < head_.size()) {
      done = std::min(n, head_.size() - pos_);
      std::memcpy(dst, head_.data() + pos_, done);
      pos_ += done;
    }
    if (done < n) done += inner_->read(dst + done, n - done);
    if (!inner_->status()) status_ = inner_->status();
    if (progress_) {  // ImportOptions::progress_bytes: the file bytes consumed since last time
      uint64_t at = inner_->file_bytes_read();
      if (at > reported_) progress_->fetch_add(at - reported_, std::memory_order_relaxed);
      reported_ = std::max(reported_, at);
    }
    delivered_ += done;
    if (delivered_ > limit_) {
      over_limit_ = true;
      return 0;
    }
    return done;
  }
  uint64_t file_bytes_read() const override { return inner_->file_bytes_read(); }
  bool over_limit() const { return over_limit_; }

 private:
  std::unique_ptr<ByteSource> inner_;

 public:
  void copy_hint() { set_size_hint(inner_->size_hint()); }

 private:
  std::string head_;
  std::atomic<uint64_t>* progress_ = nullptr;
  uint64_t reported_ = 0;
  size_t pos_ = 0;
  uint64_t limit_;
  uint64_t delivered_ = 0;
  bool over_limit_ = false;
};

// The chunker leaves headroom before `begin` and padding after the capacity: the run of
// events becomes one JSON array in place.
// ImportOptions::progress_events of the load in progress, null when nobody asked for it.
Status parse_chunk(import::ChromeEventParser& parser, const import::Chunk& c,
                   std::atomic<uint64_t>* progress_events) {
  char* array = c.buffer->data() + c.begin - 1;  // c.begin may be 0: data()[-1] is the headroom
  array[0] = '[';
  array[c.end - c.begin + 1] = ']';
  size_t allocated = c.buffer->allocated_after_data() + 1 - c.begin;
  uint64_t before = parser.events();
  Status s = parser.parse_events(array, c.end - c.begin + 2, allocated, c.offset, c.seq);
  if (progress_events != nullptr)
    progress_events->fetch_add(parser.events() - before, std::memory_order_relaxed);
  return s;
}

// The chunker's problems join the parsers'. A file where nothing could be read is not a trace:
// its first problem is the error, or, undamaged, that it has no events.
Result<Trace> finish_import(Trace t, const std::string& name, uint64_t events,
                            const ImportStats& chunker_problems) {
  ImportStats& stats = t.meta.import_stats;
  stats.merge(chunker_problems);
  stats.events_read = events;
  t.meta.source = name;
  if (events == 0 && stats.damaged()) {
    const ImportStats::Entry& e = stats[stats.first()];
    std::string at =
        e.first_offset == UINT64_MAX ? "" : "byte " + std::to_string(e.first_offset) + ": ";
    return Status::error(name + ": " + at + e.first_what + "; no event could be read");
  }
  // `[]`, `{"traceEvents": []}`: JSON, but nothing to show (Perfetto opens an empty timeline).
  if (events == 0) return Status::error(name + ": no trace events (an empty events array)");
  return t;
}

// One parser: inflate + scan on a worker thread (unless threads == 1), parse + build here.
Result<Trace> import_chrome_serial(import::ByteSource& src, const std::string& name,
                                   size_t chunk_bytes, unsigned threads, bool fast_path,
                                   std::atomic<uint64_t>* progress_events) {
  import::BufferPool pool(kPoolBuffers, chunk_bytes);
  import::ChromeEventParser parser(name);
  parser.set_fast_path(fast_path);
  Status result;
  bool bare = false;
  ImportStats problems;
  bool reserved = false;
  auto consume = [&](import::Chunk&& c) -> bool {
    switch (c.kind) {
      case import::Chunk::Kind::kEvents: {
        result = parse_chunk(parser, c, progress_events);
        pool.release(c.buffer);
        if (!reserved && c.offset + (c.end - c.begin) < src.size_hint()) {
          parser.reserve_for(c.offset + (c.end - c.begin), src.size_hint());
          reserved = true;
        }
        return result.is_ok();
      }
      case import::Chunk::Kind::kTopLevelValue:
        parser.parse_top_level(c.key, c.raw, c.offset);
        return true;
      case import::Chunk::Kind::kEnd:
        bare = c.bare_array;
        problems = std::move(c.problems);
        return false;
      case import::Chunk::Kind::kError:
        result = c.error;
        return false;
    }
    return false;
  };
  import::JsonChunker chunker(src, pool, name, kMaxValueBytes);
  if (threads <= 1) {
    chunker.run([&](import::Chunk&& c) { return consume(std::move(c)); });
  } else {
    // Two stages: inflate + structural scan on a worker, simdjson parse + build here.
    import::ChunkQueue queue(2);
    std::thread producer([&] {
      chunker.run([&](import::Chunk&& c) {
        if (queue.cancelled()) {
          if (c.kind == import::Chunk::Kind::kEvents) pool.release(c.buffer);
          return false;
        }
        queue.push(std::move(c));
        return true;
      });
    });
    for (;;) {
      import::Chunk c = queue.pop();
      bool is_last = c.kind == import::Chunk::Kind::kEnd || c.kind == import::Chunk::Kind::kError;
      if (!consume(std::move(c)) || is_last) break;
    }
    if (!result.is_ok()) {
      // Stop the producer; drain so it is not blocked on a full queue or an empty pool.
      queue.cancel();
    }
    producer.join();
  }
  if (!result.is_ok()) return result;
  uint64_t events = parser.events();
  Trace t = std::move(parser).finish(bare);
  return finish_import(std::move(t), name, events, problems);
}

// The parts' tables merged in chunk order into `merged`, then the Trace finished.
Result<Trace> merge_and_finish(import::ChromeEventParser& merged,
                               std::vector<std::unique_ptr<import::ChromeEventParser>>& parts,
                               const std::string& name, bool bare, const ImportStats& problems,
                               std::chrono::steady_clock::time_point t0) {
  auto t1 = std::chrono::steady_clock::now();
  merged.merge_parts(parts);
  auto t2 = std::chrono::steady_clock::now();
  uint64_t events = merged.events();
  Trace t = std::move(merged).finish(bare);
  if (std::getenv("MLPROF_TIMING")) {
    auto t3 = std::chrono::steady_clock::now();
    auto ms = [](auto a, auto b) {
      return std::chrono::duration<double, std::milli>(b - a).count();
    };
    std::fprintf(stderr, "import: parse %.1f ms, merge %.1f ms, finish %.1f ms\n", ms(t0, t1),
                 ms(t1, t2), ms(t2, t3));
  }
  return finish_import(std::move(t), name, events, problems);
}

// Several parsers on alternate chunks (one per core), inflate + scan on one more thread; the
// parsers' tables are merged in chunk order afterwards (chrome_event_merge.cpp), so the Trace is
// the one import_chrome_serial builds. The first error in file order wins, as in the serial path.
Result<Trace> import_chrome_parallel(import::ByteSource& src, const std::string& name,
                                     size_t chunk_bytes, unsigned parsers, bool fast_path,
                                     std::atomic<uint64_t>* progress_events) {
  using import::Chunk;
  // Buffers: one filling, one queued and one being parsed per parser.
  auto pool_owner = std::make_unique<import::BufferPool>(2 * parsers + 1, chunk_bytes);
  import::BufferPool& pool = *pool_owner;
  import::ChromeEventParser merged(name);
  std::vector<std::unique_ptr<import::ChromeEventParser>> parts;
  std::vector<std::unique_ptr<import::ChunkQueue>> queues;
  for (unsigned i = 0; i < parsers; ++i) {
    parts.push_back(
        std::make_unique<import::ChromeEventParser>(name, import::ChromeEventParser::Mode::kPart));
    parts.back()->set_fast_path(fast_path);
    queues.push_back(std::make_unique<import::ChunkQueue>(1));
  }
  // Sequence number of the earliest chunk that failed: later chunks need not be parsed.
  std::atomic<uint64_t> first_error{UINT64_MAX};
  auto note_error = [&](uint64_t seq) {
    uint64_t cur = first_error.load();
    while (seq < cur && !first_error.compare_exchange_weak(cur, seq)) {
    }
  };
  struct PartResult {
    Status status;
    uint64_t error_seq = UINT64_MAX;
    bool bare = false;
    ImportStats problems;  // the chunker's, from kEnd
  };
  std::vector<PartResult> results(parsers);

  auto t0 = std::chrono::steady_clock::now();
  std::thread producer([&] {
    import::JsonChunker chunker(src, pool, name, kMaxValueBytes);
    uint64_t seq = 0, event_chunks = 0;
    bool ended = false;
    chunker.run([&](Chunk&& c) {
      c.seq = seq++;
      if (c.kind == Chunk::Kind::kEnd || c.kind == Chunk::Kind::kError) {
        for (auto& q : queues) q->push(c);
        ended = true;
        return false;
      }
      if (c.seq > first_error.load()) {  // an earlier chunk failed: stop reading
        if (c.kind == Chunk::Kind::kEvents) pool.release(c.buffer);
        return false;
      }
      size_t target = c.kind == Chunk::Kind::kEvents ? (event_chunks++ % parsers) : 0;
      queues[target]->push(std::move(c));
      return true;
    });
    if (!ended) {
      Chunk end;
      end.kind = Chunk::Kind::kEnd;
      end.seq = seq;
      for (auto& q : queues) q->push(end);
    }
  });

  auto run_part = [&](unsigned i) {
    import::ChromeEventParser& parser = *parts[i];
    PartResult& r = results[i];
    bool reserved = false;
    for (;;) {
      Chunk c = queues[i]->pop();
      bool skip = !r.status.is_ok() || c.seq > first_error.load();
      switch (c.kind) {
        case Chunk::Kind::kEvents: {
          if (!skip) {
            Status s = parse_chunk(parser, c, progress_events);
            if (!s) {
              r.status = s;
              r.error_seq = c.seq;
              note_error(c.seq);
            } else if (!reserved && src.size_hint() > c.end - c.begin) {
              parser.reserve_for(c.end - c.begin, src.size_hint() / parsers);
              reserved = true;
            }
          }
          pool.release(c.buffer);
          break;
        }
        case Chunk::Kind::kTopLevelValue:
          // Only part 0 gets these: `merged` is touched by one thread.
          if (!skip) merged.parse_top_level(c.key, c.raw, c.offset);
          break;
        case Chunk::Kind::kEnd:
          r.bare = c.bare_array;
          if (i == 0) r.problems = std::move(c.problems);
          return;
        case Chunk::Kind::kError:
          if (r.status.is_ok()) {
            r.status = c.error;
            r.error_seq = c.seq;
          }
          return;
      }
    }
  };
  std::vector<std::thread> workers;
  for (unsigned i = 1; i < parsers; ++i) workers.emplace_back(run_part, i);
  run_part(0);
  for (auto& w : workers) w.join();
  producer.join();

  const PartResult* failed = nullptr;
  for (const PartResult& r : results)
    if (!r.status.is_ok() && (!failed || r.error_seq < failed->error_seq)) failed = &r;
  if (failed) return failed->status;
  pool_owner.reset();  // the merge reuses this memory
  return merge_and_finish(merged, parts, name, results[0].bare, results[0].problems, t0);
}

// The split parse on the calling thread: the same parts, chunks and merge as
// import_chrome_parallel, each chunk parsed by its part as the chunker hands it over (no
// threads, so no scheduling: tests and the fuzzer compare it with one parser cheaply).
Result<Trace> import_chrome_split_inline(import::ByteSource& src, const std::string& name,
                                         size_t chunk_bytes, unsigned parsers, bool fast_path,
                                         std::atomic<uint64_t>* progress_events) {
  using import::Chunk;
  import::BufferPool pool(kPoolBuffers, chunk_bytes);
  import::ChromeEventParser merged(name);
  std::vector<std::unique_ptr<import::ChromeEventParser>> parts;
  for (unsigned i = 0; i < parsers; ++i) {
    parts.push_back(
        std::make_unique<import::ChromeEventParser>(name, import::ChromeEventParser::Mode::kPart));
    parts.back()->set_fast_path(fast_path);
  }
  auto t0 = std::chrono::steady_clock::now();
  Status result;
  bool bare = false;
  ImportStats problems;
  uint64_t seq = 0, event_chunks = 0;
  import::JsonChunker chunker(src, pool, name, kMaxValueBytes);
  chunker.run([&](Chunk&& c) -> bool {
    c.seq = seq++;
    switch (c.kind) {
      case Chunk::Kind::kEvents: {
        result = parse_chunk(*parts[event_chunks++ % parsers], c, progress_events);
        pool.release(c.buffer);
        return result.is_ok();
      }
      case Chunk::Kind::kTopLevelValue:
        merged.parse_top_level(c.key, c.raw, c.offset);
        return true;
      case Chunk::Kind::kEnd:
        bare = c.bare_array;
        problems = std::move(c.problems);
        return false;
      case Chunk::Kind::kError:
        result = c.error;
        return false;
    }
    return false;
  });
  if (!result.is_ok()) return result;
  return merge_and_finish(merged, parts, name, bare, problems, t0);
}

}  // namespace

namespace import {

std::string mib(uint64_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

Status over_limit_error(const std::string& path, const std::string& what, uint64_t limit) {
  return Status::error(StatusCode::kTooLarge,
                       path + ": " + what + " exceeds the input limit of " + mib(limit) +
                           " (MLPROF_MAX_INPUT_MB=N raises it: docs/hardening.md)");
}

Result<Trace> import_chrome_stream(ByteSource& src, const std::string& name,
                                   const ImportOptions& options) {
  size_t chunk_bytes = options.chunk_bytes ? options.chunk_bytes : kChunkBytes;
  unsigned threads = options.threads ? options.threads : std::thread::hardware_concurrency();
  unsigned parsers = options.parse_threads;
  if (const char* env = std::getenv("MLPROF_PARSE_THREADS"); parsers == 0 && env)
    parsers = static_cast<unsigned>(std::strtoul(env, nullptr, 10));  // benchmarks, diagnosis
  if (parsers == 0) {
    // Splitting pays off once there are several chunks to share.
    uint64_t hint = src.size_hint();
    parsers = threads >= 2 && (hint == 0 || hint >= 4 * chunk_bytes) ? threads : 1;
  }
  bool fast_path = options.fast_path;
  if (const char* env = std::getenv("MLPROF_SIMDJSON_ONLY"); env && *env == '1') fast_path = false;
  std::atomic<uint64_t>* events = options.progress_events;
  Result<Trace> t =
      parsers <= 1 ? import_chrome_serial(src, name, chunk_bytes, threads, fast_path, events)
      : threads <= 1
          ? import_chrome_split_inline(src, name, chunk_bytes, parsers, fast_path, events)
          : import_chrome_parallel(src, name, chunk_bytes, parsers, fast_path, events);
  if (t && options.strict) {
    MLPROF_RETURN_IF_ERROR(import::strict_error(*t));
  }
  return t;
}

}  // namespace import

namespace {

// The first `n` bytes of the file as stored (empty when it cannot be opened: the byte source
// opened next says why).
std::string raw_head(const std::string& path, size_t n) {
  std::string head(n, '\0');
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ssize_t got = fd >= 0 ? ::read(fd, head.data(), n) : 0;
  if (fd >= 0) ::close(fd);
  head.resize(got > 0 ? static_cast<size_t>(got) : 0);
  return head;
}

// The registry's rows (import/importer_registry.cpp) tried in order on the file's first bytes;
// the first that claims it reads it.
Result<Trace> load_by_content(const std::string& path, std::unique_ptr<import::ByteSource> src,
                              std::string raw, uint64_t limit, const ImportOptions& options) {
  // The start of the (decompressed) content.
  std::string text(4096, '\0');
  size_t got = 0;
  while (got < text.size()) {
    size_t n = src->read(text.data() + got, text.size() - got);
    if (n == 0) break;
    got += n;
  }
  text.resize(got);
  if (!src->status()) return src->status();
  import::InputHead head;
  head.path = path;
  head.raw = raw;
  head.compressed = raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f &&
                    static_cast<unsigned char>(raw[1]) == 0x8b;
  head.text = text;
  const import::Importer* chosen = nullptr;
  for (const import::Importer& row : import::importers())
    if (row.sniff && row.sniff(head)) {
      chosen = &row;
      break;
    }
  if (!chosen) {
    size_t i = text.find_first_not_of(" \t\r\n");
    if (i == std::string::npos && got < 4096)
      return Status::error(path + (got ? ": only whitespace, expected a JSON trace"
                                       : ": empty file, expected a JSON trace"));
    chosen = &import::importers().back();  // the fallback
  }
  PeekedSource peeked(std::move(src), text, limit, options.progress_bytes);
  peeked.copy_hint();
  import::OpenedInput in{path, peeked, head, options, limit};
  Result<Trace> t = chosen->load(in);
  // Past the limit the content was cut: say so, not what the reader made of the cut.
  if (peeked.over_limit()) return import::over_limit_error(path, "the decompressed trace", limit);
  return t;
}

}  // namespace

uint64_t max_input_bytes(const ImportOptions& options) {
  if (options.max_input_bytes) return options.max_input_bytes;
  if (const char* env = std::getenv("MLPROF_MAX_INPUT_MB"); env && *env) {
    char* end = nullptr;
    unsigned long long mb = std::strtoull(env, &end, 10);
    if (end && *end == '\0' && mb > 0 && mb < (1ull << 44)) return mb << 20;
  }
  // The machine's memory (or the container's, when smaller): a trace takes about 0.7 bytes of
  // memory per byte of JSON, so a bigger input could only end in the OOM killer.
  uint64_t limit = static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) *
                   static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  if (FILE* f = std::fopen("/sys/fs/cgroup/memory.max", "r")) {
    unsigned long long cg = 0;
    if (std::fscanf(f, "%llu", &cg) == 1 && cg > 0) limit = std::min<uint64_t>(limit, cg);
    std::fclose(f);
  }
  return std::max<uint64_t>(limit, uint64_t{1} << 30);
}

Result<Trace> load_trace(const std::string& path, const ImportOptions& options) {
  const uint64_t limit = max_input_bytes(options);
  std::string raw = raw_head(path, 4096);
  const bool native_magic = raw.starts_with(native::kMagic.substr(0, 6));
  // A file named .mlprof that is not one: say so first (it may still be JSON, read by content).
  auto named_native = [&](Result<Trace> r) -> Result<Trace> {
    if (r || native_magic || !path.ends_with(".mlprof")) return r;
    std::string why = r.error();
    if (why.starts_with(path + ": ")) why.erase(0, path.size() + 2);
    return Status::error(
        r.code(),
        path + ": not a .mlprof file (no .mlprof header), nor a JSON trace (" + why + ")");
  };
  auto opened = import::open_byte_source(path);
  MLPROF_RETURN_IF_ERROR(opened);
  return named_native(
      load_by_content(path, std::move(opened.value()), std::move(raw), limit, options));
}

Result<Trace> import_chrome_json_buffer(std::string_view json, const std::string& name,
                                        const ImportOptions& options) {
  auto src = import::memory_byte_source(json.data(), json.size(), name);
  if (!src->status()) return src->status();
  return import::import_chrome_stream(*src, name, options);
}

}  // namespace mlprof
