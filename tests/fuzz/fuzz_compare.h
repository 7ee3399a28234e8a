// What the fuzz targets compare: two Traces in full, strings as text (string ids are internal:
// the fast path may leave a string interned that it then handed to simdjson). A difference is
// printed (for the crash log) and aborts. Messages are only built on a difference: the
// comparison runs on every fuzz input.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>

#include "mlprof/import.h"

namespace mlprof::fuzz {

// Reports what differs (for the crash log) and aborts.
[[noreturn]] inline void differ(const char* ways, const std::string& what) {
  std::fprintf(stderr, "fuzz: %s differ: %s\n", ways, what.c_str());
  __builtin_trap();
}

// Thrown instead of aborting when Compare::quiet is set.
struct Difference {
  std::string what;
};

struct Compare {
  const Trace& a;
  const Trace& b;
  const char* ways;
  bool import = true;  // also what only a JSON import has: problems, warnings, labeled ids
  bool quiet = false;  // throw Difference instead of printing and aborting

  // `what` (and the row `i`, `part` when given) name the difference.
  [[noreturn]] void fail(std::string_view what, size_t i = SIZE_MAX,
                         std::string_view part = {}) const {
    std::string w(what);
    if (i != SIZE_MAX) w += " " + std::to_string(i);
    if (!part.empty()) w += " " + std::string(part);
    if (quiet) throw Difference{w};
    differ(ways, w);
  }
  void text(StringId x, StringId y, std::string_view what, size_t i = SIZE_MAX,
            std::string_view part = {}) const {
    if (a.str(x) != b.str(y)) fail(what, i, part);
  }
  template <typename T>
  void eq(const T& x, const T& y, std::string_view what, size_t i = SIZE_MAX,
          std::string_view part = {}) const {
    if (!(x == y)) fail(what, i, part);
  }

  void tables() const {
    Trace::for_each_table([&](std::string_view table, auto member) {
      using Table = std::remove_cvref_t<decltype(a.*member)>;
      Table::for_each_column([&](auto c) {
        const auto& x = (a.*member).*c.member;
        const auto& y = (b.*member).*c.member;
        if (x.size() != y.size()) fail(std::string(table) + "." + c.name + " rows");
        for (size_t i = 0; i < x.size(); ++i) {
          bool same;
          if constexpr (decltype(c)::ref == schema::Ref::kString)
            same = a.str(x[i]) == b.str(y[i]);
          else
            same = x[i] == y[i];
          if (!same) fail(std::string(table) + "." + c.name + " row", i);
        }
      });
    });
    eq(a.track_slice_begin, b.track_slice_begin, "track_slice_begin");
  }

  void all() const {
    tables();
    eq(a.processes.size(), b.processes.size(), "processes");
    for (size_t i = 0; i < a.processes.size(); ++i) {
      const Process &p = a.processes[i], &q = b.processes[i];
      eq(p.pid, q.pid, "process", i, "pid");
      if (import) eq(p.labeled, q.labeled, "process", i, "labeled");
      text(p.label, q.label, "process", i, "label");
      text(p.name, q.name, "process", i, "name");
      eq(p.sort_index, q.sort_index, "process", i, "sort index");
      eq(p.is_gpu, q.is_gpu, "process", i, "gpu");
      eq(p.labels.size(), q.labels.size(), "process", i, "labels");
      for (size_t k = 0; k < p.labels.size(); ++k) {
        text(p.labels[k].first, q.labels[k].first, "process", i, "label key");
        text(p.labels[k].second, q.labels[k].second, "process", i, "label value");
      }
    }
    eq(a.tracks.size(), b.tracks.size(), "tracks");
    for (size_t i = 0; i < a.tracks.size(); ++i) {
      const Track &s = a.tracks[i], &t = b.tracks[i];
      eq(s.kind, t.kind, "track", i, "kind");
      eq(s.process, t.process, "track", i, "process");
      eq(s.pid, t.pid, "track", i, "pid");
      eq(s.tid, t.tid, "track", i, "tid");
      if (import) eq(s.labeled, t.labeled, "track", i, "labeled");
      text(s.label, t.label, "track", i, "label");
      text(s.name, t.name, "track", i, "name");
      eq(s.sort_index, t.sort_index, "track", i, "sort index");
      eq(s.device, t.device, "track", i, "device");
      eq(s.stream, t.stream, "track", i, "stream");
    }
    eq(a.args.size(), b.args.size(), "args");
    for (size_t i = 0; i < a.args.size(); ++i) {
      const Arg &x = a.args[i], &y = b.args[i];
      text(x.key, y.key, "arg", i, "key");
      eq(x.type, y.type, "arg", i, "type");
      if (x.type == ArgType::kString || x.type == ArgType::kJson)
        text(x.s, y.s, "arg", i, "value");
      else if (x.type == ArgType::kBool)
        eq(x.b, y.b, "arg", i, "value");
      else if (x.type != ArgType::kNull)
        eq(x.u, y.u, "arg", i, "value");  // the bits: a NaN is equal to itself
    }
    eq(a.counter_series.size(), b.counter_series.size(), "counter series");
    for (size_t i = 0; i < a.counter_series.size(); ++i) {
      eq(a.counter_series[i].process, b.counter_series[i].process, "series", i, "process");
      text(a.counter_series[i].name, b.counter_series[i].name, "series", i, "name");
    }
    const TraceMeta &m = a.meta, &n = b.meta;
    eq(m.format, n.format, "format");
    eq(m.base_time_ns, n.base_time_ns, "base time");
    eq(m.rank, n.rank, "rank");
    eq(m.world_size, n.world_size, "world size");
    eq(m.schema_version, n.schema_version, "schema version");
    eq(m.display_time_unit, n.display_time_unit, "display time unit");
    eq(m.devices.size(), n.devices.size(), "devices");
    eq(m.extra, n.extra, "extra top-level keys");
    eq(m.skipped_events, n.skipped_events, "skipped events");
    eq(a.begin_ns(), b.begin_ns(), "begin");
    eq(a.end_ns(), b.end_ns(), "end");
    if (!import) return;
    const ImportStats &s = m.import_stats, &t = n.import_stats;
    eq(s.events_read, t.events_read, "events read");
    for (size_t k = 0; k < s.kinds.size(); ++k) {
      std::string_view w = import_problem_name(static_cast<ImportProblem>(k));
      eq(s.kinds[k].count, t.kinds[k].count, w, SIZE_MAX, "count");
      eq(s.kinds[k].first_offset, t.kinds[k].first_offset, w, SIZE_MAX, "offset");
      eq(s.kinds[k].first_what, t.kinds[k].first_what, w, SIZE_MAX, "what");
    }
    if (s.any() && import_warnings(a) != import_warnings(b)) fail("warnings");
  }
};

}  // namespace mlprof::fuzz
