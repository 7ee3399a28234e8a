// The analyses' building blocks that Python-side tools reuse instead of re-implementing them:
// significance tests (benchmark/compare), the FLOP formulas of `mlprof flops` (layer profiler),
// and the trace leak analysis run over sampled memory (memory tracker).
#include <pybind11/stl.h>

#include "bindings.h"
#include "errors.h"
#include "mlprof/analysis_set.h"
#include "mlprof/analyze/flops.h"
#include "mlprof/analyze/leaks.h"
#include "mlprof/analyze/stats.h"
#include "render/memory_render.h"
#include "trace/json_writer.h"

namespace py = pybind11;

namespace mlprof::python {
namespace {

py::dict test_dict(const stats::TestResult& r) {
  py::dict d;
  d["statistic"] = r.statistic;
  d["z"] = r.z;
  d["df"] = r.df;
  d["p_value"] = r.p_value;
  d["valid"] = r.valid;
  return d;
}

// One memory series sampled over time, e.g. host RSS or CUDA allocated on device 0.
struct SampledSeries {
  int device = -1;  // -1: host (CPU), else the CUDA device
  std::vector<int64_t> ts_ns;
  std::vector<int64_t> bytes;
};

// Builds a trace the leak analysis reads like any other: the steps as ProfilerStep#N slices, and
// each sample as a memory event whose running total is the sampled value.
std::string leaks_json(const std::vector<SampledSeries>& series,
                       const std::vector<std::pair<int64_t, int64_t>>& steps) {
  TraceBuilder b;
  uint32_t track = b.thread_track(b.process(0), 0);
  StringId step_cat = b.intern("step");
  for (size_t i = 0; i < steps.size(); ++i) {
    int64_t dur = std::max<int64_t>(0, steps[i].second - steps[i].first);
    b.add_slice(track, steps[i].first, dur, b.intern("ProfilerStep#" + std::to_string(i)),
                step_cat);
  }
  for (const SampledSeries& s : series) {
    int64_t previous = 0;
    DeviceType type = s.device < 0 ? DeviceType::kCpu : DeviceType::kCuda;
    int16_t id = static_cast<int16_t>(s.device < 0 ? 0 : s.device);
    for (size_t i = 0; i < s.ts_ns.size() && i < s.bytes.size(); ++i) {
      int64_t delta = s.bytes[i] - previous;
      previous = s.bytes[i];
      b.add_memory(track, s.ts_ns[i], 0, delta == 0 ? 0 : delta, type, id, s.bytes[i]);
    }
  }
  // The samples as a trace, analyzed by the stage (its steps, then leaks) as `mlprof leaks` does.
  AnalysisSet set(std::move(b).finish());
  JsonWriter w(true);
  write_leaks_json(w, set.leaks());
  return w.take();
}

}  // namespace

void bind_stats(py::module_& m) {
  m.def(
      "welch_t_test",
      [](const std::vector<double>& a, const std::vector<double>& b) {
        return test_dict(stats::welch_t_test(a, b));
      },
      py::arg("a"), py::arg("b"));
  m.def(
      "mann_whitney_u",
      [](const std::vector<double>& a, const std::vector<double>& b) {
        return test_dict(stats::mann_whitney_u(a, b));
      },
      py::arg("a"), py::arg("b"));
  m.def("student_t_cdf", &stats::student_t_cdf, py::arg("t"), py::arg("df"));
  m.def(
      "op_flops",
      [](const std::string& op, const std::vector<std::vector<int64_t>>& dims) -> py::object {
        std::optional<double> f = op_flops(op, dims);
        if (!f) return py::none();
        return py::float_(*f);
      },
      py::arg("op"), py::arg("dims"),
      "FLOPs of one call of `op` with these input shapes (mlprof flops' formulas), or None.");
  py::class_<SampledSeries>(m, "SampledSeries")
      .def(py::init<>())
      .def_readwrite("device", &SampledSeries::device)
      .def_readwrite("ts_ns", &SampledSeries::ts_ns)
      .def_readwrite("bytes", &SampledSeries::bytes);
  m.def(
      "leaks_from_samples",
      [](const std::vector<SampledSeries>& series,
         const std::vector<std::pair<int64_t, int64_t>>& steps) {
        py::gil_scoped_release release;
        return leaks_json(series, steps);
      },
      py::arg("series"), py::arg("steps"),
      "`mlprof leaks` JSON over sampled memory series and step intervals (ns).");
}

}  // namespace mlprof::python
