// Helpers over the MemorySnapshot model shared by the importer (snapshot -> Trace) and the
// analysis (replay), so neither stage depends on the other.
#include "mlprof/memory_snapshot.h"

#include <algorithm>
#include <set>
#include <unordered_set>

namespace mlprof {

const char* snapshot_action_name(SnapshotAction a) {
  static const char* const kNames[] = {
      "alloc",        "free_requested", "free_completed", "segment_alloc",
      "segment_free", "segment_map",    "segment_unmap",  "oom",
      "snapshot",     "annotate",       "other"};
  return kNames[static_cast<int>(a)];
}

// ---- SnapshotTrace: the encoded allocator trace ----

namespace {

constexpr size_t kBlockBytes = size_t{1} << 20;
constexpr size_t kMaxEntryBytes = 64;  // header + 6 varints of at most 10 bytes

uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t unzigzag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

uint8_t* put_varint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

uint64_t get_varint(const uint8_t*& p) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  return v;
}

enum : uint8_t { kHasTime = 0x10, kNewStream = 0x20, kHasStack = 0x40, kHasText = 0x80 };

}  // namespace

void SnapshotTrace::Writer::add(const SnapshotTraceEntry& e) {
  Part& p = part_;
  if (p.blocks.empty() || p.used.back() + kMaxEntryBytes > kBlockBytes) {
    p.blocks.push_back(std::make_unique_for_overwrite<uint8_t[]>(kBlockBytes));
    p.used.push_back(0);
  }
  uint8_t* start = p.blocks.back().get() + p.used.back();
  uint8_t* q = start + 1;
  uint8_t head = static_cast<uint8_t>(e.action) & 0x0f;
  if (e.time_us >= 0) {
    head |= kHasTime;
    q = put_varint(q, zigzag(e.time_us - prev_time_));
    prev_time_ = e.time_us;
  }
  q = put_varint(q, zigzag(e.size));
  q = put_varint(q, zigzag(static_cast<int64_t>(e.addr - prev_addr_)));
  prev_addr_ = e.addr;
  if (e.stream != prev_stream_) {
    head |= kNewStream;
    q = put_varint(q, zigzag(e.stream));
    prev_stream_ = e.stream;
  }
  if (e.stack) {
    head |= kHasStack;
    q = put_varint(q, e.stack);
  }
  if (e.text) {
    head |= kHasText;
    q = put_varint(q, e.text);
  }
  *start = head;
  p.used.back() += static_cast<uint32_t>(q - start);
  ++count_;
}

bool SnapshotTrace::Cursor::next(SnapshotTraceEntry& e) {
  if (!t_ || index_ >= end_) return false;
  for (;;) {
    if (part_ >= t_->parts_.size()) return false;
    const Part& p = t_->parts_[part_];
    if (block_ < p.blocks.size() && pos_ < p.used[block_]) break;
    if (block_ + 1 < p.blocks.size()) {
      ++block_;
      pos_ = 0;
      continue;
    }
    ++part_;
    block_ = pos_ = 0;
    prev_addr_ = 0;
    prev_time_ = prev_stream_ = 0;
  }
  const Part& p = t_->parts_[part_];
  const uint8_t* q = p.blocks[block_].get() + pos_;
  uint8_t head = *q++;
  e = SnapshotTraceEntry{};
  e.action = static_cast<SnapshotAction>(head & 0x0f);
  if (head & kHasTime) {
    prev_time_ += unzigzag(get_varint(q));
    e.time_us = prev_time_;
  }
  e.size = unzigzag(get_varint(q));
  prev_addr_ += static_cast<uint64_t>(unzigzag(get_varint(q)));
  e.addr = prev_addr_;
  if (head & kNewStream) prev_stream_ = unzigzag(get_varint(q));
  e.stream = prev_stream_;
  if (head & kHasStack) e.stack = static_cast<uint32_t>(get_varint(q));
  if (head & kHasText) e.text = static_cast<StringId>(get_varint(q));
  e.device = static_cast<int16_t>(p.device);
  pos_ = static_cast<size_t>(q - p.blocks[block_].get());
  ++index_;
  return true;
}

