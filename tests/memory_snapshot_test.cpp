// CUDA memory snapshots built by hand (expected numbers by construction): the paths no public
// snapshot exercises (OOM entries, segment_free, expandable segments, private pools, blocks
// awaiting free, several devices), the pickle opcodes, and hostile input. The real snapshots
// are checked in tests/py/test_memory_snapshot.py.
#include "mlprof/analyze/memory_snapshot.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "import/py_value.h"
#include "mlprof/analysis_set.h"
#include "mlprof/import.h"
#include "mlprof/memory_snapshot.h"
#include "render/analysis_output.h"
#include "render/memory_snapshot_render.h"

using namespace mlprof;

namespace {

// Two devices; GPU 0: a default-pool segment with an allocated, a free and an awaiting-free
// block, and an expandable segment in private pool (1, 7); GPU 1: one segment, no trace.
const char* kSnapshotJson = R"({"segments": [
 {"device": 0, "address": 1000000, "total_size": 3000, "allocated_size": 1000, "active_size": 2000,
  "requested_size": 900, "stream": 0, "segment_type": "small", "segment_pool_id": [0, 0],
  "is_expandable": false, "frames": [],
  "blocks": [{"address": 1000000, "size": 1000, "requested_size": 900, "state": "active_allocated",
              "frames": [{"filename": "/a/model.py", "line": 10, "name": "forward"},
                         {"filename": "/a/train.py", "line": 3, "name": "main"}]},
             {"address": 1001000, "size": 1000, "requested_size": 0, "state": "active_awaiting_free", "frames": []},
             {"address": 1002000, "size": 1000, "requested_size": 0, "state": "inactive", "frames": []}]},
 {"device": 0, "address": 5000000, "total_size": 4000, "allocated_size": 0, "active_size": 0,
  "requested_size": 0, "stream": 7, "segment_type": "large", "segment_pool_id": [1, 7],
  "is_expandable": true, "frames": [],
  "blocks": [{"address": 5000000, "size": 3000, "requested_size": 0, "state": "inactive", "frames": []},
             {"address": 5003000, "size": 1000, "requested_size": 0, "state": "inactive", "frames": []}]},
 {"device": 1, "address": 9000000, "total_size": 2000, "allocated_size": 2000, "active_size": 2000,
  "requested_size": 2000, "stream": 0, "segment_type": "large", "blocks": [
   {"address": 9000000, "size": 2000, "requested_size": 2000, "state": "active_allocated", "frames": []}]}],
 "device_traces": [[
  {"action": "segment_alloc", "addr": 7000000, "size": 5000, "stream": 0, "time_us": 1},
  {"action": "alloc", "addr": 7000000, "size": 4000, "stream": 0, "time_us": 2,
   "frames": [{"filename": "/a/model.py", "line": 20, "name": "big"}]},
  {"action": "oom", "addr": 123, "size": 9000, "stream": 0, "time_us": 3, "device_free": 456,
   "frames": [{"filename": "/a/model.py", "line": 30, "name": "huge"}]},
  {"action": "free_requested", "addr": 7000000, "size": 4000, "stream": 0, "time_us": 4},
  {"action": "free_completed", "addr": 7000000, "size": 4000, "stream": 0, "time_us": 5},
  {"action": "segment_free", "addr": 7000000, "size": 5000, "stream": 0, "time_us": 6},
  {"action": "annotate", "addr": 0, "size": 0, "stream": 0, "time_us": 7, "user_metadata": "epoch 2"}
 ], []],
 "allocator_settings": {"expandable_segments": true, "max_split_size": -1}}
)";

