// torch.cuda.memory._snapshot() dicts -> MemorySnapshot. The format: PyTorch's
// torch/cuda/memory.py (_snapshot docstring) and torch/utils/viz/MemoryViz.js; field notes in
// ../shared/traces/memory-snapshot/README.md. Records are reduced while the file streams: a
// trace entry or segment becomes a fixed-size struct the moment its list takes it, and a frames
// list becomes a stack id in place (later references to the same list see the id).
#include "import/memory_snapshot_importer.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <unordered_map>

#include "import/py_value.h"
#include "trace/json_writer.h"
#include "trace/time_range.h"

namespace mlprof {

namespace import {
namespace {

SnapshotAction parse_action(std::string_view s) {
  for (int k = 0; k < kSnapshotActionCount - 1; ++k)
    if (s == snapshot_action_name(static_cast<SnapshotAction>(k)))
      return static_cast<SnapshotAction>(k);
  return SnapshotAction::kOther;
}

BlockState parse_state(std::string_view s) {
  if (s == "active_allocated") return BlockState::kActiveAllocated;
  if (s == "active_awaiting_free") return BlockState::kActiveAwaitingFree;
  if (s == "inactive") return BlockState::kInactive;
  return BlockState::kOther;
}

int64_t get_int(const PyObj& d, std::string_view key, int64_t fallback = 0) {
  const PyVal* v = py_get(d, key);
  int64_t out;
  return v && v->as_int(out) ? out : fallback;
}

uint32_t get_stack(const PyVal* v) {
  if (!v || v->type() != PyKind::kStack) return 0;
  return v->obj ? v->obj->stack : static_cast<uint32_t>(v->i);  // inline once compacted
}

void write_value(JsonWriter& w, const PyVal& v) {
  switch (v.type()) {
    case PyKind::kBool:
      w.value(v.b);
      break;
    case PyKind::kInt:
      w.value(v.i);
      break;
    case PyKind::kUInt:
      w.value(v.u);
      break;
    case PyKind::kFloat:
      w.value(v.d);
      break;
    case PyKind::kStr:
      w.value(v.str());
      break;
    case PyKind::kList:
    case PyKind::kTuple:
      w.begin_array();
      for (const PyVal& x : v.obj->items) write_value(w, x);
      w.end_array();
      break;
    case PyKind::kDict:
      w.begin_object();
      for (size_t k = 0; k + 1 < v.obj->items.size(); k += 2) {
        const PyVal& key = v.obj->items[k];
        int64_t n;
        w.key(key.type() == PyKind::kStr ? std::string(key.str())
              : key.as_int(n)            ? std::to_string(n)
                                         : std::string("?"));
        write_value(w, v.obj->items[k + 1]);
      }
      w.end_object();
      break;
    default:
      w.null();
      break;
  }
}

struct VecHash {
  size_t operator()(const std::vector<StringId>& v) const {
    uint64_t h = 1469598103934665603ull;
    for (StringId x : v) h = (h ^ x) * 1099511628211ull;
    return h;
  }
};

class SnapshotAssembler : public PyAssembler {
 public:
  explicit SnapshotAssembler(MemorySnapshot& s) : snap_(s) {}

  Status append(PyObj& list, PyVal item) override {
    if (item.type() == PyKind::kDict) {
      PyObj& d = *item.obj;
      if (py_get(d, "action")) {
        MLPROF_RETURN_IF_ERROR(add_entry(list.serial, d));
        consume(d);
        return Status::ok();
      }
      if (py_get(d, "total_size") && py_get(d, "blocks")) {
        MLPROF_RETURN_IF_ERROR(add_segment(d));
        consume(d);
        return Status::ok();
      }
    }
    list.items.push_back(std::move(item));
    return Status::ok();
  }

  Status set_item(PyObj& dict, PyVal key, PyVal value) override {
    if (key.is_str("frames") && value.type() == PyKind::kList) to_stack(*value.obj);
    dict.items.push_back(std::move(key));
    dict.items.push_back(std::move(value));
    return Status::ok();
  }

