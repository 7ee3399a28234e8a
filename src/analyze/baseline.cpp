#include "mlprof/analyze/baseline.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "trace/json_writer.h"

namespace mlprof {

namespace {

// Evenly spaced order statistics of `v` (min and max included), at most `k` of them.
std::vector<double> order_statistics(std::vector<double> v, size_t k) {
  if (v.size() <= k) return v;
  std::sort(v.begin(), v.end());
  std::vector<double> out;
  out.reserve(k);
  for (size_t i = 0; i < k; ++i) out.push_back(v[i * (v.size() - 1) / (k - 1)]);
  return out;
}

// Steps are few and each one matters to the step-time test: kept unless there are very many.
constexpr size_t kBaselineStepSamples = 4096;

std::string device_of(const Trace& t) {
  for (const DeviceInfo& d : t.meta.devices)
    if (!d.name.empty()) return d.name;
  for (size_t i = 0; i < t.tracks.size(); ++i)
    if (t.is_gpu_track(static_cast<uint32_t>(i))) return "";  // a GPU whose name was not recorded
  return "cpu";
}

// Row key for the overlap score: the name as compare matches it, and the category.
std::string key_of(const CompareGroup& g) {
  return compare_match_key(g.name) + '\x1f' + g.category;
}

}  // namespace

Baseline make_baseline(std::string name, const Trace& trace, const BottleneckResult& findings,
                       int32_t world_size, int64_t created_unix_s, bool sample) {
  Baseline b;
  b.name = std::move(name);
  b.created_unix_s = created_unix_s;
  b.source = trace.meta.source;
  b.format = trace.meta.format;
  b.device = device_of(trace);
  b.world_size = world_size;
  b.summary = compare_summary(trace);
  b.step_model = b.summary.totals.steps > 0 ? "steps" : "span";
  if (sample) {
    for (std::vector<CompareGroup>* side : {&b.summary.host, &b.summary.gpu})
      for (CompareGroup& g : *side)
        g.durations = order_statistics(std::move(g.durations), kBaselineSamples);
    b.summary.step_durations =
        order_statistics(std::move(b.summary.step_durations), kBaselineStepSamples);
  }
  for (const Finding& f : findings.findings)
    b.findings.push_back({f.kind, std::string(severity_name(f.severity)), f.title, f.est_savings_ns,
                          f.est_savings_pct});
  return b;
}

// ---- the file -----------------------------------------------------------------------------------

std::string baseline_json(const Baseline& b) {
  JsonWriter w;
  w.begin_object();
  w.field("schema", "mlprof.baseline/" + std::to_string(b.schema_major));
  w.field("name", b.name);
  w.field("created_unix_s", b.created_unix_s);
  w.field("source", b.source);
  w.field("format", b.format);
  w.field("device", b.device);
  w.field("world_size", static_cast<int64_t>(b.world_size));
  w.field("step_model", b.step_model);
  const TraceTotals& t = b.summary.totals;
  w.key("totals").begin_object();
  w.field("span_ns", t.span_ns).field("steps", t.steps).field("step_mean_ns", t.step_mean_ns);
  w.field("step_median_ns", t.step_median_ns).field("peak_memory_bytes", t.peak_memory_bytes);
  w.field("gpu_kernel_ns", t.gpu_kernel_ns);
  w.end_object();
  w.key("step_durations_ns").begin_array();
  for (double d : b.summary.step_durations) w.value(d);
  w.end_array();
  auto rows = [&](std::string_view key, const std::vector<CompareGroup>& groups) {
    w.key(key).begin_array();
    for (const CompareGroup& g : groups) {
      w.begin_object().field("name", g.name).field("category", g.category);
      w.field("count", g.count).field("total_ns", g.total_ns);
      w.key("durations_ns").begin_array();
      for (double d : g.durations) w.value(d);
      w.end_array().end_object();
    }
    w.end_array();
  };
  rows("ops", b.summary.host);
  rows("kernels", b.summary.gpu);
  const CompareSummary& s = b.summary;
  w.key("critical_path").begin_object();
  w.field("measured", s.path_measured).field("missing", s.path_missing);
  w.field("windows", static_cast<uint64_t>(s.path_windows)).field("path_ns", s.path_ns);
  w.key("rows").begin_array();
  for (const ComparePathRow& r : s.path_rows)
    w.begin_object()
        .field("name", r.name)
        .field("category", r.category)
        .field("kind", r.kind)
        .field("ns", r.ns)
        .end_object();
  w.end_array().end_object();
  w.key("findings").begin_array();
  for (const BaselineFinding& f : b.findings)
    w.begin_object()
        .field("kind", f.kind)
        .field("severity", f.severity)
        .field("title", f.title)
        .field("est_savings_ns", f.est_savings_ns)
        .field("est_savings_pct", f.est_savings_pct)
        .end_object();
  w.end_array();
  w.end_object();
  return w.take();
}

namespace {

namespace dom = simdjson::dom;

// Field readers: each failure names the field, so a damaged file says what is wrong in one line.
struct Reader {
  std::string error;
  bool fail(std::string_view field, std::string_view want) {
    if (error.empty()) error = std::string(field) + ": expected " + std::string(want);
    return false;
  }
  bool str(dom::object o, std::string_view k, std::string& out) {
    std::string_view v;
    if (o[k].get_string().get(v) != simdjson::SUCCESS) return fail(k, "a string");
    out = std::string(v);
    return true;
  }
  bool num(dom::element e, std::string_view k, double& out) {
    double d = 0;
    int64_t i = 0;
    uint64_t u = 0;
    if (e.get_double().get(d) == simdjson::SUCCESS)
      out = d;
    else if (e.get_int64().get(i) == simdjson::SUCCESS)
      out = static_cast<double>(i);
    else if (e.get_uint64().get(u) == simdjson::SUCCESS)
      out = static_cast<double>(u);
    else
      return fail(k, "a number");
    if (!std::isfinite(out)) return fail(k, "a finite number");
    return true;
  }
  bool num(dom::object o, std::string_view k, double& out) {
    dom::element e;
    if (o[k].get(e) != simdjson::SUCCESS) return fail(k, "a number");
    return num(e, k, out);
  }
  bool i64(dom::object o, std::string_view k, int64_t& out, int64_t lo = 0) {
    int64_t v = 0;
    if (o[k].get_int64().get(v) != simdjson::SUCCESS || v < lo)
      return fail(k, lo < 0 ? "an integer" : "a non-negative integer");
    out = v;
    return true;
  }
  bool nonneg(dom::object o, std::string_view k, double& out) {
    if (!num(o, k, out)) return false;
    return out >= 0 || fail(k, "a non-negative number");
  }
  bool durations(dom::object o, std::string_view k, std::vector<double>& out) {
    dom::array a;
    if (o[k].get_array().get(a) != simdjson::SUCCESS) return fail(k, "an array of numbers");
    for (dom::element e : a) {
      double d = 0;
      if (!num(e, k, d) || d < 0) return fail(k, "non-negative numbers");
      out.push_back(d);
    }
    return true;
  }
  bool groups(dom::object o, std::string_view k, std::vector<CompareGroup>& out) {
    dom::array a;
    if (o[k].get_array().get(a) != simdjson::SUCCESS) return fail(k, "an array of rows");
    for (dom::element e : a) {
      dom::object r;
      if (e.get_object().get(r) != simdjson::SUCCESS) return fail(k, "an array of objects");
      CompareGroup g;
      int64_t count = 0;
      if (!str(r, "name", g.name) || !str(r, "category", g.category) || !i64(r, "count", count) ||
          !i64(r, "total_ns", g.total_ns) || !durations(r, "durations_ns", g.durations))
        return fail(std::string(k) + " row", "name, category, count, total_ns, durations_ns");
      if (count == 0) return fail(std::string(k) + " row count", "at least 1");
      if (g.durations.empty() || g.durations.size() > static_cast<uint64_t>(count))
        return fail(std::string(k) + " row durations_ns", "1 to count numbers");
      g.count = static_cast<uint64_t>(count);
      out.push_back(std::move(g));
    }
    return true;
  }
};

}  // namespace

Result<Baseline> parse_baseline_json(std::string_view json) {
  dom::parser parser;
  simdjson::padded_string padded(json);
  dom::element root;
  if (parser.parse(padded).get(root) != simdjson::SUCCESS) return Status::error("not valid JSON");
  dom::object o;
  if (root.get_object().get(o) != simdjson::SUCCESS)
    return Status::error("not an mlprof baseline (expected a JSON object)");
  std::string_view schema;
  if (o["schema"].get_string().get(schema) != simdjson::SUCCESS ||
      !schema.starts_with("mlprof.baseline/"))
    return Status::error("not an mlprof baseline (no \"schema\": \"mlprof.baseline/N\")");
  int major = 0;
  for (char c : schema.substr(16)) {
    if (c < '0' || c > '9' || major > 1000)
      return Status::error("bad schema \"" + std::string(schema) + "\"");
    major = major * 10 + (c - '0');
  }
  if (major != kBaselineSchemaMajor)
    return Status::error("baseline schema " + std::string(schema) +
                         ": this mlprof reads mlprof.baseline/" +
                         std::to_string(kBaselineSchemaMajor) + " (save it again)");
  Baseline b;
  Reader r;
  int64_t world = 0;
  dom::object totals, path;
  bool ok = r.str(o, "name", b.name) && r.i64(o, "created_unix_s", b.created_unix_s, INT64_MIN) &&
            r.str(o, "source", b.source) && r.str(o, "format", b.format) &&
            r.str(o, "device", b.device) && r.i64(o, "world_size", world) &&
            r.str(o, "step_model", b.step_model);
  if (ok && b.step_model != "steps" && b.step_model != "span")
    ok = r.fail("step_model", "\"steps\" or \"span\"");
  if (ok && (world < 1 || world > (1 << 24))) ok = r.fail("world_size", "1 to 16777216");
  b.world_size = static_cast<int32_t>(world);
  TraceTotals& t = b.summary.totals;
  t.source = b.source;
  if (ok && o["totals"].get_object().get(totals) != simdjson::SUCCESS)
    ok = r.fail("totals", "an object");
  int64_t steps = 0;
  ok = ok && r.i64(totals, "span_ns", t.span_ns) && r.i64(totals, "steps", steps) &&
       r.nonneg(totals, "step_mean_ns", t.step_mean_ns) &&
       r.nonneg(totals, "step_median_ns", t.step_median_ns) &&
       r.i64(totals, "peak_memory_bytes", t.peak_memory_bytes, -1) &&
       r.i64(totals, "gpu_kernel_ns", t.gpu_kernel_ns);
  t.steps = static_cast<uint64_t>(steps);
  if (ok && (steps > 0) != (b.step_model == "steps"))
    ok = r.fail("totals.steps", "steps > 0 exactly when step_model is \"steps\"");
  ok = ok && r.durations(o, "step_durations_ns", b.summary.step_durations) &&
       r.groups(o, "ops", b.summary.host) && r.groups(o, "kernels", b.summary.gpu);
  if (ok && o["critical_path"].get_object().get(path) != simdjson::SUCCESS)
    ok = r.fail("critical_path", "an object");
  CompareSummary& s = b.summary;
  if (ok) {
    bool measured = false;
    int64_t windows = 0;
    if (path["measured"].get_bool().get(measured) != simdjson::SUCCESS)
      ok = r.fail("critical_path.measured", "true or false");
    s.path_measured = measured;
    ok = ok && r.str(path, "missing", s.path_missing) && r.i64(path, "windows", windows) &&
         r.nonneg(path, "path_ns", s.path_ns);
    s.path_windows = static_cast<size_t>(windows);
    dom::array rows;
    if (ok && path["rows"].get_array().get(rows) != simdjson::SUCCESS)
      ok = r.fail("critical_path.rows", "an array");
    if (ok) {
      for (dom::element e : rows) {
        dom::object ro;
        ComparePathRow row;
        if (e.get_object().get(ro) != simdjson::SUCCESS || !r.str(ro, "name", row.name) ||
            !r.str(ro, "category", row.category) || !r.str(ro, "kind", row.kind) ||
            !r.num(ro, "ns", row.ns)) {
          ok = r.fail("critical_path.rows", "objects with name, category, kind, ns");
          break;
        }
        s.path_rows.push_back(std::move(row));
      }
    }
  }
  dom::array findings;
  if (ok && o["findings"].get_array().get(findings) != simdjson::SUCCESS)
    ok = r.fail("findings", "an array");
  if (ok) {
    for (dom::element e : findings) {
      dom::object fo;
      BaselineFinding f;
      if (e.get_object().get(fo) != simdjson::SUCCESS || !r.str(fo, "kind", f.kind) ||
          !r.str(fo, "severity", f.severity) || !r.str(fo, "title", f.title) ||
          !r.i64(fo, "est_savings_ns", f.est_savings_ns) ||
          !r.num(fo, "est_savings_pct", f.est_savings_pct)) {
        ok = r.fail("findings",
                    "objects with kind, severity, title, est_savings_ns, est_savings_pct");
        break;
      }
      b.findings.push_back(std::move(f));
    }
  }
  if (!ok) return Status::error("not a valid mlprof baseline: " + r.error);
  return b;
}

// ---- can they be compared -----------------------------------------------------------------------

namespace {

// The share of `a`'s row time in rows `b` has too.
double shared_share(const CompareSummary& a, const CompareSummary& b) {
  std::unordered_map<std::string, int> in_b;
  for (const auto* side : {&b.host, &b.gpu})
    for (const CompareGroup& g : *side) in_b.emplace(key_of(g), 1);
  double all = 0, both = 0;
  for (const auto* side : {&a.host, &a.gpu})
    for (const CompareGroup& g : *side) {
      all += static_cast<double>(g.total_ns);
      if (in_b.count(key_of(g))) both += static_cast<double>(g.total_ns);
    }
  return all > 0 ? both / all : (in_b.empty() ? 1.0 : 0.0);
}

}  // namespace

Comparability check_comparable(const Baseline& base, const Baseline& run) {
  Comparability c;
  auto refuse = [&](std::string why) {
    c.comparable = false;
    c.refusals.push_back(std::move(why));
  };
  if (base.schema_major != run.schema_major)
    refuse("schema mlprof.baseline/" + std::to_string(base.schema_major) + " vs /" +
           std::to_string(run.schema_major));
  if (!base.device.empty() && !run.device.empty() && base.device != run.device)
    refuse("device: baseline " + base.device + ", run " + run.device);
  else if (base.device.empty() != run.device.empty())
    c.warnings.push_back("device: recorded on one side only (" +
                         (base.device.empty() ? run.device : base.device) + ")");
  if (base.world_size != run.world_size)
    refuse("world size: baseline " + std::to_string(base.world_size) + ", run " +
           std::to_string(run.world_size));
  if (base.step_model != run.step_model)
    refuse("step model: baseline " + base.step_model + ", run " + run.step_model +
           " (rows per step cannot be compared with rows per trace)");
  c.score =
      std::min(shared_share(base.summary, run.summary), shared_share(run.summary, base.summary));
  char buf[160];
  std::snprintf(buf, sizeof buf, "op set: %.0f%% of the time is in rows both runs have",
                c.score * 100);
  if (c.score < kComparableMinScore)
    refuse(std::string(buf) + " (under " +
           std::to_string(static_cast<int>(kComparableMinScore * 100)) + "%)");
  else if (c.score < kComparableWarnScore)
    c.warnings.push_back(buf);
  return c;
}

}  // namespace mlprof
