#include "import/json_chunker.h"

#include <simdjson.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "import/error_text.h"

namespace mlprof::import {

namespace {
constexpr size_t kHugePage = 2u << 20;
constexpr size_t kPadding = simdjson::SIMDJSON_PADDING;

// Bytes that matter when skipping over a value outside strings.
struct StructuralTable {
  bool t[256] = {};
  StructuralTable() {
    for (char c : {'"', '{', '}', '[', ']'}) t[static_cast<unsigned char>(c)] = true;
  }
};
const StructuralTable kStructural;

inline bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// p points just past the opening quote.
const char* skip_string(const char* p, const char* end) {
  const char* start = p;
  for (;;) {
    const char* q = static_cast<const char*>(std::memchr(p, '"', static_cast<size_t>(end - p)));
    if (!q) return nullptr;
    size_t backslashes = 0;
    for (const char* r = q; r > start && r[-1] == '\\'; --r) ++backslashes;
    if ((backslashes & 1) == 0) return q + 1;
    p = q + 1;
  }
}
}  // namespace

const char* scan_value_end(const char* p, const char* end) {
  char c = *p;
  if (c == '"') return skip_string(p + 1, end);
  if (c == '{' || c == '[') {
    const char* start = p;
    size_t depth = 0;
    while (p < end) {
      while (p < end && !kStructural.t[static_cast<unsigned char>(*p)]) ++p;
      if (p == end) return nullptr;
      c = *p;
      if (c == '"') {
        // A quote after an odd run of backslashes is escaped outside strings too, as in
        // scan_events() (simdjson's rule): on invalid JSON the two must still agree on where a
        // value ends (the chunker splits with one, the parser walks a chunk with the other).
        size_t backslashes = 0;
        for (const char* r = p; r > start && r[-1] == '\\'; --r) ++backslashes;
        if (backslashes & 1) {
          ++p;
          continue;
        }
        p = skip_string(p + 1, end);
        if (!p) return nullptr;
        continue;
      }
      if (c == '{' || c == '[') {
        ++depth;
      } else if (--depth == 0) {
        return p + 1;
      }
      ++p;
    }
    return nullptr;
  }
  // Number or literal: ends at a delimiter; at the buffer's end it may continue.
  while (p < end && !is_space(*p) && *p != ',' && *p != '}' && *p != ']') ++p;
  return p < end ? p : nullptr;
}

namespace {

// Is [a, b) whitespace around exactly one ',' (the gap between two events)?
bool is_event_separator(const char* a, const char* b) {
  bool comma = false;
  for (; a < b; ++a) {
    if (*a == ',' && !comma)
      comma = true;
    else if (!is_space(*a))
      return false;
  }
  return comma;
}

}  // namespace

// Portable form of scan_events(): one event at a time.
const char* scan_events_scalar(const char* p, const char* end) {
  const char* last = nullptr;
  for (;;) {
    const char* e = scan_value_end(p, end);
    if (!e) return last;
    last = e;
    const char* q = e;
    while (q < end && (is_space(*q) || *q == ',')) ++q;
    if (q == end || *q != '{' || !is_event_separator(e, q)) return last;
    p = q;
  }
}

#if defined(__AVX2__) && defined(__PCLMUL__)
#include <immintrin.h>

// 64 bytes at a time, the way simdjson's stage 1 finds strings: bit masks of quotes,
// backslashes and brackets; escaped quotes removed with the odd-backslash-run trick;
// in-string bytes by a carry-less multiply (prefix xor) of the quote mask. Only brackets
// outside strings are then walked one by one, to follow the nesting depth.
const char* scan_events(const char* p, const char* end) {
  const char* last = nullptr;  // end of the last complete event
  const char* block = p;
  uint64_t prev_escaped = 0, prev_in_string = 0;
  int64_t depth = 0;  // 0 between events
  alignas(32) char tail[64];
  while (block < end) {
    const char* src = block;
    size_t avail = static_cast<size_t>(end - block);
    if (avail < 64) {  // never read past `end`: the last block is copied and padded
      std::memset(tail, ' ', sizeof tail);
      std::memcpy(tail, block, avail);
      src = tail;
    }
    __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
    __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 32));
    auto mask = [&](char c) {
      __m256i v = _mm256_set1_epi8(c);
      uint64_t a = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, v)));
      uint64_t b = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, v)));
      return a | (b << 32);
    };
    uint64_t quote = mask('"'), backslash = mask('\\');
    uint64_t open = mask('{') | mask('['), close = mask('}') | mask(']');
    // Escaped characters (simdjson's find_escaped_branchless).
    backslash &= ~prev_escaped;
    uint64_t follows_escape = backslash << 1 | prev_escaped;
    const uint64_t even_bits = 0x5555555555555555ull;
    uint64_t odd_starts = backslash & ~even_bits & ~follows_escape;
    uint64_t even_starts;
    prev_escaped = __builtin_add_overflow(odd_starts, backslash, &even_starts) ? 1 : 0;
    uint64_t escaped = (even_bits ^ (even_starts << 1)) & follows_escape;
    quote &= ~escaped;
    uint64_t in_string = static_cast<uint64_t>(
        _mm_cvtsi128_si64(_mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<int64_t>(quote)),
                                               _mm_set1_epi8(static_cast<char>(0xFF)), 0)));
    in_string ^= prev_in_string;
    prev_in_string = static_cast<uint64_t>(static_cast<int64_t>(in_string) >> 63);
    uint64_t brackets = (open | close) & ~in_string;
    if (avail < 64) brackets &= (1ull << avail) - 1;
    int64_t closes = __builtin_popcountll(close & brackets);
    if (depth > closes) {  // cannot get back to depth 0 within this block
      depth += __builtin_popcountll(open & brackets) - closes;
    } else {
      while (brackets) {
        int i = __builtin_ctzll(brackets);
        brackets &= brackets - 1;
        const char* at = block + i;
        if ((open >> i) & 1) {
          // A new event must follow the previous one after exactly one ','.
          bool first = at == p;
          if (depth == 0 && !first && !(*at == '{' && last && is_event_separator(last, at)))
            return last;
          ++depth;
        } else if (--depth == 0) {
          last = at + 1;
        } else if (depth < 0) {
          return last;  // the ']' that ends the array: the state machine takes it from here
        }
      }
    }
    block += 64;
  }
  return last;
}
#else
const char* scan_events(const char* p, const char* end) { return scan_events_scalar(p, end); }
#endif

