// The other event tables: `instant` (Perfetto: instant / slice with dur 0), `counter`,
// `flow`, `memory` (Perfetto: heap_profile_allocation) and `stack_frame` (Perfetto:
// stack_profile_frame / stack_profile_callsite). Ids narrow by equality; the rest is scanned.
#include <algorithm>

#include "sql/virtual_table.h"

namespace mlprof::sql {
namespace {

void result_id_or_null(sqlite3_context* ctx, int64_t base, int64_t local, bool present) {
  if (present)
    sqlite3_result_int64(ctx, base + local);
  else
    sqlite3_result_null(ctx);
}

void instant_cell(sqlite3_context* ctx, const TraceSet& set, size_t p, uint64_t row, int col) {
  const Trace& t = *set.parts[p].trace;
  const InstantTable& in = t.instants;
  switch (col) {
    case 0:
      sqlite3_result_int64(ctx, set.base[p].instant + static_cast<int64_t>(row));
      break;
    case 1:
      sqlite3_result_int64(ctx, in.ts[row]);
      break;
    case 2:
      sqlite3_result_int64(ctx, set.base[p].track + in.track[row]);
      break;
    case 3:
      result_string(ctx, t, in.name[row]);
      break;
    case 4:
      result_string(ctx, t, in.cat[row]);
      break;
    case 5: {
      char scope = static_cast<char>(in.scope[row]);
      sqlite3_result_text(ctx, &scope, 1, SQLITE_TRANSIENT);
      break;
    }
  }
}

void counter_cell(sqlite3_context* ctx, const TraceSet& set, size_t p, uint64_t row, int col) {
  const Trace& t = *set.parts[p].trace;
  const CounterTable& c = t.counters;
  switch (col) {
    case 0:
      sqlite3_result_int64(ctx, set.base[p].counter + static_cast<int64_t>(row));
      break;
    case 1:
      sqlite3_result_int64(ctx, c.ts[row]);
      break;
    case 2:
      sqlite3_result_int64(ctx, set.base[p].series + c.series[row]);
      break;
    case 3:
      result_string(ctx, t, t.counter_series[c.series[row]].name);
      break;
    case 4:
      sqlite3_result_double(ctx, c.value[row]);
      break;
  }
}

void flow_cell(sqlite3_context* ctx, const TraceSet& set, size_t p, uint64_t row, int col) {
  const Trace& t = *set.parts[p].trace;
  const FlowTable& f = t.flows;
  const IdBase& b = set.base[p];
  switch (col) {
    case 0:
      sqlite3_result_int64(ctx, b.flow + static_cast<int64_t>(row));
      break;
    case 1:
      sqlite3_result_int64(ctx, static_cast<int64_t>(f.id[row]));
      break;
    case 2:
      result_string(ctx, t, f.cat[row]);
      break;
    case 3:
      result_id_or_null(ctx, b.slice, f.src_slice[row], f.src_slice[row] >= 0);
      break;
    case 4:
      result_id_or_null(ctx, b.slice, f.dst_slice[row], f.dst_slice[row] >= 0);
      break;
    case 5:
      sqlite3_result_int64(ctx, f.src_ts[row]);
      break;
    case 6:
      sqlite3_result_int64(ctx, f.dst_ts[row]);
      break;
    case 7:
      sqlite3_result_int64(ctx, b.track + f.src_track[row]);
      break;
    case 8:
      sqlite3_result_int64(ctx, b.track + f.dst_track[row]);
      break;
    case 9:
      sqlite3_result_int64(ctx, f.dst_next[row]);
      break;
  }
}

std::string_view device_type_name(int8_t d) {
  switch (static_cast<DeviceType>(d)) {
    case DeviceType::kCpu:
      return "cpu";
    case DeviceType::kCuda:
      return "cuda";
    default:
      return "other";
  }
}

void memory_cell(sqlite3_context* ctx, const TraceSet& set, size_t p, uint64_t row, int col) {
  const Trace& t = *set.parts[p].trace;
  const MemoryTable& m = t.memory;
  const IdBase& b = set.base[p];
  switch (col) {
    case 0:
      sqlite3_result_int64(ctx, b.memory + static_cast<int64_t>(row));
      break;
    case 1:
      sqlite3_result_int64(ctx, m.ts[row]);
      break;
    case 2:
      sqlite3_result_int64(ctx, b.track + m.track[row]);
      break;
    case 3:
      sqlite3_result_int64(ctx, static_cast<int64_t>(m.addr[row]));
      break;
    case 4:
      sqlite3_result_int64(ctx, m.bytes[row]);
      break;
    case 5:
      result_text(ctx, device_type_name(m.device_type[row]));
      break;
    case 6:
      sqlite3_result_int(ctx, m.device_id[row]);
      break;
    case 7:
      result_id_or_null(ctx, 0, m.total_allocated[row], m.total_allocated[row] >= 0);
      break;
    case 8:
      result_id_or_null(ctx, 0, m.total_reserved[row], m.total_reserved[row] >= 0);
      break;
    case 9:
      result_id_or_null(ctx, b.stack, m.stack[row], m.stack[row] != 0);
      break;
    case 10:
      result_id_or_null(ctx, b.slice, m.slice[row], m.slice[row] >= 0);
      break;
  }
}

// Frames of all stacks, in stack order; the owning stack of a frame row by binary search over
// frames_begin (stacks are appended, so their frame ranges ascend).
uint32_t frame_stack(const StackTable& s, uint64_t row) {
  const auto& fb = s.frames_begin;
  auto it = std::upper_bound(fb.begin(), fb.end(), static_cast<uint32_t>(row));
  uint32_t st = static_cast<uint32_t>(it - fb.begin()) - 1;
  // Skip empty stacks that start at the same frame.
  while (st > 0 && s.frames_count[st] == 0) --st;
  return st;
}

void frame_cell(sqlite3_context* ctx, const TraceSet& set, size_t p, uint64_t row, int col) {
  const Trace& t = *set.parts[p].trace;
  const StackTable& s = t.stacks;
  switch (col) {
    case 0:
      sqlite3_result_int64(ctx, set.base[p].frame + static_cast<int64_t>(row));
      break;
    case 1: {
      uint32_t st = frame_stack(s, row);
      sqlite3_result_int64(ctx, set.base[p].stack + st);
      break;
    }
    case 2: {
      uint32_t st = frame_stack(s, row);
      sqlite3_result_int64(ctx, static_cast<int64_t>(row - s.frames_begin[st]));
      break;
    }
    case 3:
      result_string(ctx, t, t.stack_frames.name[row]);
      break;
  }
}

uint64_t frame_count(const Trace& t) {
  // Frames that belong to a stack (the frames of stack ranges, which ascend).
  const StackTable& s = t.stacks;
  if (s.frames_begin.empty() || !std::is_sorted(s.frames_begin.begin(), s.frames_begin.end()))
    return 0;
  return t.stack_frames.size();
}

}  // namespace

int register_event_tables(sqlite3* db, const TraceSet& set, std::string& error) {
  auto add = [&](const char* name, std::vector<ColumnSpec> cols, SimpleTable::Count count,
                 int64_t IdBase::*base, SimpleTable::Cell cell) {
    return register_table(
        db, std::make_unique<SimpleTable>(set, name, std::move(cols), count, base, cell), error);
  };
  int rc = add(
      "instant",
      {{"id", "INTEGER"},
       {"ts", "INTEGER"},
       {"track_id", "INTEGER"},
       {"name", "TEXT"},
       {"category", "TEXT"},
       {"scope", "TEXT"}},
      [](const Trace& t) -> uint64_t { return t.instants.size(); }, &IdBase::instant, instant_cell);
  if (rc == SQLITE_OK)
    rc = add(
        "counter",
        {{"id", "INTEGER"},
         {"ts", "INTEGER"},
         {"track_id", "INTEGER"},
         {"name", "TEXT"},
         {"value", "REAL"}},
        [](const Trace& t) -> uint64_t { return t.counters.size(); }, &IdBase::counter,
        counter_cell);
  if (rc == SQLITE_OK)
    rc = add(
        "flow",
        {{"id", "INTEGER"},
         {"flow_id", "INTEGER"},
         {"category", "TEXT"},
         {"slice_out", "INTEGER"},
         {"slice_in", "INTEGER"},
         {"ts_out", "INTEGER"},
         {"ts_in", "INTEGER"},
         {"track_out", "INTEGER"},
         {"track_in", "INTEGER"},
         {"dst_next", "INTEGER"}},
        [](const Trace& t) -> uint64_t { return t.flows.size(); }, &IdBase::flow, flow_cell);
  if (rc == SQLITE_OK)
    rc = add(
        "memory",
        {{"id", "INTEGER"},
         {"ts", "INTEGER"},
         {"track_id", "INTEGER"},
         {"addr", "INTEGER"},
         {"bytes", "INTEGER"},
         {"device_type", "TEXT"},
         {"device_id", "INTEGER"},
         {"total_allocated", "INTEGER"},
         {"total_reserved", "INTEGER"},
         {"stack_id", "INTEGER"},
         {"slice_id", "INTEGER"}},
        [](const Trace& t) -> uint64_t { return t.memory.size(); }, &IdBase::memory, memory_cell);
  if (rc == SQLITE_OK)
    rc = add("stack_frame",
             {{"id", "INTEGER"}, {"stack_id", "INTEGER"}, {"depth", "INTEGER"}, {"name", "TEXT"}},
             frame_count, &IdBase::frame, frame_cell);
  return rc;
}

}  // namespace mlprof::sql