  // After the top-level dict is complete: device of each trace list, annotations, settings.
  Status finish(const PyVal& top, const std::string& name) {
    if (top.type() != PyKind::kDict)
      return Status::error(name + ": not a memory snapshot (the top level is not a dict)");
    const PyObj& d = *top.obj;
    const PyVal* segs = py_get(d, "segments");
    const PyVal* traces = py_get(d, "device_traces");
    if (!segs && !traces)
      return Status::error(name + ": not a memory snapshot (no 'segments' or 'device_traces' key)");
    // Device of each list that took entries (its index in device_traces; -1: another list).
    std::vector<int32_t> device_of_list(writers_.size(), -1);
    if (traces && traces->type() == PyKind::kList) {
      const auto& lists = traces->obj->items;
      for (size_t k = 0; k < lists.size() && k <= INT16_MAX; ++k)
        if (lists[k].type() == PyKind::kList)
          if (auto it = list_ids_.find(lists[k].obj->serial); it != list_ids_.end())
            device_of_list[it->second] = static_cast<int32_t>(k);
    }
    // Entries of lists outside device_traces (host_traces) are not device memory: dropped.
    // Devices in order, each device's entries in recorded order.
    std::vector<uint32_t> order;
    for (uint32_t k = 0; k < writers_.size(); ++k)
      if (device_of_list[k] >= 0) order.push_back(k);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return device_of_list[a] < device_of_list[b]; });
    for (uint32_t k : order) snap_.trace.add_part(std::move(writers_[k]), device_of_list[k]);
    writers_.clear();
    for (size_t k = 0; k + 1 < d.items.size(); k += 2) {
      std::string_view key = d.items[k].str();
      const PyVal& v = d.items[k + 1];
      if (key == "allocator_settings" && v.type() == PyKind::kDict) {
        for (size_t j = 0; j + 1 < v.obj->items.size(); j += 2) {
          JsonWriter w;
          write_value(w, v.obj->items[j + 1]);
          snap_.allocator_settings.emplace_back(std::string(v.obj->items[j].str()), w.take());
        }
      } else if (key == "external_annotations" && v.type() == PyKind::kList) {
        for (const PyVal& a : v.obj->items) {
          if (a.type() != PyKind::kDict) continue;
          SnapshotAnnotation an;
          const PyVal* nm = py_get(*a.obj, "name");
          an.name = snap_.strings.intern(nm ? nm->str() : "");
          const PyVal* st = py_get(*a.obj, "stage");
          an.start = !(st && st->is_str("END"));
          an.device = static_cast<int32_t>(get_int(*a.obj, "device"));
          an.time_us = get_int(*a.obj, "time_us");
          if (!time_us_in_range(an.time_us))
            return Status::error(name +
                                 ": external annotation: " + time_error(an.time_us).message());
          snap_.annotations.push_back(an);
        }
      } else if (key != "segments" && key != "device_traces") {
        ++snap_.top_level_keys_ignored;
      }
    }
    return Status::ok();
  }

 private:
  // Times become nanoseconds of the snapshot's trace, whose spans must fit 64 bits
  // (trace/time_range.h): a time beyond +-4.6e15 us is no time a snapshot holds.
  static bool time_us_in_range(int64_t us) {
    return us >= -kMaxTimeNs / 1000 && us <= kMaxTimeNs / 1000;
  }
  static Status time_error(int64_t us) {
    return Status::error("time_us " + std::to_string(us) +
                         " out of range (beyond +-4.6e15 microseconds, 146 years from the epoch)");
  }
  static void consume(PyObj& d) {
    d.kind = PyKind::kConsumed;
    d.items.clear();
    d.items.shrink_to_fit();
  }

  StringId frame_id(const PyVal& f) {
    if (f.type() == PyKind::kStr) return snap_.strings.intern(f.str());
    if (f.type() != PyKind::kDict) return snap_.strings.intern("?");
    const PyVal* file = py_get(*f.obj, "filename");
    const PyVal* name = py_get(*f.obj, "name");
    std::string s(file ? file->str() : "??");
    s += ':';
    s += std::to_string(get_int(*f.obj, "line"));
    s += ':';
    s += name ? name->str() : "??";
    return snap_.strings.intern(s);
  }