TEST(MemorySnapshot, StateHistoryOomPoolsAndDevices) {
  auto snap = load_memory_snapshot_buffer(kSnapshotJson, "synthetic.json");
  ASSERT_TRUE(snap) << snap.error();
  EXPECT_EQ(snap->format, "json");
  ASSERT_EQ(snap->segments.size(), 3u);
  EXPECT_TRUE(snap->segments[1].private_pool());
  EXPECT_TRUE(snap->segments[1].expandable);
  SnapshotResult r = analyze_memory_snapshot(snap.value());
  EXPECT_EQ(r.reserved, 9000);
  EXPECT_EQ(r.allocated, 3000);
  EXPECT_EQ(r.expandable_segments, 1u);
  EXPECT_EQ(r.private_pool_segments, 1u);
  EXPECT_EQ(r.blocks_by_state[static_cast<int>(BlockState::kActiveAwaitingFree)], 1u);
  EXPECT_EQ(r.largest_inactive, 3000);
  // Free bytes 5000 in blocks of 1000, 3000, 1000: fragmentation 1 - 3000/5000.
  EXPECT_DOUBLE_EQ(r.fragmentation, 0.4);
  ASSERT_EQ(r.streams.size(), 3u);  // GPU 0 stream 0, GPU 0 stream 7, GPU 1 stream 0
  EXPECT_EQ(r.streams[0].awaiting_free, 1000);
  ASSERT_EQ(r.pools.size(), 2u);
  EXPECT_EQ(r.pools[1].name, "GPU 0 pool (1, 7) private");
  ASSERT_FALSE(r.live_by_site.empty());
  ASSERT_EQ(r.devices.size(), 2u);
  const SnapshotReplay& d0 = r.devices[0];
  EXPECT_EQ(d0.entries, 7u);
  // Start: the dump's 1000-byte active block (never allocated in the trace).
  EXPECT_EQ(d0.start_active, 1000);
  EXPECT_EQ(d0.peak_active, 5000);
  EXPECT_EQ(d0.peak_index, 1);
  EXPECT_EQ(d0.end_active, 1000);
  // Reserved before the trace: 7000 of the dump's GPU 0 segments (net trace change 0).
  EXPECT_EQ(d0.start_reserved, 7000);
  EXPECT_EQ(d0.peak_reserved, 12000);
  EXPECT_EQ(d0.end_reserved, 7000);
  ASSERT_EQ(d0.live_at_peak.size(), 2u);
  EXPECT_EQ(d0.live_at_peak[0].site, "model.py:20:big");
  EXPECT_EQ(d0.live_at_peak[1].site, "model.py:10:forward");
  ASSERT_EQ(d0.ooms.size(), 1u);
  EXPECT_EQ(d0.ooms[0].requested, 9000);
  EXPECT_EQ(d0.ooms[0].device_free, 456);
  EXPECT_EQ(d0.ooms[0].site, "model.py:30:huge");
  EXPECT_EQ(d0.ooms[0].active, 5000);
  EXPECT_EQ(d0.ooms[0].reserved, 12000);
  ASSERT_EQ(d0.ooms[0].holders.size(), 2u);
  EXPECT_EQ(d0.ooms[0].holders[0].bytes, 4000);
  EXPECT_EQ(r.devices[1].device, 1);
  EXPECT_EQ(r.devices[1].start_active, 2000);

  Trace t = memory_snapshot_to_trace(snap.value());
  EXPECT_EQ(t.meta.format, "cuda-memory-snapshot");
  EXPECT_EQ(t.memory.size(), 2u);    // alloc and free_completed
  EXPECT_EQ(t.instants.size(), 4u);  // segment_alloc, oom, segment_free, annotate
}

