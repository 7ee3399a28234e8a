// The analysis results as tables: `ops` (mlprof ops), `kernels` (mlprof kernels), `steps`
// (mlprof steps) and `launches` (each launch call -> the GPU work it launched, with the delay).
// Computed on first use, once per trace, and kept: a query that never names them costs nothing.
// The kernels, steps and roofline rows come from the analysis stage (one AnalysisSet per part,
// shared by the tables), so they are the numbers `mlprof kernels/steps/roofline` show.
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>

#include "mlprof/analysis_set.h"
#include "mlprof/analyze/gpu_events.h"
#include "mlprof/analyze/op_stats.h"
#include "sql/virtual_table.h"

namespace mlprof::sql {
namespace {

// One cell: NULL, an integer, a real or text (a plain struct: GCC 12 warns falsely on
// std::variant<..., std::string> in initializer lists).
struct Value {
  enum Kind : uint8_t { kNull, kInt, kReal, kText } kind = kNull;
  int64_t i = 0;
  double d = 0;
  std::string s;
  Value() = default;
  Value(int64_t v) : kind(kInt), i(v) {}                  // NOLINT: cells convert implicitly
  Value(double v) : kind(kReal), d(v) {}                  // NOLINT
  Value(std::string v) : kind(kText), s(std::move(v)) {}  // NOLINT
};
using Rows = std::vector<std::vector<Value>>;

// Each part's analysis set, made on first use and shared by the analysis tables: every row of
// every table (roofline: all of them, no top cut) with the stage's default options.
class PartAnalyses {
 public:
  explicit PartAnalyses(const TraceSet& set) : set_(set), sets_(set.parts.size()) {}
  AnalysisSet& operator[](size_t p) {
    if (!sets_[p]) {
      AnalysisOptions o;
      o.roofline.top = 0;
      sets_[p] = std::make_unique<AnalysisSet>(*set_.parts[p].trace, std::move(o));
    }
    return *sets_[p];
  }

 private:
  const TraceSet& set_;
  std::vector<std::unique_ptr<AnalysisSet>> sets_;
};

using Compute = Rows (*)(const TraceSet& set, size_t part, PartAnalyses& analyses);

class AnalysisVtab : public TableSpec {
 public:
  AnalysisVtab(const TraceSet& set, const char* name, std::vector<ColumnSpec> cols, Compute compute,
               std::shared_ptr<PartAnalyses> analyses)
      : TableSpec(set),
        name_(name),
        columns_(std::move(cols)),
        compute_(compute),
        analyses_(std::move(analyses)) {}
  const char* name() const override { return name_; }
  const std::vector<ColumnSpec>& columns() const override { return columns_; }
  uint64_t rows(size_t p) const override {
    ensure();
    return (*rows_)[p].size();
  }
  int64_t rowid(size_t p, uint64_t row) const override {
    ensure();
    return first_[p] + static_cast<int64_t>(row);
  }
  void column(sqlite3_context* ctx, size_t p, uint64_t row, int col) const override {
    const Value& v = (*rows_)[p][row][static_cast<size_t>(col)];
    switch (v.kind) {
      case Value::kInt:
        sqlite3_result_int64(ctx, v.i);
        break;
      case Value::kReal:
        sqlite3_result_double(ctx, v.d);
        break;
      case Value::kText:
        result_text(ctx, v.s);
        break;
      case Value::kNull:
        sqlite3_result_null(ctx);
        break;
    }
  }
  double selectivity(int col, Op op, bool) const override {
    return col == -1 && op == Op::kEq ? 0.0 : -1.0;
  }

