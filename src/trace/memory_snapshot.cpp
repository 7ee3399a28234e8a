// Helpers over the MemorySnapshot model shared by the importer (snapshot -> Trace) and the
// analysis (replay), so neither stage depends on the other.
#include "mlprof/memory_snapshot.h"

#include <algorithm>
#include <unordered_set>

#include "trace/snapshot_devices.h"

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
// A part's blocks grow from 4 KiB to 1 MiB: a snapshot of 100k devices with a few entries each
// must not reserve 1 MiB per device while it reads.
size_t block_capacity(size_t i) {
  return std::min(kBlockBytes, size_t{4096} << std::min<size_t>(i, 8));
}

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
  if (p.blocks.empty() || p.used.back() + kMaxEntryBytes > block_capacity(p.blocks.size() - 1)) {
    p.blocks.push_back(std::make_unique_for_overwrite<uint8_t[]>(block_capacity(p.blocks.size())));
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
  // The first part that ends after `begin` (parts are in entry order): a binary search, as a
  // cursor per device over 100k devices made a linear one quadratic.
  auto it = std::upper_bound(parts_.begin(), parts_.end(), begin,
                             [](size_t b, const Part& p) { return b < p.end; });
  c.part_ = static_cast<size_t>(it - parts_.begin());
  if (it != parts_.end()) c.index_ = it->begin;
  // Decoding starts at a part's first entry: skip to `begin` (never needed for device ranges).
  SnapshotTraceEntry skip;
  while (c.index_ < begin && c.next(skip)) {
  }
  c.index_ = std::max(c.index_, begin);
  return c;
}

uint64_t SnapshotTrace::encoded_bytes() const {
  uint64_t n = 0;
  for (const Part& p : parts_)
    for (size_t i = 0; i < p.blocks.size(); ++i)
      n += i + 1 < p.blocks.size() ? block_capacity(i) : p.used[i];
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
  if (!p.blocks.empty() && p.used.back() < block_capacity(p.blocks.size() - 1) / 2) {
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

std::vector<SnapshotDevice> snapshot_devices_with_segments(const MemorySnapshot& s) {
  std::vector<int32_t> ids;
  ids.reserve(s.segments.size() + s.trace.parts().size());
  for (const SnapshotSegment& seg : s.segments) ids.push_back(seg.device);
  for (const SnapshotTrace::Part& p : s.trace.parts()) ids.push_back(p.device);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<SnapshotDevice> out(ids.size());
  const auto& parts = s.trace.parts();
  size_t k = 0;  // the first part not yet placed (parts are in device order)
  for (size_t i = 0; i < ids.size(); ++i) {
    SnapshotDeviceRange& r = out[i].range;
    r.device = ids[i];
    while (k < parts.size() && parts[k].device < r.device) ++k;
    // A device without entries: an empty range where it would be.
    r.begin = r.end = k < parts.size() ? parts[k].begin : s.trace.size();
    while (k < parts.size() && parts[k].device == r.device) r.end = parts[k++].end;
  }
  for (uint32_t j = 0; j < s.segments.size(); ++j) {
    auto it = std::lower_bound(ids.begin(), ids.end(), s.segments[j].device);
    out[static_cast<size_t>(it - ids.begin())].segments.push_back(j);
  }
  return out;
}

std::vector<SnapshotDeviceRange> snapshot_devices(const MemorySnapshot& s) {
  std::vector<SnapshotDeviceRange> out;
  for (SnapshotDevice& d : snapshot_devices_with_segments(s)) out.push_back(d.range);
  return out;
}

SnapshotReplayStart snapshot_replay_start(const MemorySnapshot& s, int32_t device, size_t begin,
                                          size_t end) {
  SnapshotDevice d;
  d.range.device = device;
  d.range.begin = begin;
  d.range.end = end;
  for (uint32_t j = 0; j < s.segments.size(); ++j)
    if (s.segments[j].device == device) d.segments.push_back(j);
  return snapshot_replay_start(s, d);
}

SnapshotReplayStart snapshot_replay_start(const MemorySnapshot& s, const SnapshotDevice& d) {
  const size_t begin = d.range.begin, end = d.range.end;
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
  for (uint32_t j : d.segments) {
    const SnapshotSegment& seg = s.segments[j];
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