// The same structure as a protocol-2 pickle using the opcodes snapshots do not normally
// contain (DICT, LIST, TUPLE, BINPUT/BINGET, NONE, NEWTRUE, BINUNICODE, LONG1 with the 64th
// bit set) built by hand.
TEST(MemorySnapshot, PickleOpcodes) {
  std::string p = "\x80\x02(";  // PROTO 2, MARK
  auto str = [&](const std::string& s) {
    p += 'X';
    uint32_t n = static_cast<uint32_t>(s.size());
    p.append(reinterpret_cast<const char*>(&n), 4);
    p += s;
  };
  str("segments");
  p += "(";  // list of one segment, built with LIST
  p += "(";  // segment dict via DICT
  str("device");
  p += std::string("K\x00", 2);
  str("address");
  p += std::string("\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00", 11);  // 2^63 as LONG1
  str("total_size");
  p += std::string("M\x00\x10", 3);  // 4096
  str("is_expandable");
  p += "\x88";
  str("segment_pool_id");
  p += std::string("K\x00K\x00\x86", 5);  // TUPLE2
  str("blocks");
  p += "(";
  p += "(";
  str("size");
  p += std::string("M\x00\x10", 3);
  str("state");
  str("inactive");
  str("frames");
  p += "(ld";  // empty LIST, then DICT closes the block
  p += "l";    // LIST closes blocks
  p += "d";    // DICT closes the segment
  p += "l";    // LIST closes segments
  str("device_traces");
  p += "(N"
       "l";  // a list holding None (no trace)
  p += "d.";
  auto snap = load_memory_snapshot_buffer(p, "opcodes.pickle");
  ASSERT_TRUE(snap) << snap.error();
  ASSERT_EQ(snap->segments.size(), 1u);
  EXPECT_EQ(snap->segments[0].address, 1ull << 63);
  EXPECT_EQ(snap->segments[0].total_size, 4096);
  EXPECT_TRUE(snap->segments[0].expandable);
  ASSERT_EQ(snap->blocks.size(), 1u);
  EXPECT_EQ(snap->blocks[0].state, BlockState::kInactive);
}

TEST(MemorySnapshot, HostileInputIsAnErrorNotACrash) {
  const char* cases[] = {
      "\x80\x04}\x94(",  // truncated after MARK
      "\x80\x04\x8c\xff"
      "abc",                                  // string longer than the data
      "\x80\x04X\xff\xff\xff\x7f",            // 2 GB string announced
      "\x80\x04u.",                           // SETITEMS without MARK
      "\x80\x04(K\x01u.",                     // SETITEMS without a dict
      "\x80\x04\x8a\x10",                     // 16-byte integer
      "\x80\x04\x93.",                        // STACK_GLOBAL: not plain data
      "\x80\x04]K\x01.",                      // STOP with two values
      "{\"segments\": [{\"blocks\": [1, 2]",  // truncated JSON
      "{\"segments\": 12}",                   // not a snapshot shape
  };
  for (const char* c : cases) {
    auto snap = load_memory_snapshot_buffer(std::string(c), "bad");
    if (snap) continue;  // "segments": 12 is a snapshot with nothing in it
    EXPECT_EQ(snap.error().rfind("bad", 0), 0u) << snap.error();
    EXPECT_EQ(snap.error().find('\n'), std::string::npos);
  }
  // Nesting deeper than the reader allows.
  std::string deep = "{\"segments\": " + std::string(100000, '[');
  auto snap = load_memory_snapshot_buffer(deep, "deep");
  ASSERT_FALSE(snap);
  EXPECT_NE(snap.error().find("deeper"), std::string::npos) << snap.error();
}

// Issue 32 item 2: 200,000 nested lists (EMPTY_LIST x N, APPEND x N-1) overflowed the stack
// while the tree was freed (exit 139). Now the depth is bounded while the pickle is read.
TEST(MemorySnapshot, DeeplyNestedPickleIsAnError) {
  for (size_t n : {300u, 200000u}) {
    std::string p = "\x80\x04" + std::string(n, ']') + std::string(n - 1, 'a') + ".";
    auto snap = load_memory_snapshot_buffer(p, "deep.pickle");
    ASSERT_FALSE(snap) << n;
    EXPECT_EQ(snap.error().rfind("deep.pickle: byte ", 0), 0u) << snap.error();
    EXPECT_NE(snap.error().find("nested deeper than 256 levels"), std::string::npos)
        << snap.error();
    EXPECT_EQ(snap.error().find('\n'), std::string::npos);
  }
  // Within the bound: a snapshot whose allocator_settings hold 200 nested lists loads.
  std::string p =
      "\x80\x04}(\x8c\x08segments]\x8c\x12"
      "allocator_settings}\x8c\x01x" +
      std::string(200, ']') + std::string(199, 'a') + "su.";
  auto snap = load_memory_snapshot_buffer(p, "ok.pickle");
  ASSERT_TRUE(snap) << snap.error();
  ASSERT_EQ(snap->allocator_settings.size(), 1u);
  EXPECT_EQ(snap->allocator_settings[0].second, std::string(200, '[') + std::string(200, ']'));
}