 private:
  void ensure() const {
    if (rows_) return;
    rows_.emplace();
    int64_t n = 0;
    for (size_t p = 0; p < set_.parts.size(); ++p) {
      rows_->push_back(compute_(set_, p, *analyses_));
      first_.push_back(n);
      n += static_cast<int64_t>(rows_->back().size());
    }
  }
  const char* name_;
  std::vector<ColumnSpec> columns_;
  Compute compute_;
  std::shared_ptr<PartAnalyses> analyses_;
  mutable std::optional<std::vector<Rows>> rows_;
  mutable std::vector<int64_t> first_;
};

Value text(std::string_view s) { return Value(std::string(s)); }
Value num(int64_t v) { return Value(v); }
Value real(double v) { return Value(v); }

Rows ops_rows(const TraceSet& set, size_t p, PartAnalyses&) {
  Rows rows;
  for (const OpStats& o : op_stats(*set.parts[p].trace)) {
    rows.push_back({o.name, o.category, num(static_cast<int64_t>(o.count)), num(o.total_ns),
                    num(o.self_ns), real(o.mean_ns), real(o.std_ns), num(o.min_ns), num(o.max_ns),
                    real(o.p50_ns), real(o.p90_ns), real(o.p99_ns), real(o.percent_of_span)});
  }
  return rows;
}

Value text_or_null(const std::string& s) {
  if (s.empty()) return {};
  return Value(s);
}
Value opt(int64_t v) { return v < 0 ? Value{} : Value{v}; }
Value opt(double v) { return v < 0 ? Value{} : Value{v}; }

Rows kernel_rows(const TraceSet&, size_t p, PartAnalyses& analyses) {
  Rows rows;
  const KernelsResult& r = analyses[p].kernels();
  for (const KernelStats& k : r.kernels) {
    rows.push_back({k.name, text(kernel_type_name(k.type)), text(gpu_work_kind_name(k.kind)),
                    num(static_cast<int64_t>(k.count)), num(k.total_ns), real(k.mean_ns),
                    real(k.std_ns), num(k.min_ns), num(k.max_ns), real(k.share),
                    num(k.tensor_cores ? 1 : 0), text_or_null(k.launch.grid),
                    text_or_null(k.launch.block), opt(k.launch.registers_per_thread),
                    opt(k.launch.shared_memory), opt(k.launch.achieved_occupancy)});
  }
  return rows;
}

Rows step_rows(const TraceSet&, size_t p, PartAnalyses& analyses) {
  Rows rows;
  const StepsResult& r = analyses[p].steps();
  for (const StepInfo& s : r.steps) {
    std::vector<Value> row = {
        num(s.number),         s.name, num(s.begin_ns), num(s.dur_ns), num(s.begin_ns + s.dur_ns),
        num(s.outlier ? 1 : 0)};
    for (int64_t v : s.phase_ns) row.push_back(num(v));
    for (int64_t v : s.gpu_class_ns) row.push_back(r.has_gpu ? Value{v} : Value{});
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<ColumnSpec> step_columns() {
  std::vector<ColumnSpec> c = {{"number", "INTEGER"}, {"name", "TEXT"},   {"ts", "INTEGER"},
                               {"dur", "INTEGER"},    {"end", "INTEGER"}, {"outlier", "INTEGER"}};
  // Names outlive the table: string literals.
  static const char* phases[] = {"data_loading_ns", "forward_ns",       "backward_ns",
                                 "optimizer_ns",    "communication_ns", "other_ns"};
  static const char* classes[] = {"gpu_kernel_ns",        "gpu_memcpy_ns",  "gpu_memset_ns",
                                  "gpu_communication_ns", "gpu_runtime_ns", "gpu_dataloader_ns",
                                  "gpu_cpu_op_ns",        "gpu_other_ns"};
  static_assert(std::size(phases) == kStepPhaseCount);
  static_assert(std::size(classes) == kGpuStepClassCount);
  for (const char* n : phases) c.push_back({n, "INTEGER"});
  for (const char* n : classes) c.push_back({n, "INTEGER"});
  return c;
}

Rows launch_rows(const TraceSet& set, size_t p, PartAnalyses&) {
  Rows rows;
  const Trace& t = *set.parts[p].trace;
  int64_t base = set.base[p].slice;
  GpuEvents ev = collect_gpu_events(t);
  for (const GpuEvent& e : ev.events) {
    if (e.launch < 0) continue;
    rows.push_back({num(base + e.launch), num(base + e.slice), num(e.correlation),
                    text(t.str(t.slices.name[e.launch])), text(t.str(t.slices.name[e.slice])),
                    text(gpu_work_kind_name(e.kind)), num(e.device), num(e.stream),
                    num(e.launch_ts), num(e.launch_end - e.launch_ts), num(e.ts), num(e.dur()),
                    num(e.ts - e.launch_end)});
  }
  return rows;
}

// `mlprof roofline`'s rows per (op, shapes, dtype), every one (no top cut), with the device's
// built-in peaks.
Rows roofline_rows(const TraceSet&, size_t p, PartAnalyses& analyses) {
  Rows rows;
  AnalysisSet& set = analyses[p];
  if (!set.has_gpu()) return rows;
  const RooflineResult& r = set.roofline();
  auto nan_null = [](double v) { return std::isnan(v) ? Value{} : Value{v}; };
  for (const RooflineRow& x : r.shapes) {
    Value peak = r.peaks_known ? Value{x.peak_tflops} : Value{};
    rows.push_back({x.name, x.shapes, x.dtype, x.family, num(static_cast<int64_t>(x.calls)),
                    num(x.kernel_ns), real(x.flops), real(x.bytes), real(x.intensity),
                    real(x.achieved_tflops), real(x.achieved_tbps), peak,
                    r.peaks_known ? Value{x.attainable_tflops} : Value{}, nan_null(x.roofline_pct),
                    r.peaks_known ? Value{x.roofline_ns} : Value{},
                    r.peaks_known ? Value{x.wasted_ns} : Value{}, text_or_null(x.bound),
                    num(static_cast<int64_t>(x.above_compute_peak)),
                    num(static_cast<int64_t>(x.above_bandwidth))});
  }
  return rows;
}

}  // namespace

int register_analysis_tables(sqlite3* db, const TraceSet& set, std::string& error) {
  auto analyses = std::make_shared<PartAnalyses>(set);
  auto add = [&](const char* name, std::vector<ColumnSpec> cols, Compute compute) {
    return register_table(
        db, std::make_unique<AnalysisVtab>(set, name, std::move(cols), compute, analyses), error);
  };
  int rc = add("ops",
               {{"name", "TEXT"},
                {"category", "TEXT"},
                {"count", "INTEGER"},
                {"total_ns", "INTEGER"},
                {"self_ns", "INTEGER"},
                {"mean_ns", "REAL"},
                {"std_ns", "REAL"},
                {"min_ns", "INTEGER"},
                {"max_ns", "INTEGER"},
                {"p50_ns", "REAL"},
                {"p90_ns", "REAL"},
                {"p99_ns", "REAL"},
                {"percent_of_span", "REAL"}},
               ops_rows);
  if (rc == SQLITE_OK)
    rc = add("kernels",
             {{"name", "TEXT"},
              {"type", "TEXT"},
              {"kind", "TEXT"},
              {"count", "INTEGER"},
              {"total_ns", "INTEGER"},
              {"mean_ns", "REAL"},
              {"std_ns", "REAL"},
              {"min_ns", "INTEGER"},
              {"max_ns", "INTEGER"},
              {"share", "REAL"},
              {"tensor_cores", "INTEGER"},
              {"grid", "TEXT"},
              {"block", "TEXT"},
              {"registers_per_thread", "INTEGER"},
              {"shared_memory", "INTEGER"},
              {"achieved_occupancy", "REAL"}},
             kernel_rows);
  if (rc == SQLITE_OK) rc = add("steps", step_columns(), step_rows);
  if (rc == SQLITE_OK)
    rc = add("launches",
             {{"launch_id", "INTEGER"},
              {"kernel_id", "INTEGER"},
              {"correlation", "INTEGER"},
              {"launch_name", "TEXT"},
              {"kernel_name", "TEXT"},
              {"kind", "TEXT"},
              {"device", "INTEGER"},
              {"stream", "INTEGER"},
              {"launch_ts", "INTEGER"},
              {"launch_dur", "INTEGER"},
              {"kernel_ts", "INTEGER"},
              {"kernel_dur", "INTEGER"},
              {"delay", "INTEGER"}},
             launch_rows);
  if (rc == SQLITE_OK)
    rc = add("roofline",
             {{"name", "TEXT"},
              {"shapes", "TEXT"},
              {"dtype", "TEXT"},
              {"family", "TEXT"},
              {"calls", "INTEGER"},
              {"kernel_ns", "INTEGER"},
              {"flops", "REAL"},
              {"bytes", "REAL"},
              {"intensity", "REAL"},
              {"achieved_tflops", "REAL"},
              {"achieved_tbps", "REAL"},
              {"peak_tflops", "REAL"},
              {"attainable_tflops", "REAL"},
              {"roofline_pct", "REAL"},
              {"roofline_ns", "INTEGER"},
              {"wasted_ns", "INTEGER"},
              {"bound", "TEXT"},
              {"above_compute_peak", "INTEGER"},
              {"above_bandwidth", "INTEGER"}},
             roofline_rows);
  return rc;
}

}  // namespace mlprof::sql
