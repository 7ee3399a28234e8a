// The tables that describe where events happen: `track` (Perfetto: track / thread_track),
// `process`, `counter_track` and `trace_info` (Perfetto: metadata). `thread` and `gpu_stream`
// are views over `track` (trace_database.cpp).
#include "sql/virtual_table.h"

namespace mlprof::sql {
namespace {

std::string_view track_type(TrackKind k) {
  switch (k) {
    case TrackKind::kThread:
      return "thread";
    case TrackKind::kGpuStream:
      return "gpu_stream";
    case TrackKind::kAsync:
      return "async";
  }
  return "thread";
}

void track_cell(sqlite3_context* ctx, const TraceSet& set, size_t p, uint64_t row, int col) {
  const Trace& t = *set.parts[p].trace;
  const Track& tr = t.tracks[row];
  switch (col) {
    case 0:
      sqlite3_result_int64(ctx, set.base[p].track + static_cast<int64_t>(row));
      break;
    case 1:
      result_text(ctx, track_type(tr.kind));
      break;
    case 2:
      result_string(ctx, t, tr.name);
      break;
    case 3: {
      std::string label = t.track_label(static_cast<uint32_t>(row));
      sqlite3_result_text(ctx, label.data(), static_cast<int>(label.size()), SQLITE_TRANSIENT);
      break;
    }
    case 4:
      sqlite3_result_int64(ctx, tr.pid);
      break;
    case 5:
      if (tr.labeled)
        result_string(ctx, t, tr.label);
      else
        sqlite3_result_int64(ctx, tr.tid);
      break;
    case 6:
      sqlite3_result_int64(ctx, set.base[p].process + tr.process);
      break;
    case 7:
      if (tr.kind == TrackKind::kGpuStream)
        sqlite3_result_int(ctx, tr.device);
      else
        sqlite3_result_null(ctx);
      break;
    case 8:
      if (tr.kind == TrackKind::kGpuStream)
        sqlite3_result_int64(ctx, tr.stream);
      else
        sqlite3_result_null(ctx);
      break;
    case 9:
      sqlite3_result_int(ctx, tr.sort_index);
      break;
  }
}

void process_cell(sqlite3_context* ctx, const TraceSet& set, size_t p, uint64_t row, int col) {
  const Trace& t = *set.parts[p].trace;
  const Process& pr = t.processes[row];
  switch (col) {
    case 0:
      sqlite3_result_int64(ctx, set.base[p].process + static_cast<int64_t>(row));
      break;
    case 1:
      if (pr.labeled)
        result_string(ctx, t, pr.label);
      else
        sqlite3_result_int64(ctx, pr.pid);
      break;
    case 2:
      result_string(ctx, t, pr.name);
      break;
    case 3:
      sqlite3_result_int(ctx, pr.is_gpu ? 1 : 0);
      break;
    case 4:
      sqlite3_result_int(ctx, pr.sort_index);
      break;
  }
}

void series_cell(sqlite3_context* ctx, const TraceSet& set, size_t p, uint64_t row, int col) {
  const Trace& t = *set.parts[p].trace;
  const CounterSeries& s = t.counter_series[row];
  switch (col) {
    case 0:
      sqlite3_result_int64(ctx, set.base[p].series + static_cast<int64_t>(row));
      break;
    case 1:
      result_string(ctx, t, s.name);
      break;
    case 2:
      result_string(ctx, t, s.unit);
      break;
    case 3:
      sqlite3_result_int64(ctx, set.base[p].process + s.process);
      break;
  }
}

void info_cell(sqlite3_context* ctx, const TraceSet& set, size_t p, uint64_t, int col) {
  const Trace& t = *set.parts[p].trace;
  const TraceMeta& m = t.meta;
  switch (col) {
    case 0:
      result_text(ctx, m.source);
      break;
    case 1:
      result_text(ctx, m.format);
      break;
    case 2:
      sqlite3_result_int(ctx, m.world_size);
      break;
    case 3:
      sqlite3_result_int64(ctx, m.base_time_ns);
      break;
    case 4:
      sqlite3_result_int64(ctx, t.begin_ns());
      break;
    case 5:
      sqlite3_result_int64(ctx, t.end_ns());
      break;
    case 6:
      sqlite3_result_int64(ctx, static_cast<int64_t>(t.slices.size()));
      break;
    case 7:
      sqlite3_result_int64(ctx, static_cast<int64_t>(t.instants.size()));
      break;
    case 8:
      sqlite3_result_int64(ctx, static_cast<int64_t>(t.counters.size()));
      break;
    case 9:
      sqlite3_result_int64(ctx, static_cast<int64_t>(t.flows.size()));
      break;
    case 10:
      sqlite3_result_int64(ctx, static_cast<int64_t>(t.meta.dropped_events));
      break;
    case 11:
      sqlite3_result_int64(ctx, static_cast<int64_t>(t.meta.skipped_events));
      break;
  }
}

}  // namespace

int register_track_tables(sqlite3* db, const TraceSet& set, std::string& error) {
  int rc = register_table(
      db,
      std::make_unique<SimpleTable>(
          set, "track",
          std::vector<ColumnSpec>{{"id", "INTEGER"},
                                  {"type", "TEXT"},
                                  {"name", "TEXT"},
                                  {"label", "TEXT"},
                                  {"pid", "INTEGER"},
                                  {"tid", ""},
                                  {"process_id", "INTEGER"},
                                  {"device", "INTEGER"},
                                  {"stream", "INTEGER"},
                                  {"sort_index", "INTEGER"}},
          [](const Trace& t) -> uint64_t { return t.tracks.size(); }, &IdBase::track, track_cell),
      error);
  if (rc != SQLITE_OK) return rc;
  rc = register_table(db,
                      std::make_unique<SimpleTable>(
                          set, "process",
                          std::vector<ColumnSpec>{{"id", "INTEGER"},
                                                  {"pid", ""},
                                                  {"name", "TEXT"},
                                                  {"is_gpu", "INTEGER"},
                                                  {"sort_index", "INTEGER"}},
                          [](const Trace& t) -> uint64_t { return t.processes.size(); },
                          &IdBase::process, process_cell),
                      error);
  if (rc != SQLITE_OK) return rc;
  rc = register_table(
      db,
      std::make_unique<SimpleTable>(
          set, "counter_track",
          std::vector<ColumnSpec>{
              {"id", "INTEGER"}, {"name", "TEXT"}, {"unit", "TEXT"}, {"process_id", "INTEGER"}},
          [](const Trace& t) -> uint64_t { return t.counter_series.size(); }, &IdBase::series,
          series_cell),
      error);
  if (rc != SQLITE_OK) return rc;
  return register_table(db,
                        std::make_unique<SimpleTable>(
                            set, "trace_info",
                            std::vector<ColumnSpec>{{"source", "TEXT"},
                                                    {"format", "TEXT"},
                                                    {"world_size", "INTEGER"},
                                                    {"base_time_ns", "INTEGER"},
                                                    {"begin_ns", "INTEGER"},
                                                    {"end_ns", "INTEGER"},
                                                    {"slices", "INTEGER"},
                                                    {"instants", "INTEGER"},
                                                    {"counters", "INTEGER"},
                                                    {"flows", "INTEGER"},
                                                    {"dropped_events", "INTEGER"},
                                                    {"skipped_events", "INTEGER"}},
                            [](const Trace&) -> uint64_t { return 1; }, nullptr, info_cell),
                        error);
}

}  // namespace mlprof::sql