// The parsed tree frees in a loop: a million nested lists (no reader builds them now; the
// destructor must not depend on that) recursed ~1e6 frames deep and overflowed the stack.
TEST(MemorySnapshot, DeepPyValueTreeFreesWithoutRecursion) {
  using import::PyKind;
  auto list = [] {
    import::PyVal v;
    v.kind = PyKind::kList;
    v.obj = std::make_shared<import::PyObj>();
    v.obj->kind = PyKind::kList;
    return v;
  };
  import::PyVal top = list();
  import::PyObj* at = top.obj.get();
  for (int i = 0; i < 1000000; ++i) {
    at->items.push_back(list());
    at = at->items.back().obj.get();
  }
  import::PyVal shared = top.obj->items[0];  // a subtree still referenced elsewhere survives
  top = import::PyVal();
  ASSERT_EQ(shared.obj.use_count(), 1);
  EXPECT_EQ(shared.obj->items.size(), 1u);
}

// A list stored in itself, or changed after it was stored in another, would be a cycle that is
// never freed (or a depth the reader cannot count): refused, whatever the memo says.
TEST(MemorySnapshot, PickleCyclesAreRefused) {
  const std::string cases[] = {
      std::string("\x80\x04]\x94h\x00"
                  "a.",
                  8),  // l = []; l.append(l)
      std::string("\x80\x04]\x94]\x94h\x00"
                  "aa.",
                  11),                                   // a = []; b = [a]; a.append(b)
      std::string("\x80\x04}\x94\x8c\x01kh\x00s.", 11),  // d = {}; d["k"] = d
  };
  for (const std::string& bytes : cases) {
    auto snap = load_memory_snapshot_buffer(bytes, "cycle.pickle");
    ASSERT_FALSE(snap) << bytes;
    EXPECT_NE(snap.error().find("cycle"), std::string::npos) << snap.error();
  }
}

}  // namespace

// A snapshot file loads as a trace whose analysis stage has the allocator view: the same JSON as
// analyzing the snapshot directly, text times relative to the first entry (+2 us for the OOM).
TEST(MemorySnapshot, LoadedAsATraceTheStageHasTheAllocatorView) {
  std::string path = ::testing::TempDir() + "stage_snapshot.json";
  std::ofstream(path) << kSnapshotJson;
  Result<Trace> t = load_trace(path);
  ASSERT_TRUE(t) << t.error();
  ASSERT_TRUE(t->memory_snapshot);
  AnalysisSet set(std::move(t.value()));
  ASSERT_FALSE(set.unavailable(AnalysisId::kMemorySnapshot));
  auto snap = load_memory_snapshot(path);
  ASSERT_TRUE(snap) << snap.error();
  JsonWriter w;
  write_memory_snapshot_json(
      w, analyze_memory_snapshot(snap.value(), AnalysisOptions().memory_snapshot));
  // The stage's JSON leads with its schema stamp (docs/json.md), then the writer's document.
  EXPECT_EQ(analysis_json(set, AnalysisId::kMemorySnapshot),
            "{\"schema\":\"mlprof.memory_snapshot/1\"," + w.str().substr(1));
  EXPECT_EQ(set.memory_snapshot().start_time_us, 1);
  std::string text = render_analysis_text(set, AnalysisId::kMemorySnapshot);
  EXPECT_NE(text.find("OOM at entry 2 (+2"), std::string::npos) << text;
  std::remove(path.c_str());
}