  void to_stack(PyObj& list) {
    std::vector<StringId> frames;
    frames.reserve(list.items.size());
    for (const PyVal& f : list.items) frames.push_back(frame_id(f));
    uint32_t id = 0;
    if (!frames.empty()) {
      auto [it, fresh] = stack_ids_.try_emplace(frames, 0);
      if (fresh) {
        it->second = static_cast<uint32_t>(snap_.stack_begin.size());
        snap_.stack_begin.push_back(static_cast<uint32_t>(snap_.frames.size()));
        snap_.stack_count.push_back(static_cast<uint32_t>(frames.size()));
        snap_.frames.insert(snap_.frames.end(), frames.begin(), frames.end());
      }
      id = it->second;
    }
    list.kind = PyKind::kStack;
    list.stack = id;
    list.items.clear();
    list.items.shrink_to_fit();
  }

  Status add_entry(uint64_t list_serial, const PyObj& d) {
    SnapshotTraceEntry e;
    const PyVal* a = py_get(d, "action");
    e.action = parse_action(a->str());
    if (e.action == SnapshotAction::kOther) e.text = snap_.strings.intern(a->str());
    e.addr = static_cast<uint64_t>(get_int(d, "addr"));
    if (e.action == SnapshotAction::kOom && py_get(d, "device_free"))
      e.addr = static_cast<uint64_t>(get_int(d, "device_free"));
    e.size = get_int(d, "size");
    e.stream = get_int(d, "stream");
    e.time_us = get_int(d, "time_us", -1);
    if (!time_us_in_range(e.time_us)) return time_error(e.time_us);
    e.stack = get_stack(py_get(d, "frames"));
    if (const PyVal* um = py_get(d, "user_metadata"); um && um->type() == PyKind::kStr)
      e.text = snap_.strings.intern(um->str());
    // Each list that takes entries (one per device and host trace) encodes its own.
    if (list_serial != last_serial_ || writers_.empty()) {
      auto [it, added] = list_ids_.emplace(list_serial, static_cast<uint32_t>(writers_.size()));
      if (added) writers_.emplace_back();
      last_serial_ = list_serial;
      last_id_ = it->second;
    }
    writers_[last_id_].add(e);
    return Status::ok();
  }

  Status add_segment(const PyObj& d) {
    SnapshotSegment s;
    s.device = static_cast<int32_t>(get_int(d, "device"));
    s.address = static_cast<uint64_t>(get_int(d, "address"));
    s.total_size = get_int(d, "total_size");
    s.allocated_size = get_int(d, "allocated_size");
    s.active_size = get_int(d, "active_size");
    s.requested_size = get_int(d, "requested_size");
    s.stream = get_int(d, "stream");
    const PyVal* type = py_get(d, "segment_type");
    s.large = !(type && type->is_str("small"));
    s.expandable = get_int(d, "is_expandable") != 0;
    if (const PyVal* pool = py_get(d, "segment_pool_id");
        pool && (pool->type() == PyKind::kTuple || pool->type() == PyKind::kList) &&
        pool->obj->items.size() == 2) {
      s.has_pool = true;
      pool->obj->items[0].as_int(s.pool_a);
      pool->obj->items[1].as_int(s.pool_b);
    }
    s.stack = get_stack(py_get(d, "frames"));
    s.blocks_begin = static_cast<uint32_t>(snap_.blocks.size());
    const PyVal* blocks = py_get(d, "blocks");
    uint64_t next_addr = s.address;
    if (blocks->type() == PyKind::kList) {
      for (const PyVal& bv : blocks->obj->items) {
        if (bv.type() != PyKind::kDict) continue;
        const PyObj& b = *bv.obj;
        SnapshotBlock blk;
        blk.size = get_int(b, "size");
        blk.requested_size = get_int(b, "requested_size", blk.size);
        const PyVal* st = py_get(b, "state");
        blk.state = parse_state(st ? st->str() : "");
        blk.address = static_cast<uint64_t>(get_int(b, "address", static_cast<int64_t>(next_addr)));
        blk.stack = get_stack(py_get(b, "frames"));
        if (const PyVal* h = py_get(b, "history");
            h && h->type() == PyKind::kList && !h->obj->items.empty()) {
          snap_.legacy_block_history = true;  // PyTorch 2.0: history[0] holds the frames
          const PyVal& h0 = h->obj->items[0];
          if (h0.type() == PyKind::kDict && !blk.stack)
            blk.stack = get_stack(py_get(*h0.obj, "frames"));
        }
        next_addr = blk.address + static_cast<uint64_t>(blk.size);
        snap_.blocks.push_back(blk);
      }
    }
    s.blocks_count = static_cast<uint32_t>(snap_.blocks.size() - s.blocks_begin);
    snap_.segments.push_back(s);
    return Status::ok();
  }

