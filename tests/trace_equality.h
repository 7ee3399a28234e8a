// Whole-Trace equality for tests: every column of every event table (the schema in
// mlprof/trace.h, input and computed), plus strings, processes, tracks, args, counter series
// and metadata. A column added to the schema is compared without a change here.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "mlprof/trace.h"

namespace mlprof::test {

// Compares one column; reports the first differing row by table and column name.
template <typename T>
void expect_same_column(const std::vector<T>& a, const std::vector<T>& b, std::string_view table,
                        const char* column) {
  ASSERT_EQ(a.size(), b.size()) << table << "." << column << " length";
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] == b[i])) {
      FAIL() << table << "." << column << " differs at row " << i << ": " << +a[i] << " vs "
             << +b[i];
    }
  }
}

// Every column of every event table.
inline void expect_same_tables(const Trace& a, const Trace& b) {
  Trace::for_each_table([&](std::string_view table, auto member) {
    using Table = std::remove_cvref_t<decltype(a.*member)>;
    Table::for_each_column([&](auto c) {
      expect_same_column((a.*member).*c.member, (b.*member).*c.member, table, c.name);
    });
  });
  expect_same_column(a.track_slice_begin, b.track_slice_begin, "trace", "track_slice_begin");
}

struct SameTraceOptions {
  bool source = false;  // also compare meta.source
  bool labeled = true;  // compare Process/Track::labeled (.mlprof files do not keep it)
};

inline void expect_same_trace(const Trace& a, const Trace& b, SameTraceOptions o = {}) {
  ASSERT_EQ(a.strings.size(), b.strings.size());
  for (StringId i = 0; i < a.strings.size(); ++i) ASSERT_EQ(a.str(i), b.str(i)) << "string " << i;
  ASSERT_EQ(a.processes.size(), b.processes.size());
  for (size_t i = 0; i < a.processes.size(); ++i) {
    const Process &p = a.processes[i], &q = b.processes[i];
    EXPECT_EQ(p.pid, q.pid) << "process " << i;
    EXPECT_EQ(p.label, q.label) << "process " << i;
    if (o.labeled) {
      EXPECT_EQ(p.labeled, q.labeled) << "process " << i;
    }
    EXPECT_EQ(p.name, q.name) << "process " << i;
    EXPECT_EQ(p.sort_index, q.sort_index) << "process " << i;
    EXPECT_EQ(p.is_gpu, q.is_gpu) << "process " << i;
    EXPECT_EQ(p.labels, q.labels) << "process " << i;
  }
  ASSERT_EQ(a.tracks.size(), b.tracks.size());
  for (size_t i = 0; i < a.tracks.size(); ++i) {
    const Track &s = a.tracks[i], &t = b.tracks[i];
    EXPECT_EQ(s.kind, t.kind) << "track " << i;
    EXPECT_EQ(s.process, t.process) << "track " << i;
    EXPECT_EQ(s.pid, t.pid) << "track " << i;
    EXPECT_EQ(s.tid, t.tid) << "track " << i;
    EXPECT_EQ(s.label, t.label) << "track " << i;
    if (o.labeled) {
      EXPECT_EQ(s.labeled, t.labeled) << "track " << i;
    }
    EXPECT_EQ(s.name, t.name) << "track " << i;
    EXPECT_EQ(s.sort_index, t.sort_index) << "track " << i;
    EXPECT_EQ(s.device, t.device) << "track " << i;
    EXPECT_EQ(s.stream, t.stream) << "track " << i;
  }
  ASSERT_EQ(a.args.size(), b.args.size());
  for (size_t i = 0; i < a.args.size(); ++i) {
    ASSERT_EQ(a.args[i].key, b.args[i].key) << "arg " << i;
    ASSERT_EQ(a.args[i].type, b.args[i].type) << "arg " << i;
    ASSERT_EQ(a.args[i].u, b.args[i].u) << "arg " << i;
  }
  ASSERT_EQ(a.counter_series.size(), b.counter_series.size());
  for (size_t i = 0; i < a.counter_series.size(); ++i) {
    EXPECT_EQ(a.counter_series[i].process, b.counter_series[i].process) << "series " << i;
    EXPECT_EQ(a.counter_series[i].name, b.counter_series[i].name) << "series " << i;
    EXPECT_EQ(a.counter_series[i].unit, b.counter_series[i].unit) << "series " << i;
  }
  expect_same_tables(a, b);
  if (o.source) {
    EXPECT_EQ(a.meta.source, b.meta.source);
  }
  EXPECT_EQ(a.meta.format, b.meta.format);
  EXPECT_EQ(a.meta.base_time_ns, b.meta.base_time_ns);
  EXPECT_EQ(a.meta.rank, b.meta.rank);
  EXPECT_EQ(a.meta.world_size, b.meta.world_size);
  EXPECT_EQ(a.meta.schema_version, b.meta.schema_version);
  EXPECT_EQ(a.meta.display_time_unit, b.meta.display_time_unit);
  ASSERT_EQ(a.meta.devices.size(), b.meta.devices.size());
  for (size_t i = 0; i < a.meta.devices.size(); ++i) {
    EXPECT_EQ(a.meta.devices[i].name, b.meta.devices[i].name);
    EXPECT_EQ(a.meta.devices[i].num_sms, b.meta.devices[i].num_sms);
    EXPECT_EQ(a.meta.devices[i].total_global_mem, b.meta.devices[i].total_global_mem);
  }
  EXPECT_EQ(a.meta.extra, b.meta.extra);
  EXPECT_EQ(a.meta.dropped_events, b.meta.dropped_events);
  EXPECT_EQ(a.meta.skipped_events, b.meta.skipped_events);
  EXPECT_EQ(a.begin_ns(), b.begin_ns());
  EXPECT_EQ(a.end_ns(), b.end_ns());
}

}  // namespace mlprof::test