namespace {

std::vector<SnapshotTraceEntry> decoded(const SnapshotTrace& t, size_t begin, size_t end) {
  std::vector<SnapshotTraceEntry> out;
  t.for_each(begin, end, [&](size_t, const SnapshotTraceEntry& e) { out.push_back(e); });
  return out;
}

bool same(const SnapshotTraceEntry& a, const SnapshotTraceEntry& b) {
  return a.addr == b.addr && a.size == b.size && a.time_us == b.time_us && a.stream == b.stream &&
         a.stack == b.stack && a.text == b.text && a.device == b.device && a.action == b.action;
}

}  // namespace

// The encoded trace gives back every field exactly: extreme and negative values, addresses that
// go down, missing times, stream changes, several devices, ranges that start inside a device.
TEST(MemorySnapshot, EncodedTraceRoundTrips) {
  std::vector<SnapshotTraceEntry> in;
  uint64_t x = 88172645463325252ull;
  auto rnd = [&] {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
  };
  for (int16_t device : {0, 1, 3}) {
    for (int k = 0; k < 70000; ++k) {  // several 1 MiB blocks per device
      SnapshotTraceEntry e;
      e.device = device;
      e.action = static_cast<SnapshotAction>(rnd() % kSnapshotActionCount);
      e.addr = k % 7 == 0 ? rnd() : 0x7f0000000000ull + (rnd() % (1ull << 34));
      e.size = k % 11 == 0 ? -static_cast<int64_t>(rnd() % 1000) : static_cast<int64_t>(rnd() >> 1);
      e.time_us = k % 5 == 0 ? -1 : static_cast<int64_t>(1700000000000000ll + k * 3 - (rnd() % 9));
      e.stream = k % 13 == 0 ? static_cast<int64_t>(rnd()) : 0;
      e.stack = static_cast<uint32_t>(rnd() % 3 == 0 ? 0 : rnd());
      e.text = static_cast<StringId>(k % 17 == 0 ? rnd() : 0);
      in.push_back(e);
    }
  }
  in[5].addr = ~0ull;
  in[6].addr = 0;
  in[7].size = INT64_MIN;
  in[8].size = INT64_MAX;
  in[9].time_us = INT64_MAX;
  SnapshotTrace t = SnapshotTrace::from_entries(in);
  ASSERT_EQ(t.size(), in.size());
  ASSERT_EQ(t.parts().size(), 3u);
  EXPECT_LT(t.encoded_bytes(), in.size() * sizeof(SnapshotTraceEntry));
  std::vector<SnapshotTraceEntry> all = decoded(t, 0, t.size());
  ASSERT_EQ(all.size(), in.size());
  size_t bad = 0;
  for (size_t i = 0; i < in.size(); ++i) bad += !same(all[i], in[i]);
  EXPECT_EQ(bad, 0u);
  // A device's range, and a range that starts and ends inside one.
  std::vector<SnapshotTraceEntry> dev1 = decoded(t, 70000, 140000);
  ASSERT_EQ(dev1.size(), 70000u);
  EXPECT_TRUE(same(dev1.front(), in[70000]) && same(dev1.back(), in[139999]));
  std::vector<SnapshotTraceEntry> mid = decoded(t, 100000, 100003);
  ASSERT_EQ(mid.size(), 3u);
  EXPECT_TRUE(same(mid[0], in[100000]) && same(mid[2], in[100002]));
  EXPECT_TRUE(decoded(t, t.size(), t.size()).empty());
  // Stopping early.
  size_t seen = 0;
  t.for_each([&](size_t, const SnapshotTraceEntry&) { return ++seen < 10; });
  EXPECT_EQ(seen, 10u);
}

