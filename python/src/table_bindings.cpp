// The hot tables (ops, kernels, steps) as columns straight from the analysis results: numpy
// arrays when numpy imports (Python lists otherwise), one entry per JSON field of the row, no
// JSON written or parsed. Values equal what `mlprof NAME --json` prints: doubles go through the
// JSON writer's %.15g, and a field the writer leaves out of a row is NaN (None in a list).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "bindings.h"
#include "errors.h"
#include "mlprof/analyze/kernel_class.h"

namespace py = pybind11;

namespace mlprof::python {
namespace {

// A double as it reads back from the JSON (%.15g; NaN/inf are written as null).
double as_json(double v) {
  if (!std::isfinite(v)) return NAN;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return std::strtod(buf, nullptr);
}

bool have_numpy() {
  static const bool ok = [] {
    try {
      py::module_::import("numpy");
      return true;
    } catch (const py::error_already_set&) {
      return false;
    }
  }();
  return ok;
}

// Columns of `n` rows, in the JSON's field order.
class Columns {
 public:
  explicit Columns(size_t n) : n_(n) {}

  template <typename T>
  void num(const char* key, const std::function<T(size_t)>& get) {
    if constexpr (std::is_same_v<T, bool>) {  // numpy bool from bytes (vector<bool> has no data())
      std::vector<uint8_t> v(n_);
      for (size_t i = 0; i < n_; ++i) v[i] = get(i) ? 1 : 0;
      if (have_numpy()) {
        d_[key] = py::array_t<bool>(static_cast<py::ssize_t>(n_),
                                    reinterpret_cast<const bool*>(v.data()));
      } else {
        py::list l(n_);
        for (size_t i = 0; i < n_; ++i) l[i] = py::bool_(v[i] != 0);
        d_[key] = l;
      }
    } else {
      std::vector<T> v(n_);
      for (size_t i = 0; i < n_; ++i) v[i] = get(i);
      if constexpr (std::is_same_v<T, double>)
        for (double& x : v) x = as_json(x);
      put(key, v);
    }
  }
  // A field present only in some rows: NaN (None in a list) where `has` is false. Left out
  // entirely when no row has it, as a DataFrame of the JSON rows would.
  void optional(const char* key, const std::function<bool(size_t)>& has,
                const std::function<double(size_t)>& get) {
    bool any = false;
    for (size_t i = 0; i < n_ && !any; ++i) any = has(i);
    if (!any) return;
    if (!have_numpy()) {
      py::list l(n_);
      for (size_t i = 0; i < n_; ++i)
        l[i] = has(i) ? py::object(py::float_(as_json(get(i)))) : py::object(py::none());
      d_[key] = l;
      return;
    }
    std::vector<double> v(n_);
    for (size_t i = 0; i < n_; ++i) v[i] = has(i) ? as_json(get(i)) : NAN;
    put(key, v);
  }
  void str(const char* key, const std::function<std::string_view(size_t)>& get) {
    py::list l(n_);
    for (size_t i = 0; i < n_; ++i) {
      std::string_view s = get(i);
      l[i] = py::reinterpret_steal<py::object>(
          PyUnicode_DecodeUTF8(s.data(), static_cast<py::ssize_t>(s.size()), "replace"));
    }
    d_[key] = l;
  }
  py::dict take() { return std::move(d_); }