// ---- buffers ----------------------------------------------------------------------------------

ChunkBuffer::ChunkBuffer(size_t capacity) { allocate(capacity); }

namespace {
void free_buffer(char* base, bool mapped, size_t bytes) {
  if (!base) return;
  if (mapped)
    ::munmap(base, bytes);
  else
    delete[] base;
}
}  // namespace

ChunkBuffer::~ChunkBuffer() { free_buffer(base_, mapped_, allocated_); }

void ChunkBuffer::allocate(size_t capacity) {
  // Layout: one byte of headroom, the data, the byte after the last event (the parser writes
  // ']' there), then simdjson's padding.
  capacity = std::max<size_t>(capacity, 16);
  size_t need = capacity + 2 + kPadding;
  if (need < kHugePage / 2) {
    // Small buffers (tests, the fuzzer: small inputs split into many chunks) hold exactly what
    // was asked, on the heap: a read past the padding is then an ASan error, not a silent read
    // of the rest of a page.
    base_ = new char[need];
    mapped_ = false;
    allocated_ = need;
    capacity_ = capacity;
    return;
  }
  // mmap + MADV_HUGEPAGE: a first touch of a 4 KiB page costs ~10 us on these VMs
  // (FIELD_NOTES.md), so big buffers take 2 MiB pages, used whole, where the kernel allows.
  size_t bytes = (need + kHugePage - 1) / kHugePage * kHugePage;
  void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  ::madvise(m, bytes, MADV_HUGEPAGE);
  base_ = static_cast<char*>(m);
  mapped_ = true;
  allocated_ = bytes;
  capacity_ = bytes - 2 - kPadding;
}

void ChunkBuffer::grow(size_t new_capacity, size_t keep_bytes) {
  char* old = base_;
  bool old_mapped = mapped_;
  size_t old_bytes = allocated_;
  allocate(new_capacity);
  std::memcpy(base_ + 1, old + 1, keep_bytes);
  free_buffer(old, old_mapped, old_bytes);
}