// A trace far beyond kSnapshotTraceFullEntries loads as a bounded Trace: per bucket its lowest
// and highest replayed point, so the replayed peak (computed here from the plain entries) is the
// Trace's peak, and the net change is kept; the allocator view still replays every entry.
TEST(MemorySnapshot, HugeTraceIsDownsampledInTheTraceNotInTheReplay) {
  MemorySnapshot s;
  s.source = "huge";
  std::vector<SnapshotTraceEntry> in;
  const size_t n = 3 * kSnapshotTraceFullEntries + 123;
  std::vector<std::pair<uint64_t, int64_t>> live;
  uint64_t next = 0x10000, x = 12345;
  int64_t active = 0, peak = 0;
  for (size_t k = 0; k < n; ++k) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    SnapshotTraceEntry e;
    e.time_us = static_cast<int64_t>(1000 + k);
    // A slow rise with noise, then a fall: one clear peak somewhere in the middle.
    bool grow = live.empty() || (x >> 33) % 100 < (k < n / 2 ? 55u : 40u);
    if (grow) {
      e.action = SnapshotAction::kAlloc;
      e.addr = next;
      e.size = static_cast<int64_t>(512 * (1 + (x >> 40) % 64));
      next += static_cast<uint64_t>(e.size);
      live.emplace_back(e.addr, e.size);
      active += e.size;
    } else {
      size_t j = (x >> 20) % live.size();
      e.action = SnapshotAction::kFreeCompleted;
      e.addr = live[j].first;
      e.size = live[j].second;
      live[j] = live.back();
      live.pop_back();
      active -= e.size;
    }
    peak = std::max(peak, active);
    in.push_back(e);
  }
  s.trace = SnapshotTrace::from_entries(in);
  Trace t = memory_snapshot_to_trace(s);
  EXPECT_LE(t.memory.size(), kSnapshotTraceFullEntries + 2);
  EXPECT_GT(t.memory.size(), kSnapshotTraceFullEntries / 2);
  int64_t trace_peak = 0, sum = 0;
  for (size_t i = 0; i < t.memory.size(); ++i) {
    trace_peak = std::max(trace_peak, t.memory.total_allocated[i]);
    sum += t.memory.bytes[i];
    EXPECT_EQ(t.memory.addr[i], 0u);
    EXPECT_EQ(sum, t.memory.total_allocated[i]);
  }
  EXPECT_EQ(trace_peak, peak);
  EXPECT_EQ(sum, active);
  bool noted = false;
  for (const auto& [k, v] : t.meta.extra)
    noted |= k == "mlprof_snapshot_downsampled_gpu0" &&
             v.find("\"entries\": " + std::to_string(n)) != std::string::npos;
  EXPECT_TRUE(noted);
  SnapshotResult r = analyze_memory_snapshot(s);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].entries, n);
  EXPECT_EQ(r.devices[0].peak_active, peak);
  EXPECT_EQ(r.devices[0].end_active, active);
}

TEST(MemorySnapshot, SegmentEntriesLeftOutPastTheInstantBoundStillMoveReserved) {
  MemorySnapshot s;
  s.source = "many segments";
  std::vector<SnapshotTraceEntry> in;
  auto add = [&](SnapshotAction a, uint64_t addr, int64_t size) {
    SnapshotTraceEntry e;
    e.action = a;
    e.addr = addr;
    e.size = size;
    e.time_us = static_cast<int64_t>(1000 + in.size());
    in.push_back(e);
  };
  for (size_t k = 0; k < kSnapshotTraceFullEntries; ++k)
    add(SnapshotAction::kSegmentAlloc, 0x1000 + k, 1);
  for (int k = 0; k < 10; ++k) add(SnapshotAction::kSegmentAlloc, 0x100000000ull + k, 100);
  add(SnapshotAction::kAlloc, 0x1000, 8);
  s.trace = SnapshotTrace::from_entries(in);
  Trace t = memory_snapshot_to_trace(s);
  ASSERT_GE(t.memory.size(), 1u);
  EXPECT_EQ(t.memory.total_reserved[t.memory.size() - 1],
            static_cast<int64_t>(kSnapshotTraceFullEntries) + 1000);
  EXPECT_EQ(t.memory.total_allocated[t.memory.size() - 1], 8);
  bool noted = false;
  for (const auto& [k, v] : t.meta.extra)
    noted |= k == "mlprof_snapshot_downsampled_gpu0" &&
             v.find("\"instants_left_out\": 10") != std::string::npos;
  EXPECT_TRUE(noted);
}