 private:
  template <typename T>
  void put(const char* key, const std::vector<T>& v) {
    if (have_numpy()) {
      d_[key] = py::array_t<T>(static_cast<py::ssize_t>(v.size()), v.data());  // one copy
    } else {
      py::list l(v.size());
      for (size_t i = 0; i < v.size(); ++i) l[i] = py::cast(v[i]);
      d_[key] = l;
    }
  }
  size_t n_;
  py::dict d_;
};

py::dict ops_columns(const OpsResult& r) {
  const std::vector<OpStats>& o = r.ops;
  Columns c(o.size());
  c.str("name", [&](size_t i) { return std::string_view(o[i].name); });
  c.str("category", [&](size_t i) { return std::string_view(o[i].category); });
  c.num<int64_t>("count", [&](size_t i) { return static_cast<int64_t>(o[i].count); });
  c.num<int64_t>("total_ns", [&](size_t i) { return o[i].total_ns; });
  c.num<int64_t>("self_ns", [&](size_t i) { return o[i].self_ns; });
  c.num<double>("mean_ns", [&](size_t i) { return o[i].mean_ns; });
  c.num<double>("std_ns", [&](size_t i) { return o[i].std_ns; });
  c.num<int64_t>("min_ns", [&](size_t i) { return o[i].min_ns; });
  c.num<int64_t>("max_ns", [&](size_t i) { return o[i].max_ns; });
  c.num<double>("p50_ns", [&](size_t i) { return o[i].p50_ns; });
  c.num<double>("p90_ns", [&](size_t i) { return o[i].p90_ns; });
  c.num<double>("p99_ns", [&](size_t i) { return o[i].p99_ns; });
  c.num<double>("percent_of_span", [&](size_t i) { return o[i].percent_of_span; });
  auto cpu = [&](size_t i) { return o[i].cpu_calls != 0; };
  c.optional("cpu_calls", cpu, [&](size_t i) { return static_cast<double>(o[i].cpu_calls); });
  c.optional("cpu_ns", cpu, [&](size_t i) { return static_cast<double>(o[i].cpu_ns); });
  c.optional("cpu_wall_ns", cpu, [&](size_t i) { return static_cast<double>(o[i].cpu_wall_ns); });
  auto dev = [&](size_t i) { return o[i].device_self_ns >= 0; };
  c.optional("device_self_ns", dev,
             [&](size_t i) { return static_cast<double>(o[i].device_self_ns); });
  c.optional("device_total_ns", dev,
             [&](size_t i) { return static_cast<double>(o[i].device_total_ns); });
  return c.take();
}

// The kernels rows' scalar fields (the nested launch configuration stays in t.kernels()).
py::dict kernels_columns(const KernelsResult& r) {
  const std::vector<KernelStats>& k = r.kernels;
  Columns c(k.size());
  c.str("name", [&](size_t i) { return std::string_view(k[i].name); });
  c.str("kernel_type", [&](size_t i) { return kernel_type_name(k[i].type); });
  c.str("kind", [&](size_t i) { return gpu_work_kind_name(k[i].kind); });
  c.num<int64_t>("count", [&](size_t i) { return static_cast<int64_t>(k[i].count); });
  c.num<int64_t>("total_ns", [&](size_t i) { return k[i].total_ns; });
  c.num<double>("mean_ns", [&](size_t i) { return k[i].mean_ns; });
  c.num<int64_t>("min_ns", [&](size_t i) { return k[i].min_ns; });
  c.num<int64_t>("max_ns", [&](size_t i) { return k[i].max_ns; });
  c.num<double>("std_ns", [&](size_t i) { return k[i].std_ns; });
  c.num<double>("share", [&](size_t i) { return k[i].share; });
  c.num<bool>("tensor_cores", [&](size_t i) { return k[i].tensor_cores; });
  return c.take();
}

// The steps rows, their phase_ns object flattened to phase_<name>_ns columns (and on GPU traces
// the GPU window fields and gpu_class_ns as gpu_<class>_ns).
py::dict steps_columns(const StepsResult& r) {
  const std::vector<StepInfo>& s = r.steps;
  Columns c(s.size());
  c.num<int64_t>("number", [&](size_t i) { return s[i].number; });
  c.str("name", [&](size_t i) { return std::string_view(s[i].name); });
  c.num<int64_t>("begin_ns", [&](size_t i) { return s[i].begin_ns; });
  c.num<int64_t>("dur_ns", [&](size_t i) { return s[i].dur_ns; });
  c.num<bool>("outlier", [&](size_t i) { return s[i].outlier; });
  c.num<bool>("warmup", [&](size_t i) { return s[i].warmup; });
  c.num<bool>("capture", [&](size_t i) { return s[i].capture; });
  std::vector<std::string> keys;
  for (size_t p = 0; p < kStepPhaseCount; ++p) {
    keys.push_back("phase_" + std::string(step_phase_name(static_cast<StepPhase>(p))) + "_ns");
    c.num<int64_t>(keys.back().c_str(), [&](size_t i) { return s[i].phase_ns[p]; });
  }
  if (r.has_gpu) {
    c.num<int64_t>("gpu_begin_ns", [&](size_t i) { return s[i].gpu_begin_ns; });
    c.num<int64_t>("gpu_dur_ns", [&](size_t i) { return s[i].gpu_dur_ns; });
    c.num<int64_t>("device_events",
                   [&](size_t i) { return static_cast<int64_t>(s[i].device_events); });
    c.num<int64_t>("gpu_busy_ns", [&](size_t i) { return s[i].gpu_busy_ns; });
    c.num<int64_t>("gpu_idle_ns", [&](size_t i) { return s[i].gpu_dur_ns - s[i].gpu_busy_ns; });
    c.num<bool>("plugin_dropped", [&](size_t i) { return s[i].plugin_dropped; });
    for (size_t g = 0; g < kGpuStepClassCount; ++g) {
      keys.push_back("gpu_" + std::string(gpu_step_class_name(static_cast<GpuStepClass>(g))) +
                     "_ns");
      c.num<int64_t>(keys.back().c_str(), [&](size_t i) { return s[i].gpu_class_ns[g]; });
    }
  }
  return c.take();
}

}  // namespace

void bind_tables(py::module_& m) {
  m.def(
      "table_columns",
      [](TraceHandle& h, const std::string& name, const py::dict& kw) -> py::object {
        std::optional<AnalysisId> id = analysis_id(name);
        if (!id ||
            (*id != AnalysisId::kOps && *id != AnalysisId::kKernels && *id != AnalysisId::kSteps))
          raise(StatusCode::kInvalidArgument,
                "table_columns: one of ops, kernels, steps (got '" + name + "')");
        AnalysisSet& set = set_for(h, *id, kw);
        if (auto why = set.unavailable(*id)) return py::str(*why);
        {
          py::gil_scoped_release release;  // compute (or find) the result without the GIL
          if (*id == AnalysisId::kOps) set.ops();
          if (*id == AnalysisId::kKernels) set.kernels();
          if (*id == AnalysisId::kSteps) set.steps();
        }
        if (*id == AnalysisId::kOps) return ops_columns(set.ops());
        if (*id == AnalysisId::kKernels) return kernels_columns(set.kernels());
        return steps_columns(set.steps());
      },
      py::arg("trace"), py::arg("name"), py::arg("options") = py::dict(),
      "An analysis's rows as {field: column} (numpy arrays or lists), or the reason it is "
      "unavailable (a str).");
}

}  // namespace mlprof::python