BufferPool::BufferPool(size_t count, size_t capacity) {
  for (size_t i = 0; i < count; ++i) {
    all_.push_back(std::make_unique<ChunkBuffer>(capacity));
    free_.push_back(all_.back().get());
  }
}

ChunkBuffer* BufferPool::acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !free_.empty(); });
  ChunkBuffer* b = free_.back();
  free_.pop_back();
  return b;
}

void BufferPool::release(ChunkBuffer* b) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(b);
  }
  cv_.notify_one();
}

void ChunkQueue::push(Chunk c) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return q_.size() < capacity_ || cancelled_; });
  if (cancelled_) return;
  q_.push_back(std::move(c));
  cv_.notify_all();
}

Chunk ChunkQueue::pop() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !q_.empty(); });
  Chunk c = std::move(q_.front());
  q_.pop_front();
  cv_.notify_all();
  return c;
}

void ChunkQueue::cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  cv_.notify_all();
}

bool ChunkQueue::cancelled() {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

// ---- chunker ----------------------------------------------------------------------------------

JsonChunker::JsonChunker(ByteSource& source, BufferPool& pool, std::string name,
                         uint64_t max_value_bytes)
    : src_(source), pool_(pool), name_(std::move(name)), max_value_bytes_(max_value_bytes) {}

Status JsonChunker::fail(const std::string& what, uint64_t at) const {
  return Status::error(name_ + ": byte " + std::to_string(at) + ": " + what);
}

bool JsonChunker::emit_events(const std::function<bool(Chunk&&)>& sink) {
  ChunkBuffer* next = pool_.acquire();
  size_t tail = len_ - ev_end_;
  if (tail > next->capacity()) next->grow(tail * 2, 0);
  std::memcpy(next->data(), buf_->data() + ev_end_, tail);
  Chunk c;
  c.kind = Chunk::Kind::kEvents;
  c.buffer = buf_;
  c.begin = ev_begin_;
  c.end = ev_end_;
  c.offset = buf_offset_ + ev_begin_;
  buf_offset_ += ev_end_;
  pos_ -= ev_end_;
  len_ = tail;
  buf_ = next;
  ev_begin_ = SIZE_MAX;
  ev_end_ = 0;
  return sink(std::move(c));
}

bool JsonChunker::refill(const std::function<bool(Chunk&&)>& sink, Status* error) {
  if (ev_begin_ != SIZE_MAX) {
    if (!emit_events(sink)) {
      sink_stopped_ = true;  // the consumer gave up (its error stands): not an end of input
      return false;
    }
  } else if (pos_ > 0) {
    std::memmove(buf_->data(), buf_->data() + pos_, len_ - pos_);
    buf_offset_ += pos_;
    len_ -= pos_;
    pos_ = 0;
  }
  if (len_ == buf_->capacity()) {
    // One value larger than the buffer: grow, up to the configured limit.
    if (buf_->capacity() * 2 > max_value_bytes_) {
      *error = fail(
          "a single JSON value is larger than " + std::to_string(max_value_bytes_ >> 20) + " MiB",
          buf_offset_);
      return false;
    }
    buf_->grow(buf_->capacity() * 2, len_);
  }
  size_t n = src_.read(buf_->data() + len_, buf_->capacity() - len_);
  // A failing source (a cut gzip stream) may still hand over what it inflated before the
  // failure: use it first; the next read reports the error.
  if (!src_.status() && n == 0) {
    *error = src_.status();
    return false;
  }
  len_ += n;
  return n > 0;
}

void JsonChunker::end_out(const std::function<bool(Chunk&&)>& sink) {
  if (buf_) pool_.release(buf_);
  buf_ = nullptr;
  Chunk c;
  c.kind = Chunk::Kind::kEnd;
  c.bare_array = bare_;
  c.problems = problems_;
  sink(std::move(c));
}

void JsonChunker::end_early(const std::function<bool(Chunk&&)>& sink, ImportProblem kind,
                            uint64_t at, const std::string& what) {
  problems_.note(kind, at, what);
  if (ev_begin_ != SIZE_MAX && !emit_events(sink)) return;
  end_out(sink);
}

void JsonChunker::error_out(Status s, const std::function<bool(Chunk&&)>& sink) {
  Chunk c;
  c.kind = Chunk::Kind::kError;
  c.error = std::move(s);
  if (buf_) pool_.release(buf_);
  buf_ = nullptr;
  sink(std::move(c));
}

void JsonChunker::stop(const std::string& what, uint64_t at,
                       const std::function<bool(Chunk&&)>& sink) {
  if (!saw_event_) return error_out(fail(what, at), sink);
  end_early(sink, ImportProblem::kInvalidJson, at, what + "; the rest of the file is not read");
}

// The top-level object (or the start of a bare array); the events array in step_events.
JsonChunker::Step JsonChunker::step(State& st, std::string& key, bool& saw_events,
                                    const std::function<bool(Chunk&&)>& sink) {
  char* d = buf_->data();
  const char* p = d + pos_;
  const char* end = d + len_;
  uint64_t at = buf_offset_ + pos_;
  switch (st) {
    case State::kTop:
      if (*p == '{') {
        st = State::kKeyOrEnd;
      } else if (*p == '[') {
        bare_ = true;
        st = State::kEventsFirst;
      } else {
        error_out(fail("expected '{' or '[' (a Chrome trace JSON object or array)", at), sink);
        return Step::kStop;
      }
      ++pos_;
      return Step::kNext;
    case State::kKeyOrEnd:
      if (*p == '}') {
        ++pos_;
        st = State::kDone;
        return Step::kNext;
      }
      [[fallthrough]];
    case State::kKey: {
      if (*p == '}' && st == State::kKey) {  // {"traceEvents": [...],}
        problems_.note(ImportProblem::kTrailingComma, comma_at_,
                       "trailing ',' before a closing bracket (ignored)");
        ++pos_;
        st = State::kDone;
        return Step::kNext;
      }
      if (*p != '"') {
        stop("expected a quoted key", at, sink);
        return Step::kStop;
      }
      const char* e = scan_value_end(p, end);
      if (!e) return Step::kMore;
      key.assign(p + 1, e - 1);
      pos_ = static_cast<size_t>(e - d);
      st = State::kColon;
      return Step::kNext;
    }
    case State::kColon:
      if (*p != ':') {
        stop("expected ':' after key \"" + printable(key) + "\"", at, sink);
        return Step::kStop;
      }
      ++pos_;
      st = State::kValue;
      return Step::kNext;
    case State::kValue: {
      if (key == "traceEvents") {
        if (*p != '[') {
          stop("\"traceEvents\" must be an array", at, sink);
          return Step::kStop;
        }
        saw_events = true;
        ++pos_;
        st = State::kEventsFirst;
        return Step::kNext;
      }
      const char* e = scan_value_end(p, end);
      if (!e) return Step::kMore;
      Chunk c;
      c.kind = Chunk::Kind::kTopLevelValue;
      c.key = key;
      c.raw.assign(p, e);
      c.offset = at;
      pos_ = static_cast<size_t>(e - d);
      st = State::kAfterValue;
      return sink(std::move(c)) ? Step::kNext : Step::kStop;
    }
    case State::kAfterValue:
      if (*p == ',') {
        comma_at_ = at;
        st = State::kKey;
      } else if (*p == '}') {
        st = State::kDone;
      } else {
        stop("expected ',' or '}' in the top-level object", at, sink);
        return Step::kStop;
      }
      ++pos_;
      return Step::kNext;
    case State::kEventsFirst:
    case State::kEventsElement:
    case State::kEventsAfter:
    case State::kDone:
      return step_events(st, sink);
  }
  return Step::kNext;  // not reached: every state is handled above
}

// The events array (runs of whole events found in one pass, emitted as chunks) and what follows
// the document.
JsonChunker::Step JsonChunker::step_events(State& st, const std::function<bool(Chunk&&)>& sink) {
  char* d = buf_->data();
  const char* p = d + pos_;
  const char* end = d + len_;
  uint64_t at = buf_offset_ + pos_;
  switch (st) {
    case State::kEventsFirst:
      if (*p == ']') {
        ++pos_;
        st = bare_ ? State::kDone : State::kAfterValue;
        return Step::kNext;
      }
      st = State::kEventsElement;
      [[fallthrough]];
    case State::kEventsElement: {
      if (*p == ']') {  // [..., {...},]
        problems_.note(ImportProblem::kTrailingComma, comma_at_,
                       "trailing ',' before a closing bracket (ignored)");
        ++pos_;
        st = bare_ ? State::kDone : State::kAfterValue;
        if (ev_begin_ != SIZE_MAX && !emit_events(sink)) return Step::kStop;
        return Step::kNext;
      }
      if (*p != '{') {
        stop("expected an event object '{' in traceEvents", at, sink);
        return Step::kStop;
      }
      // As many whole events as the buffer holds, in one pass.
      const char* e = scan_events(p, end);
      if (!e) return Step::kMore;
      saw_event_ = true;
      if (ev_begin_ == SIZE_MAX) ev_begin_ = pos_;
      pos_ = static_cast<size_t>(e - d);
      ev_end_ = pos_;
      st = State::kEventsAfter;
      return Step::kNext;
    }
    case State::kEventsAfter:
      if (*p == ',') {
        comma_at_ = at;
        ++pos_;
        st = State::kEventsElement;
      } else if (*p == ']') {
        ++pos_;
        st = bare_ ? State::kDone : State::kAfterValue;
        if (ev_begin_ != SIZE_MAX && !emit_events(sink)) return Step::kStop;
      } else if (*p == '{') {
        // Two events without a ',' between them: read on from a new run of events.
        problems_.note(ImportProblem::kInvalidJson, at, "missing ',' between events");
        st = State::kEventsElement;
        if (ev_begin_ != SIZE_MAX && !emit_events(sink)) return Step::kStop;
      } else {
        stop("expected ',' or ']' after an event", at, sink);
        return Step::kStop;
      }
      return Step::kNext;
    case State::kDone:
      if (!saw_event_) {
        error_out(fail("unexpected data after the end of the JSON document", at), sink);
        return Step::kStop;
      }
      problems_.note(ImportProblem::kTrailingData, at,
                     "data after the end of the JSON document (ignored)");
      end_out(sink);
      return Step::kStop;
    default:  // the top-level states: step's
      return Step::kNext;
  }
}

void JsonChunker::input_ended(State st, bool saw_events, const Status& err,
                              const std::function<bool(Chunk&&)>& sink) {
  if (sink_stopped_) return;
  uint64_t total = buf_offset_ + len_;
  if (!err.is_ok()) {
    // A read error or a cut gzip stream: the events read so far are kept.
    if (!saw_event_) return error_out(err, sink);
    std::string what = err.message();
    if (what.compare(0, name_.size() + 2, name_ + ": ") == 0) what.erase(0, name_.size() + 2);
    return end_early(sink, ImportProblem::kTruncated, total, what);
  }
  if (st == State::kDone) {
    if (!bare_ && !saw_events)
      return error_out(
          Status::error(name_ + ": not a trace: a JSON object without a \"traceEvents\" array"),
          sink);
    return end_out(sink);
  }
  if (total == 0)
    return error_out(Status::error(name_ + ": empty file, expected a JSON trace"), sink);
  if (!saw_event_) return error_out(fail("unexpected end of file (truncated JSON?)", total), sink);
  return end_early(sink, ImportProblem::kTruncated, total,
                   "unexpected end of file (truncated JSON?)");
}

void JsonChunker::run(const std::function<bool(Chunk&&)>& sink) {
  buf_ = pool_.acquire();
  State st = State::kTop;
  bool saw_events = false;
  std::string key;
  for (;;) {
    char* d = buf_->data();
    while (pos_ < len_ && is_space(d[pos_])) ++pos_;
    if (pos_ < len_) {
      Step s = step(st, key, saw_events, sink);
      if (s == Step::kStop) return;
      if (s == Step::kNext) continue;
    }
    // The step needs more input than the buffer holds.
    Status err;
    if (!refill(sink, &err)) return input_ended(st, saw_events, err, sink);
  }
}

}  // namespace mlprof::import
