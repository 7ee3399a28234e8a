#include "import/memory_timeline_importer.h"

#include <simdjson.h>

#include <algorithm>

#include "trace/time_range.h"

namespace mlprof::import {

namespace {
// torch.profiler._memory_profiler: Action is an enum.auto() enum (PREEXISTING = 1, CREATE,
// INCREMENT_VERSION, DESTROY); categories are indices into _CATEGORY_TO_COLORS.
constexpr int kPreexisting = 1, kCreate = 2, kIncrementVersion = 3, kDestroy = 4;
constexpr const char* kCategories[] = {"parameter",       "optimizer_state", "input",
                                       "temporary",       "activation",      "gradient",
                                       "autograd_detail", "unknown"};
constexpr uint64_t kMaxBytes = 4ull << 30;
}  // namespace

Result<Trace> import_memory_timeline(ByteSource& src, const std::string& name) {
  std::string text;
  char buf[1 << 16];
  for (;;) {
    size_t n = src.read(buf, sizeof buf);
    if (n == 0) break;
    text.append(buf, n);
    if (text.size() > kMaxBytes) return Status::error(name + ": memory timeline larger than 4 GiB");
  }
  MLPROF_RETURN_IF_ERROR(src.status());
  simdjson::padded_string ps(text);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  simdjson::ondemand::array rows;
  if (parser.iterate(ps).get(doc) || doc.get_array().get(rows))
    return Status::error(name + ": invalid JSON (expected a memory timeline list)");
  struct Row {
    int64_t t;
    int64_t action, bytes, category;
  };
  std::vector<Row> all;
  for (auto row : rows) {
    simdjson::ondemand::array r;
    if (row.get_array().get(r))
      return Status::error(name + ": row " + std::to_string(all.size()) +
                           ": expected [time, action, bytes, category]");
    int64_t v[4] = {0, 0, 0, 7};
    size_t k = 0;
    for (auto x : r) {
      if (k < 4 && x.get_int64().get(v[k]))
        return Status::error(name + ": row " + std::to_string(all.size()) +
                             ": expected integers [time, action, bytes, category]");
      ++k;
    }
    if (k != 4)
      return Status::error(name + ": row " + std::to_string(all.size()) +
                           ": expected 4 values, found " + std::to_string(k));
    if (!time_in_range(v[0]))  // a span must fit 64 bits (trace/time_range.h)
      return Status::error(name + ": row " + std::to_string(all.size()) + ": time " +
                           std::to_string(v[0]) + " ns out of range (beyond +-4.6e18 ns)");
    all.push_back(Row{v[0], v[1], v[2], v[3]});
  }
  int64_t t0 = INT64_MAX;
  for (const Row& r : all)
    if (r.t >= 0) t0 = std::min(t0, r.t);
  if (t0 == INT64_MAX) t0 = 0;
  TraceBuilder b;
  uint32_t proc = b.process(0);
  b.trace().processes[proc].name = b.intern("memory timeline");
  uint32_t tracks[8];
  for (int c = 0; c < 8; ++c) {
    tracks[c] = b.thread_track(proc, c);
    b.trace().tracks[tracks[c]].name = b.intern(kCategories[c]);
  }
  int64_t total = 0;
  for (const Row& r : all) {
    int64_t delta = 0;
    if (r.action == kPreexisting || r.action == kCreate)
      delta = r.bytes;
    else if (r.action == kDestroy)
      delta = -std::abs(r.bytes);
    else if (r.action == kIncrementVersion)
      delta = r.bytes;  // a -size/+size pair
    else
      continue;
    total += delta;
    int64_t c = r.category >= 0 && r.category < 8 ? r.category : 7;
    b.add_memory(tracks[c], r.t < 0 ? t0 : r.t, 0, delta, DeviceType::kCuda, 0, total, -1);
  }
  Trace t = std::move(b).finish();
  t.meta.format = "pytorch-memory-timeline";
  return t;
}

}  // namespace mlprof::import