SnapshotTrace::Cursor SnapshotTrace::cursor(size_t begin, size_t end) const {
  Cursor c;
  c.t_ = this;
  end = std::min(end, size_);
  c.index_ = begin;
  c.end_ = end;
  c.part_ = parts_.size();
  for (size_t k = 0; k < parts_.size(); ++k)
    if (begin < parts_[k].end) {
      c.part_ = k;
      c.index_ = parts_[k].begin;
      break;
    }
  // Decoding starts at a part's first entry: skip to `begin` (never needed for device ranges).
  SnapshotTraceEntry skip;
  while (c.index_ < begin && c.next(skip)) {
  }
  c.index_ = std::max(c.index_, begin);
  return c;
}

uint64_t SnapshotTrace::encoded_bytes() const {
  uint64_t n = 0;
  for (const Part& p : parts_) n += static_cast<uint64_t>(p.blocks.size()) * kBlockBytes;
  return n;
}

void SnapshotTrace::add_part(Writer&& w, int32_t device) {
  if (w.count_ == 0) return;
  Part p = std::move(w.part_);
  p.device = device;
  p.begin = size_;
  p.end = size_ + w.count_;
  size_ = p.end;
  // The last block gives back what it does not use.
  if (!p.blocks.empty() && p.used.back() < kBlockBytes / 2) {
    auto fit = std::make_unique_for_overwrite<uint8_t[]>(std::max<uint32_t>(1, p.used.back()));
    std::copy(p.blocks.back().get(), p.blocks.back().get() + p.used.back(), fit.get());
    p.blocks.back() = std::move(fit);
  }
  parts_.push_back(std::move(p));
  w = Writer();
}

SnapshotTrace SnapshotTrace::from_entries(const std::vector<SnapshotTraceEntry>& entries) {
  SnapshotTrace t;
  Writer w;
  int32_t device = entries.empty() ? 0 : entries.front().device;
  for (const SnapshotTraceEntry& e : entries) {
    if (e.device != device) {
      t.add_part(std::move(w), device);
      device = e.device;
    }
    w.add(e);
  }
  t.add_part(std::move(w), device);
  return t;
}

std::vector<SnapshotDeviceRange> snapshot_devices(const MemorySnapshot& s) {
  std::set<int32_t> ids;
  for (const SnapshotSegment& seg : s.segments) ids.insert(seg.device);
  for (const SnapshotTrace::Part& p : s.trace.parts()) ids.insert(p.device);
  std::vector<SnapshotDeviceRange> out;
  for (int32_t d : ids) {
    SnapshotDeviceRange r;
    r.device = d;
    // Parts are in device order: an empty range sits where the device would be.
    r.begin = r.end = s.trace.size();
    bool found = false;
    for (const SnapshotTrace::Part& p : s.trace.parts()) {
      if (p.device == d) {
        if (!found) r.begin = p.begin;
        r.end = p.end;
        found = true;
        continue;
      }
      if (found) break;
      if (p.device > d) {
        r.begin = r.end = p.begin;
        break;
      }
    }
    out.push_back(r);
  }
  return out;
}

SnapshotReplayStart snapshot_replay_start(const MemorySnapshot& s, int32_t device, size_t begin,
                                          size_t end) {
  SnapshotReplayStart out;
  std::unordered_set<uint64_t> live;
  int64_t net_segments = 0;
  s.trace.for_each(begin, end, [&](size_t, const SnapshotTraceEntry& e) {
    switch (e.action) {
      case SnapshotAction::kAlloc:
        live.insert(e.addr);
        break;
      case SnapshotAction::kFreeCompleted:
        if (!live.erase(e.addr)) {
          out.active += e.size;
          ++out.frees_without_alloc;
        }
        break;
      case SnapshotAction::kSegmentAlloc:
      case SnapshotAction::kSegmentMap:
        net_segments += e.size;
        break;
      case SnapshotAction::kSegmentFree:
      case SnapshotAction::kSegmentUnmap:
        net_segments -= e.size;
        break;
      default:
        break;
    }
  });
  int64_t reserved = 0;
  for (const SnapshotSegment& seg : s.segments) {
    if (seg.device != device) continue;
    reserved += seg.total_size;
    for (uint32_t b = seg.blocks_begin; b < seg.blocks_begin + seg.blocks_count; ++b) {
      const SnapshotBlock& blk = s.blocks[b];
      if (blk.state == BlockState::kActiveAllocated && !live.count(blk.address)) {
        out.active += blk.size;
        ++out.blocks_not_in_trace;
      }
    }
  }
  out.reserved = std::max<int64_t>(0, reserved - net_segments);
  return out;
}

}  // namespace mlprof
