#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <simdjson.h>
#include <thread>

#include "import/byte_source.h"
#include "import/chrome_event_parser.h"
#include "import/json_chunker.h"
#include "import/memory_timeline_importer.h"
#include "mlprof/import.h"
#include "mlprof/native_format.h"

namespace mlprof {

namespace {

constexpr size_t kChunkBytes = 2u << 20;  // small: simdjson indexes a chunk with 4 bytes per byte
constexpr size_t kPoolBuffers = 3;
// A single event (or top-level value) above this is treated as hostile input.
constexpr uint64_t kMaxValueBytes = 1ull << 30;

// Replays bytes already read for format detection, then continues with the source.
class PeekedSource : public import::ByteSource {
 public:
  PeekedSource(std::unique_ptr<ByteSource> inner, std::string head)
      : inner_(std::move(inner)), head_(std::move(head)) {}
  size_t read(char* dst, size_t n) override {
    size_t done = 0;
    if (pos_ < head_.size()) {
      done = std::min(n, head_.size() - pos_);
      std::memcpy(dst, head_.data() + pos_, done);
      pos_ += done;
    }
    if (done < n) done += inner_->read(dst + done, n - done);
    if (!inner_->status()) status_ = inner_->status();
    return done;
  }
  uint64_t file_bytes_read() const override { return inner_->file_bytes_read(); }

 private:
  std::unique_ptr<ByteSource> inner_;
 public:
  void copy_hint() { set_size_hint(inner_->size_hint()); }
 private:
  std::string head_;
  size_t pos_ = 0;
};

Result<Trace> import_chrome_stream(import::ByteSource& src, const std::string& name,
                                   const ImportOptions& options) {
  import::BufferPool pool(kPoolBuffers, kChunkBytes);
  import::ChromeEventParser parser(name);
  Status result;
  bool bare = false;
  bool reserved = false;
  auto consume = [&](import::Chunk&& c) -> bool {
    switch (c.kind) {
      case import::Chunk::Kind::kEvents: {
        char* d = c.buffer->data();
        // The chunker guarantees headroom before `begin` and padding after the capacity:
        // make the run of events one JSON array in place.
        d[c.begin - 1] = '[';
        d[c.end] = ']';
        size_t allocated = c.buffer->allocated_after_data() - (c.begin - 1);
        result = parser.parse_events(d + c.begin - 1, c.end - c.begin + 2, allocated, c.offset);
        pool.release(c.buffer);
        if (!reserved && c.offset + (c.end - c.begin) < src.size_hint()) {
          parser.reserve_for(c.offset + (c.end - c.begin), src.size_hint());
          reserved = true;
        }
        return result.is_ok();
      }
      case import::Chunk::Kind::kTopLevelValue:
        result = parser.parse_top_level(c.key, c.raw);
        return result.is_ok();
      case import::Chunk::Kind::kEnd:
        bare = c.bare_array;
        return false;
      case import::Chunk::Kind::kError:
        result = c.error;
        return false;
    }
    return false;
  };
  import::JsonChunker chunker(src, pool, name, kMaxValueBytes);
  unsigned threads = options.threads ? options.threads : std::thread::hardware_concurrency();
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
  Trace t = std::move(parser).finish(bare);
  t.meta.source = name;
  return t;
}

}  // namespace

Result<Trace> load_trace(const std::string& path, const ImportOptions& options) {
  // The native format is recognised by its raw magic bytes.
  {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      char magic[8] = {};
      ssize_t n = ::read(fd, magic, sizeof magic);
      ::close(fd);
      if (n == static_cast<ssize_t>(kNativeMagic.size()) &&
          std::string_view(magic, kNativeMagic.size()) == kNativeMagic)
        return load_native(path);
    }
  }
  auto opened = import::open_byte_source(path);
  if (!opened) return opened.status();
  std::unique_ptr<import::ByteSource> src = std::move(opened.value());
  // Peek at the start of the (decompressed) text to choose the JSON flavour.
  std::string head(4096, '\0');
  size_t got = 0;
  while (got < head.size()) {
    size_t n = src->read(head.data() + got, head.size() - got);
    if (n == 0) break;
    got += n;
  }
  if (!src->status()) return src->status();
  head.resize(got);
  size_t i = 0;
  while (i < head.size() && std::strchr(" \t\r\n", head[i])) ++i;
  if (i == head.size() && got < 4096)
    return Status::error(path + (got ? ": only whitespace, expected a JSON trace"
                                     : ": empty file, expected a JSON trace"));
  size_t j = i + 1;
  while (j < head.size() && std::strchr(" \t\r\n", head[j])) ++j;
  bool nested_list = i < head.size() && head[i] == '[' && j < head.size() && head[j] == '[';
  PeekedSource peeked(std::move(src), std::move(head));
  peeked.copy_hint();
  if (nested_list) {
    Result<Trace> t = import::import_memory_timeline(peeked, path);
    if (t) t->meta.source = path;
    return t;
  }
  return import_chrome_stream(peeked, path, options);
}

Result<Trace> import_chrome_json_buffer(std::string_view json, const std::string& name,
                                        const ImportOptions& options) {
  auto src = import::memory_byte_source(json.data(), json.size(), name);
  if (!src->status()) return src->status();
  return import_chrome_stream(*src, name, options);
}

}  // namespace mlprof