  MemorySnapshot& snap_;
  std::vector<SnapshotTrace::Writer> writers_;       // per list that took entries
  std::unordered_map<uint64_t, uint32_t> list_ids_;  // list serial -> writers_ index
  uint64_t last_serial_ = 0;
  uint32_t last_id_ = 0;
  std::unordered_map<std::vector<StringId>, uint32_t, VecHash> stack_ids_;
};

}  // namespace

bool looks_like_memory_snapshot(std::string_view head) {
  if (!head.empty() && static_cast<unsigned char>(head[0]) == 0x80) return true;
  size_t i = 0;
  auto ws = [&] {
    while (i < head.size() && std::strchr(" \t\r\n", head[i])) ++i;
  };
  ws();
  if (i >= head.size() || head[i] != '{') return false;
  ++i;
  ws();
  std::string_view rest = head.substr(i);
  return rest.starts_with("\"segments\"") || rest.starts_with("\"device_traces\"");
}

Result<MemorySnapshot> import_memory_snapshot(ByteSource& src, const std::string& name,
                                              bool pickle) {
  MemorySnapshot snap;
  snap.source = name;
  snap.format = pickle ? "pickle" : "json";
  SnapshotAssembler assembler(snap);
  Result<PyVal> top =
      pickle ? read_pickle(src, name, assembler) : read_json_values(src, name, assembler);
  MLPROF_RETURN_IF_ERROR(top);
  MLPROF_RETURN_IF_ERROR(assembler.finish(top.value(), name));
  return snap;
}

}  // namespace import

namespace {

Result<MemorySnapshot> load_from(std::unique_ptr<import::ByteSource> src, const std::string& name) {
  // Peek at the start to choose the reader; the bytes are replayed through a small wrapper.
  class Replay : public import::ByteSource {
   public:
    Replay(import::ByteSource& inner, std::string head) : inner_(inner), head_(std::move(head)) {}
    size_t read(char* dst, size_t n) override {
      size_t done = 0;
      if (pos_ < head_.size()) {
        done = std::min(n, head_.size() - pos_);
        std::memcpy(dst, head_.data() + pos_, done);
        pos_ += done;
      }
      if (done < n) done += inner_.read(dst + done, n - done);
      if (!inner_.status()) status_ = inner_.status();
      return done;
    }
    uint64_t file_bytes_read() const override { return inner_.file_bytes_read(); }

   private:
    import::ByteSource& inner_;
    std::string head_;
    size_t pos_ = 0;
  };
  std::string head(256, '\0');
  size_t got = 0;
  while (got < head.size()) {
    size_t n = src->read(head.data() + got, head.size() - got);
    if (n == 0) break;
    got += n;
  }
  if (!src->status()) return src->status();
  head.resize(got);
  if (got == 0) return Status::error(name + ": empty file, expected a CUDA memory snapshot");
  bool pickle = static_cast<unsigned char>(head[0]) == 0x80;
  if (!pickle && !import::looks_like_memory_snapshot(head))
    return Status::error(name +
                         ": not a CUDA memory snapshot (expected a pickle or a JSON object "
                         "starting with \"segments\")");
  Replay replay(*src, std::move(head));
  return import::import_memory_snapshot(replay, name, pickle);
}

}  // namespace

bool is_memory_snapshot_file(const std::string& path) {
  auto opened = import::open_byte_source(path);
  if (!opened) return false;
  std::string head(256, '\0');
  size_t got = 0;
  while (got < head.size()) {
    size_t n = opened.value()->read(head.data() + got, head.size() - got);
    if (n == 0) break;
    got += n;
  }
  head.resize(got);
  return import::looks_like_memory_snapshot(head);
}

Result<MemorySnapshot> load_memory_snapshot(const std::string& path) {
  auto opened = import::open_byte_source(path);
  MLPROF_RETURN_IF_ERROR(opened);
  return load_from(std::move(opened.value()), path);
}

Result<MemorySnapshot> load_memory_snapshot_buffer(std::string_view bytes,
                                                   const std::string& name) {
  auto src = import::memory_byte_source(bytes.data(), bytes.size(), name);
  if (!src->status()) return src->status();
  return load_from(std::move(src), name);
}

}  // namespace mlprof
